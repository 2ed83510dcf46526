#!/usr/bin/env python3
"""Build results.json, results.md and results.csv of one bench run from its raw files.

bench.sh (bench/labbench) leaves, per run directory:
  meta.txt                         key=value: configuration and environment
  calibration/w<T>-c<C>/           wrk straight at remote-sleep: cell.txt, wrk.json, wrk.txt
  cells/<NN>-[<scenario>-]<app>-.../  cell.txt (key=value), wrk.json (bench/wrk-json.lua), stats.json
                                   (the app's /stats when wrk ended), wrk.txt (wrk's own output),
                                   slow.json (the slow clients' numbers, slow-* scenarios only)
This script only reads those files, so it can rebuild the reports at any time, also after
Ctrl-C. Python 3 standard library only; labbench imports it and calls update().

Usage: bench/report.py RUN_DIR [--summary CELL_DIR]
  --summary  also print a one-line summary of that cell or calibration cell (for progress lines)
  (without it, a sweep run's charts are drawn again too, with .tools/venv's matplotlib)
"""
import csv
import subprocess
import io
import re
import json
import os
import sys
from pathlib import Path


def read_kv(path):
    """key=value lines; a later line wins (bench.sh appends the status last)."""
    kv = {}
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                kv[key.strip()] = value
    return kv


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def num(text, kind=float):
    try:
        return kind(text)
    except (TypeError, ValueError):
        return None


def ms(us):
    return None if us is None else round(us / 1000.0, 1)


def threads_value(text):
    """A pool size: 200 (an int in JSON), or "v1" (virtual threads on 1 carrier) as text."""
    return num(text, int) if text and text.isdigit() else (text or None)


def threads_order(t):
    """Sort key for pool sizes: 1, 200, then v1, v2, ... (ints and "vN" do not compare)."""
    if isinstance(t, int):
        return (0, t, "")
    n = t[1:] if isinstance(t, str) and t[1:].isdigit() else ""
    return (1, int(n) if n else 0, str(t))


def threads_label(t):
    if isinstance(t, str) and t.startswith("v"):
        return f"{t}: virtual threads on {t[1:]} carrier{'s' if t[1:] != '1' else ''}"
    return f"{t} thread{'s' if t != 1 else ''}"


def skipped(c):
    return c["status"].startswith("SKIPPED")


def wrk_fields(wrk, duration_s):
    """The wrk.json numbers as cell fields (rates over wrk's measured duration, like wrk)."""
    if not wrk:
        return {}
    # No latency sample at all (eg, every request stuck behind slow clients): wrk-json.lua then
    # writes zeros, which would read as "0 ms".
    lat = wrk["latency_us"] if wrk["latency_us"].get("max") else dict.fromkeys(wrk["latency_us"])
    secs = wrk["duration_us"] / 1e6 or duration_s
    errors = wrk["errors"]
    rps = round(wrk["requests"] / secs, 2)
    steady, how = wrk.get("steady_rps"), wrk.get("steady_how")
    # (n - 1) / (last - first) assumes the answers were spread over the window; a model that let
    # them all out in one burst (eg, 100 requests freed at once when a slow upload finished) would
    # read thousands of req/s. Then its answers per second of the window is all there is to say.
    if steady is not None and how == "first to last response" and steady > 1.5 * rps:
        steady, how = rps, "answers bunched together: wrk's req/s"
    return {
        "requests": wrk["requests"],
        "rps": rps,
        # Free of the window edge (bench/wrk-json.lua); older runs have none.
        "steady_rps": None if steady is None else round(steady, 2),
        "steady_how": how,
        "latency_avg_ms": ms(lat["mean"]),
        "p50_ms": ms(lat["p50"]),
        "p90_ms": ms(lat["p90"]),
        "p99_ms": ms(lat["p99"]),
        "max_ms": ms(lat["max"]),
        "timeouts": errors["timeout"],
        "slow_2s": wrk.get("slow_2s"),
        "slow_2s_how": wrk.get("slow_2s_how"),
        "latency_corrected": wrk.get("latency_corrected"),
        "errors": {k: errors[k] for k in ("connect", "read", "write", "status")},
    }


def cpu_fields(kv, duration_s):
    """CPU use during the wrk run: % of the whole box, and cores used per process."""
    def cores(key):
        secs = num(kv.get(key))
        return None if secs is None or not duration_s else round(secs / duration_s, 2)
    return {
        "cpu_box_pct": num(kv.get("cpu_box_pct")),
        "cpu_app_cores": cores("cpu_app_s"),
        "cpu_remote_cores": cores("cpu_remote_s"),
        "cpu_wrk_cores": cores("cpu_wrk_s"),
    }


OL_KEYS = ("rate", "ol_requests", "ol_rate", "ol_served_rps", "ol_success_pct", "ol_p50_ms", "ol_p90_ms",
           "ol_p99_ms", "ol_max_ms", "ol_timeouts", "ol_other_errors")


def vegeta_fields(kv, d):
    """An open-loop cell's figures (bench/labbench/vegeta.py wrote vegeta.json, vegeta's own
    report, and vegeta-summary.json, our counts of its results)."""
    report = read_json(d / "vegeta.json") or {}
    summary = read_json(d / "vegeta-summary.json") or {}
    lat = report.get("latencies") or {}

    def lat_ms(key):
        return None if lat.get(key) is None else round(lat[key] / 1e6, 1)
    return {
        "rate": num(kv.get("rate"), int),
        "ol_requests": report.get("requests"),
        "ol_rate": None if "rate" not in report else round(report["rate"], 2),   # offered: sent per second
        # The rate the server answered at, first to last answer (vegeta-summary.json).
        "ol_served_rps": None if summary.get("served_rps") is None else round(summary["served_rps"], 2),
        "ol_success_pct": None if "success" not in report else round(100.0 * report["success"], 1),
        "ol_p50_ms": lat_ms("50th"), "ol_p90_ms": lat_ms("90th"), "ol_p99_ms": lat_ms("99th"),
        "ol_max_ms": lat_ms("max"),
        "ol_timeouts": summary.get("timeouts"), "ol_other_errors": summary.get("other_errors"),
    }


def calibration_record(d):
    kv = read_kv(d / "cell.txt")
    duration_s = num(kv.get("duration_s"), int)
    sleep_s = num(kv.get("sleep_ms"), int) / 1000.0
    rec = {"round": num(kv.get("round"), int) or 1, "loadgen": kv.get("loadgen", "wrk"), "duration_s": duration_s}
    if rec["loadgen"] == "vegeta":
        rec.update(vegeta_fields(kv, d))
        rec.update({"wrk_threads": None, "connections": None})
    else:
        conns = num(kv.get("connections"), int)
        rec.update({"wrk_threads": num(kv.get("wrk_threads"), int), "connections": conns,
                    "bound_rps": round(conns / sleep_s, 2)})
        rec.update(wrk_fields(read_json(d / "wrk.json"), duration_s))
    rec.update(cpu_fields(kv, duration_s))
    rec["status"] = kv.get("status", "running")
    rec["dir"] = str(d.relative_to(d.parent.parent))
    return rec


def throughput(rec):
    """The req/s a cell is judged by: steady-state when the run has it, else wrk's own."""
    return rec.get("steady_rps") if rec.get("steady_rps") is not None else rec.get("rps")


SLOW_ERRORS = ("refused", "reset", "timeout", "http_4xx", "http_5xx", "other")
SLOW_KEYS = ("slow_clients", "slow_bytes", "slow_rate", "side_load_exit", "slow_connected",
             "slow_bytes_moved", "slow_bytes_per_s", "slow_completed", "slow_errors")


def slow_fields(kv, d):
    """The slow clients of a slow-* cell: their settings, and what slow.json says they did."""
    slow = read_json(d / "slow.json") or {}
    errors = slow.get("errors")
    return {
        "slow_clients": num(kv.get("slow_clients"), int),
        "slow_bytes": num(kv.get("slow_bytes"), int),
        "slow_rate": num(kv.get("slow_rate"), int),
        "side_load_exit": num(kv.get("side_load_exit"), int),
        "slow_connected": slow.get("connected"),
        "slow_bytes_moved": slow.get("bytes_moved"),
        "slow_bytes_per_s": slow.get("bytes_per_s"),
        "slow_completed": slow.get("completed"),
        "slow_errors": errors if isinstance(errors, dict) else None,
    }


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


def cell_record(d, ceilings):
    kv = read_kv(d / "cell.txt")
    threads = threads_value(kv.get("threads"))
    conns = num(kv.get("connections"), int)
    wt = num(kv.get("wrk_threads"), int)
    duration_s = num(kv.get("duration_s"), int)
    sleep_s = num(kv.get("sleep_ms"), int) / 1000.0
    # Little's law: throughput = requests in flight / time each spends. A thread-per-request
    # app holds at most `threads` in flight; everything else at most one per connection.
    # (On virtual threads, thread_per_request is 0: a blocked virtual thread holds no carrier.)
    if kv.get("scenario") == "fanout":  # each request's calls take FANOUT_MS, at best all at once
        sleep_s = max(num(kv.get("fanout_ms"), int) or 0, 1) / 1000.0
    if conns is None:                  # vegeta: what its rate keeps in flight
        conns = round((num(kv.get("rate"), int) or 0) * sleep_s)
    in_flight = min(conns, threads) if kv.get("thread_per_request") == "1" else conns
    loadgen = kv.get("loadgen", "wrk")
    rnd = num(kv.get("round"), int) or 1
    rec = {
        "index": num(kv.get("index"), int),
        "round": rnd,
        "loadgen": loadgen,
        "scenario": kv.get("scenario", "call"),
        "app": kv.get("app"),
        "container": kv.get("container"),
        "threads": threads,
        "pool_mode": kv.get("pool_mode", "platform"),
        "wrk_threads": wt,
        "connections": num(kv.get("connections"), int),
        "duration_s": duration_s,
        "sleep_ms": num(kv.get("sleep_ms"), int),
        "thread_per_request": kv.get("thread_per_request") == "1",
        "requests": None,
        "rps": None,
        "steady_rps": None,
        "bound_rps": round(in_flight / sleep_s, 2),
        "ceiling_rps": None,
        "pct_of_ceiling": None,
    }
    if loadgen == "vegeta":
        rec.update(vegeta_fields(kv, d))
    elif loadgen == "probe":
        rec["probes"] = read_json(d / "probe.json") or []
    else:
        rec.update(wrk_fields(read_json(d / "wrk.json"), duration_s))
        # The ceiling of the same round and wrk setting, by the same measure as the cell (none for
        # a fan-out cell: its requests make N calls each, the ceiling's make one).
        ceiling = None if rec["scenario"] == "fanout" else (
            ceilings.get((rnd, wt, rec["connections"])) or ceilings.get((1, wt, rec["connections"])))
        if ceiling:
            rec["ceiling_rps"] = throughput(ceiling) if rec["steady_rps"] is not None else ceiling.get("rps")
        if throughput(rec) is not None and rec["ceiling_rps"]:
            rec["pct_of_ceiling"] = round(100.0 * throughput(rec) / rec["ceiling_rps"], 1)
    stats = read_json(d / "stats.json") or {}
    rec.update({
        # In application code (inFlight) or still waiting for a pool thread (queued, e.g. behind
        # a 1-thread sync app): either way wrk never saw an answer.
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
        "stuck": stuck_summary(stats.get("busyThreads")),
    })
    rec.update(cpu_fields(kv, duration_s))
    cpu_app_s = num(kv.get("cpu_app_s"))
    rss_kb = num(kv.get("peak_rss_kb"), int)
    rec.update({
        "variant": kv.get("variant") or None,             # the sweep's variant (app@container:threads)
        "cpu_app_s": cpu_app_s,
        # Sampled from /proc/PID/status every 0.25 s while wrk ran (bench/labbench/procs.py Sampler).
        "peak_rss_mb": None if rss_kb is None else round(rss_kb / 1024.0, 1),
        "peak_os_threads": num(kv.get("peak_os_threads"), int),
    })
    rec["cpu_ms_per_request"] = (round(1000.0 * cpu_app_s / rec["requests"], 2)
                                 if cpu_app_s is not None and rec.get("requests") else None)
    rec["fanout_n"] = num(kv.get("fanout_n"), int)
    rec["fanout_ms"] = num(kv.get("fanout_ms"), int)
    slow = slow_fields(kv, d) if rec["scenario"] not in ("call", "fanout") else {}
    rec.update({k: slow.get(k) for k in SLOW_KEYS})        # every cell has every key
    rec.update({k: rec.get(k) for k in OL_KEYS})
    rec.update({
        "app_start": kv.get("app_start"),
        "prep_s": num(kv.get("prep_s")),
        "cell_wall_s": num(kv.get("cell_wall_s")),
        "lab_line": kv.get("lab_line") or None,
        "wrk_command": kv.get("wrk_command") or kv.get("vegeta_command"),
        "wrk_output": str(((d / "wrk.txt") if loadgen == "wrk" else (d / "vegeta.txt")).relative_to(d.parent.parent)),
        "app_log": kv.get("app_log"),
        "status": kv.get("status", "running"),
    })
    return rec


def load_run(run_dir):
    meta_kv = read_kv(run_dir / "meta.txt")
    calibration = [calibration_record(d) for d in sorted((run_dir / "calibration").glob("*/"))]
    calibration = [c for c in calibration if c["status"] != "running"]
    cells = [cell_record(d, ceilings_of(calibration)) for d in sorted((run_dir / "cells").glob("*/"))]
    cells = [c for c in cells if c["status"] != "running"]   # the cell in progress, if any
    cells.sort(key=lambda c: c["index"] or 0)
    by_round = {}
    for c in cells:
        by_round.setdefault(str(c["round"]), []).append(c)
    cells = merge_rounds(cells)
    calibration = merge_rounds(calibration, key=("loadgen", "wrk_threads", "connections"))
    meta = dict(meta_kv)
    for key in ("duration_s", "sleep_ms", "wrk_timeout_s", "warmup_s", "cells_planned",
                "wall_s", "measured_s", "calibration_s"):
        if key in meta:
            meta[key] = num(meta[key], int)
    for key in ("slow_clients", "slow_rate", "slow_bytes", "rate", "repeat", "fanout_ms"):
        if key in meta:
            meta[key] = num(meta[key], int)
    for key in ("apps", "containers", "threads", "wrk_threads", "connections", "scenarios", "loadgens", "fanout",
                "fanout_apps"):
        if key in meta:
            meta[key] = meta[key].split()
    for key in ("wrk_threads", "connections"):
        if key in meta:
            meta[key] = [int(v) for v in meta[key]]
    if meta.get("mode") == "sweep":
        meta["sweep"] = [int(v) for v in meta.get("sweep", "").split()]
        meta["sweep_variants"] = meta.get("sweep_variants", "").split()
    labels = {k[len("variant_label."):]: meta.pop(k) for k in list(meta) if k.startswith("variant_label.")}
    if labels:
        meta["variant_labels"] = labels
    for key in ("fds_needed", "cores"):
        if key in meta:
            meta[key] = num(meta[key], int)
    if "threads" in meta:
        meta["threads"] = [threads_value(v) for v in meta["threads"]]
    meta["calibration"] = calibration
    meta["run_dir"] = run_dir.resolve().name
    run = {"meta": meta, "cells": cells}
    if len(by_round) > 1:
        run["rounds"] = by_round        # each round's own cells: `make compare A=RUN@1 B=RUN@2`
    return run


def ceilings_of(calibration):
    """(round, wrk threads, connections) -> that calibration cell, for the cells' % of ceiling."""
    return {(c["round"], c["wrk_threads"], c["connections"]): c for c in calibration
            if c["status"] == "ok" and c["loadgen"] == "wrk"}


# variant: two sweep variants can meet in one cell (sync-servlet:200 and :conns at 200 connections).
CELL_KEY = ("scenario", "loadgen", "app", "container", "threads", "wrk_threads", "connections", "variant")
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


# ---------------------------------------------------------------- formatting

def f_rps(x):
    return "—" if x is None else f"{x:.1f}"


def f_pct(x):
    return "—" if x is None else f"{x:.1f} %"


def f_lat(x):
    """Milliseconds as text: 1.004 s keeps the few ms an app adds to a 1 s call visible."""
    if x is None:
        return "—"
    if x >= 10000:
        return f"{x / 1000:.1f} s"
    if x >= 1000:
        return f"{x / 1000:.3f} s"
    return f"{x:.1f} ms" if x < 10 else f"{x:.0f} ms"


def f_int(x):
    return "—" if x is None else str(x)


def f_cores(x):
    return "—" if x is None else f"{x:.2f}"


def status_text(c):
    """ok / FAILED: ... / SKIPPED: ..., and with REPEAT how many rounds failed."""
    if c.get("rounds_failed") and c["status"] == "ok":
        return f"ok ({c['rounds_failed']} of {c['repeats']} rounds FAILED, left out of the median)"
    return c["status"]


def ranged(c, field, fmt):
    """A figure as fmt(value); with REPEAT, the median followed by its min–max over the rounds."""
    text = fmt(c.get(field))
    lo_hi = (c.get("range") or {}).get(field)
    if c.get("repeats", 1) > 1 and lo_hi and lo_hi[0] != lo_hi[1]:
        text += f" ({fmt(lo_hi[0])}–{fmt(lo_hi[1])})"
    return text


def per_connection(c):
    """Responses per wrk connection: closed-loop rounds, the unit the ceiling is quantised in."""
    if c.get("requests") is None or not c.get("connections"):
        return "—"
    return f"{c['requests'] / c['connections']:.2f}"


def error_total(c):
    errs = c.get("errors")
    return None if errs is None else sum(errs.values())


def slow_error_total(c):
    errs = c.get("slow_errors")
    return None if errs is None else sum(v for v in errs.values() if isinstance(v, int))


def f_bytes_per_s(x):
    if x is None:
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.1f} MB/s"
    return f"{x / 1e3:.1f} kB/s" if x >= 1e3 else f"{x:.0f} B/s"


def summary_line(rec):
    """One line for bench.sh's progress output."""
    if rec["status"] != "ok":
        return rec["status"]
    if rec.get("loadgen") == "probe":
        return "one request at a time: " + ", ".join(f"N={p['n']} {probe_text(p)}" for p in rec.get("probes") or [])
    if rec.get("loadgen") == "vegeta":
        text = (f"open loop at {rec['rate']} req/s: {f_pct(rec['ol_success_pct'])} answered, "
                f"{f_rps(rec['ol_served_rps'])} req/s served, p50 {f_lat(rec['ol_p50_ms'])}, "
                f"p99 {f_lat(rec['ol_p99_ms'])}, max {f_lat(rec['ol_max_ms'])}, {f_int(rec['ol_timeouts'])} timeouts")
        if "ceiling_rps" in rec:
            text += f", handler threads {f_int(rec.get('handler_threads'))}"
        return text + f", CPU {rec.get('cpu_box_pct')} %"
    if "ceiling_rps" not in rec:      # a calibration cell
        pct = 100.0 * throughput(rec) / rec["bound_rps"] if rec["bound_rps"] else 0
        return (f"{f_rps(rec['rps'])} req/s, steady {f_rps(rec.get('steady_rps'))} ({pct:.1f} % of the "
                f"{rec['bound_rps']:g} req/s bound), p99 {f_lat(rec['p99_ms'])}, box CPU {rec['cpu_box_pct']} %")
    of = f"{f_pct(rec['pct_of_ceiling'])} of ceiling"
    if rec["ceiling_rps"] and rec["bound_rps"] < rec["ceiling_rps"] and throughput(rec) is not None:
        of += f", {100 * throughput(rec) / rec['bound_rps']:.0f} % of its {rec['bound_rps']:g} req/s bound"
    parts = [f"{f_rps(rec['rps'])} req/s, steady {f_rps(rec.get('steady_rps'))} ({of}) p99 {f_lat(rec['p99_ms'])}"]
    if rec.get("slow_2s"):
        parts.append(f"{rec['slow_2s']} > 2 s")
    if error_total(rec):
        parts.append(f"{error_total(rec)} errors")
    if rec.get("unfinished"):
        parts.append(f"{rec['unfinished']} unfinished")
    parts.append(f"handler threads {f_int(rec.get('handler_threads'))}")
    if rec.get("scenario", "call") not in ("call", "fanout"):
        parts.append(f"slow clients {f_bytes_per_s(rec.get('slow_bytes_per_s'))}, "
                     f"{f_int(rec.get('slow_completed'))} completed, {f_int(slow_error_total(rec))} errors")
    parts.append(f"CPU {rec.get('cpu_box_pct')} %")
    if rec.get("peak_rss_mb") is not None:
        parts.append(f"app peak RSS {rec['peak_rss_mb']:.0f} MB, {f_int(rec.get('peak_os_threads'))} OS threads, "
                     f"{f_cores(rec.get('cpu_ms_per_request'))} CPU ms/req")
    return ", ".join(parts)


def group_tables(w, cells, apps, containers, calibration, sleep_s, columns, values, heading=None, annotate=None):
    """One table per pool size x wrk setting: apps as rows, `columns` per container side by side
    (`values(cell)` gives their texts); a FAILED or SKIPPED cell gets a note under its table."""
    by_key = {(c["app"], c["container"], c["threads"], c["wrk_threads"], c["connections"]): c for c in cells}
    groups = []
    for c in cells:
        g = (c["threads"], c["wrk_threads"], c["connections"])
        if g not in groups:
            groups.append(g)
    groups.sort(key=lambda g: (threads_order(g[0]), g[2], g[1]))
    for threads, wt, cn in groups:
        cal = next((c for c in calibration if c["loadgen"] == "wrk" and c["wrk_threads"] == wt
                    and c["connections"] == cn), None)
        ceiling = "not measured"
        if cal and cal.get("rps"):
            ceiling = f"{ranged(cal, 'rps', f_rps)} req/s"
            if cal.get("steady_rps") is not None:
                ceiling += f", steady {ranged(cal, 'steady_rps', f_rps)} req/s"
        w(f"\n### {threads_label(threads)} · wrk -t{wt} -c{cn}\n\n")
        if heading:
            w(heading(threads, wt, cn) + "\n\n")
        else:
            if isinstance(threads, int):
                tpr = f"thread-per-request apps {min(cn, threads) / sleep_s:g} req/s"
            else:
                tpr = "thread-per-request apps too (a blocked virtual thread holds no carrier)"
            w(f"Ceiling (wrk straight at remote-sleep): {ceiling}. Bound: {cn / sleep_s:g} req/s, {tpr}.\n\n")
        n = len(columns)
        head = "| app |" + "".join(f" {ct} {columns[0]} |" + "".join(f" {h} |" for h in columns[1:])
                                   for ct in containers)
        w(head + "\n|---|" + "---:|" * (n * len(containers)) + "\n")
        notes = []
        for app in apps:
            row = f"| {app} |"
            for ct in containers:
                c = by_key.get((app, ct, threads, wt, cn))
                if c is None:
                    row += " |" * n
                elif c["status"] != "ok":
                    row += f" {'SKIPPED' if skipped(c) else 'FAILED'} |" + " |" * (n - 1)
                    notes.append(f"{app} on {ct}: {c['status']}")
                else:
                    row += "".join(f" {v} |" for v in values(c))
                    if annotate and annotate(c):
                        notes.append(f"{app} on {ct}: {annotate(c)}")
            w(row + "\n")
        for note in notes:
            w(f"\n- {note}")
        if notes:
            w("\n")


# ---------------------------------------------------------------- the sweep: knee, resources, memory

KNEE_PCT = 95.0        # a level holds when its steady req/s is >= this % of its ceiling, without errors
BUSY = 0.9             # a CPU counts as saturated at >= 90 % of what it can use (the box: >= 95 %)


def sweep_variants(run):
    """[(variant id, label, its cells sorted by level)] in the run's order."""
    meta = run["meta"]
    labels = meta.get("variant_labels") or {}
    ids = meta.get("sweep_variants") or list(dict.fromkeys(c["variant"] for c in run["cells"] if c.get("variant")))
    out = []
    for v in ids:
        cells = sorted((c for c in run["cells"] if c.get("variant") == v), key=lambda c: c["connections"] or 0)
        out.append((v, labels.get(v, v), cells))
    return out


def pool_threads(c):
    """The N a cell's pool has: 200 for 200, 1 for v1 (carriers), None for none."""
    t = c.get("threads")
    if isinstance(t, int):
        return t
    return int(t[1:]) if isinstance(t, str) and t[1:].isdigit() else None


def not_held(c):
    """Why a sweep cell does not hold its level ([] when it does): FAILED, below KNEE_PCT % of
    its ceiling, or errors (wrk's connect/read/write/status errors and timeouts)."""
    if c["status"] != "ok":
        return [c["status"]]
    why = []
    pct = c.get("pct_of_ceiling")
    if pct is None:
        why.append("no ceiling to compare with")
    elif pct < KNEE_PCT:
        why.append(f"{pct:.1f} % of the ceiling")
    errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
    if errors:
        why.append(f"{errors} error{'s' if errors != 1 else ''}")
    return why


def saturated(c, cores=2):
    """What saturated in a cell, from its pool and CPU columns: a list of short texts, empty when
    no recorded resource did. The pool: a thread-per-request app's Little's-law bound below the
    ceiling. The box: >= 95 % of all cores busy (wrk, app and remote-sleep share them). The app:
    its CPU near the N threads that may run its code (when N < cores). wrk: near its -t."""
    found = []
    bound, ceiling = c.get("bound_rps"), c.get("ceiling_rps")
    n = pool_threads(c)
    if c.get("thread_per_request") and bound and ceiling and bound < BUSY * ceiling:
        found.append(f"the pool ({n} threads: at most {n} requests in flight, {bound:g} req/s by Little's law)")
    box = c.get("cpu_box_pct")
    if box is not None and box >= 95:
        found.append(f"box CPU {box:.0f} %")
    app = c.get("cpu_app_cores")
    if app is not None and n and n < cores and app >= BUSY * n:
        found.append(f"app CPU {app:.2f} cores for its {n} thread{'s' if n != 1 else ''}")
    wrk = c.get("cpu_wrk_cores")
    if wrk is not None and c.get("wrk_threads") and wrk >= BUSY * c["wrk_threads"]:
        found.append(f"wrk CPU {wrk:.2f} cores for -t{c['wrk_threads']}")
    return found


def f_mb(x):
    return "—" if x is None else f"{x:.0f}"


def cpu_text(c):
    return (f"box CPU {c.get('cpu_box_pct')} %, app {f_cores(c.get('cpu_app_cores'))} cores, "
            f"wrk {f_cores(c.get('cpu_wrk_cores'))}, remote-sleep {f_cores(c.get('cpu_remote_cores'))}")


def knee(cells, cores=2):
    """The first level of a variant's cells (sorted by level) that does not hold, as
    {"level", "why", "saturated", "cell"}; None when every level held. SKIPPED cells are no
    level at all."""
    for c in cells:
        if skipped(c):
            continue
        why = not_held(c)
        if why:
            return {"level": c["connections"], "why": why, "saturated": saturated(c, cores), "cell": c}
    return None


def plateau(cells):
    """A thread-per-request variant's req/s at the levels past its pool: (min, max, from level)."""
    past = [c for c in cells if c["status"] == "ok" and c.get("thread_per_request")
            and pool_threads(c) and c["connections"] > pool_threads(c) and throughput(c) is not None]
    if not past:
        return None
    rates = [throughput(c) for c in past]
    return min(rates), max(rates), past[0]["connections"]


def knee_lines(run):
    """One line per sweep variant: its knee with why and what saturated, or how far it held."""
    cores = run["meta"].get("cores") or 2
    cal = {c["connections"]: c for c in run["meta"]["calibration"] if c["loadgen"] == "wrk"}
    lines = []
    for _v, label, cells in sweep_variants(run):
        ran = [c for c in cells if not skipped(c)]
        if not ran:
            lines.append(f"{label}: SKIPPED ({cells[0]['status'][len('SKIPPED: '):] if cells else 'no cell'})")
            continue
        k = knee(cells, cores)
        if k is None:
            text = (f"{label}: no knee up to {ran[-1]['connections']} connections (>= {KNEE_PCT:g} % of the "
                    f"ceiling, no errors, at every level; at {ran[-1]['connections']}: {cpu_text(ran[-1])})")
        else:
            sat = "; ".join(k["saturated"]) or f"no recorded resource ({cpu_text(k['cell'])})"
            text = f"{label}: knee at {k['level']} connections ({', '.join(k['why'])}); saturated: {sat}"
            c = cal.get(k["level"]) or {}
            cal_errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
            if cal_errors:
                text += (f" (the calibration had {cal_errors} errors at this level too: the machine's limit, "
                         f"not only the model's)")
        p = plateau(cells)
        if p:
            text += (f"; past {pool_threads(ran[0])} connections it stays at {p[0]:.1f}–{p[1]:.1f} req/s "
                     f"(from {p[2]} on)")
        lines.append(text)
    return lines


def in_flight(c):
    """Requests a cell held in flight: the app's own peak count (/stats maxInFlight), else the
    Little's-law figure min(connections, pool) for thread-per-request, connections for the rest."""
    if c.get("max_in_flight") is not None:
        return c["max_in_flight"]
    n = pool_threads(c)
    return min(c["connections"], n) if c.get("thread_per_request") and n else c["connections"]


def memory_levels(variants):
    """The two levels the memory table compares every variant at: the lowest, and the highest
    at which every variant that ran has an ok cell (so each row compares the same load), or
    None for the latter when no level above the lowest is common."""
    ran = [cells for _v, _l, cells in variants if any(c["status"] == "ok" for c in cells)]
    if not ran:
        return None, None
    levels = sorted({c["connections"] for cells in ran for c in cells})
    common = [lvl for lvl in levels if all(any(c["connections"] == lvl and c["status"] == "ok" for c in cells)
                                           for cells in ran)]
    return levels[0], (common[-1] if len(common) > 1 else None)


def memory_per_1000(cells, hi_level=None):
    """Peak RSS per 1,000 requests in flight, from two levels of one variant: the lowest and
    `hi_level` (default: the highest that ran ok); the slope between them, so the JVM's fixed
    cost drops out. A dict, or None when fewer than two levels ran; its mb_per_1000 is None
    when the in-flight count did not grow with the level (a pool-capped app)."""
    ok = [c for c in cells if c["status"] == "ok" and c.get("peak_rss_mb") is not None]
    if hi_level is not None:
        ok = [c for c in ok if c["connections"] <= hi_level]
    if len(ok) < 2:
        return None
    lo, hi = ok[0], ok[-1]
    d_in = in_flight(hi) - in_flight(lo)
    capped = hi.get("thread_per_request") and pool_threads(hi) and hi["connections"] > pool_threads(hi)
    d_mb = hi["peak_rss_mb"] - lo["peak_rss_mb"]
    row = {"lo": lo, "hi": hi, "in_lo": in_flight(lo), "in_hi": in_flight(hi), "mb_per_1000": None,
           # The same per connection: a pool-capped app holds the rest queued (socket, parsed request).
           "mb_per_1000_conns": round(1000.0 * d_mb / (hi["connections"] - lo["connections"]), 1)}
    if d_in > 0 and not capped:
        row["mb_per_1000"] = round(1000.0 * d_mb / d_in, 1)
    return row


def sweep_section(w, run, chart_names):
    meta = run["meta"]
    cores = meta.get("cores") or 2
    levels = meta.get("sweep") or []
    variants = sweep_variants(run)
    cal = {c["connections"]: c for c in meta["calibration"] if c["loadgen"] == "wrk"}
    w("\n## How far does each model scale? (the sweep)\n\n")
    w(f"Each variant ran at every level of `SWEEP` ({', '.join(map(str, levels))} connections; wrk "
      f"-t{' -t'.join(map(str, meta.get('wrk_threads') or []))}, {meta.get('duration_s')} s per cell), on a "
      f"fresh JVM per level warmed up at that level, with a calibration cell (wrk straight at remote-sleep) "
      f"at every level.\n\n")
    w("### How to read the sweep\n\n")
    w(f"- **ceiling**: at each level, the calibration's steady req/s: what this box and this closed-loop "
      f"window reach with no app in between. At high levels it falls below connections / 1 s even for "
      f"remote-sleep: connection set-up and a full accept queue cost the first requests, and wrk, remote-sleep "
      f"and the app share {cores} cores (lab-notes traps 13–15).\n")
    w(f"- **knee**: the first level whose steady req/s is below {KNEE_PCT:g} % of *that level's* ceiling, or "
      f"that had errors (wrk's connect/read/write/status errors and timeouts) or FAILED. Past it the model — "
      f"or the machine — no longer keeps up. **saturated** names what ran out there, when a recorded "
      f"resource did: **the pool** (a thread-per-request app holds one request per thread, so its "
      f"Little's-law bound, threads / 1 s, is below the ceiling), **box CPU** ≥ 95 % (then the box, not "
      f"the model, is the limit: wrk and remote-sleep need CPU too), **app CPU** within 10 % of the N "
      f"threads that may run its code (N < cores), or **wrk CPU** near its -t. None named: the cause is "
      f"elsewhere (connection set-up, the accept queue, GC pauses).\n")
    w("- **app CPU s**: CPU seconds the app's JVM used during the measured window (utime + stime from "
      "/proc/PID/stat, all its threads: request handling, the HTTP client, GC, JIT). **CPU ms/req**: that, "
      "divided by the requests wrk counted: what one request costs this model (lower is cheaper; at a "
      "saturated level it also includes the work of requests still in flight when wrk stopped).\n")
    w("- **peak RSS**: the app's largest resident memory (VmRSS) sampled every 0.25 s over the window: "
      "heap the GC has touched, thread stacks, metaspace, code, buffers — what the OS gives this process. "
      "The JVM's heap is sized by the GC (the default max heap is 1/4 of RAM), so part of the growth is "
      "garbage not yet collected: read differences between models, not the last MB. **peak thr.** the "
      "largest number of OS threads (/proc/PID/status `Threads`: pool, selector, client, GC and compiler "
      "threads; a virtual thread is not one, its carrier is).\n")
    w("- **box / app / wrk / remote**: % of all cores busy over the window, and the cores each process "
      "used (CPU seconds / duration). A box near 100 % means the load generator and the servers compete "
      "for the CPU: the knee is then the machine's, not the model's.\n")
    w("- **memory per 1,000 in-flight**: (peak RSS at the highest level that ran − peak RSS at the lowest) "
      "/ (requests in flight there − there) × 1,000, with requests in flight from the app's own count "
      "(`/stats` maxInFlight). The fixed cost of a JVM drops out; what stays is what each waiting "
      "request costs: a platform thread's stack and the objects of its request, or a virtual thread's "
      "stack on the heap, or a parked callback. **per 1,000 connections** divides by the connections "
      "instead: the same for a model that holds every connection's request in flight, and for a "
      "pool-capped one it also counts the connections queued for a thread.\n")
    w("- **in flight**: the most requests the app held in application code at once (`/stats` maxInFlight); "
      "**unfinished**: requests still in flight or queued for a pool thread when wrk stopped (a pool-capped "
      "app holds the rest of its connections in its queue). Latency: wrk's **p99**, measured from when it "
      "sent (closed loop): past the knee requests queue in the app, and p99 grows towards the window.\n")

    w("\n### Knee per variant\n\n")
    for line in knee_lines(run):
        w(f"- {line}\n")

    if chart_names:
        w("\n### Charts\n\n")
        for name, title in chart_names:
            w(f"![{title}](charts/{name}.png)\n\n")
        w("Each chart also as SVG: " + ", ".join(f"[{name}.svg](charts/{name}.svg)" for name, _ in chart_names)
          + ". One line per variant, connections on a log scale; the throughput chart's dashed line is the "
            "ceiling.\n")

    w("\n### Memory per 1,000 in-flight requests\n\n")
    _lo_level, hi_level = memory_levels(variants)
    if hi_level is not None:
        w(f"Every row compares the same two levels: the lowest and {hi_level}, the highest at which every "
          f"variant ran.\n\n")
    w("| variant | levels | in flight | peak RSS | MB per 1,000 in flight | MB per 1,000 connections "
      "| peak OS threads |\n|---|---|---|---|---:|---:|---|\n")
    for _v, label, cells in variants:
        m = memory_per_1000(cells, hi_level)
        if m is None:
            status = next((c["status"] for c in cells if c["status"] != "ok"), "fewer than two levels ran")
            w(f"| {label} | — | — | — | — | — | {status} |\n")
            continue
        lo, hi = m["lo"], m["hi"]
        per = (f"{m['mb_per_1000']:.1f}" if m["mb_per_1000"] is not None
               else f"— (in flight capped at {pool_threads(hi)} by its pool)")
        w(f"| {label} | {lo['connections']} → {hi['connections']} | {m['in_lo']} → {m['in_hi']} | "
          f"{lo['peak_rss_mb']:.0f} → {hi['peak_rss_mb']:.0f} MB | {per} | {m['mb_per_1000_conns']:.1f} | "
          f"{f_int(lo.get('peak_os_threads'))} → {f_int(hi.get('peak_os_threads'))} |\n")

    w("\n### Every level, per variant\n")
    cols = ["connections", "ceiling", "steady req/s", "% of ceiling", "p99", "errors", "in flight", "unfinished",
            "app CPU s", "CPU ms/req", "peak RSS MB", "peak thr.", "box CPU", "app", "wrk", "remote", "saturated"]
    for _v, label, cells in variants:
        w(f"\n#### {label}\n\n")
        w("|" + "".join(f" {h} |" for h in cols) + "\n|" + "---:|" * (len(cols) - 1) + "---|\n")
        for c in cells:
            ceiling = cal.get(c["connections"])
            ceiling_text = f_rps(throughput(ceiling)) if ceiling else "—"
            if c["status"] != "ok":
                w(f"| {c['connections']} | {ceiling_text} | {status_text(c)} |" + " |" * (len(cols) - 3) + "\n")
                continue
            errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
            w(f"| {c['connections']} | {ceiling_text} | {f_rps(throughput(c))} | {f_pct(c.get('pct_of_ceiling'))} | "
              f"{f_lat(c.get('p99_ms'))} | {errors} | {f_int(c.get('max_in_flight'))} | {f_int(c.get('unfinished'))} | "
              f"{f_cores(c.get('cpu_app_s'))} | "
              f"{f_cores(c.get('cpu_ms_per_request'))} | "
              f"{f_mb(c.get('peak_rss_mb'))} | "
              f"{f_int(c.get('peak_os_threads'))} | "
              f"{'—' if c.get('cpu_box_pct') is None else str(c['cpu_box_pct']) + ' %'} | "
              f"{f_cores(c.get('cpu_app_cores'))} | {f_cores(c.get('cpu_wrk_cores'))} | "
              f"{f_cores(c.get('cpu_remote_cores'))} | {'; '.join(saturated(c, cores)) or '—'} |\n")


def markdown(run, charts=()):
    """results.md; `charts`: the sweep's (name, title) charts drawn into charts/, to embed."""
    meta, cells = run["meta"], run["cells"]
    out = io.StringIO()
    w = out.write
    calibration = meta["calibration"]
    apps = meta.get("apps") or sorted({c["app"] for c in cells})
    containers = meta.get("containers") or sorted({c["container"] for c in cells})
    sleep_ms = meta.get("sleep_ms") or 0
    duration_s = meta.get("duration_s") or 0
    planned = meta.get("cells_planned")
    scenarios = meta.get("scenarios") or ["call"]

    w(f"# Benchmark results: {meta.get('date', '?')}\n\n")
    done = f"{len(cells)} of {planned} cells" if planned and planned != len(cells) else f"{len(cells)} cells"
    if planned and len(cells) < planned:
        done += " (**run incomplete**: interrupted or still running)"
    w(f"{done}: each is one `wrk -d{duration_s}s` run against an app's `GET /call`, which calls "
      f"remote-sleep's `/sleep` ({sleep_ms} ms) and returns its body. Run directory "
      f"`{meta.get('run_dir')}`; raw wrk output in `cells/*/wrk.txt`, server logs in `logs/`.\n\n")

    w("## Configuration and environment\n\n| | |\n|---|---|\n")
    rows = [
        ("apps", " ".join(apps)),
        ("containers", " ".join(containers)),
        ("pool sizes (threads that may run app code)", " ".join(map(str, meta.get("threads", [])))),
        ("wrk threads × connections", ", ".join(f"-t{t} -c{c}" for c in meta.get("connections", [])
                                                 for t in meta.get("wrk_threads", []))),
    ]
    if scenarios != ["call"]:
        rows += [
            ("scenarios", " ".join(scenarios)),
            ("slow clients (slow-* scenarios)",
             f"{meta.get('slow_clients')} clients, {meta.get('slow_rate')} bytes/s each, "
             f"{meta.get('slow_bytes') or 'the default'} bytes each (default: slow-upload 4096, slow-download 16777216)"),
        ]
    if meta.get("mode") == "sweep":
        labels = meta.get("variant_labels") or {}
        rows += [
            ("sweep levels (wrk -c)", " ".join(map(str, meta.get("sweep") or []))),
            ("sweep variants", "; ".join(f"`{v}` ({labels.get(v, v)})" for v in meta.get("sweep_variants") or [])),
            ("sweep container (variants without @container)", meta.get("sweep_container", "?")),
        ]
    if meta.get("left_out"):
        rows.append(("left out of the matrix", meta["left_out"]))
    rows += [
        ("duration / warm-up / wrk --timeout",
         f"{duration_s} s / {meta.get('warmup_s')} s (fresh apps only, unrecorded) / {meta.get('wrk_timeout_s')} s"),
        ("remote sleep", f"{sleep_ms} ms"),
        ("extra JVM flags / app flags", f"`{meta.get('java_opts') or '-'}` / `{meta.get('app_args') or '-'}`"),
        ("app class-data archive (start-up time only)", meta.get("app_cds", "?")),
        ("date (UTC)", meta.get("date", "?")),
        ("JDK", meta.get("jdk", "?")),
        ("Jetty / Tomcat / Spring Framework",
         f"{meta.get('jetty', '?')} / {meta.get('tomcat', '?')} / {meta.get('spring', '?')}"),
        ("wrk", meta.get("wrk", "?")),
        ("CPU", meta.get("cpu", "?")),
        ("OS", meta.get("os", "?")),
        ("ulimit -n / net.core.somaxconn", f"{meta.get('nofile', '?')} / {meta.get('somaxconn', '?')}"),
        ("source", meta.get("git", "?")),
    ]
    if "port_range" in meta:       # runs recorded before these facts existed have none
        rows.insert(-1, ("ephemeral ports (net.ipv4.ip_local_port_range) / cores",
                         f"{meta['port_range']} / {meta.get('cores', '?')}"))
    if meta.get("wall_s") is not None and meta.get("measured_s"):
        rows.append(("run time", f"{meta['wall_s']} s wall for {meta['measured_s']} s measured in cells "
                                 f"(+ {meta.get('calibration_s')} s calibration): "
                                 f"{meta['wall_s'] / meta['measured_s']:.2f}×"))
    if meta.get("fds_needed"):
        rows.append(("file descriptors the app needs at the largest level", f"~{meta['fds_needed']} (2 per connection + 1024)"))
    for note in (meta.get("limit_notes") or "").split(" | "):
        if note:
            rows.append(("limits", note))
    for k, v in rows:
        w(f"| {k} | {v} |\n")
    # The apps' startup lines, with the app id and pool size blanked so equal ones merge.
    lab_lines = {}
    for c in cells:
        line = c.get("lab_line")
        if line:
            line = re.sub(r"\bapp=\S+", "app=<app>", line)
            line = re.sub(r"\bthreads=v?\d+", "threads=<N>", line)
            line = re.sub(r"QueuedThreadPool max=\d+ \(\d+ for", "QueuedThreadPool max=<N+1> (<N> for", line)
            line = re.sub(r"maxThreads=\d+", "maxThreads=<N>", line)
            apps_seen = lab_lines.setdefault(line, [])
            if c["app"] not in apps_seen:
                apps_seen.append(c["app"])
    if lab_lines:
        w("\nThe apps' effective configuration as they printed it at start (client limits, what the "
          "pool counts, accept queue):\n\n```\n")
        for line, line_apps in lab_lines.items():
            w(f"# {', '.join(line_apps)}\n{line}\n")
        w("```\n")

    # How to read this: with this run's own numbers.
    w("\n## How to read this\n\n")
    conns = meta.get("connections") or [100]
    c0 = conns[0]
    sleep_s = sleep_ms / 1000.0 if sleep_ms else 1.0
    cals = [c for c in calibration if c.get("rps")]
    per_conn = int(duration_s // sleep_s) if sleep_s else 0
    w(f"- **bound** (Little's law): throughput = requests in flight / time each spends. With {c0} "
      f"connections each waiting {sleep_ms} ms, at most {c0 / sleep_s:g} req/s. A thread-per-request "
      f"app (sync-servlet, sync-mvc) holds at most one request per pool thread, so its bound is "
      f"min(connections, threads) / sleep: {min(c0, 1) / sleep_s:g} req/s with 1 thread.\n")
    if cals:
        measured = ", ".join(
            f"{c['rps']:.1f} req/s for -t{c['wrk_threads']} -c{c['connections']} "
            f"({100 * c['rps'] / c['bound_rps']:.0f} % of its bound, "
            f"{c['requests'] / c['connections']:.2f} responses per connection)" for c in cals)
        w(f"- **ceiling**: the same wrk command straight at remote-sleep measured {measured}. wrk "
          f"is a closed loop: each connection sends its next request only after the previous "
          f"answer, so in {duration_s} s a connection completes at most {per_conn} responses of "
          f"{sleep_ms} ms; the last request is usually still in flight when wrk stops, and the first "
          f"one pays for connecting. No server can beat that here, so **% of ceiling** is the column "
          f"to compare; ≥ 97 % means the model is not what limits the cell. One caveat: when the "
          f"duration is a whole number of sleeps, whether a connection's last response arrives "
          f"before wrk stops can hinge on a few milliseconds, and an app adds a few per request "
          f"(compare its p50 with the calibration's). A cell can then lose up to one response per "
          f"connection against its ceiling (up to {100 / per_conn if per_conn else 0:.0f} %): see "
          f"*resp./conn.* in the full table.\n")
    w("- **steady req/s** is the throughput free of that window edge, and **% of ceiling** compares it "
      "with the calibration's steady req/s. wrk's Lua hook (bench/wrk-json.lua) stamps every response "
      "with a monotonic clock; when every connection was answered at least twice, the rate is C / (the "
      "mean time between a connection's responses), from the first to the last response of each "
      "connection, so neither connecting nor the request still in flight at the end counts; when a "
      "model starved most connections (a 1-thread sync app), the responses came one after another and "
      "the rate is (responses − 1) / (last − first), or wrk's req/s when those answers came out in one "
      "burst (that rate would read over 1.5× wrk's). **req/s** is wrk's own figure, kept for comparison "
      "with the 2021 write-up.\n")
    if (meta.get("repeat") or 1) > 1:
        w(f"- **REPEAT={meta['repeat']}**: the whole matrix ran {meta['repeat']} times, one round after the "
          "other (each with its own calibration), so drift spreads over every cell; each figure is the "
          "median over the rounds with its min–max in brackets. `make compare` judges changes against "
          "these ranges.\n")
    w(f"- **latency columns** are wrk's, measured from when wrk *sent* each request. A server that "
      f"stalls is sent fewer requests, so its latencies look better than what users would see "
      f"(coordinated omission; an open-loop, constant-rate run is the honest complement). wrk 4 "
      f"partly corrects for it: a response slower than twice the mean time between a connection's "
      f"requests adds synthetic samples to the histogram, so p50/p90/p99 include them. wrk's "
      f"--timeout was {meta.get('wrk_timeout_s')} s, longer than a run, so no response was left "
      f"out of the latency figures (wrk's default 2 s would drop every slower response from them "
      f"and count it as a timeout). **> 2 s** counts the responses slower than 2 s, net of wrk's "
      f"synthetic samples: that is what the reference write-up's \"timeouts\" column counted.\n")
    w("- **unfinished**: the app's requests in flight or queued for a pool thread when wrk stopped "
      "(wrk counts them nowhere). "
      "**handler thr.**: distinct threads that ran application code during the cell, the proof "
      "of the pool size. **peak thr.**: the app JVM's peak live threads.\n")
    w("- **CPU**: box = % of all cores busy during the cell; app / wrk = cores each used. wrk, the "
      "app and remote-sleep share this machine, so a box near 100 % means the load generator and "
      "the servers compete for CPU: then a short cell says more about the box than the model.\n")
    if any(isinstance(t, str) for t in meta.get("threads", [])):
        w("- **vN**: virtual threads on N carrier threads (JDK 21+). A thread-per-request app then "
          "holds a virtual thread per request, not one of the N: its bound is connections / sleep, "
          "like the non-blocking apps.\n")
    if "netty" in containers:
        w("- **netty**: WebFlux on Reactor Netty, its pool size = its event-loop threads; the servlet "
          "apps do not run there.\n")

    # The comparison tables: one per pool size x wrk setting, apps as rows, containers side by side;
    # a sweep has its own (one per variant, levels as rows).
    wrk_cells = [c for c in cells if c.get("loadgen", "wrk") == "wrk"]
    if meta.get("mode") == "sweep":
        sweep_section(w, run, charts)
    else:
        w("\n## Results\n")
        group_tables(w, [c for c in wrk_cells if c.get("scenario", "call") == "call"], apps, containers,
                     calibration, sleep_s, ["req/s", "steady req/s", "% of ceiling", "p99", "> 2 s", "errors"],
                     lambda c: [f_rps(c["rps"]), ranged(c, "steady_rps", f_rps), ranged(c, "pct_of_ceiling", f_pct),
                                ranged(c, "p99_ms", f_lat), f_int(c["slow_2s"]), f_int(error_total(c))])
    for scenario in scenarios:
        if scenario in ("call", "fanout"):
            continue
        slow = [c for c in wrk_cells if c.get("scenario") == scenario]
        example = slow[0] if slow else {}
        what = "send a POST body of" if scenario == "slow-upload" else "read a response of"
        w(f"\n## Slow clients: {scenario}\n\n")
        w(f"During each cell {f_int(example.get('slow_clients'))} clients {what} "
          f"{f_int(example.get('slow_bytes'))} bytes at {f_int(example.get('slow_rate'))} bytes/s each "
          f"(bench/slowclients.py), started before wrk and still running when it stops; wrk sends the "
          f"same normal `GET /call` traffic as in the tables above. **steady req/s**, **% of ceiling**, "
          f"**p99** and **errors** are wrk's normal traffic (its ceiling is the same calibration, "
          f"without slow clients); **slow B/s**, **slow done** and **slow err.** are what the slow "
          f"clients measured (slow.json: bytes_per_s, completed, errors); **handler** and "
          f"**client** count the app's threads that ran application code and handled the remote's "
          f"answer. Under each table, **stuck on** is `/stats`' busyThreads read the moment wrk stopped: which of those "
          f"threads was blocked, and on what ({'a blocking read of a trickled request body' if scenario == 'slow-upload' else 'a blocking write to a client that reads slowly'}, "
          f"or the remote call); *none* means no thread was held.\n\n"
          f"How to read it: a model that {'reads bodies' if scenario == 'slow-upload' else 'writes bodies'} "
          f"without blocking keeps its normal traffic at the `call` scenario's level whatever the slow "
          f"clients do; one that blocks gives each slow client a thread for as long as it takes, so with "
          f"fewer threads than slow clients the normal traffic queues behind them (a few % of the ceiling, "
          f"errors or a p99 of many seconds). With more threads than slow clients (eg, 200 threads for "
          f"{f_int(example.get('slow_clients'))} clients) a model that gives each slow client one of its "
          f"pool threads copes: the pool hides the problem until slow clients outnumber threads. One that "
          f"makes them share a small pool of another kind does not, however large the container's pool: "
          f"`async-servlet` writes its answers from the HTTP client's callback threads (`client-N`, "
          f"`--client-executor-threads`, 2 by default), so two slow readers stop every answer. *stuck on* "
          f"names the threads a model lost, and what they wait for.\n")
        group_tables(w, slow, apps, containers, calibration, sleep_s,
                     ["steady req/s", "% of ceiling", "p99", "errors", "slow B/s", "slow done", "slow err.",
                      "handler", "client"],
                     lambda c: [f_rps(throughput(c)), ranged(c, "pct_of_ceiling", f_pct), ranged(c, "p99_ms", f_lat),
                                f_int(error_total(c)), f_bytes_per_s(c.get("slow_bytes_per_s")),
                                f_int(c.get("slow_completed")), f_int(slow_error_total(c)),
                                f_int(c.get("handler_threads")), f_int(c.get("client_threads"))],
                     annotate=lambda c: f"stuck on — {c['stuck']}" if c.get("stuck") else None)

    open_loop_section(w, cells, apps, containers, calibration, meta)
    fanout_section(w, cells, containers, calibration, meta)

    w("\n## All cells\n\n")
    # The scenario column only when a run has more than the plain call scenario.
    show_scenario = any(c.get("scenario", "call") != "call" for c in cells)
    w("| # |" + (" scenario |" if show_scenario else "") + " app | container | threads | wrk -t | -c | requests "
      "| req/s | steady | bound | ceiling | % ceil. "
      "| resp./conn. | avg | p50 | p90 | p99 | max | timeouts | > 2 s | errors c/r/w/s | unfinished | handler thr. "
      "| client thr. | peak thr. | peak RSS MB | CPU box | CPU app | CPU wrk | CPU ms/req | app | status |\n")
    w("|---:|" + ("---|" if show_scenario else "") + "---|---|" + "---:|" * 26 + "---|---|\n")
    for c in sorted(wrk_cells, key=lambda c: c["index"] or 0):
        e = c.get("errors")
        errs = "/".join(str(e[k]) for k in ("connect", "read", "write", "status")) if e else "—"
        scenario = f" {c.get('scenario', 'call')} |" if show_scenario else ""
        w(f"| {c['index']} |{scenario} {c['app']} | {c['container']} | {c['threads']} | {c['wrk_threads']} | "
          f"{c['connections']} | {f_int(c['requests'])} | {f_rps(c['rps'])} | {f_rps(c.get('steady_rps'))} | "
          f"{c['bound_rps']:g} | "
          f"{f_rps(c['ceiling_rps'])} | {f_pct(c['pct_of_ceiling'])} | {per_connection(c)} | "
          f"{f_lat(c.get('latency_avg_ms'))} | "
          f"{f_lat(c.get('p50_ms'))} | {f_lat(c.get('p90_ms'))} | {f_lat(c.get('p99_ms'))} | "
          f"{f_lat(c.get('max_ms'))} | {f_int(c.get('timeouts'))} | {f_int(c.get('slow_2s'))} | {errs} | "
          f"{f_int(c.get('unfinished'))} | {f_int(c.get('handler_threads'))} | "
          f"{f_int(c.get('client_threads'))} | {f_int(c.get('peak_threads'))} | {f_mb(c.get('peak_rss_mb'))} | "
          f"{'—' if c.get('cpu_box_pct') is None else str(c['cpu_box_pct']) + ' %'} | "
          f"{f_cores(c.get('cpu_app_cores'))} | {f_cores(c.get('cpu_wrk_cores'))} | "
          f"{f_cores(c.get('cpu_ms_per_request'))} | {c.get('app_start') or '—'} | {status_text(c)} |\n")

    w("\n## Calibration (wrk straight at remote-sleep)\n\n")
    w("| wrk | requests | req/s | steady req/s | bound | % of bound (steady) | resp./conn. | p50 | p99 | max "
      "| CPU box | CPU remote | CPU wrk | status |\n")
    w("|---|" + "---:|" * 12 + "---|\n")
    for c in calibration:
        if c["loadgen"] != "wrk":
            continue
        pct = f_pct(100 * throughput(c) / c["bound_rps"]) if throughput(c) is not None else "—"
        w(f"| -t{c['wrk_threads']} -c{c['connections']} | {f_int(c.get('requests'))} | {ranged(c, 'rps', f_rps)} | "
          f"{ranged(c, 'steady_rps', f_rps)} | {c['bound_rps']:g} | {pct} | {per_connection(c)} | "
          f"{f_lat(c.get('p50_ms'))} | {f_lat(c.get('p99_ms'))} | "
          f"{f_lat(c.get('max_ms'))} | {c.get('cpu_box_pct')} % | {f_cores(c.get('cpu_remote_cores'))} | "
          f"{f_cores(c.get('cpu_wrk_cores'))} | {status_text(c)} |\n")
    for c in calibration:
        if c["loadgen"] == "vegeta":
            w(f"\nvegeta at {c.get('rate')} req/s straight at remote-sleep (the open-loop ceiling): "
              f"{f_pct(c.get('ol_success_pct'))} answered, {ranged(c, 'ol_served_rps', f_rps)} req/s served, "
              f"p50 {f_lat(c.get('ol_p50_ms'))}, p99 {ranged(c, 'ol_p99_ms', f_lat)}, max {f_lat(c.get('ol_max_ms'))}, "
              f"{f_int(c.get('ol_timeouts'))} timeouts ({status_text(c)}).\n")
    return out.getvalue()


def probe_text(p):
    """One timed request of a fan-out app: the client's wall time, and what the app said."""
    if p.get("status") != 200:
        return p.get("error") or f"HTTP {p.get('status')}"
    fields = dict(kv.split("=", 1) for kv in p["answer"].split() if "=" in kv)
    text = f_lat(p["client_ms"])
    if p.get("previous"):       # fire-and-forget: answered at once, the work ended later
        done = dict(kv.split("=", 1) for kv in p["previous"].split() if "=" in kv)
        return (f"answered in {text}; its {p['n']} call{'s' if p['n'] != 1 else ''} ended after "
                f"{f_lat(num(done.get('finished_ms')))}")
    if fields.get("failed", "0") != "0":
        text += f" ({fields['failed']} of {p['n']} calls failed)"
    return text


def fanout_section(w, cells, containers, calibration, meta):
    """SCENARIO=fanout: one request at a time per N (what the write-ups timed), then the same apps
    under wrk's load with N = 10 (what each model costs: threads, CPU per request)."""
    fan = [c for c in cells if c.get("scenario") == "fanout"]
    if not fan:
        return
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
      f"**bound** there is connections / {ms_each} ms: every call of every request overlapped.\n")
    probes = [c for c in fan if c.get("loadgen") == "probe"]
    for threads in sorted({c["threads"] for c in probes}, key=threads_order):
        w(f"\n### One request at a time · {threads_label(threads)}\n\n")
        w("| app | container |" + "".join(f" N = {n} |" for n in ns) + "\n|---|---|" + "---:|" * len(ns) + "\n")
        for app in apps:
            for ct in containers:
                c = next((x for x in probes if x["app"] == app and x["container"] == ct and x["threads"] == threads), None)
                if c is None:
                    continue
                if c["status"] != "ok" and not c.get("probes"):
                    w(f"| {app} | {ct} | {status_text(c)} |" + " |" * (len(ns) - 1) + "\n")
                    continue
                by_n = {p["n"]: p for p in c.get("probes") or []}
                w(f"| {app} | {ct} |" + "".join(f" {probe_text(by_n[n]) if n in by_n else '—'} |" for n in ns) + "\n")
    loaded = [c for c in fan if c.get("loadgen", "wrk") == "wrk"]
    if loaded:
        w(f"\n### Under load (N = {loaded[0].get('fanout_n')})\n")
        group_tables(w, loaded, apps, containers, calibration, (ms_each or 1) / 1000.0,
                     ["steady req/s", "bound", "p99", "errors", "peak thr.", "CPU ms/req"],
                     lambda c: [ranged(c, "steady_rps", f_rps), f_rps(c["bound_rps"]), ranged(c, "p99_ms", f_lat),
                                f_int(error_total(c)), f_int(c.get("peak_threads")), f_cores(c.get("cpu_ms_per_request"))],
                     heading=lambda t, wt, cn: f"wrk -t{wt} -c{cn} on `/fanout?n={loaded[0].get('fanout_n')}&ms={ms_each}`.")


def open_loop_section(w, cells, apps, containers, calibration, meta):
    """Closed-loop (wrk) and open-loop (vegeta) latency of the same app, pool and container side
    by side: what wrk hides of a server that falls behind."""
    ol = [c for c in cells if c.get("loadgen") == "vegeta" and c.get("scenario", "call") == "call"]
    if not ol:
        return
    rate = ol[0].get("rate")
    cal = next((c for c in calibration if c["loadgen"] == "vegeta"), None)
    w(f"\n## Open loop: vegeta at {rate} req/s beside wrk\n\n")
    w(f"vegeta sends {rate} requests per second whatever the server does and measures each one from "
      f"when it was *due* (no coordinated omission), for {meta.get('duration_s')} s, waiting up to "
      f"{meta.get('wrk_timeout_s')} s for each answer. wrk, a closed loop, sends a connection's next "
      f"request only once the previous one is answered: a server that falls behind is simply sent "
      f"less, and its latency looks like the backend's. vegeta's queue keeps growing instead, and "
      f"the latency users would see at that offered load shows: a model that keeps up has p99 ≈ the "
      f"backend's ({f_lat(cal.get('ol_p99_ms')) if cal else '?'} straight at remote-sleep), one that "
      f"cannot fails requests or answers them many seconds late. **wrk p50/p99** are the closed-loop "
      f"cell of the same app with the first wrk setting; **served** = the rate the app answered at, from its "
      f"first answer to its last (a server that queues answers a short attack late, at its own pace); **timeouts** = no answer within {meta.get('wrk_timeout_s')} s.\n")
    wrk_of = {}
    for c in cells:
        if c.get("loadgen", "wrk") == "wrk" and c.get("scenario", "call") == "call":
            wrk_of.setdefault((c["app"], c["container"], c["threads"]), c)
    for threads in sorted({c["threads"] for c in ol}, key=threads_order):
        w(f"\n### {threads_label(threads)}\n\n")
        cols = ["wrk p50", "wrk p99", "vegeta answered", "served req/s", "p50", "p99", "max", "timeouts"]
        w("| app | container |" + "".join(f" {h} |" for h in cols) + "\n|---|---|" + "---:|" * len(cols) + "\n")
        for app in apps:
            for ct in containers:
                c = next((x for x in ol if x["app"] == app and x["container"] == ct and x["threads"] == threads), None)
                if c is None:
                    continue
                k = wrk_of.get((app, ct, threads), {})
                if c["status"] != "ok":
                    w(f"| {app} | {ct} | {f_lat(k.get('p50_ms'))} | {f_lat(k.get('p99_ms'))} | {status_text(c)} |"
                      + " |" * (len(cols) - 3) + "\n")
                    continue
                w(f"| {app} | {ct} | {f_lat(k.get('p50_ms'))} | {f_lat(k.get('p99_ms'))} | "
                  f"{ranged(c, 'ol_success_pct', f_pct)} | {ranged(c, 'ol_served_rps', f_rps)} | "
                  f"{ranged(c, 'ol_p50_ms', f_lat)} | {ranged(c, 'ol_p99_ms', f_lat)} | {f_lat(c.get('ol_max_ms'))} | "
                  f"{f_int(c.get('ol_timeouts'))} |\n")


CSV_FIELDS = [
    "index", "round", "repeats", "scenario", "loadgen", "app", "container", "threads", "pool_mode", "wrk_threads",
    "connections", "duration_s", "sleep_ms", "fanout_n", "fanout_ms",
    "requests", "rps", "steady_rps", "bound_rps", "ceiling_rps", "pct_of_ceiling", "latency_avg_ms", "p50_ms",
    "p90_ms", "p99_ms", "max_ms", "timeouts", "slow_2s", "errors_connect", "errors_read",
    "errors_write", "errors_status", "unfinished", "max_in_flight", "handler_threads",
    "client_threads", "virtual_threads", "carrier_threads", "peak_threads", "cpu_box_pct", "cpu_app_cores",
    "cpu_remote_cores", "cpu_wrk_cores", "cpu_app_s", "cpu_ms_per_request", "peak_rss_mb", "peak_os_threads",
    "variant", "stuck", *OL_KEYS, "slow_clients", "slow_bytes", "slow_rate", "side_load_exit", "slow_connected",
    "slow_bytes_moved", "slow_bytes_per_s", "slow_completed",
] + [f"slow_errors_{k}" for k in SLOW_ERRORS] + ["app_start", "status"]


def csv_text(run):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for c in run["cells"]:
        row = dict(c)
        for k, v in (c.get("errors") or {}).items():
            row[f"errors_{k}"] = v
        for k, v in (c.get("slow_errors") or {}).items():
            row[f"slow_errors_{k}"] = v
        writer.writerow(row)
    return out.getvalue()


def write_atomically(path, text):
    """Write then rename, so a reader (or a Ctrl-C) never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


# The sweep's charts (bench/charts.py draws them): file name in charts/, title.
CHARTS = [("sweep-throughput", "steady req/s vs connections, with the ceiling"),
          ("sweep-p99", "p99 latency vs connections"),
          ("sweep-rss", "peak RSS vs connections"),
          ("sweep-cpu", "CPU ms per request vs connections")]
ROOT = Path(__file__).resolve().parents[1]
CHART_PYTHON = ROOT / ".tools" / "venv" / "bin" / "python"   # bench/tools/install.sh matplotlib


def draw_charts(run_dir):
    """Draw a sweep's charts into run_dir/charts/ with the venv's matplotlib (this file stays
    standard-library only); a WARNING, not a failure, when they cannot be drawn."""
    if not CHART_PYTHON.exists():
        print("WARNING: no charts: matplotlib is not installed; run: bench/tools/install.sh matplotlib",
              file=sys.stderr)
        return
    r = subprocess.run([str(CHART_PYTHON), str(ROOT / "bench" / "charts.py"), str(run_dir)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(r.stdout.rstrip() if r.returncode == 0 else f"WARNING: bench/charts.py failed:\n{r.stdout}",
          file=sys.stdout if r.returncode == 0 else sys.stderr)


def update(run_dir, summary_dir=None, charts=False):
    """Rewrite results.json, .csv and .md of run_dir (with `charts`, a sweep's charts first, so
    results.md embeds them); with summary_dir (a cell or calibration cell), return its one-line
    summary. The charts take a few seconds: drawn only when asked (at the end of a run), never
    between cells, where they would take CPU from the next one."""
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    write_atomically(run_dir / "results.json", json.dumps(run, indent=2) + "\n")
    write_atomically(run_dir / "results.csv", csv_text(run))
    sweep = run["meta"].get("mode") == "sweep"
    if charts and sweep and any(c["status"] == "ok" for c in run["cells"]):
        draw_charts(run_dir)
    drawn = [(n, title) for n, title in CHARTS if (run_dir / "charts" / f"{n}.png").exists()] if sweep else []
    write_atomically(run_dir / "results.md", markdown(run, drawn))
    if summary_dir is None:
        return None
    d = Path(summary_dir)
    if d.parent.name == "calibration":
        rec = calibration_record(d)
    else:
        raw = [calibration_record(c) for c in sorted((run_dir / "calibration").glob("*/"))]
        rec = cell_record(d, ceilings_of([c for c in raw if c["status"] != "running"]))
    return summary_line(rec)


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--summary") or argv[1] in ("-h", "--help"):
        print("Usage: bench/report.py RUN_DIR [--summary CELL_DIR]", file=sys.stderr)
        return 2
    run_dir = Path(argv[1])
    if not (run_dir / "meta.txt").exists():
        print(f"ERROR: {run_dir} is not a bench run directory (no meta.txt)", file=sys.stderr)
        return 2
    summary = update(run_dir, argv[3] if len(argv) == 4 else None, charts=len(argv) == 2)
    if summary is not None:
        print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
