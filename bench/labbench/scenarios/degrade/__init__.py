"""SCENARIO=degrade (issue 17): when the backend slows down, a fault timeline per model.

vegeta sends RATE requests per second (open loop) through a whole timeline: FAULT_AT healthy,
FAULT_FOR of FAULT at remote-sleep (its /fault API: delay=MS, error=PCT or hang), AFTER healthy.
Each variant (app@container:threads[:client], as in the sweep) runs once per MAX_IN_FLIGHT value
(the apps' --max-in-flight admission limit, 0 = none), each on a fresh JVM. Per second it reads,
from vegeta's results, what was offered, answered and answered in time (goodput), and from the
app every 0.5 s what it holds (in flight, queued, threads, heap, RSS); then how long each model
takes to recover after the fault's end, beside what Little's law predicts from its caps.

A planner of its own cells (like the sweep): it owns its settings, plan, measurement (the fault
schedule, the sampler and vegeta around it), figures, report section and charts.

Reading it: the Degrade class at the end is what the bench calls; its methods hand over to the
sections above, which go from the arithmetic to the run and its report:
  settings        FAULT, FAULT_AT, FAULT_FOR, AFTER, MAX_IN_FLIGHT, DEGRADE_VARIANTS parsed and checked
  Little's law    predict: what a model's caps let it serve during the fault and how long it takes
                  to recover (no cap / a limit that rejects / a cap that queues)
  per second      vegeta's results as one row per second (by send and by completion), the
                  time to recover, the fault's window as the remote recorded it
  one cell        measure: the schedule posted, the Sampler and vegeta, the remote's record
  a cell's figures  figures: its results.json part ("degrade": {...}) from those raw files
  the report      results.md's section and verdict, the charts (bench/degrade_charts.py)
"""
import subprocess
import sys
from pathlib import Path

from ...checks import UsageError, split_list
from ...report.fmt import f_int, f_lat, f_mb, f_rps, status_text
from .. import Scenario
from . import live, settings
from .figures import FIELDS, figures
from .live import SAMPLE_S
from .settings import NAME, variant_id
from .timeline import ERROR_KINDS, RECOVERED_WITHIN, STAY_S
# Names other code reads as degrade.<name> (the tests, bench/degrade_charts.py), from where they live.
from .figures import read_samples  # noqa: F401
from .live import client_timeout_ms  # noqa: F401
from .model import hold_ms, predict  # noqa: F401
from .timeline import fault_window, per_second, time_to_recover  # noqa: F401


# ---------------------------------------------------------------- a cell's figures, in words

def errors_text(errors):
    """'503: 1,200 · 504: 3', or 'none'."""
    if errors is None:
        return "—"
    parts = [f"{k.replace('_', ' ')}: {n:,}" for k, n in errors.items() if n]
    return " · ".join(parts) or "none"


def predicted_text(c):
    if c.get("prediction") is None:
        return "—"
    if c["prediction"].startswith("not modelled"):
        return "not modelled"
    pr = c.get("predicted_recovery_s")
    return "does not recover" if pr is None else f"{'≤ ' if c.get('predicted_recovery_at_most') else ''}{pr:g} s"


def limit_text(n):
    return "none" if not n else f"{n:,}"


# ---------------------------------------------------------------- the report

def degrade_cells(run):
    return [c for c in run["cells"] if c.get("scenario") == NAME]


def label_of(run, c):
    labels = run["meta"].get("variant_labels") or {}
    base = (c.get("variant") or "").rsplit(":max-in-flight=", 1)[0]
    return labels.get(base, base or f"{c['app']} {c['container']} {c['threads']}")


def timeline_line(run):
    meta = run["meta"]
    return (f"Timeline: {meta.get('fault_at')} healthy, {meta.get('fault_for')} of `{meta.get('fault')}` at remote-sleep, "
            f"{meta.get('after')} healthy again; vegeta at **{meta.get('rate')} req/s** through all of it "
            f"(-timeout {meta.get('wrk_timeout_s')} s); healthy delay {meta.get('sleep_ms')} ms; goodput = 2xx answered "
            f"within {meta.get('goodput_deadline')}; the apps' client timeout: {client_timeouts(run)}.")


def client_timeouts(run):
    """The client deadlines the cells' apps printed in their `lab:` lines (APP_ARGS --client-timeout-ms sets it)."""
    seen = sorted({c["client_timeout_ms"] for c in degrade_cells(run) if c.get("client_timeout_ms")})
    return ", ".join(f"{t:,} ms" for t in seen) + " (their `lab:` lines)" if seen else "not printed"


def recovery_rows(run):
    """(label, limit, measured, predicted, cell) per cell, in the plan's order."""
    return [(label_of(run, c), c.get("max_in_flight_limit"), c.get("recovery_text") if c["status"] == "ok"
             else status_text(c), predicted_text(c) if c["status"] == "ok" else "—", c) for c in degrade_cells(run)]


def section(run, charts):
    """## When the backend slows down: the timeline, a row per cell, how to read it, the charts."""
    meta = run["meta"]
    w = [f"\n## When the backend slows down (SCENARIO=degrade)\n\n{timeline_line(run)}\n\n",
         "| variant | limit | healthy p99 | goodput before · during · after | errors | peak in flight · queued "
         "| peak threads | peak RSS · heap MB | recovered after | predicted (Little's law) |\n",
         "|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n"]
    for label, limit, _measured, _pred, c in recovery_rows(run):
        if c["status"] != "ok":
            w.append(f"| {label} | {limit_text(limit)} | {status_text(c)} |" + " |" * 7 + "\n")
            continue
        rejected = f" (admission: {c['admission_rejected']:,} rejected)" if c.get("admission_rejected") else ""
        w.append(f"| {label} | {limit_text(limit)} | {f_lat(c.get('healthy_p99_ms'))} | "
                 f"{f_rps(c.get('goodput_before_rps'))} · {f_rps(c.get('goodput_during_rps'))} · "
                 f"{f_rps(c.get('goodput_after_rps'))} | {errors_text(c.get('fault_errors'))}{rejected} | "
                 f"{f_int(c.get('peak_in_flight'))} · {f_int(c.get('peak_queued'))} | {f_int(c.get('peak_live_threads'))} | "
                 f"{f_mb(c.get('peak_rss_mb'))} · {f_mb(c.get('peak_heap_mb'))} | **{c.get('recovery_text')}** | "
                 f"{predicted_text(c)}: {c.get('prediction')}; peak queued + in flight {f_int(c.get('predicted_peak'))} "
                 f"(measured {f_int(c.get('peak_backlog'))}) |\n")
    w.append(HOW.format(within=RECOVERED_WITHIN, sample=SAMPLE_S, stay=STAY_S))
    mine = [(n, title) for n, title in charts if n.startswith("degrade-")]
    if mine:
        w.append("\n### Charts\n\n" + "".join(f"![{title}](charts/{n}.png)\n\n" for n, title in mine)
                 + "Each also as SVG: " + ", ".join(f"[{n}.svg](charts/{n}.svg)" for n, _ in mine)
                 + ". The shaded band is the fault as remote-sleep recorded it (GET /fault), t = 0 its start.\n")
    return "".join(w)


HOW = """
**How to read this.** Each row is one cell: a fresh app, vegeta's constant rate through the whole timeline, t = 0 the
fault's start as remote-sleep recorded it. **limit** is the app's `--max-in-flight` (*none*: no admission limit;
beyond it a request is answered 503 at once). **healthy p99** is the p99 latency of every answered request sent
before the fault. **goodput** is 2xx answers within the deadline per second, counted by the second they *arrived*
(completion): *before* over the healthy phase (from one healthy delay in), *during* over the fault, *after* from the
fault's end to the end of the attack. **errors** are every failed request of the run by kind: 503 (the admission
limit), 502 (the remote failed: `error=PCT`), 504 (the app's client timed out), other statuses, vegeta's own
timeout, connection errors. **peak in flight · queued** are the app's `/stats` inFlight (in application code) and
queued (waiting for a container thread), sampled every {sample:g} s; **peak threads** its liveThreads; **peak RSS ·
heap** the process' resident memory (/proc) and the JVM's used heap. **recovered after** is the time from the
fault's end until the p99 by *send* second is back within {within:g}× the healthy p99, with no failed request, and
stays there {stay} send seconds (*not within the run* when it never does; a fast 503 is not a recovery; "N s not
back later" counts the send seconds after those that were not: a later hiccup, such as a limit close to the
healthy load meeting a GC pause).
**predicted** is Little's law for the model's caps (capacity C = the platform threads of a thread-per-request app,
the admission limit, `--client-max-connections`; none for virtual threads and the async models): during the fault
it serves C / fault delay per second; a queueing model's backlog grows by RATE − that, and drains after the fault at
C / healthy delay − RATE; a limit rejects the excess instead, so nothing queues, and recovers within one fault delay
at most (≤: its admitted slow requests hold their slots until they answer) — but only a limit below a thread-per-request
app's threads binds: the container queues a request for a thread in front of the filter; without a cap every request waits
its own delay and none waits for another. Beside it, the predicted peak of queued + in flight against the measured
one. Figures of a single run: read differences of a few seconds or requests as noise.
"""


def chart_names(run):
    """[(file name, title)]: one per ok cell (its three panels), and every cell's goodput side by side."""
    out = [("degrade-goodput", "goodput per second by completion, every cell side by side")]
    for c in degrade_cells(run):
        if c["status"] == "ok":
            out.append((f"degrade-{c['index']:02d}", f"{label_of(run, c)}, limit {limit_text(c.get('max_in_flight_limit'))}: "
                        f"goodput and p99, in flight and queued, RSS"))
    return out


def draw_charts(run_dir):
    """bench/degrade_charts.py with the venv's matplotlib (the bench stays standard-library only);
    a WARNING, not a failure, when it cannot run."""
    from ..sweep import CHART_PYTHON, ROOT
    if not CHART_PYTHON.exists():
        print("WARNING: no degrade charts: matplotlib is not installed; run: bench/tools/install.sh matplotlib",
              file=sys.stderr)
        return
    r = subprocess.run([str(CHART_PYTHON), str(ROOT / "bench" / "degrade_charts.py"), str(run_dir)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(r.stdout.rstrip() if r.returncode == 0 else f"WARNING: bench/degrade_charts.py failed:\n{r.stdout}",
          file=sys.stdout if r.returncode == 0 else sys.stderr)


class Degrade(Scenario):
    name = NAME
    defaults = {
        "DEGRADE_VARIANTS": "sync-servlet@tomcat:200 sync-servlet@tomcat:v1 async-servlet@tomcat:1 webflux@netty:1",
        "FAULT": "delay=5000",      # SCENARIO=degrade: remote-sleep's fault (delay=MS, error=PCT, hang)
        "FAULT_AT": "10s",          # healthy time before the fault
        "FAULT_FOR": "10s",         # how long the fault lasts
        "AFTER": "30s",             # healthy time after it
        # The apps' --max-in-flight, each variant once per value (0 = no limit). 180: the healthy load
        # keeps RATE x SLEEP_MS = 150 in flight; below the 200-thread pool, whose free threads answer
        # the excess with a fast 503 (a limit >= the threads never binds: the queue is in front of it).
        "MAX_IN_FLIGHT": "0 180",
        "GOODPUT_DEADLINE": "2s",   # goodput: 2xx answered within this
    }
    fields = FIELDS
    csv_columns = [f for f in FIELDS if f not in ("fault_errors", "prediction")] + [f"fault_errors_{k}" for k in ERROR_KINDS]
    has_ceiling = False

    # ---- settings
    def usage(self, v):
        return settings.usage(v)

    def parse(self, v):
        return settings.parse(v)

    def selected(self, argv, environ):
        return argv == [self.name] or self.name in split_list(environ.get("SCENARIO") or "")

    def environ(self, environ, n_cores):
        return settings.matrix_environ(environ)

    def with_drivers(self, s):
        raise UsageError("SCENARIO=degrade needs remote-sleep's /fault: BACKEND=http only")

    def fit_limits(self, environ, s, error, held):
        return None

    # ---- the plan and one cell
    def plan(self, s, make):
        """Each variant once per MAX_IN_FLIGHT value, --max-in-flight N only when N > 0; vegeta cells."""
        cells = []
        for v in s.degrade_variants:
            for limit in s.degrade_limits:
                c = make(v.app, v.container, v.threads, None, None, variant_id(v, limit), v.client,
                         ("--max-in-flight", str(limit)) if limit else ())
                c.scenario, c.loadgen = self.name, "vegeta"
                cells.append(c)
        return cells

    def params(self, s):
        if s.mode != self.name:
            return {}
        return {"fault": s.degrade_fault, "fault_at_ms": s.degrade_fault_at_ms, "fault_for_ms": s.degrade_fault_for_ms,
                "after_ms": s.degrade_after_ms, "timeline_ms": s.degrade_timeline_ms, "deadline_ms": s.degrade_deadline_ms,
                "user_app_args": s.raw["APP_ARGS"]}

    def measure(self, lab, cell, d, url, app):
        return live.measure(lab, cell, d, url, app)

    # ---- the run
    def meta_values(self, s):
        return {"mode": self.name, "fault": s.degrade_fault, "fault_at": s.raw["FAULT_AT"], "fault_for": s.raw["FAULT_FOR"],
                "after": s.raw["AFTER"], "goodput_deadline": s.raw["GOODPUT_DEADLINE"],
                "max_in_flight_values": " ".join(map(str, s.degrade_limits)),
                "degrade_variants": " ".join(v.id for v in s.degrade_variants),
                **{f"variant_label.{v.id}": v.label for v in s.degrade_variants}}

    def meta(self, meta):
        if meta.get("mode") == self.name:
            meta["max_in_flight_values"] = [int(x) for x in (meta.get("max_in_flight_values") or "").split()]

    def starting_lines(self, s):
        limits = " ".join(map(str, s.degrade_limits))
        lines = [f"== degrade: {len(s.degrade_variants)} variants x MAX_IN_FLIGHT {limits}; vegeta at {s.rate} req/s for "
                 f"{s.raw['FAULT_AT']} healthy, {s.raw['FAULT_FOR']} of {s.degrade_fault}, {s.raw['AFTER']} healthy "
                 f"(-timeout {s.wrk_timeout_s}s); a fresh app per cell"]
        lines += [f"   {v.id:32s} {v.label}" for v in s.degrade_variants]
        healthy_in_flight = s.rate * s.sleep_ms / 1000.0
        for limit in s.degrade_limits:
            if limit and limit < healthy_in_flight:
                lines.append(f"== degrade: MAX_IN_FLIGHT {limit} < RATE x SLEEP_MS = {healthy_in_flight:g} in flight when "
                             f"healthy: that limit rejects ~{s.rate - limit * 1000.0 / s.sleep_ms:g} req/s before any fault")
        return lines

    def environment_rows(self, meta):
        if meta.get("mode") != self.name:
            return []
        labels = meta.get("variant_labels") or {}
        return [("degrade variants", "; ".join(f"`{v}` ({labels.get(v, v)})" for v in (meta.get("degrade_variants") or "").split())),
                ("degrade timeline", f"{meta.get('fault_at')} healthy, {meta.get('fault_for')} of {meta.get('fault')}, "
                                     f"{meta.get('after')} healthy; RATE {meta.get('rate')} req/s"),
                ("max in flight (0 = no limit) / goodput deadline",
                 f"{' '.join(map(str, meta.get('max_in_flight_values') or []))} / {meta.get('goodput_deadline')}")]

    # ---- the report
    def figures(self, record, d):
        return figures(record, d)

    def summary(self, rec):
        if rec.get("fault") is None:
            return None
        return (f"fault {rec['fault']} for {rec.get('fault_s')} s, limit {limit_text(rec.get('max_in_flight_limit'))}: "
                f"healthy p99 {f_lat(rec.get('healthy_p99_ms'))}, goodput {f_rps(rec.get('goodput_before_rps'))} · "
                f"{f_rps(rec.get('goodput_during_rps'))} · {f_rps(rec.get('goodput_after_rps'))}/s (before · during · after), "
                f"errors {errors_text(rec.get('fault_errors'))}, peak in flight {f_int(rec.get('peak_in_flight'))} + queued "
                f"{f_int(rec.get('peak_queued'))}, threads {f_int(rec.get('peak_live_threads'))}, RSS {f_mb(rec.get('peak_rss_mb'))} MB, "
                f"recovered after {rec.get('recovery_text')} (predicted {predicted_text(rec)}), client timeout "
                f"{f_int(rec.get('client_timeout_ms'))} ms")

    def verdict(self, run):
        if run["meta"].get("mode") != self.name:
            return None
        out = [f"## Verdict: recovery after the fault ({run['meta'].get('fault')} for {run['meta'].get('fault_for')} "
               f"at {run['meta'].get('rate')} req/s)\n\n",
               "| variant | limit | goodput during the fault | recovered after | predicted (Little's law) |\n",
               "|---|---:|---:|---:|---:|\n"]
        for label, limit, measured, predicted, c in recovery_rows(run):
            during = f_rps(c.get("goodput_during_rps")) + " req/s" if c["status"] == "ok" else ""
            out.append(f"| {label} | {limit_text(limit)} | {during} | {measured} | {predicted if c['status'] == 'ok' else ''} |\n")
        out.append(f"\nRecovered: the p99 by send second back within {RECOVERED_WITHIN:g}× the healthy p99, without errors, "
                   f"for {STAY_S} send seconds. Every figure and the charts: *When the backend slows down* below.\n")
        return "".join(out)

    def sections(self, run, ctx):
        if run["meta"].get("mode") != self.name:
            return []
        return [(10, section(run, ctx.charts))]

    def charts(self, run_dir, run, draw=False):
        if run["meta"].get("mode") != self.name:
            return []
        if draw and any(c["status"] == "ok" for c in degrade_cells(run)):
            draw_charts(run_dir)
        return [(n, t) for n, t in chart_names(run) if (Path(run_dir) / "charts" / f"{n}.png").exists()]

    def closing_lines(self, run):
        if run["meta"].get("mode") != self.name:
            return []
        return ["== degrade: recovered after the fault's end (measured; predicted by Little's law):"] + [
            f"   {label}, limit {limit_text(limit)}: {measured} ({predicted})" for label, limit, measured, predicted, _c
            in recovery_rows(run)]


SCENARIO = Degrade()
