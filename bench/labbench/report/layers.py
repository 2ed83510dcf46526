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

# (layer, frame prefixes), first match wins: the outbound clients before the servers that share packages.
FRAMES = (
    ("client", ("jdk.internal.net.http", "java.net.http", "reactor.netty.http.client", "reactor.netty.resources",
                "org.eclipse.jetty.client", "lab.common.Remote", "lab.common.CappedHttpClient",
                "org.springframework.http.client", "org.springframework.web.reactive.function.client")),
    ("container", ("org.eclipse.jetty", "org.apache.tomcat", "org.apache.coyote", "org.apache.catalina",
                   "reactor.netty", "io.netty", "jakarta.servlet")),
    ("framework", ("org.springframework", "reactor.core", "reactor.util", "kotlinx.coroutines", "kotlin.")),
    ("app", ("lab.",)),
)
GC_THREAD = re.compile(r"^(GC Thread|G1 |GC |VM Thread|ZGC|Shenandoah|Parallel GC)", re.I)
JIT_THREAD = re.compile(r"^(C1 |C2 |Compiler|JVMCI)", re.I)
# Threads whose own JDK frames (a selector, a queue) belong to a layer.
THREAD_LAYER = (
    ("client", re.compile(r"^(HttpClient-|client-|reactor-http-client|jetty-client|HttpClient@)")),
    ("container", re.compile(r"^(qtp|http-nio|http-|reactor-http|netty-|Acceptor|Poller|lab-)")),
)


def layer_of(frames):
    thread = frames[0][1:].split(" tid=")[0].rstrip("]") if frames and frames[0].startswith("[") else ""
    if thread and GC_THREAD.match(thread):
        return "gc"
    if thread and JIT_THREAD.match(thread):
        return "jit"
    for frame in reversed(frames):
        name = frame.replace("/", ".")
        for layer, prefixes in FRAMES:
            if name.startswith(prefixes):
                return layer
    if any("GC" in f or "G1" in f for f in frames[-3:]):
        return "gc"
    if any("Compile" in f for f in frames[-3:]):
        return "jit"
    for layer, pattern in THREAD_LAYER:
        if thread and pattern.match(thread):
            return layer
    return "other"


def shares(collapsed_text):
    """(samples, {layer: % of samples}), the % in tenths summing to exactly 100.0 (largest remainder)."""
    counts = dict.fromkeys(LAYERS, 0)
    for line in collapsed_text.splitlines():
        stack, _, n = line.rpartition(" ")
        if not stack or not n.isdigit():
            continue
        counts[layer_of(stack.split(";"))] += int(n)
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
    head = ["app", "container", "threads", "client", "load", "samples", *(TITLES[k] for k in LAYERS), "CPU ms/req",
            "flame graph"]
    out = ["\n## CPU by layer (PROFILE=1)\n\n",
           "Where the app's CPU went during the measured window, % of the profiler's samples (each sample goes to the "
           "library whose code was running; docs/reading-results.md says how). **CPU ms/req** is the app's CPU time "
           "per answered request, so a layer's share × CPU ms/req is what that layer costs per request.\n\n",
           "| " + " | ".join(head) + " |\n", "|---|---|---:|---|---|" + "---:|" * (len(LAYERS) + 2) + "---|\n"]
    for c in profiled:
        load = f"-t{c['wrk_threads']} -c{c['connections']}" if c.get("connections") else c.get("loadgen", "")
        link = f"[flame]({c['flame_graph']})" if c.get("flame_graph") else "—"
        cpu = "—" if c.get("cpu_ms_per_request") is None else f"{c['cpu_ms_per_request']:.2f}"
        out.append(f"| {c['app']} | {c['container']} | {c['threads']} | {c.get('client', 'jdk')} | {load} | "
                   f"{c['profile_samples']} | " + " | ".join(f"{c['cpu_layers'][k]:.1f} %" for k in LAYERS)
                   + f" | {cpu} | {link} |\n")
    return "".join(out)
