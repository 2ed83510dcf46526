"""The counters of one measured window of the app's process, and what they make per request.

The kernel's, read by perf's software counters on the app's host (`perf stat -p PID`: task-clock in
ns, context switches, and the raw_syscalls:sys_enter tracepoint: every syscall any thread of the
process enters; threads created during the window are counted too, perf's counters are inherited):
machine-independent but for task-clock. The JVM's own, from /stats' `jvm` object read around the
window: heap bytes allocated (the JDK's counter: what it covers is in the app's `allocatedBytesHow`),
GC collections and their time, the compiler threads' CPU; and its answered requests. Memory and
threads at the window's end, from /proc/PID/smaps_rollup (Pss) and /proc/PID/status (Threads).
"""
import json
import re

from ... import procs

# perf stat's events, in the order it prints them. Of the syscalls, the two that wait are counted
# apart too: how often a thread parks on a futex or an event loop polls depends on how the requests
# happen to meet, not on the work they ask, so these are where a model's syscalls spread.
WAITS = ("syscalls:sys_enter_futex", "syscalls:sys_enter_epoll_wait", "syscalls:sys_enter_epoll_pwait")
EVENTS = ("task-clock", "context-switches", "raw_syscalls:sys_enter") + WAITS


# The JVM's own threads by their names (the kernel's comm, 15 characters): the collector's (G1's
# workers, marker, refinement and service threads) and the JIT compilers'. Their task-clock is kept
# apart too, so that a fork whose CPU differs shows whether the collector or the compiler made it.
# And the lab's agent's (APP_JAR, a +agent variant: its sampler and its admin server), to price it apart.
KINDS = (("gc", ("GC Thread", "G1 ")), ("jit", ("C1 CompilerThre", "C2 CompilerThre")), ("agent", ("lab-agent-",)))


def perf_command(pid, seconds):
    return ["perf", "stat", "--per-thread", "-x", ",", "-e", ",".join(EVENTS), "-p", str(pid), "--", "sleep", str(seconds)]


def kind_of(comm):
    return next((kind for kind, prefixes in KINDS if comm.startswith(prefixes)), None)


def perf_rows(text):
    """perf stat -x, lines, per thread (`comm-tid,value,unit,event,...`) or one total per event: for a
    counter (its thread's name, "" for a total; its event; its value, ns for task-clock, or None where
    "<not counted>"), for any other line (None, None, line). A thread's name may hold a comma: the
    event's field is found by its name."""
    for line in text.splitlines():
        fields = line.split(",")
        at = next((i for i, f in enumerate(fields) if f in EVENTS and i >= 2), None)
        if at is None:
            yield None, None, line
            continue
        value, unit, event = fields[at - 2], fields[at - 1], fields[at]
        name = ",".join(fields[:at - 2]).rsplit("-", 1)[0]
        yield name, event, (None if value.startswith("<") else float(value) * (1e6 if unit == "msec" else 1))


def parse_perf(text):
    """perf stat's output (perf_rows): {event: total} (task-clock in ns; a thread that did not run adds
    nothing; None where no thread was counted) and {"task-clock:gc", "task-clock:jit"}: the JVM's
    collector and compiler threads' part; and the first line that is not a counter (perf's own error) or ""."""
    out, error = {}, ""
    for name, event, v in perf_rows(text):
        if event is None:            # v is the line itself
            error = error or v.strip()
            continue
        out.setdefault(event, None)
        if v is None:
            continue
        out[event] = (out[event] or 0) + v
        kind = kind_of(name) if event == "task-clock" else None
        if kind:
            out[f"task-clock:{kind}"] = out.get(f"task-clock:{kind}", 0) + v
    totals = {e: out.get(e) for e in EVENTS}
    if totals["task-clock"] is not None:
        totals.update({f"task-clock:{kind}": out.get(f"task-clock:{kind}", 0.0) for kind, _ in KINDS})
    return totals, ("" if all(e in out for e in EVENTS[:3]) else error or "perf printed no counter")


def busiest(text, n=3):
    """perf stat --per-thread's task-clock by thread name (perf_rows), the n largest: [[name, ns], ...].
    What ran in the JVM at rest, where no request explains it."""
    by = {}
    for name, event, v in perf_rows(text):
        if event == "task-clock" and name and v is not None:
            by[name] = by.get(name, 0) + v
    return [[name, round(ns)] for name, ns in sorted(by.items(), key=lambda kv: -kv[1])[:n]]


def proc_figures(smaps_rollup, status):
    """(Pss kB, threads) from /proc/PID/smaps_rollup and /proc/PID/status; None where unreadable."""
    pss = re.search(r"^Pss:\s+(\d+) kB", smaps_rollup or "", re.M)
    threads = re.search(r"^Threads:\s+(\d+)", status or "", re.M)
    return (int(pss.group(1)) if pss else None), (int(threads.group(1)) if threads else None)


def client_connections(tables, port):
    """Established TCP connections whose far end is `port`, in /proc/PID/net/tcp and tcp6 (the app's
    network namespace: every process in it; in a cost run only the app calls the backend), or None
    where the tables could not be read."""
    if not tables:
        return None
    end = f":{port:04X}"
    return sum(1 for line in tables.splitlines() if len(f := line.split()) > 3 and f[3] == "01" and f[2].endswith(end))


def unread(window):
    """A window that lacks one of its two /stats readings (one did not answer in time): no request count
    to divide by (live.warm_windows measures it again)."""
    return not ((window.get("stats0") or {}).get("jvm") and (window.get("stats1") or {}).get("jvm"))


def kept(stats):
    """What a window keeps of a /stats read: its counters, not its thread lists."""
    return {k: stats.get(k) for k in ("completed", "errors", "inFlight", "queued", "jvm")}


def delta(before, after, key, of="jvm"):
    """A counter's change between two /stats reads (of its `jvm` object, or the top level); None when either lacks it."""
    a = (before.get(of) if of else before) or {}
    b = (after.get(of) if of else after) or {}
    if a.get(key) is None or b.get(key) is None:
        return None
    return b[key] - a[key]


def jit_share(stats0, stats1):
    """The compiler threads' share of the app's CPU between two /stats reads (0..1), or None."""
    cpu_ms, compiler_ms = delta(stats0, stats1, "cpuMs"), delta(stats0, stats1, "compilerCpuMs")
    return None if not cpu_ms or compiler_ms is None or compiler_ms < 0 else compiler_ms / cpu_ms


def steal_pct(box0, box1):
    """The hypervisor's steal over a window as a % of the app host's CPU time (its pinned CPUs, or the
    whole box): time this VM's CPUs ran someone else, which slows what the app's CPU time buys."""
    return procs.ticks_share(box0, box1, 2)


def parse_speed(lines):
    """bench/tools/speed-probe.py's JSON line (the last line that is one; on a host, after host-run's
    own): {"ns_per_iteration", "ns_per_step", "bursts", "nice", "burst_ns", "walk_ns", ...}, or {"error": why}
    where it printed none."""
    for line in reversed(lines or []):
        if line.startswith("{"):
            try:
                out = json.loads(line)
            except ValueError:
                break
            if isinstance(out, dict) and out.get("ns_per_iteration"):
                return out
            break
    return {"error": next((line for line in reversed(lines or []) if line.strip()), "no output")[:200]}


def rest_ns_per_s(rest):
    """What each window subtracts: the JVM's CPU at rest, ns a second, without its compiler threads'
    (kept apart since 2026-11-27; a run before then subtracts it all). A load's end runs code its
    windows did not (closes), and the JIT compiles that right then: one fork read 109.2 ms a second at
    rest, 103.5 of them the compiler's, and had them subtracted from every window, ~100 µs a request."""
    if not rest or rest.get("ns_per_s") is None:
        return None
    if rest.get("jit_ns") is None or rest.get("task_ns") is None or not rest.get("seconds"):
        return rest["ns_per_s"]
    return (rest["task_ns"] - rest["jit_ns"]) / rest["seconds"]


def window_figures(perf, stats0, stats1, perf_s, stats_s, rest_ns_per_s):
    """One window's figures, per request: CPU µs (the app's task-clock less what the JVM at rest
    spends in as long), syscalls, context switches, heap bytes; GC count and ms per 1,000 requests;
    and what they came from, so that a reader can redo the division. perf counts over its own
    `sleep` (perf_s), the requests over the two /stats reads around it (stats_s, a few ms longer):
    under a constant arrival rate each is divided by its own window, so the edges bias nothing."""
    requests = delta(stats0, stats1, "completed", of=None)
    share = jit_share(stats0, stats1)
    raw = {"perf_s": perf_s, "stats_s": round(stats_s, 3), "requests": requests,
           "errors": delta(stats0, stats1, "errors", of=None), "task_ns": perf.get("task-clock"),
           "rest_ns_per_s": None if rest_ns_per_s is None else round(rest_ns_per_s),
           "syscalls": perf.get("raw_syscalls:sys_enter"), "context_switches": perf.get("context-switches"),
           "allocated_bytes": delta(stats0, stats1, "allocatedBytes"), "gc_count": delta(stats0, stats1, "gcCount"),
           "gc_ms": delta(stats0, stats1, "gcTimeMs"),
           "jit_pct": None if share is None else round(100 * share, 1)}
    if not requests or stats_s <= 0:
        return raw
    rps = requests / stats_s

    def per_req_of_perf(v, scale=1.0):        # a perf count over its window, per request
        return None if v is None else v / perf_s / rps * scale

    def per_req(v, scale=1.0):                # a JVM counter over the stats window, per request
        return None if v is None else v / requests * scale
    task = raw["task_ns"]
    raw.update(rps=round(rps, 1),
               cpu_us=None if task is None or rest_ns_per_s is None else (task / perf_s - rest_ns_per_s) / rps / 1e3,
               cpu_us_with_rest=per_req_of_perf(task, 1e-3), syscalls_per_req=per_req_of_perf(raw["syscalls"]),
               futex_per_req=per_req_of_perf(perf.get(WAITS[0])),
               epoll_per_req=per_req_of_perf(None if perf.get(WAITS[1]) is None and perf.get(WAITS[2]) is None
                                             else (perf.get(WAITS[1]) or 0) + (perf.get(WAITS[2]) or 0)),
               gc_cpu_us=per_req_of_perf(perf.get("task-clock:gc"), 1e-3),
               jit_cpu_us=per_req_of_perf(perf.get("task-clock:jit"), 1e-3),
               agent_cpu_us=per_req_of_perf(perf.get("task-clock:agent"), 1e-3),
               csw_per_req=per_req_of_perf(raw["context_switches"]), alloc_kib=per_req(raw["allocated_bytes"], 1 / 1024),
               gc_per_1000=per_req(raw["gc_count"], 1000), gc_ms_per_1000=per_req(raw["gc_ms"], 1000))
    return raw
