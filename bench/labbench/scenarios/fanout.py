"""SCENARIO=fanout: one request, N remote calls (GET /fanout?n=N&ms=M). Each fan-out app is first
timed one request at a time for each N of FANOUT (what the write-ups timed), then put under wrk's
load with N = 10, where CPU per request and peak threads show what each model costs."""
import re

from .. import catalog
from ..checks import UsageError, counts, known
from ..knobs import setting
from ..loadgens import probe as one_at_a_time
from ..report.fmt import error_total, f_cores, f_int, f_lat, f_rps, num, ranged, status_text, threads_label, threads_order
from ..report.tables import each_cell, group_tables
from . import Scenario

# Under load, every fan-out request makes this many calls (the "throughput at N = 10").
FANOUT_LOAD_N = 10

# How each model spends one request's N calls of M ms, for its Little's-law bound: how many of them
# run at once ("1", "K" threads, "C" concurrency, "min(C,K)", or None: all N), and whether each call
# blocks one of the app's K pool threads for its M ms (then the whole app makes at most K / M calls
# a second, K / (N x M) requests, however many connections wait). K and C are read from the app's
# own lab: line (`pool=10`, `K=10`, `concurrency=16`), so APP_ARGS' --fanout-pool moves the bound.
# The common pool is not limited by its parallelism (a blocked worker gets a spare, up to 256:
# docs/findings/fanout.md); fire-and-forget answers before its calls, so nothing bounds its answers.
SHAPES = {
    "fanout-sequential": ("1", False),
    "fanout-pool": ("K", True),
    "fanout-common-pool": (None, False),
    "fanout-virtual": (None, False),
    "fanout-async": (None, False),
    "fanout-webflux": ("C", False),
    "fanout-coroutines-blocking": ("K", True),
    "fanout-coroutines-suspending": (None, False),
    "fanout-flow-blocking": ("min(C,K)", True),
    "fanout-flow-suspending": ("C", False),
}
ANSWERS_FIRST = ("fanout-fire-and-forget",)


class Fanout(Scenario):
    name = "fanout"
    settings = (
        setting("FANOUT", "1 10 100", "`SCENARIO=fanout`: the N of `GET /fanout?n=N` timed one request at a time", "list"),
        setting("FANOUT_MS", "300", "`SCENARIO=fanout`: each remote call's delay (ms)", "value"),
        setting("FANOUT_APPS", "", "`SCENARIO=fanout`: the fan-out apps; empty = all of them", "list",
                known=lambda: catalog.apps_for("fanout")),
    )
    heading = (f"SCENARIO=fanout: each fan-out app timed one request at a time for each N (GET /fanout?n=N&ms=FANOUT_MS), "
               f"then under wrk's load with N = {FANOUT_LOAD_N}")
    fields = ("fanout_n", "fanout_ms", "bound_how")
    has_ceiling = False        # its requests make N calls each, the calibration's make one

    def parse(self, v):
        fanout = counts("FANOUT", v["FANOUT"])
        if max(fanout) > 1000:
            raise UsageError(f"FANOUT: {max(fanout)} calls per request is more than the apps take (1..1000)")
        if not (re.fullmatch(r"[0-9]{1,5}", v["FANOUT_MS"]) and int(v["FANOUT_MS"]) <= 60000):
            raise UsageError(f"FANOUT_MS: '{v['FANOUT_MS']}' is not an integer in 0..60000")
        apps = catalog.apps_for(self.name)
        return {"fanout": fanout, "fanout_ms": int(v["FANOUT_MS"]),
                "fanout_apps": known("FANOUT_APPS", v["FANOUT_APPS"] or " ".join(apps), apps, "fan-out app")}

    def meta_values(self, s):
        return {"fanout": " ".join(map(str, s.fanout)), "fanout_ms": s.fanout_ms, "fanout_apps": " ".join(s.fanout_apps)}

    def meta(self, meta):
        if "fanout_ms" in meta:
            meta["fanout_ms"] = num(meta["fanout_ms"], int)
        for key in ("fanout", "fanout_apps"):
            if key in meta:
                meta[key] = meta[key].split()

    def apps(self, s):
        return s.fanout_apps

    def path(self, s):
        return f"/fanout?n={FANOUT_LOAD_N}&ms={s.fanout_ms}"

    def cells(self, s, make, loadgens):
        # first one request at a time per FANOUT N, as the write-ups timed it
        return [make("probe", None, None)] + super().cells(s, make, loadgens)

    def params(self, s):
        return {"fanout_n": FANOUT_LOAD_N, "fanout_ms": s.fanout_ms, "path": self.path(s)}

    def verify(self):
        # A fan-out app answers "app=… n=1 …" (a fire-and-forget one before its call even ran).
        return "/fanout?n=1&ms=0", " n=1 "

    def warmup_path(self):
        return "/fanout?n=1&ms=0"

    def skip_reason(self, app, java_major):
        if app == "fanout-virtual" and java_major < 21:
            return f"virtual threads need JDK 21+ (running {java_major})"
        return None

    def probes(self, s):
        out = []
        for n in s.fanout:
            limit = n * s.fanout_ms / 1000.0 * 1.5 + 30          # sequential N x M, with room
            out.append({"n": n, "ms": s.fanout_ms, "path": f"/fanout?n={n}&ms={s.fanout_ms}", "limit_s": limit,
                        "settle_s": min(limit, n * s.fanout_ms / 1000.0 + 2), "followup": "/fanout?n=1&ms=0"})
        return out

    def wait_ms(self, record):
        # each request's calls take FANOUT_MS, at best all at once
        return max(record.params.get("fanout_ms") or 0, 1)

    def call_ms(self, s):
        return s.fanout_ms

    def bound(self, record, in_flight, wait_s):
        """Requests in flight over one request's calls in rounds, and a pool-wide K / (N x M) where each
        call blocks one of K threads (SHAPES); the general bound where the lab: line lacks K or C."""
        n = record.params.get("fanout_n")
        if record.app in ANSWERS_FIRST and in_flight:
            return None, "nothing: it answers before its calls run"
        if record.app not in SHAPES or not n or not in_flight:
            return super().bound(record, in_flight, wait_s)
        line = record.lab_line or ""
        k = next((int(m.group(1)) for m in re.finditer(r"\b(?:pool|K)=([0-9]+)", line)), None)
        c = next((int(m.group(1)) for m in re.finditer(r"\bconcurrency=([0-9]+)", line)), None)
        at_once, blocks = SHAPES[record.app]
        width = {"1": 1, "K": k, "C": c, "min(C,K)": min(c, k) if c and k else None, None: n}[at_once]
        if width is None:
            return super().bound(record, in_flight, wait_s)
        rounds = -(-n // width)
        bound = in_flight / (rounds * wait_s)
        how = f"{in_flight} in flight / ({rounds} x {wait_s * 1000:g} ms)"
        if blocks and k and k / (n * wait_s) < bound:
            bound, how = k / (n * wait_s), f"K={k} threads / ({n} x {wait_s * 1000:g} ms)"
        return bound, how

    def figures(self, record, d):
        return {"fanout_n": record.params.get("fanout_n"), "fanout_ms": record.params.get("fanout_ms")}

    def verdict(self, run):
        """Fan-out cells have no ceiling (a request makes N calls): one request's wall time per N,
        and the steady req/s under load against its bound, a row per app."""
        fan = [c for c in run["cells"] if c.get("scenario") == self.name]
        if not fan or len(fan) != len(run["cells"]):
            return None
        ns = sorted({p["n"] for c in fan for p in c.get("probes") or []})
        out = [f"## Verdict: one request of N calls of {fan[0].get('fanout_ms')} ms, and under load\n\n",
               "| app · container · threads |" + "".join(f" N = {n} |" for n in ns) + " under load: steady req/s of bound |\n",
               "|---|" + "---:|" * (len(ns) + 1) + "\n"]
        for key in dict.fromkeys((c["app"], c["container"], c["threads"]) for c in fan):
            mine = [c for c in fan if (c["app"], c["container"], c["threads"]) == key]
            by_n = {p["n"]: p for c in mine for p in c.get("probes") or []}
            loaded = [c for c in mine if c.get("loadgen") == "wrk"]
            load = "; ".join(under_load(c) if c["status"] == "ok" else status_text(c) for c in loaded)
            out.append(f"| {' · '.join(map(str, key))} |" + "".join(
                f" {one_at_a_time.probe_text(by_n[n]) if n in by_n else '—'} |" for n in ns) + f" {load} |\n")
        return "".join(out)

    def sections(self, run, ctx):
        text = fanout_section([c for c in run["cells"] if c.get("scenario") == self.name], ctx.containers,
                              ctx.calibration, run["meta"])
        return [(40, text)] if text else []


def fanout_section(fan, containers, calibration, meta):
    """SCENARIO=fanout: one request at a time per N (what the write-ups timed), then the same apps
    under wrk's load with N = 10 (what each model costs: threads, CPU per request)."""
    if not fan:
        return ""
    lines = []
    w = lines.append
    apps = meta.get("fanout_apps") or sorted({c["app"] for c in fan})
    ms_each = fan[0].get("fanout_ms")
    ns = sorted({p["n"] for c in fan for p in c.get("probes") or []})
    w(f"\n## One request, many calls (SCENARIO=fanout)\n\n")
    w(f"Each fan-out app answers `GET /fanout?n=N&ms={ms_each}` after N remote calls of {ms_each} ms; the "
      f"models differ only in how those calls wait (README, \"One request, many calls\"; each app's "
      f"limits — K threads, concurrency C, the common pool's parallelism — are in its `lab:` line). "
      f"The first table times one request at a time, as the write-ups did (the client's wall time: "
      f"sequential is N × {ms_each} ms, a model that overlaps all calls ≈ {ms_each} ms); the second puts "
      f"the same apps under wrk's closed loop with N = {fan[0].get('fanout_n') or 10}, where **CPU ms/req** "
      f"(the app's CPU time per answered request) and **peak thr.** show what each model costs. "
      f"**bound** is Little's law for each model (*set by*): the requests in flight (connections, or "
      f"the container's threads where the request thread waits) over the rounds one request's calls take "
      f"at best (all at once: {ms_each} ms; K threads or concurrency C at a time: ceil(N / K) × {ms_each} ms), "
      f"and at most K / (N × {ms_each} ms) where each call blocks one of K pool threads; K and C as each "
      f"app's `lab:` line prints them{held_thread_bound(fan, ms_each)}.\n")
    probes = [c for c in fan if c.get("loadgen") == "probe"]
    for threads in sorted({c["threads"] for c in probes}, key=threads_order):
        w(f"\n### One request at a time · {threads_label(threads)}\n\n")
        w("| app | container |" + "".join(f" N = {n} |" for n in ns) + "\n|---|---|" + "---:|" * len(ns) + "\n")
        for app, ct, c in each_cell(probes, apps, containers, threads):
            if c["status"] != "ok" and not c.get("probes"):
                w(f"| {app} | {ct} | {status_text(c)} |" + " |" * (len(ns) - 1) + "\n")
                continue
            by_n = {p["n"]: p for p in c.get("probes") or []}
            w(f"| {app} | {ct} |" + "".join(f" {one_at_a_time.probe_text(by_n[n]) if n in by_n else '—'} |" for n in ns) + "\n")
    loaded = [c for c in fan if c.get("loadgen", "wrk") == "wrk"]
    if loaded:
        w(f"\n### Under load (N = {loaded[0].get('fanout_n')})\n")
        w(group_tables(loaded, apps, containers, calibration, (ms_each or 1) / 1000.0,
                     ["steady req/s", "bound", "set by", "p99", "errors", "peak thr.", "CPU ms/req"],
                     lambda c: [ranged(c, "steady_rps", f_rps), f_rps(c["bound_rps"]), c.get("bound_how") or "—",
                                ranged(c, "p99_ms", f_lat),
                                f_int(error_total(c)), f_int(c.get("peak_threads")), f_cores(c.get("cpu_ms_per_request"))],
                     heading=lambda t, wt, cn: f"wrk -t{wt} -c{cn} on `/fanout?n={loaded[0].get('fanout_n')}&ms={ms_each}`."))
        for c in loaded:
            if c.get("handed_off"):
                w(f"\n{c['app']} · {c['container']} · {threads_label(c['threads'])} · -t{c['wrk_threads']} -c{c['connections']}: "
                  f"**{c['handed_off']:,} calls handed off and not done** when wrk stopped: its req/s counts answers, "
                  f"not the work they promised.\n")
    return "".join(lines)


def under_load(c):
    """'327.9 of 333.3', '0 answered in 10 s, of 3.3', '59934.7 answers; bound: nothing: ...'."""
    steady = f_rps(c.get("steady_rps")) if c.get("requests") else f"0 answered in {c.get('duration_s')} s,"
    if c.get("bound_rps") is None:
        return f"{steady} answers; bound: {c.get('bound_how') or 'none'}"
    return f"{steady} of {f_rps(c['bound_rps'])}"


def held_thread_bound(fan, ms_each):
    """The bound's second case, in runs that have it: apps whose request thread waits for its calls
    (thread per request in catalog.tsv) hold at most one request per container thread (runs before
    issue 37 recorded them as not)."""
    held = sorted({c["app"] for c in fan if c.get("thread_per_request") and c.get("loadgen") == "wrk"})
    if not held:
        return ""
    return f" (the request thread waits for its calls in {', '.join(held)}: thread per request)"


SCENARIO = Fanout()
