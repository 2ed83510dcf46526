"""degrade's report: results.md's section (a row per cell, how to read it, the charts) and verdict,
the lines the console prints at a run's start and end, the environment rows, a cell's one-line
summary, and the charts (bench/degrade_charts.py, run with the venv's matplotlib)."""

from ...report import charts
from ...report.fmt import f_int, f_lat, f_mb, f_rps, status_text
from .live import SAMPLE_S
from .options import NAME
from .timeline import RECOVERED_WITHIN, STAY_S


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
    charts.draw("degrade_charts.py", run_dir, "degrade charts")


def starting_lines(s):
    """The console's lines at a run's start: the variants, the timeline, a limit below the healthy load."""
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


def environment_rows(meta):
    """results.md's environment rows of a degrade run: its variants, timeline, limits and deadline."""
    labels = meta.get("variant_labels") or {}
    return [("degrade variants", "; ".join(f"`{v}` ({labels.get(v, v)})" for v in (meta.get("degrade_variants") or "").split())),
            ("degrade timeline", f"{meta.get('fault_at')} healthy, {meta.get('fault_for')} of {meta.get('fault')}, "
                                 f"{meta.get('after')} healthy; RATE {meta.get('rate')} req/s"),
            ("max in flight (0 = no limit) / goodput deadline",
             f"{' '.join(map(str, meta.get('max_in_flight_values') or []))} / {meta.get('goodput_deadline')}")]


def summary(rec):
    """A degrade cell's part of its progress line (the console's, after the cell)."""
    if rec.get("fault") is None:
        return None
    return (f"fault {rec['fault']} for {rec.get('fault_s')} s, limit {limit_text(rec.get('max_in_flight_limit'))}: "
            f"healthy p99 {f_lat(rec.get('healthy_p99_ms'))}, goodput {f_rps(rec.get('goodput_before_rps'))} · "
            f"{f_rps(rec.get('goodput_during_rps'))} · {f_rps(rec.get('goodput_after_rps'))}/s (before · during · after), "
            f"errors {errors_text(rec.get('fault_errors'))}, peak in flight {f_int(rec.get('peak_in_flight'))} + queued "
            f"{f_int(rec.get('peak_queued'))}, threads {f_int(rec.get('peak_live_threads'))}, RSS {f_mb(rec.get('peak_rss_mb'))} MB, "
            f"recovered after {rec.get('recovery_text')} (predicted {predicted_text(rec)}), client timeout "
            f"{f_int(rec.get('client_timeout_ms'))} ms")


def verdict(run):
    """results.md's first-screen answer of a degrade run: each cell's goodput during the fault, its recovery."""
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


def closing_lines(run):
    """The console's lines at a run's end: each cell's recovery, measured and predicted."""
    return ["== degrade: recovered after the fault's end (measured; predicted by Little's law):"] + [
        f"   {label}, limit {limit_text(limit)}: {measured} ({predicted})" for label, limit, measured, predicted, _c
        in recovery_rows(run)]
