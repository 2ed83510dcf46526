"""The reports of one run: results.json, results.md and results.csv, built from the run directory
alone (meta.txt, and each cell's cell.json with its raw files), so they can be rebuilt at any time,
also after Ctrl-C. Standard library only.

  figures   every cell's figures (results.json), REPEAT's rounds merged
  fmt       how numbers, ranges and statuses read
  tables    the per pool size x wrk setting table the sections share
  csvout    results.csv
  compare   `make compare`: two runs, cell by cell, against the noise
Each scenario writes its own section (scenarios/*.py Scenario.sections), each load generator its
own progress text (loadgens/*.py). Usage: python3 -m labbench.report RUN_DIR | --from-json FILE.json
"""
import io
import json
import re
import sys
from pathlib import Path

from .. import loadgens, scenarios
from . import csvout, figures
from .figures import calibration_record, cell_record, ceilings_of, load_run  # noqa: F401
from .fmt import (error_total, f_cores, f_int, f_lat, f_mb, f_pct, f_rps, per_connection, ranged, status_text,
                  throughput, write_atomically)


def summary_line(rec):
    """One line for the bench's progress output."""
    if rec["status"] != "ok":
        return rec["status"]
    own = loadgens.get(rec.get("loadgen")).summary(rec)
    if own is not None:
        return own
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
    own = scenarios.get(rec.get("scenario")).summary(rec)
    if own:
        parts.append(own)
    parts.append(f"CPU {rec.get('cpu_box_pct')} %")
    if rec.get("peak_rss_mb") is not None:
        parts.append(f"app peak RSS {rec['peak_rss_mb']:.0f} MB, {f_int(rec.get('peak_os_threads'))} OS threads, "
                     f"{f_cores(rec.get('cpu_ms_per_request'))} CPU ms/req")
    return ", ".join(parts)


def summary(run_dir, cell_dir):
    """The one-line summary of a cell or calibration cell, for the progress output."""
    run_dir, d = Path(run_dir), Path(cell_dir)
    if d.parent.name == "calibration":
        return summary_line(calibration_record(d))
    raw = [calibration_record(c) for c in sorted((run_dir / "calibration").glob("*/"))]
    return summary_line(cell_record(d, ceilings_of([c for c in raw if c["status"] != "running"])))


def update(run_dir, summary_dir=None, charts=False):
    """Rewrite results.json, .csv and .md of run_dir (with `charts`, a scenario's charts first, so
    results.md embeds them; they take seconds, so only at the end of a run). With summary_dir,
    also return that cell's one-line summary."""
    run_dir = Path(run_dir)
    run = load_run(run_dir)
    write_atomically(run_dir / "results.json", json.dumps(run, indent=2) + "\n")
    write_atomically(run_dir / "results.csv", csvout.csv_text(run))
    drawn = [c for s in scenarios.ALL for c in s.charts(run_dir, run, draw=charts)]
    write_atomically(run_dir / "results.md", markdown(run, drawn))
    return None if summary_dir is None else summary(run_dir, summary_dir)


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
    for s in scenarios.ALL:
        rows += s.environment_rows(meta)
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

    # Each scenario's section(s), in their order (the sweep's or the plain tables first, then slow
    # clients, the open loop, fan-out), then the appendix: every cell, the calibration.
    ctx = scenarios.Context(apps, containers, calibration, sleep_s, list(charts))
    sections = [sec for s in scenarios.ALL for sec in s.sections(run, ctx)]
    for _order, text in sorted(sections, key=lambda sec: sec[0]):
        w(text)
    w(all_cells(cells))
    w(calibration_table(calibration))
    return out.getvalue()


def all_cells(cells):
    """The appendix's table of every closed-loop cell."""
    out = io.StringIO()
    w = out.write

    wrk_cells = [c for c in cells if c.get("loadgen", "wrk") == "wrk"]
    w("\n## All cells\n\n")
    # The scenario column only when a run has more than the plain call scenario.
    show_scenario = any(c.get("scenario", scenarios.DEFAULT) != scenarios.DEFAULT for c in cells)
    w("| # |" + (" scenario |" if show_scenario else "") + " app | container | threads | wrk -t | -c | requests "
      "| req/s | steady | bound | ceiling | % ceil. "
      "| resp./conn. | avg | p50 | p90 | p99 | max | timeouts | > 2 s | errors c/r/w/s | unfinished | handler thr. "
      "| client thr. | peak thr. | peak RSS MB | CPU box | CPU app | CPU wrk | CPU ms/req | app | status |\n")
    w("|---:|" + ("---|" if show_scenario else "") + "---|---|" + "---:|" * 26 + "---|---|\n")
    for c in sorted(wrk_cells, key=lambda c: c["index"] or 0):
        e = c.get("errors")
        errs = "/".join(str(e[k]) for k in ("connect", "read", "write", "status")) if e else "—"
        scenario = f" {c.get('scenario', scenarios.DEFAULT)} |" if show_scenario else ""
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

    return out.getvalue()


def calibration_table(calibration):
    """The appendix's calibration cells: each load straight at remote-sleep."""
    out = io.StringIO()
    w = out.write
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


def main(argv):
    """python3 -m labbench.report RUN_DIR: rebuild a run's reports (and its charts);
    --from-json FILE.json [OUT.md]: results.md again from a results.json alone (a committed sample)."""
    if len(argv) >= 3 and argv[1] == "--from-json":
        run = json.loads(Path(argv[2]).read_text())
        out = Path(argv[3]) if len(argv) > 3 else Path(argv[2]).with_suffix(".md")
        drawn = [c for s in scenarios.ALL for c in s.charts(out.parent, run)]
        write_atomically(out, markdown(run, drawn))
        return 0
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("Usage: python3 -m labbench.report RUN_DIR | --from-json FILE.json [OUT.md]", file=sys.stderr)
        return 2
    run_dir = Path(argv[1])
    if not (run_dir / "meta.txt").exists():
        print(f"ERROR: {run_dir} is not a bench run directory (no meta.txt)", file=sys.stderr)
        return 2
    update(run_dir, charts=True)
    return 0
