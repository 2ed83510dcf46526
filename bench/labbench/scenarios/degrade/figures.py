"""degrade's figures of a cell, its results.json part ("degrade": {...}), from its raw files: what its
timeline (timeline.json), the app's series (samples.jsonl, stats.json) and Little's law say."""
import json

from ... import foreign
from ...report.fmt import read_json
from .model import hold_ms, predict
from .timeline import ERROR_KINDS, rate_over, time_to_recover

FIELDS = ("fault", "max_in_flight_limit", "client_timeout_ms", "fault_s", "fault_source", "healthy_p99_ms",
          "goodput_before_rps", "goodput_during_rps", "goodput_after_rps", "fault_errors", "recovery_s",
          "recovery_text", "predicted_recovery_s", "predicted_recovery_at_most", "prediction", "predicted_peak", "peak_in_flight", "peak_queued",
          "peak_backlog", "peak_live_threads", "peak_heap_mb", "admission_rejected")


def flag_value(args, flag):
    """The integer after `flag` in an argument list (the app's flags), or None."""
    args = list(args)
    for i, a in enumerate(args[:-1]):
        if a == flag and args[i + 1].isdigit():
            return int(args[i + 1])
    return None


def read_samples(path):
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def peak(samples, value):
    values = [v for v in (value(x) for x in samples) if v is not None]
    return max(values) if values else None


def cell_prediction(record, p, timeout_ms, stats=None):
    """Little's law for this cell: its thread cap, its limit, its client pool cap (APP_ARGS). APP_JAR's jar: the
    cap its running JVM said (foreign.judged), not the plan's (which cannot know a jar's model: it predicted
    0 s for a Boot pool of 200 that took 21 s, as the lab's own 200 threads did)."""
    own = foreign.judged(record, stats)
    tpr, pool = (own["thread_per_request"], own["threads"]) if own else (record.thread_per_request, record.threads)
    threads = int(pool) if tpr and str(pool).isdigit() else None
    args = (p.get("app_args") or "").split() + (p.get("user_app_args") or "").split()
    out = predict(record.rate, record.sleep_ms, hold_ms(p["fault"], record.sleep_ms, timeout_ms),
                  p["fault_for_ms"] / 1000.0, threads=threads, limit=cell_limit(p) or None,
                  queue_cap=flag_value(args, "--client-max-connections"))
    # A bounded container queue (Tomcat) or QoSHandler (Jetty) sheds load this arithmetic does not model.
    shed = [f for f in ("--container-queue", "--qos") if flag_value(args, f)]
    if shed:
        out["text"] = f"not modelled: {' and '.join(shed)} shed what does not fit; without them: " + out["text"]
        out["recovery_s"] = None
    return out


def cell_limit(params):
    """A cell's --max-in-flight (0: none), from the app flags its plan gave it."""
    return flag_value((params.get("app_args") or "").split(), "--max-in-flight") or 0


def figures(record, d):
    """The cell's degrade fields: its settings, then what its timeline (timeline.json), the app's
    series (samples.jsonl, stats.json) and Little's law say. A cell that has no timeline (it
    failed before vegeta ended) has its settings only."""
    p, m = record.params, record.measured
    out = dict.fromkeys(FIELDS)
    out.update(fault=p.get("fault"), max_in_flight_limit=cell_limit(p) if "fault" in p else None,
               client_timeout_ms=m.get("client_timeout_ms"))
    t = read_json(d / "timeline.json")
    if not t or "fault" not in p:
        return out
    out.update(timeline_figures(t, p, record.sleep_ms))
    stats = read_json(d / "stats.json") or {}
    out.update(app_peaks(read_samples(d / "samples.jsonl"), stats))
    pred = cell_prediction(record, p, m.get("client_timeout_ms"), stats)
    out.update(predicted_recovery_s=None if pred["recovery_s"] is None else round(pred["recovery_s"], 1),
               predicted_recovery_at_most=bool(pred.get("recovery_at_most")),
               prediction=pred["text"], predicted_peak=pred["peak"])
    return out


def timeline_figures(t, p, sleep_ms):
    """Goodput before, during and after the fault, by completion second (what the clients got in
    each second), every failed request by kind, and the time to recover, by send second (when a
    request sent then was answered well again)."""
    fault_end = t["fault_end_s"]
    healthy = t["healthy"]["p99_ms"]
    rec_s, slips = time_to_recover(t["by_send"], healthy, fault_end)
    done = t["by_completion"]
    end = t.get("end_s") or fault_end + p["after_ms"] / 1000.0
    errors = dict.fromkeys(ERROR_KINDS, 0)
    for row in t["by_send"]:
        for k, n in row["errors"].items():
            errors[k] = errors.get(k, 0) + n
    return dict(
        fault_s=round(fault_end, 2), fault_source=t.get("fault_source"), healthy_p99_ms=healthy,
        # before: from one healthy delay in, when the first answers can have come back
        goodput_before_rps=rate_over(done, -p["fault_at_ms"] / 1000.0 + sleep_ms / 1000.0, 0),
        goodput_during_rps=rate_over(done, 0, fault_end), goodput_after_rps=rate_over(done, fault_end, end),
        fault_errors=errors, recovery_s=rec_s,
        recovery_text=("—" if healthy is None else "not within the run" if rec_s is None
                       else f"{rec_s:g} s" + (f" ({slips} s not back later)" if slips else "")))


def app_peaks(samples, stats):
    """The app's peaks from the sampler's series (a backlog drains and the GC gives memory back, so
    its state at the end says little), and its admission filter's rejections (stats.json, at the end)."""
    heap = peak(samples, lambda x: x.get("heapUsedBytes"))
    return dict(
        peak_in_flight=peak(samples, lambda x: x.get("inFlight")),
        peak_queued=peak(samples, lambda x: x.get("queued")),
        peak_backlog=peak(samples, lambda x: None if x.get("inFlight") is None else x["inFlight"] + (x.get("queued") or 0)),
        peak_live_threads=peak(samples, lambda x: x.get("liveThreads")),
        peak_heap_mb=None if heap is None else round(heap / 1048576.0, 1),
        admission_rejected=(stats.get("admission") or {}).get("rejected"))
