"""WARMUP: how a fresh app (or one given a new pool or level) is warmed up before its cell, and
WARMUP=auto's rule (issue 26): has its JIT settled? A window, a threshold, a cap and a named outcome,
as DaCapo's -converge has them, but on the JIT itself: a 10 s cell on 2 cores otherwise measures a
JVM in its first minute (docs/traps.md #32).

The warm-up drives the app in windows of a few seconds and reads /stats' `jvm` object around each:
the app's CPU, and how much of it the C1/C2 compiler threads took. The JIT has settled when, in
the last IN_A_ROW windows, the compiler took at most JIT_SHARE_MAX of the app's CPU and the CPU
per request stopped falling: none of the later windows cheaper than the first of them by more than
CPU_FALL_MAX. Before FLOOR_S it never has; past CAP_S the cell is measured anyway and labelled
"no steady state within CAP_S s".
"""
import re
import time
from dataclasses import dataclass

from . import place, remote, web

# 3 s: in 2 s windows the same 15 fresh JVMs warmed 8.5 % longer, and a light load while the compiler
# works did not shorten it either (docs/traps.md #41).
WINDOW_S = 3
IN_A_ROW = 3
FLOOR_S = IN_A_ROW * WINDOW_S
CAP_S = 60
JIT_SHARE_MAX = 0.05
# Not DaCapo's "within 3 %" either way: 3 s windows of a JVM whose compiler was already idle
# (<= 1 % of its CPU) varied 0.0945-0.1009 CPU ms/request on the 2-core box (async-servlet, Jetty,
# 10 connections; three in a row 2.8-5.3 % apart), and up to +8 % (0.0486 -> 0.0526, compiler
# 1-2 %) in a later probe: wrk and the app share 2 cores. What the JIT still has to do makes a
# request *cheaper*; a dearer window with a quiet compiler is the box, and the measured window will
# have that noise too. So only a fall counts as "still warming": a rule that also waited for the
# box to be quiet too (max / min - 1 <= 5 %, until 2026-11) settled that probe (async-servlet,
# Jetty, 1 thread, 100 connections) after 33 s, its compiler quiet since 15 s; this rule: 21 s.
CPU_FALL_MAX = 0.05


@dataclass
class Window:
    """One window of the warm-up load, from two /stats readings."""
    seconds: float
    requests: int
    cpu_ms: float
    compiler_cpu_ms: float      # negative when a compiler thread ended inside it (its CPU left /proc)

    def jit_share(self):
        """The compiler's share of the app's CPU; None when it cannot be known."""
        if self.cpu_ms <= 0 or self.compiler_cpu_ms < 0:
            return None
        return self.compiler_cpu_ms / self.cpu_ms

    def cpu_ms_per_request(self):
        return self.cpu_ms / self.requests if self.requests > 0 else None

    def to_json(self):
        share, per_req = self.jit_share(), self.cpu_ms_per_request()
        return {"seconds": round(self.seconds, 2), "requests": self.requests, "cpu_ms": round(self.cpu_ms),
                "compiler_cpu_ms": round(self.compiler_cpu_ms),
                "jit_pct": None if share is None else round(100 * share, 1),
                "cpu_ms_per_req": None if per_req is None else round(per_req, 4)}


def window(before, after):
    """A Window from two /stats documents (their `completed` and `jvm`) and the seconds between them."""
    b, a = before["stats"], after["stats"]
    return Window(seconds=after["t"] - before["t"], requests=a.get("completed", 0) - b.get("completed", 0),
                  cpu_ms=a["jvm"]["cpuMs"] - b["jvm"]["cpuMs"],
                  compiler_cpu_ms=a["jvm"]["compilerCpuMs"] - b["jvm"]["compilerCpuMs"])


def settled(windows):
    """The last IN_A_ROW windows: each with a known JIT share <= JIT_SHARE_MAX, and their CPU per
    request no longer falling: none below the first of them by more than CPU_FALL_MAX."""
    last = windows[-IN_A_ROW:]
    if len(last) < IN_A_ROW:
        return False
    shares = [w.jit_share() for w in last]
    costs = [w.cpu_ms_per_request() for w in last]
    if any(s is None or s > JIT_SHARE_MAX for s in shares) or any(c is None or c <= 0 for c in costs):
        return False
    return min(costs[1:]) >= costs[0] * (1 - CPU_FALL_MAX)


class Readings:
    """A warm-up's /stats readings and the windows between them. A reading that did not come in time
    (web.http's 5 s; None) is skipped and the window runs on to the next one that comes: a cold JVM whose
    CPU the app and its compiler share may answer late, as one Reactor Netty fork at 1,000 req/s on one
    CPU did (2026-11-27), and its warm-up, ended by that one missed reading, left a JVM 6 s old to be
    measured. /stats silent for CAP_S ends it as no steady state."""

    def __init__(self, first, t):
        self.started, self.missed, self.windows = t, 0, []
        self.reads = [{"t": t, "stats": first}] if first is not None else []

    def add(self, stats, t, floor_s=FLOOR_S):
        """The next reading (taken at t), and the verdict on the windows so far: (outcome, text), outcome
        "unknown" for an app whose /stats has no jvm object to judge the JIT by."""
        if stats is not None and "jvm" not in stats:
            return "unknown", "no /stats jvm object to judge the JIT by"
        if stats is None:
            self.missed += 1
            if time.monotonic() - self.started >= CAP_S:
                return "no steady state", f"no steady state within {CAP_S} s: /stats did not answer {self.missed} time(s)"
            return "warming", ""
        self.reads.append({"t": t, "stats": stats})
        if len(self.reads) >= 2:
            self.windows.append(window(self.reads[-2], self.reads[-1]))
        return verdict(self.windows, floor_s=floor_s) if self.windows else ("warming", "")

    def record(self):
        """What the warm-up's record keeps of them."""
        return {"seconds": round(sum(w.seconds for w in self.windows), 1), "missed_reads": self.missed,
                "requests": sum(w.requests for w in self.windows), "windows": [w.to_json() for w in self.windows]}


def verdict(windows, floor_s=FLOOR_S, cap_s=CAP_S):
    """("settled" | "warming" | "no steady state", text) for the windows so far."""
    elapsed = sum(w.seconds for w in windows)
    if elapsed >= floor_s and settled(windows):
        return "settled", f"JIT settled after {elapsed:.0f} s"
    if elapsed >= cap_s:
        return "no steady state", f"no steady state within {cap_s} s"
    return "warming", f"{elapsed:.0f} s"


def warm_up(s, url, wt, conns, out, pool, stats_url, measured_url=None, fault_url=None):
    """An unrecorded wrk run of fast calls before a fresh app's cell: loads classes, JIT-compiles
    the request path and opens connections, and leaves nothing queued behind it (1 s calls would
    leave C requests). A thread-per-request app gets at most one connection per pool thread
    (`pool`), so no queue forms at all. WARMUP=Ns: N seconds of `url` (?ms=0). WARMUP=auto:
    windows of fast calls until the JIT has settled (the rule above). Returns what it did, for
    the cell's record ({} for none)."""
    pool_limited = pool is not None and pool < conns
    if pool_limited:
        conns = pool
        wt = min(wt, conns)
    if s.warmup == "auto":
        # A pool-limited app's threads each wait the backend's whole answer time (one connection
        # per thread): at 1 ms a 1-thread sync app served ~650 req/s and its JIT took 61 s to settle
        # (6 of the 8 in the default matrix hit the cap); answered at once, 4,800 req/s and 21 s.
        # The others are CPU-bound at 1 ms already (14,000-20,000 req/s on 2 cores) and keep it: their
        # client then always waits on its answer, as in the measured window.
        return auto_warm_up(url, wt, conns, out, stats_url, measured_url, fault_url,
                            fast_ms=0 if pool_limited else 1)
    if s.warmup_s == 0:
        return {}
    place.run("loadgen", ["wrk", "-t", str(wt), "-c", str(conns), "-d", f"{s.warmup_s}s", url], out)
    return {"mode": "fixed", "seconds": s.warmup_s}


# remote-sleep's /fault schedule for one warm-up window, posted as the window starts: every call
# answered after 1 ms (0 for a pool-limited app, warm_up), whatever it asked for; then, for the window's last TAIL_MS, after TAIL_DELAY_MS,
# so that wrk ends the window with a request in flight on every connection, as it ends every
# measured window (a 1 s call cannot finish by then). The app then closes connections whose
# request is still waiting, and writes answers to closed ones, in the warm-up too, so that this
# end of a window is in the profile HotSpot compiles from. Put in while hunting the uncommon traps of
# docs/traps.md #37, whose cause turned out to be the verify call; what the tail alone is worth was
# not measured: every sample since ran with it.
TAIL_MS, TAIL_DELAY_MS = 300, 200


def fast_schedule(delay_ms):
    return f"{WINDOW_S * 1000 - TAIL_MS}ms:delay={delay_ms},{TAIL_MS + 1000}ms:delay={TAIL_DELAY_MS}"


def auto_warm_up(url, wt, conns, out, stats_url, measured_url=None, fault_url=None, fast_ms=1):
    """WARMUP=auto: wrk windows of WINDOW_S of fast calls, /stats read around each, until
    verdict() is not "warming".

    The calls are the measured request itself (measured_url) with remote-sleep told to answer
    every call after 1 ms (its /fault, fault_url): the app then runs exactly the measured code, its
    branches and its query string included. Warming on `?ms=1` instead sent the app down another
    branch (the `ms` parameter present); the first measured request hit an uncommon trap, HotSpot
    threw away the compiled request path and recompiled it inside the measured window, where the
    compiler then took 52-57 % of the app's CPU (docs/traps.md #37). Without fault_url (BACKEND=postgres:
    no remote-sleep in the path) it warms on `url` with ?ms=1 and says so."""
    schedule = fast_schedule(fast_ms)
    fast = bool(measured_url and fault_url and remote.fast(fault_url, schedule))
    if fast:
        url = measured_url
        how = (f"the measured request, remote-sleep answering after {fast_ms} ms ({TAIL_DELAY_MS} ms in each window's "
               f"last {TAIL_MS} ms: wrk ends it with calls in flight)")
    else:
        url, how = url.replace("ms=0", "ms=1"), "the warm-up path with ?ms=1 (another branch than the measured request)"
    path = "/" + url.split("/", 3)[3]      # http://host:port/path?query
    print(f"  warming up: {path} in {WINDOW_S} s windows "
          f"until the JIT settles ({FLOOR_S}-{CAP_S} s) …", flush=True)
    try:
        done = _windows(url, wt, conns, out, stats_url, how, fault_url if fast else None, schedule)
        last = (done.get("windows") or [{}])[-1]
        print(f"  warm-up: {done['text']} ({done.get('requests', 0):,} requests; the compiler "
              f"{last.get('jit_pct')} % of the app's CPU in the last window)", flush=True)
        return done
    finally:
        if fast:
            remote.end_fault(fault_url)


def _windows(url, wt, conns, out, stats_url, how, fault_url, schedule):
    t, waited, counted = time.monotonic(), 0.0, 0
    first = web.get_json(stats_url)
    by_wrk = first is not None and "completed" not in first   # APP_JAR: a server whose requests the agent cannot count
    if by_wrk:
        how += "; requests counted by wrk (the app's own count is unknown)"
    readings = Readings(with_count(first, counted), t)
    while True:
        if readings.windows and fault_url:
            remote.fast(fault_url, schedule)      # the window's own schedule, from its start
        # from the first load host: a warm-up needs the app's code paths, not the split
        cmd = ["wrk", "-t", str(wt), "-c", str(conns), "-d", f"{WINDOW_S}s", url]
        window_out = out.with_name(f"{out.stem}-{len(readings.windows) + 1:02d}{out.suffix}")
        place.run("loadgen", cmd, window_out)
        counted += wrk_requests(window_out) if by_wrk else 0     # read only where the app has no count of its own
        stats = with_count(web.get_json(stats_url), counted)
        if stats and stats.get("background"):     # work handed off and not done: the window ends with it
            stats, seconds = finish_background(stats_url, fault_url)
            waited, wt, conns = waited + seconds, 1, 1
            how = how.split("; ")[0] + (f"; each window ended once the calls it handed off were done ({waited:.0f} s "
                                        f"in all), from the second on 1 connection: its pool keeps pace with no more")
        outcome, text = readings.add(stats, time.monotonic())
        if outcome == "unknown":
            return {"mode": "auto", "outcome": outcome, "text": text, "command": place.shown("loadgen", cmd), "how": how,
                    "windows": [w.to_json() for w in readings.windows]}
        if outcome != "warming":
            return {"mode": "auto", "outcome": outcome, "text": text, "command": place.shown("loadgen", cmd), "how": how,
                    **readings.record()}


def with_count(stats, counted):
    """/stats as it is, or, where it has no request count (APP_JAR: a server whose agent cannot read one),
    with wrk's count of the warm-up's answers so far in its place."""
    return stats if stats is None or "completed" in stats else {**stats, "completed": counted}


def wrk_requests(path):
    """The answers a plain wrk run counted ("12345 requests in 3.00s"), 0 where its output has none."""
    try:
        found = re.search(r"(\d+) requests in ", path.read_text(errors="replace"))
    except OSError:
        return 0
    return int(found.group(1)) if found else 0


# The longest a window's handed-off calls may take to finish: past it the window is read as it is,
# and the drain after the warm-up says what was still left.
BACKGROUND_S = 60


def finish_background(stats_url, fault_url):
    """Wait until an app that answers before its work is done (fire-and-forget: /stats' `background`,
    calls handed to a pool and not done) has done it, remote-sleep answering at once: the window's CPU
    is then its requests' whole cost, and no backlog is left to the next window or the measured cell
    (a warm-up of 1.6 million fire-and-forget requests left ~16 million calls behind it, and its probe's
    calls waited behind them: issue 37). (the /stats read then, the seconds it took)."""
    t0 = time.monotonic()
    fast = bool(fault_url and remote.fast(fault_url, f"{BACKGROUND_S * 1000 + 1000}ms:delay=0"))
    try:
        stats = web.get_json(stats_url)
        while stats and stats.get("background") and time.monotonic() - t0 < BACKGROUND_S:
            time.sleep(0.1)
            stats = web.get_json(stats_url)
        return stats, time.monotonic() - t0
    finally:
        if fast:
            remote.end_fault(fault_url)


REST_S = 3


def at_rest(stats_url, seconds=REST_S):
    """The app's CPU with no load at all for `seconds`, after its warm-up (issue 26): what the JVM
    spends on its own (GC threads, timers, selectors, the compiler's leftovers), so that a cell can
    say what the load added per request. {} when /stats has no jvm object."""
    before = {"t": time.monotonic(), "stats": web.get_json(stats_url)}
    time.sleep(seconds)
    after = {"t": time.monotonic(), "stats": web.get_json(stats_url)}
    if not all(r["stats"] and "jvm" in r["stats"] for r in (before, after)):
        return {}
    w = window(before, after)
    return {"seconds": round(w.seconds, 2), "cpu_ms": w.cpu_ms, "compiler_cpu_ms": w.compiler_cpu_ms}
