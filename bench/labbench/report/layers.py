"""CPU by layer: where an app's CPU went during a profiled cell (PROFILE=1), from the collapsed
stacks the app's profiler wrote (profile/collapsed.txt: frames root-first, `;`-separated, then the
sample count; with async-profiler's `threads` option the first frame is `[thread name tid=N]`).

Each sample goes to one layer: GC and JIT by their threads; otherwise the frame nearest the leaf
that belongs to a known library decides (the code that was running, not who called it), and a
stack of JDK frames only (a selector waiting in epoll) goes by its thread's name."""
import re

LAYERS = ("client", "container", "framework", "app", "gc", "jit", "other")
TITLES = {"client": "HTTP client", "container": "container I/O", "framework": "framework (Spring, Reactor)",
          "app": "application", "gc": "GC", "jit": "JIT", "other": "other"}

# (layer, frame prefixes): code that belongs to one layer only; the first such frame from the leaf decides.
# The lab's own by package (lab.common.outbound, .db, .stats), and by the class names they had before
# lab.common was split by role (issue 38), so that older profiles read as they did.
FRAMES = (
    ("client", ("jdk.internal.net.http", "java.net.http", "reactor.netty.http.client", "reactor.netty.resources.Pooled",
                "org.eclipse.jetty.client", "lab.common.outbound.", "lab.common.db.",
                "lab.common.Remote", "lab.common.CappedHttpClient",
                "lab.common.JdkOutbound", "lab.common.ReactorNettyOutbound", "lab.common.JettyOutbound",
                "org.springframework.http.client", "org.springframework.web.reactive.function.client",
                # BACKEND=postgres: the outbound is the database driver and its pool (the same layer,
                # titled "DB driver" in a DB run's table).
                "org.postgresql", "com.zaxxer.hikari", "io.r2dbc", "reactor.pool", "org.springframework.jdbc",
                "org.springframework.r2dbc", "lab.common.JdbcOutbound", "lab.common.R2dbcOutbound",
                "lab.common.JdbcElastic", "lab.common.SpringDb", "lab.common.DbQuery")),
    ("container", ("org.eclipse.jetty.server", "org.eclipse.jetty.ee", "org.eclipse.jetty.http.", "org.apache.tomcat",
                   "org.apache.coyote", "org.apache.catalina", "reactor.netty.http.server", "jakarta.servlet",
                   "lab.common.stats.StatsFilter", "lab.common.stats.StatsHttpHandler",
                   "lab.common.StatsFilter", "lab.common.StatsHttpHandler")),
    ("framework", ("org.springframework", "reactor.core", "reactor.util", "kotlinx.coroutines", "kotlin.")),
    ("app", ("lab.",)),
)
# I/O code that servers and clients share (Netty, Jetty's I/O): it counts for whichever side the
# stack's nearest specific frame, or else its thread, belongs to.
SHARED_IO = ("io.netty", "reactor.netty", "org.eclipse.jetty")
GC_THREAD = re.compile(r"^(GC Thread|G1 |GC |VM Thread|ZGC|Shenandoah|Parallel GC)", re.I)
JIT_THREAD = re.compile(r"^(C1 |C2 |Compiler|JVMCI)", re.I)
# Threads whose own JDK or shared I/O frames (a selector, a queue) belong to a layer.
CLIENT_THREAD = re.compile(r"^(HttpClient-|client-|rn-client|jetty-client|HttpClient@)")


def stacks(collapsed_text):
    """Each line of a collapsed profile: (its frames, root first; its samples)."""
    for line in collapsed_text.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            yield stack.split(";"), int(n)


def thread_of(frames):
    """The name in a stack's `[name tid=N]` frame (async-profiler's `threads`), or ""."""
    return frames[0][1:].split(" tid=")[0].rstrip("]") if frames and frames[0].startswith("[") else ""


def layer_of(frames):
    thread = thread_of(frames)
    if thread and GC_THREAD.match(thread):
        return "gc"
    if thread and JIT_THREAD.match(thread):
        return "jit"
    shared_io = False
    for frame in reversed(frames):
        name = frame.replace("/", ".")
        for layer, prefixes in FRAMES:
            if name.startswith(prefixes):
                return layer
        shared_io = shared_io or name.startswith(SHARED_IO)
    if any("GC" in f or "G1" in f for f in frames[-3:]):
        return "gc"
    if any("Compile" in f for f in frames[-3:]):
        return "jit"
    if thread and CLIENT_THREAD.match(thread):
        return "client"
    if shared_io or re.match(r"^(qtp|jetty-|http-nio|http-|reactor-http|netty-|Acceptor|Poller)", thread or ""):
        return "container"
    return "other"


def shares(collapsed_text):
    """(samples, {layer: % of samples}), the % in tenths summing to exactly 100.0 (largest remainder)."""
    counts = dict.fromkeys(LAYERS, 0)
    for frames, n in stacks(collapsed_text):
        counts[layer_of(frames)] += n
    total = sum(counts.values())
    if not total:
        return 0, None
    exact = {k: 1000.0 * v / total for k, v in counts.items()}
    tenths = {k: int(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: exact[k] - tenths[k], reverse=True)[:1000 - sum(tenths.values())]:
        tenths[k] += 1
    return total, {k: tenths[k] / 10.0 for k in LAYERS}


def figures(cell_dir):
    """The profile's figures of a cell, or {} when it was not profiled."""
    path = cell_dir / "profile" / "collapsed.txt"
    if not path.exists():
        return {}
    samples, pct = shares(path.read_text(errors="replace"))
    return {"profile_samples": samples, "cpu_layers": pct,
            "flame_graph": str((cell_dir / "profile" / "flame.html").relative_to(cell_dir.parent.parent))
            if (cell_dir / "profile" / "flame.html").exists() else None}


def section(cells):
    """results.md's CPU-by-layer table: a row per profiled cell."""
    profiled = [c for c in cells if c.get("cpu_layers")]
    if not profiled:
        return ""
    db = any(c.get("db_driver") for c in profiled)      # BACKEND=postgres: the outbound is the DB driver
    titles = dict(TITLES, client="DB driver") if db else TITLES
    head = ["app", "container", "threads", "driver" if db else "client", "load", "samples", *(titles[k] for k in LAYERS),
            "CPU ms/req", "CPU ms/req without JIT", "flame graph"]
    out = ["\n## CPU by layer (PROFILE=1)\n\n",
           "Where the app's CPU went during the measured window, % of the profiler's samples (each sample goes to the "
           "library whose code was running; docs/reading-results.md says how). **CPU ms/req** is the app's CPU time "
           "per answered request, so a layer's share × CPU ms/req is what that layer costs per request; **without "
           "JIT** leaves the compiler threads' share out: what a request costs once the JVM has compiled its path. "
           "The profile itself adds CPU: +1 to +14 % CPU ms/req measured at ~950 req/s on 2 cores "
           "(docs/samples/sample-compare-profile.md).\n\n",
           "| " + " | ".join(head) + " |\n", "|---|---|---:|---|---|" + "---:|" * (len(LAYERS) + 3) + "---|\n"]
    for c in profiled:
        load = f"-t{c['wrk_threads']} -c{c['connections']}" if c.get("connections") else c.get("loadgen", "")
        link = f"[flame]({c['flame_graph']})" if c.get("flame_graph") else "—"
        cpu = "—" if c.get("cpu_ms_per_request") is None else f"{c['cpu_ms_per_request']:.2f}"
        warm = "—" if c.get("cpu_ms_per_request") is None else \
            f"{c['cpu_ms_per_request'] * (100.0 - c['cpu_layers']['jit']) / 100.0:.2f}"
        outbound = c.get("db_driver") if db else c.get("client", "jdk")
        out.append(f"| {c['app']} | {c['container']} | {c['threads']} | {outbound} | {load} | "
                   f"{c['profile_samples']} | " + " | ".join(f"{c['cpu_layers'][k]:.1f} %" for k in LAYERS)
                   + f" | {cpu} | {warm} | {link} |\n")
    return "".join(out) + jit_warning(profiled)


# At or above this share of the samples the JIT compiler was a large part of the measured window's
# CPU. It is not a short warm-up's fault alone: an app at 90 req/s after a 15 s warm-up still spent
# 2.0-2.6 s of C2 CPU per 10 s window, profiler or not (measured on the 2 x Xeon VM), as the
# request path's methods reach their compile thresholds only slowly at low rates.
JIT_WARN_PCT = 20.0


def jit_warning(profiled):
    hot = [c for c in profiled if c["cpu_layers"]["jit"] >= JIT_WARN_PCT]
    if not hot:
        return ""
    return (f"\n⚠ JIT ≥ {JIT_WARN_PCT:.0f} % of the samples in {len(hot)} of {len(profiled)} cells: the JVM was still "
            "compiling in the measured window, so their CPU ms/req include the compiler's CPU; compare models by "
            "*CPU ms/req without JIT* and by the other layers' shares relative to each other.\n")
