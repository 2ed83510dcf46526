"""WARMUP=auto's rule (issue 26): has a fresh JVM's JIT settled? A window, a threshold, a cap and a
named outcome, as DaCapo's -converge has them, but on the JIT itself: a 10 s cell on 2 cores
otherwise measures a JVM in its first minute (docs/traps.md #32).

The warm-up drives the app in windows of a few seconds and reads /stats' `jvm` object around each:
the app's CPU, and how much of it the C1/C2 compiler threads took. The JIT has settled when, in
the last IN_A_ROW windows, the compiler took at most JIT_SHARE_MAX of the app's CPU and the CPU
per request stopped falling: none of the later windows cheaper than the first of them by more than
CPU_FALL_MAX. Before FLOOR_S it never has; past CAP_S the cell is measured anyway and labelled
"no steady state within CAP_S s".
"""
from dataclasses import dataclass

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
    return Window(seconds=after["t"] - before["t"], requests=a["completed"] - b["completed"],
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


def verdict(windows, floor_s=FLOOR_S, cap_s=CAP_S):
    """("settled" | "warming" | "no steady state", text) for the windows so far."""
    elapsed = sum(w.seconds for w in windows)
    if elapsed >= floor_s and settled(windows):
        return "settled", f"JIT settled after {elapsed:.0f} s"
    if elapsed >= cap_s:
        return "no steady state", f"no steady state within {cap_s} s"
    return "warming", f"{elapsed:.0f} s"
