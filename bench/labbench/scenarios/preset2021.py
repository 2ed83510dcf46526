"""PRESET=2021: the 2021 write-up's matrix as it ran it, then the same matrix as this lab runs it,
side by side, with what made the difference named cell by cell (docs/prior-art.md).

The write-up: Spring MVC sync and async and WebFlux, on Tomcat and Jetty, with 1 and 200 threads,
wrk -t10 / -t100 -c100 for 10 s with wrk's default 2 s timeout, a remote that sleeps 1 s. Every
non-sync cell read ~14 req/s, 200 threads included: its client was Reactor Netty with a named
16-connection pool (docs/traps.md #1, #28), and wrk's 2 s timeout left the slow answers out of its
latency figures (#2). "as 2021" reproduces both on purpose (--client reactor-netty
--client-max-connections 16, wrk --timeout 2s); "as the lab" is the same matrix on the JDK client
without a cap and a timeout longer than the run. A planner of call cells, like the sweep."""
from ..checks import UsageError
from ..knobs import setting
from ..report.fmt import f_int, f_lat, f_pct, f_rps, status_text, threads_order
from . import Scenario

APPS = ["sync-mvc", "async-mvc", "webflux"]
CONTAINERS = ["tomcat", "jetty"]
THREADS = ["1", "200"]
WRK_THREADS = [10, 100]
CONNECTIONS = 100
POOL = 16                  # the write-up's client pool: Reactor Netty's named ConnectionProvider default
WAYS = {"as-2021": ("reactor-netty", ("--client-max-connections", str(POOL)), "2s"),
        "as-the-lab": ("jdk", (), "")}
# The write-up's own figures (requests in 10 s, timeouts): (threads, wrk -t, app) -> figures.
WRITE_UP = {("200", 10, "sync-mvc"): (135, 120), ("200", 10, "webflux"): (133, 118), ("200", 10, "async-mvc"): (135, 118),
            ("1", 10, "sync-mvc"): (9, 0), ("1", 10, "webflux"): (135, 120), ("1", 10, "async-mvc"): (135, 120),
            ("1", 100, "sync-mvc"): (9, 0), ("1", 100, "webflux"): (142, 127), ("1", 100, "async-mvc"): (150, 135)}
NOT_IN_PRESET = ("APPS", "CONTAINERS", "THREADS", "CLIENT", "WRK_THREADS", "CONNECTIONS", "SCENARIO", "LOADGEN",
                 "WRK_TIMEOUT", "SWEEP")


class Preset2021(Scenario):
    name = "preset2021"
    selectable = False
    settings = (setting("PRESET", "", "`2021`: the 2021 write-up's matrix as it ran it (16-connection Reactor Netty "
                        "pool, wrk's 2 s timeout), then as the lab runs it, side by side"),)
    heading = "PRESET=2021: a matrix of its own"

    def selected(self, argv, environ):
        return environ.get("PRESET") == "2021"

    def parse(self, v):
        if v["PRESET"] not in ("", "2021"):
            raise UsageError(f"PRESET: '{v['PRESET']}' is not 2021 (the only preset) or empty")
        return {}

    def environ(self, environ, n_cores):
        for name in NOT_IN_PRESET:
            if environ.get(name):
                raise UsageError(f"{name}={environ[name]}: PRESET=2021 sets {name} itself (the write-up's matrix)")
        return dict(environ, APPS=" ".join(APPS), CONTAINERS=" ".join(CONTAINERS), THREADS=" ".join(THREADS),
                    WRK_THREADS=" ".join(map(str, WRK_THREADS)), CONNECTIONS=str(CONNECTIONS),
                    CLIENT="jdk reactor-netty"), []

    def with_drivers(self, s):
        raise UsageError("PRESET=2021 is the write-up's HTTP matrix: it runs with BACKEND=http only")

    def plan(self, s, make):
        return [make(app, ct, threads, wt, CONNECTIONS, way, client, args, timeout)
                for way, (client, args, timeout) in WAYS.items()
                for ct in CONTAINERS for app in APPS for threads in THREADS for wt in WRK_THREADS]

    def fit_limits(self, environ, s, error, held):
        return None

    def meta_values(self, s):
        return {"mode": self.name}

    def starting_lines(self, s):
        return [f"== PRESET=2021: the write-up's matrix as it ran it ({POOL}-connection Reactor Netty pool, wrk "
                f"--timeout 2s), then as the lab runs it (the JDK client, no cap, wrk --timeout {s.wrk_timeout})"]

    def verdict(self, run):
        return "## Verdict: the 2021 matrix as it ran, and as the lab runs it\n\n" + table(run)

    def sections(self, run, ctx):
        return [(10, "\n## How to read PRESET=2021\n\n" + HOW)]

    def closing_lines(self, run):
        return ["== PRESET=2021, as 2021 -> as the lab (req/s):"] + [
            f"   {row[0]} {row[1]} t={row[2]} -t{row[3]}: {row[4]} -> {row[5]}  ({row[6]})" for row in rows(run)]


HOW = (f"*as 2021* is the write-up's set-up on purpose: every app calls the remote through Reactor Netty with a "
       f"{POOL}-connection pool, and wrk has its default 2 s timeout. *as the lab* is the same matrix on the JDK "
       f"client without a cap and a wrk timeout longer than the run. **req/s** is wrk's own figure (what the "
       f"write-up reported: requests in 10 s / 10), **timeouts** what wrk counted as timed out, **write-up** its "
       f"requests in 10 s and timeouts for that row (it names no container; the same figures stand beside both). "
       f"**steady** and **% of ceiling** are the lab's measure (docs/reading-results.md). **cause**: what made "
       f"the difference, from the figures: a rate at the pool's Little's-law bound ({POOL} connections / 1 s = "
       f"{POOL} req/s) is the client pool; 1 thread of a blocking app is its own bound (1 req/s) either way; "
       f"timeouts are wrk's 2 s limit, whose answers are missing from the latency figures.\n")


def rows(run):
    """(app, container, threads, wrk -t, 2021 text, lab text, cause, write-up) per cell pair."""
    by = {}
    for c in run["cells"]:
        by[(c.get("variant"), c["app"], c["container"], str(c["threads"]), c["wrk_threads"])] = c
    out = []
    for ct in CONTAINERS:
        for threads in sorted(THREADS, key=lambda t: threads_order(int(t))):
            for wt in WRK_THREADS:
                for app in APPS:
                    old, new = by.get(("as-2021", app, ct, threads, wt)), by.get(("as-the-lab", app, ct, threads, wt))
                    if old is None or new is None:
                        continue
                    out.append((app, ct, threads, wt, rate_text(old), rate_text(new), cause(old, new, app, threads),
                                WRITE_UP.get((threads, wt, app))))
    return out


def rate_text(c):
    if c["status"] != "ok":
        return status_text(c)
    return f"{f_rps(c.get('rps'))}"


def cause(old, new, app, threads):
    if old["status"] != "ok" or new["status"] != "ok":
        return "—"
    parts = []
    blocking_one = app == "sync-mvc" and threads == "1"
    if blocking_one:
        parts.append("its 1 thread (1 req/s by Little's law), both ways")
    elif (old.get("rps") or 0) <= 1.3 * POOL and (new.get("steady_rps") or 0) > 2 * POOL:
        parts.append(f"the client pool ({POOL} connections / 1 s = {POOL} req/s)")
    elif (new.get("steady_rps") or 0) > 1.3 * (old.get("rps") or 0):
        parts.append("not the pool alone (see the cells)")
    if old.get("timeouts"):
        parts.append(f"wrk's 2 s timeout: {old['timeouts']} timeouts, left out of the latency figures")
    return "; ".join(parts) or "no difference"


def table(run):
    by = {(c.get("variant"), c["app"], c["container"], str(c["threads"]), c["wrk_threads"]): c for c in run["cells"]}
    lines = ["| app | container | threads | wrk | write-up: requests in 10 s (timeouts) | as 2021: req/s | timeouts "
             "| avg | as the lab: steady req/s | % of ceiling | cause |\n",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|\n"]
    for app, ct, threads, wt, _old, _new, why, wu in rows(run):
        o, n = by[("as-2021", app, ct, threads, wt)], by[("as-the-lab", app, ct, threads, wt)]
        ok_o, ok_n = o["status"] == "ok", n["status"] == "ok"
        lines.append(f"| {app} | {ct} | {threads} | -t{wt} -c{CONNECTIONS} | "
                     f"{'—' if wu is None else f'{wu[0]} ({wu[1]})'} | "
                     f"{f_rps(o.get('rps')) if ok_o else status_text(o)} | {f_int(o.get('timeouts')) if ok_o else ''} | "
                     f"{f_lat(o.get('latency_avg_ms')) if ok_o else ''} | "
                     f"{f_rps(n.get('steady_rps')) if ok_n else status_text(n)} | "
                     f"{f_pct(n.get('pct_of_ceiling')) if ok_n else ''} | {why} |\n")
    return "".join(lines)


SCENARIO = Preset2021()
