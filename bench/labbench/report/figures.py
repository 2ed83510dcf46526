"""A run's figures from its run directory: meta.txt, and each cell's record (record.py) with the raw
files beside it. One dict per cell (what results.json lists), the calibration cells, and REPEAT's
rounds merged into medians with their min–max. Scenarios and load generators add their own fields
(scenarios.Scenario.figures, loadgens.LoadGen.figures); nothing here knows a scenario's name.

In memory a cell is one flat dict, so no reader (results.md, .csv, compare, the summary, REPEAT's
merge) needs to know whose a key is. results.json keeps a scenario's and a load generator's own
fields apart, under its name, so a cell carries no other scenario's keys: results_json nests them
on write, read_results lifts them back (and reads the older flat files as they are)."""
import json
import re
from pathlib import Path

from .. import foreign, loadgens, scenarios
from . import db as dbreport, layers
from ..record import CellRecord, read_kv
from .fmt import ms, num, read_json, throughput  # noqa: F401  (ms: re-exported for the load generators)


def threads_value(text):
    """A pool size: 200 (an int in JSON), or "v1" (virtual threads on 1 carrier) as text."""
    return num(text, int) if text and text.isdigit() else (text or None)


def cpu_fields(m, duration_s):
    """CPU use during the measured window: % of the whole box, and cores used per process. The
    CPU seconds were read around wrk's whole run, so they are divided by that run's wall time
    (cpu_window_s); dividing by DURATION read wrk at 2.06 cores on a 2-core box when 5,000
    connections took seconds to open. Runs from before it have only DURATION."""
    window_s = m.get("cpu_window_s") or duration_s

    def cores(key):
        secs = m.get(key)
        return None if secs is None or not window_s else round(secs / window_s, 2)
    steal = {"cpu_steal_pct": m["cpu_steal_pct"]} if "cpu_steal_pct" in m else {}   # runs from before it have none
    # HOSTS: each load host's share and each host's CPU (loadgens/wrk.py measure_on_hosts)
    hosts = {k: m[k] for k in ("load_hosts", "host_cpu") if k in m}
    return {
        "cpu_box_pct": m.get("cpu_box_pct"),
        **steal,
        **hosts,
        "cpu_app_cores": cores("cpu_app_s"),
        "cpu_remote_cores": cores("cpu_remote_s"),
        "cpu_wrk_cores": cores("cpu_wrk_s"),
    }


def calibration_record(d):
    r = CellRecord.load(d)
    sleep_s = r.sleep_ms / 1000.0
    gen = loadgens.get(r.loadgen)
    rec = {"round": r.round or 1, "loadgen": r.loadgen, "duration_s": r.duration_s}
    own = getattr(gen, "calibration_figures", None)      # pgbench: a ceiling of its own kind
    if own:
        rec.update(own(r, d))
    elif gen.open_loop:
        rec.update(gen.figures(r, d))
        rec.update({"wrk_threads": None, "connections": None})
    else:
        rec.update({"wrk_threads": r.wrk_threads, "connections": r.connections,
                    "bound_rps": round(r.connections / sleep_s, 2)})
        rec.update(gen.figures(r, d))
    rec.update(cpu_fields(r.measured, r.duration_s))
    rec["status"] = r.status
    rec["dir"] = str(d.relative_to(d.parent.parent))
    return rec


# What a busy application thread waits for, from the frames /stats' busyThreads shows (its top
# frames first): a blocking read of a request body, a blocking write of a response, the remote.
STUCK_KINDS = (
    ("waiting for the remote", re.compile(r"HttpClient|ClientHttpRequest|Remote\.call", re.I)),
    ("writing a response", re.compile(r"write|flush|Blocker|Output", re.I)),
    ("reading a request body", re.compile(r"read|fill|InputStream|Content", re.I)),
)


def stuck_summary(busy):
    """One short text from /stats' busyThreads ("name STATE in frame < frame ... app frame"):
    what the threads that ran application code were stuck on when wrk stopped, eg,
    "reading a request body: http-nio-8080-exec-1". None when /stats had no such field."""
    if busy is None:
        return None
    groups = {}
    for line in busy:
        name, _, rest = line.partition(" ")
        frames = rest.partition(" in ")[2] or rest
        kind = next((k for k, pattern in STUCK_KINDS if pattern.search(frames.split(" ... ")[0])), None)
        state = rest.split(" ")[0]
        if state == "RUNNABLE":                               # busy working, not waiting on anyone
            kind = "running (not blocked)"
        kind = kind or state.lower()
        groups.setdefault(kind, []).append(name)
    if not groups:
        return "none"
    parts = []
    for kind, names in groups.items():
        shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
        parts.append(f"{kind}: {shown}")
    return "; ".join(parts)


def stats_fields(stats):
    """The app's /stats the moment the load ended."""
    return {
        # In application code (inFlight) or still waiting for a pool thread (queued, e.g. behind
        # a 1-thread sync app): either way the load generator never saw an answer.
        "unfinished": (stats["inFlight"] + stats.get("queued", 0)) if "inFlight" in stats else None,
        "max_in_flight": stats.get("maxInFlight"),
        "app_completed": stats.get("completed"),
        "app_errors": stats.get("errors"),
        "handler_threads": len(stats["handlerThreads"]) if "handlerThreads" in stats else None,
        "handler_thread_names": stats.get("handlerThreads"),
        "client_threads": len(stats["clientThreads"]) if "clientThreads" in stats else None,
        "live_threads": stats.get("liveThreads"),
        "peak_threads": stats.get("peakThreads"),
        "virtual_threads": stats.get("virtualThreads"),
        "carrier_threads": len(stats["carrierThreads"]) if "carrierThreads" in stats else None,
        "carrier_thread_names": stats.get("carrierThreads"),
        "busy_threads": stats.get("busyThreads"),
        # a fire-and-forget app's calls not done when the load stopped (no other app reports it)
        **({"handed_off": stats["background"]} if "background" in stats else {}),
        "stuck": stuck_summary(stats.get("busyThreads")),
    }


def cell_record(d, ceilings):
    """One cell's figures: its record, what its load generator measured, the app's /stats, CPU and
    memory, and what its scenario adds; its bound (Little's law) and its % of the ceiling. Flat: the
    shared keys and its own scenario's and load generator's `fields` (results_json nests those)."""
    r = CellRecord.load(d)
    scenario, gen = scenarios.get(r.scenario), loadgens.get(r.loadgen)
    stats = read_json(d / "stats.json") or {}
    own = foreign.judged(r, stats)    # APP_JAR: its pool and model as its running JVM said (None: the lab's apps)
    threads, tpr, pool_mode = ((own["threads"], own["thread_per_request"], own["pool_mode"]) if own
                               else (threads_value(r.threads), r.thread_per_request, r.pool_mode))
    conns, sleep_s, bound, bound_how = _bound(r, scenario, threads, tpr)
    bound_how = bound_how or (own or {}).get("bound_how")
    rec = {
        "index": r.index, "round": r.round or 1, "loadgen": r.loadgen, "scenario": r.scenario,
        "app": r.app, "container": r.container, "threads": threads, "client": r.client, "pool_mode": pool_mode,
        "wrk_threads": r.wrk_threads, "connections": r.connections, "duration_s": r.duration_s,
        "sleep_ms": r.sleep_ms, "thread_per_request": tpr,
        "requests": None, "rps": None, "steady_rps": None,
        "bound_rps": None if bound is None else round(bound, 2), "ceiling_rps": None, "pct_of_ceiling": None,
    }
    if bound_how:
        rec["bound_how"] = bound_how
    if r.app_cpus:                     # CPUSETS: the app's CPU cannot read above its CPUs
        rec["app_cpus"] = r.app_cpus
    rec.update(gen.figures(r, d))
    if own:
        foreign.above_pool(rec, conns, sleep_s)
        rec.update(foreign.fields(stats, r))
    _within_bound(rec, r)
    if gen.has_ceiling and scenario.has_ceiling and not r.db_driver:    # a DB cell's: pgbench's (below)
        _against_ceiling(rec, r, ceilings)
    rec.update(stats_fields(stats))
    m = r.measured
    _resources(rec, r, m)
    if r.db_driver:                       # BACKEND=postgres: its ceiling, bound, DB pool, PostgreSQL's CPU and memory
        dbreport.cell_figures(rec, r, d, ceilings)
    rec.update(layers.figures(d))         # PROFILE=1 only: CPU by layer
    rec.update(scenario.figures(r, d))    # its own; no other scenario's or load generator's keys
    rec.update({
        "app_start": r.app_start, "prep_s": r.prep_s, "cell_wall_s": r.cell_wall_s, "lab_line": r.lab_line,
        "wrk_command": m.get("wrk_command") or m.get("vegeta_command"),
        "wrk_output": str((d / gen.output).relative_to(d.parent.parent)),
        "app_log": r.app_log, "status": r.status,
    })
    return rec


def _bound(r, scenario, threads, thread_per_request):
    """(connections, wait s, req/s at most or None, how or None): Little's law, throughput = requests in
    flight / time each spends. A thread-per-request app holds at most `threads` in flight; everything
    else at most one per connection. (On virtual threads, thread_per_request is false: a blocked virtual
    thread holds no carrier.) An open loop's connections are what its rate keeps in flight."""
    sleep_s = scenario.wait_ms(r) / 1000.0
    conns = r.connections if r.connections is not None else round((r.rate or 0) * sleep_s)
    in_flight = min(conns, threads) if thread_per_request else conns
    return (conns, sleep_s, *scenario.bound(r, in_flight, sleep_s))      # a fan-out model's calls count too


# A steady rate more than this above the cell's Little's-law bound is the estimator's, not the app's.
BOUND_SLACK = 1.01


def _within_bound(rec, r):
    """A steady rate can never read above the cell's bound (docs/traps.md #36). The bursts reading of
    a pool far behind its connections still did: sync-servlet on 200 threads at 1,000-5,000
    connections read 205-219 req/s against 200 in every committed sweep until 2026-11-26, its 200
    answers a second drifting into bursts of uneven size. Such a cell gets wrk's own req/s, which
    counts whole responses in the window and so cannot exceed the bound, and says so."""
    steady = rec.get("steady_rps")
    if r.db_driver or None in (steady, rec.get("rps"), rec["bound_rps"]) or steady <= rec["bound_rps"] * BOUND_SLACK:
        return
    rec["steady_how"] = (f"{rec.get('steady_how')} read {steady:g} req/s, above the {rec['bound_rps']:g} req/s bound: "
                         f"wrk's req/s")
    rec["steady_rps"] = rec["rps"]


def _against_ceiling(rec, r, ceilings):
    """The ceiling of the same round and load, by the same measure as the cell; the cell's % of it."""
    ceiling = ceilings.get((rec["round"], r.wrk_threads, r.connections)) or ceilings.get(
        (1, r.wrk_threads, r.connections))
    if ceiling:
        rec["ceiling_rps"] = throughput(ceiling) if rec["steady_rps"] is not None else ceiling.get("rps")
    if throughput(rec) is not None and rec["ceiling_rps"]:
        rec["pct_of_ceiling"] = round(100.0 * throughput(rec) / rec["ceiling_rps"], 1)


def _resources(rec, r, m):
    """CPU, memory and OS threads of the app over the measured window, and CPU per request."""
    rec.update(cpu_fields(m, r.duration_s))
    cpu_app_s, rss_kb = m.get("cpu_app_s"), m.get("peak_rss_kb")
    rec.update({
        "variant": r.variant,
        "cpu_app_s": cpu_app_s,
        # Sampled from /proc/PID/status every 0.25 s during the measured window (procs.Sampler).
        "peak_rss_mb": None if rss_kb is None else round(rss_kb / 1024.0, 1),
        "peak_os_threads": m.get("peak_os_threads"),
    })
    rec["cpu_ms_per_request"] = (round(1000.0 * cpu_app_s / rec["requests"], 2)
                                 if cpu_app_s is not None and rec.get("requests") else None)
    rec.update(jit_fields(r, rec.get("requests")))
    rec.update(load_fields(r, rec.get("requests")))


MIN_WINDOW_CPU_MS = 100


def jit_fields(r, requests):
    """How warm the measured window was (issue 26): the JIT compiler's share of the app's CPU in it
    (from /stats' jvm object around wrk), and the fresh app's warm-up (WARMUP=auto: its seconds,
    requests and outcome; a reused app: none of its own). None where a run did not record them."""
    m, w = r.measured, r.warmup or {}
    cpu, compiler = m.get("jvm_cpu_ms"), m.get("jvm_compiler_cpu_ms")
    known = bool(cpu) and compiler is not None and compiler >= 0
    return {
        # A share of almost nothing is noise: a 1-thread sync app at 5 req/s read 0 % and 50 % in
        # two rounds of the same run. Below MIN_WINDOW_CPU_MS of app CPU there is no share.
        "jit_pct": round(100.0 * compiler / cpu, 1) if known and cpu >= MIN_WINDOW_CPU_MS else None,
        # the app's CPU less its compiler threads', per request wrk counted: the model's price, measured
        "cpu_ms_per_request_without_jit": round((cpu - compiler) / requests, 3) if known and requests else None,
        "warmup_mode": w.get("mode"),
        "warmup_s": w.get("seconds"),
        "warmup_requests": w.get("requests"),
        "warmup_outcome": w.get("outcome"),
        "warmup_text": w.get("text"),
    }


CPU_TICK_MS = 10      # /proc/PID/stat's unit (USER_HZ = 100), which the app's cpuMs comes in


def load_fields(r, requests):
    """CPU per request that is the request's (issue 26): the app's CPU over the window less its
    compiler threads' and less what the same JVM spent at rest (no load, after its warm-up:
    r.rest) over as many seconds. Where the load added less CPU than the JVM spends at rest over
    the window, plus what that reading can be off by (the process's CPU comes in 10 ms ticks: over
    a 3 s rest, 33 ms in a 10 s window), the difference is noise (a 1-thread sync app at 1 req/s:
    26 ms over a rest that read 0): no figure, a reason."""
    m, rest = r.measured, r.rest or {}
    cpu, compiler, window_s = m.get("jvm_cpu_ms"), m.get("jvm_compiler_cpu_ms"), m.get("cpu_window_s")
    if not rest.get("seconds") or cpu is None or compiler is None or compiler < 0 or not window_s:
        return {"cpu_rest_ms_per_s": None, "cpu_ms_per_request_load": None, "cpu_load_note": None}
    rest_rate = max(0.0, rest["cpu_ms"] - max(0, rest["compiler_cpu_ms"])) / rest["seconds"]
    at_rest = rest_rate * window_s
    added = cpu - compiler - at_rest
    off_by = CPU_TICK_MS / rest["seconds"] * window_s
    if not requests or added < at_rest + off_by:
        note = (f"too few requests ({requests or 0}) to price one: the load added {max(added, 0):.0f} ms of CPU "
                f"to the {at_rest:.0f} ms (± {off_by:.0f}) the JVM spends at rest over {window_s:g} s")
        return {"cpu_rest_ms_per_s": round(rest_rate, 1), "cpu_ms_per_request_load": None, "cpu_load_note": note}
    return {"cpu_rest_ms_per_s": round(rest_rate, 1), "cpu_ms_per_request_load": round(added / requests, 3),
            "cpu_load_note": None}


def load_run(run_dir):
    """results.json's content: the run's meta (with its calibration cells) and its cells; with
    REPEAT, each round's own cells too (`make compare A=RUN@1 B=RUN@2`)."""
    calibration = [calibration_record(d) for d in sorted((run_dir / "calibration").glob("*/"))]
    calibration = [c for c in calibration if c["status"] != "running"]
    cells = [cell_record(d, ceilings_of(calibration)) for d in sorted((run_dir / "cells").glob("*/"))]
    cells = [c for c in cells if c["status"] != "running"]   # the cell in progress, if any
    cells.sort(key=lambda c: c["index"] or 0)
    mark_again(cells)
    by_round = {}
    for c in cells:
        by_round.setdefault(str(c["round"]), []).append(c)
    cells = merge_rounds(cells)
    calibration = merge_rounds(calibration, key=("loadgen", "wrk_threads", "connections"))
    meta = meta_of(read_kv(run_dir / "meta.txt"))
    meta["calibration"] = calibration
    meta["run_dir"] = run_dir.resolve().name
    run = {"meta": meta, "cells": cells}
    if len(by_round) > 1:
        run["rounds"] = by_round
    return run


# ---- results.json: a scenario's and a load generator's own fields under its name

def own_parts(rec):
    """The scenario and the load generator of a record (a cell, or a calibration cell: no scenario)
    that have fields of their own. BY_NAME.get: an unknown name (a scenario since removed) has none."""
    owners = (scenarios.BY_NAME.get(rec.get("scenario")), loadgens.BY_NAME.get(rec.get("loadgen")))
    return [o for o in owners if o is not None and o.fields]


def nested(rec):
    """A record as results.json has it: the shared keys, then each owner's fields under its name, eg,
    "degrade": {"fault": ..., "recovery_s": ...} and "vegeta": {"ol_p99_ms": ...} on a degrade cell.
    Only its own: a call cell has no degrade, slow-client, fan-out or vegeta keys. REPEAT's `range`
    stays shared, naming each metric by its key wherever that sits."""
    out = dict(rec)
    for owner in own_parts(rec):
        out[owner.name] = {k: out.pop(k, None) for k in owner.fields}
    return out


def flat(rec):
    """A record of results.json as the report reads it: each owner's part lifted back to the top.
    A results.json from before the parts (every scenario's keys on every cell, flat) reads as it is."""
    out = dict(rec)
    for name in (rec.get("scenario"), rec.get("loadgen")):
        if isinstance(out.get(name), dict):
            out.update(out.pop(name))
    return out


def each_record(run, how):
    """The run with `how` applied to every record: its cells, each round's, the calibration cells."""
    out = dict(run, cells=[how(c) for c in run["cells"]])
    if "calibration" in run.get("meta", {}):
        out["meta"] = dict(run["meta"], calibration=[how(c) for c in run["meta"]["calibration"]])
    if "rounds" in run:
        out["rounds"] = {n: [how(c) for c in cells] for n, cells in run["rounds"].items()}
    return out


def results_json(run):
    """results.json's text of a run (load_run's)."""
    return json.dumps(each_record(run, nested), indent=2) + "\n"


def read_results(path):
    """A results.json, new or old, as load_run returns a run: flat records."""
    return each_record(json.loads(Path(path).read_text()), flat)


INT_META = ("duration_s", "sleep_ms", "wrk_timeout_s", "warmup_s", "cells_planned", "wall_s", "measured_s",
            "calibration_s", "rate", "repeat", "fds_needed", "cores")
LIST_META = ("apps", "containers", "threads", "wrk_threads", "connections", "scenarios", "loadgens")


def meta_of(kv):
    """meta.txt as typed values: the common keys here, each scenario's own in Scenario.meta()."""
    meta = dict(kv)
    for key in INT_META:
        if key in meta:
            meta[key] = num(meta[key], int)
    for key in LIST_META:
        if key in meta:
            meta[key] = meta[key].split()
    for key in ("wrk_threads", "connections"):
        if key in meta:
            meta[key] = [int(v) for v in meta[key]]
    for s in scenarios.ALL:
        s.meta(meta)
    dbreport.meta(meta)
    if "threads" in meta:
        meta["threads"] = [threads_value(v) for v in meta["threads"]]
    return meta


def ceilings_of(calibration):
    """(round, wrk threads, connections) -> that calibration cell, for the cells' % of ceiling."""
    out = {(c["round"], c["wrk_threads"], c["connections"]): c for c in calibration
           if c["status"] == "ok" and c["loadgen"] == "wrk"}
    # BACKEND=postgres: pgbench's, one per round and number of clients (min(connections, DB pool)).
    out.update({(c["round"], "pgbench", c["connections"]): c for c in calibration
                if c["status"] == "ok" and c["loadgen"] == "pgbench"})
    return out


# variant: two sweep variants can meet in one cell (sync-servlet:200 and :conns at 200 connections).
# again: the same settings measured again in one round (mark_again).
CELL_KEY = ("scenario", "loadgen", "app", "container", "threads", "client", "wrk_threads", "connections", "variant",
            "db_driver", "again")
# What REPEAT reports as a median with its min–max; everything else is the median round's.
ROUND_METRICS = ("requests", "rps", "steady_rps", "pct_of_ceiling", "ceiling_rps", "latency_avg_ms", "p50_ms",
                 "p90_ms", "p99_ms", "max_ms", "timeouts", "slow_2s", "unfinished", "max_in_flight",
                 "handler_threads", "client_threads", "peak_threads", "peak_rss_mb", "peak_os_threads",
                 "cpu_ms_per_request", "cpu_app_s", "cpu_box_pct", "cpu_app_cores",
                 "cpu_remote_cores", "cpu_wrk_cores", "slow_bytes_per_s", "slow_completed",
                 "ol_served_rps", "ol_success_pct", "ol_p50_ms", "ol_p90_ms", "ol_p99_ms", "ol_max_ms",
                 "ol_timeouts")


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def mark_again(cells):
    """A cell whose settings an earlier cell of its round had (eg, WRK_THREADS="10 10": one JVM
    measured twice, back to back) gets `again`: how many came before it. Without it, merge_rounds took
    the two for two REPEAT rounds and reported their median. Cells in index order; a run without
    such a cell is left as it was."""
    seen = {}
    for c in cells:
        key = (c.get("round"),) + tuple(c.get(k) for k in CELL_KEY)
        if seen.get(key):
            c["again"] = seen[key]
        seen[key] = seen.get(key, 0) + 1


def merge_rounds(records, key=CELL_KEY):
    """REPEAT: one record per cell key, its metrics the median over the rounds that ran ok with
    their min–max in `range`; `repeats` says how many rounds it has (1 without REPEAT). A cell
    that failed in some rounds keeps the others and says so in `rounds_failed`."""
    groups = {}
    for r in records:
        groups.setdefault(tuple(r.get(k) for k in key), []).append(r)
    merged = []
    for rounds in groups.values():
        good = [r for r in rounds if r["status"] == "ok"]
        if len(rounds) == 1 or not good:
            rec = dict(rounds[0])
            rec.update(repeats=len(rounds), rounds_failed=len(rounds) - len(good))
            merged.append(rec)
            continue
        by_throughput = sorted(good, key=lambda r: throughput(r) or r.get("ol_served_rps") or 0)
        rec = dict(by_throughput[(len(good) - 1) // 2])      # the median round's other fields
        rec["range"] = {}
        for m in ROUND_METRICS:
            values = [r[m] for r in good if isinstance(r.get(m), (int, float))]
            if values:
                mid = median(values)
                # Counts stay whole numbers where the median is one (3 timeouts, not 3.0).
                rec[m] = int(mid) if all(isinstance(v, int) for v in values) and mid == int(mid) else round(mid, 2)
                rec["range"][m] = [min(values), max(values)]
        rec.update(repeats=len(rounds), rounds_failed=len(rounds) - len(good), index=rounds[0].get("index"))
        merged.append(rec)
    return merged


