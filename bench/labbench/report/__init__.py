"""The reports of one run: results.json, results.md and results.csv, built from the run directory
alone (meta.txt, and each cell's cell.json with its raw files), so they can be rebuilt at any time,
also after Ctrl-C. Standard library only.

  figures   every cell's figures (results.json: a scenario's own under its name), REPEAT's rounds merged
  fmt       how numbers, ranges and statuses read
  tables    the per pool size x wrk setting table the sections share
  csvout    results.csv
  compare   `make compare`: two runs, cell by cell, against the noise
Each scenario writes its own section (scenarios/*.py Scenario.sections), each load generator its
own progress text (loadgens/*.py). Usage: python3 -m labbench.report RUN_DIR | --from-json FILE.json
"""
import io
import re
import sys
from pathlib import Path

from .. import loadgens, scenarios
from . import csvout, db as dbreport, figures, hosts as hostsreport, layers, own as ownreport
from .figures import calibration_record, cell_record, ceilings_of, load_run, read_results, results_json  # noqa: F401
from .fmt import (error_total, f_cores, f_int, f_lat, f_mb, f_pct, f_rps, per_connection, ranged, status_text,
                  throughput, write_atomically)
from .summary import JIT_WARM, first_screen


def summary_line(rec):
    """One line for the bench's progress output."""
    if rec["status"] != "ok":
        return rec["status"]
    scene = scenarios.get(rec.get("scenario"))
    if scene.own_summary:    # a scenario that measures its own way (the cost card's forks)
        return scene.summary(rec) or rec["status"]
    own = loadgens.get(rec.get("loadgen")).summary(rec)
    if own is not None:      # an open-loop cell: its load generator's figures, then its scenario's (degrade)
        extra = scenarios.get(rec.get("scenario")).summary(rec) if rec.get("scenario") else None
        return own + (f"; {extra}" if extra else "")
    if "ceiling_rps" not in rec:      # a calibration cell
        pct = 100.0 * throughput(rec) / rec["bound_rps"] if rec["bound_rps"] else 0
        return (f"{f_rps(rec['rps'])} req/s, steady {f_rps(rec.get('steady_rps'))} ({pct:.1f} % of the "
                f"{rec['bound_rps']:g} req/s bound), p99 {f_lat(rec['p99_ms'])}, box CPU {rec['cpu_box_pct']} %")
    of = f"{f_pct(rec['pct_of_ceiling'])} of ceiling" + (" (pgbench)" if rec.get("db_driver") else "")
    if rec.get("db_driver"):
        pass                          # its bound is in its DB part below, with what sets it
    elif rec["ceiling_rps"] and rec["bound_rps"] < rec["ceiling_rps"] and throughput(rec) is not None:
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
    if rec.get("db_driver"):
        parts.append(dbreport.summary(rec))
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
    write_atomically(run_dir / "results.json", results_json(run))
    write_atomically(run_dir / "results.csv", csvout.csv_text(run))
    drawn = [c for s in scenarios.reporting(run["meta"]) for c in s.charts(run_dir, run, draw=charts)]
    write_atomically(run_dir / "results.md", markdown(run, drawn))
    return None if summary_dir is None else summary(run_dir, summary_dir)


def markdown(run, charts=()):
    """results.md: the first screen (summary.py), each scenario's section(s) in their order, then the
    appendix. `charts`: a scenario's (name, title) charts drawn into charts/, to embed."""
    meta, cells = run["meta"], run["cells"]
    calibration = meta["calibration"]
    apps = meta.get("apps") or sorted({c["app"] for c in cells})
    containers = meta.get("containers") or sorted({c["container"] for c in cells})
    sleep_s = (meta.get("sleep_ms") or 1000) / 1000.0
    ctx = scenarios.Context(apps, containers, calibration, sleep_s, list(charts))
    sections = [sec for s in scenarios.reporting(run["meta"]) for sec in s.sections(run, ctx)] + [
        (5, ownreport.section(run)), (20, dbreport.section(run)), (25, hostsreport.section(run))]
    return "".join([first_screen(run), *(text for _order, text in sorted(sections, key=lambda sec: sec[0])),
                    layers.section(cells), "\n# Appendix\n", environment(meta, apps, containers), lab_lines(cells),
                    this_run(meta, calibration, containers), all_cells(cells), calibration_table(calibration)])


def environment(meta, apps, containers):
    """The configuration and the machine, a row each."""
    duration_s, sleep_ms = meta.get("duration_s") or 0, meta.get("sleep_ms") or 0
    rows = [
        ("apps", " ".join(apps)),
        ("containers", " ".join(containers)),
        ("pool sizes (threads that may run app code)", " ".join(map(str, meta.get("threads", [])))),
        ("wrk threads × connections", ", ".join(f"-t{t} -c{c}" for c in meta.get("connections", [])
                                                 for t in meta.get("wrk_threads", []))),
    ]
    for s in scenarios.reporting(meta):
        rows += s.environment_rows(meta)
    rows += dbreport.environment_rows(meta)
    if meta.get("left_out"):
        rows.append(("left out of the matrix", meta["left_out"]))
    rows += [
        ("duration / warm-up / wrk --timeout",
         f"{duration_s} s / "
         + ("auto: until the JIT settled, per fresh app (the first screen's warm-up line; each cell's warm-up in its cell.json)" if meta.get("warmup") == "auto"
            else f"{meta.get('warmup_s')} s") + f" (fresh apps only, unrecorded) / {meta.get('wrk_timeout_s')} s"),
        ("remote sleep", f"{sleep_ms} ms"),
        ("extra JVM flags / app flags", f"`{meta.get('java_opts') or '-'}` / `{meta.get('app_args') or '-'}`"),
        *([("work per request (WORK)", f"`{meta['work']}`")] if meta.get("work") else []),
        ("app class-data archive (start-up time only)", meta.get("app_cds", "?")),
        ("date (UTC)", meta.get("date", "?")),
        ("JDK", meta.get("jdk", "?")),
        ("Jetty / Tomcat / Spring Framework",
         f"{meta.get('jetty', '?')} / {meta.get('tomcat', '?')} / {meta.get('spring', '?')}"),
        ("wrk", meta.get("wrk", "?")),
        ("CPU", meta.get("cpu", "?")),
        *([("roles pinned to CPUs (CPUSETS, taskset)", meta["cpusets"])] if meta.get("cpusets") else []),
        *([("roles on hosts (HOSTS)", meta["hosts"]), ("each host", meta.get("host_facts", "?")),
           ("round trip, load host → app host (fastest of 10 TCP connects)", meta.get("round_trip_ms", "?"))]
          if meta.get("hosts") else []),
        ("OS", meta.get("os", "?")),
        ("ulimit -n / net.core.somaxconn", f"{meta.get('nofile', '?')} / {meta.get('somaxconn', '?')}"),
        ("source", meta.get("git", "?")),
    ]
    if "port_range" in meta:       # runs recorded before these facts existed have none
        rows.insert(-1, ("ephemeral ports (net.ipv4.ip_local_port_range) / cores",
                         f"{meta['port_range']} / {meta.get('cores', '?')}"))
    if meta.get("wall_s") is not None and meta.get("measured_s"):
        rows.append(("run time", f"{meta['wall_s']} s wall for {meta['measured_s']} s of timed load in cells "
                                 f"(+ {meta.get('calibration_s')} s calibration): "
                                 f"{meta['wall_s'] / meta['measured_s']:.2f}×"))
    if meta.get("fds_needed"):
        rows.append(("file descriptors the app needs at the largest level", f"~{meta['fds_needed']} (2 per connection + 1024)"))
    rows += [("limits", note) for note in (meta.get("limit_notes") or "").split(" | ") if note]
    return "\n## Configuration and environment\n\n| | |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in rows)


def lab_lines(cells):
    """The apps' startup lines, with the app id and pool size blanked so equal ones merge."""
    seen = {}
    for c in cells:
        line = c.get("lab_line")
        if line:
            line = re.sub(r"\bapp=\S+", "app=<app>", line)
            line = re.sub(r"\bthreads=v?\d+", "threads=<N>", line)
            line = re.sub(r"QueuedThreadPool max=\d+ \(\d+ for", "QueuedThreadPool max=<N+1> (<N> for", line)
            line = re.sub(r"maxThreads=\d+", "maxThreads=<N>", line)
            apps_seen = seen.setdefault(line, [])
            if c["app"] not in apps_seen:
                apps_seen.append(c["app"])
    if not seen:
        return ""
    return ("\nThe apps' effective configuration as they printed it at start (client limits, what the "
            "pool counts, accept queue):\n\n```\n" +
            "".join(f"# {', '.join(line_apps)}\n{line}\n" for line, line_apps in seen.items()) + "```\n")


def this_run(meta, calibration, containers):
    """What this run's own figures mean: its bound, its measured ceilings, its wrk timeout. The
    columns themselves are explained in docs/reading-results.md."""
    lines = ["\n## This run's bounds and ceilings\n\n"]
    w = lines.append
    if meta.get("backend") == "postgres":
        w("- **bound** and **ceiling** (pgbench, the same query straight at PostgreSQL): see *The database backend: "
          "PostgreSQL* above, per cell.\n")
        return "".join(lines)
    duration_s, sleep_ms = meta.get("duration_s") or 0, meta.get("sleep_ms") or 0
    c0 = (meta.get("connections") or [100])[0]
    sleep_s = sleep_ms / 1000.0 if sleep_ms else 1.0
    per_conn = int(duration_s // sleep_s) if sleep_s else 0
    w(f"- **bound** (Little's law): with {c0} connections each waiting {sleep_ms} ms, at most "
      f"{c0 / sleep_s:g} req/s; a thread-per-request app on N platform threads: min(connections, N) / "
      f"sleep, {min(c0, 1) / sleep_s:g} req/s with 1 thread.\n")
    cals = [c for c in calibration if c.get("rps")]
    if cals:
        measured = ", ".join(
            f"{c['rps']:.1f} req/s for -t{c['wrk_threads']} -c{c['connections']} "
            f"({100 * c['rps'] / c['bound_rps']:.0f} % of its bound, "
            f"{c['requests'] / c['connections']:.2f} responses per connection)" for c in cals)
        w(f"- **ceiling**: the same wrk command straight at remote-sleep measured {measured}. In "
          f"{duration_s} s a closed-loop connection completes at most {per_conn} responses of {sleep_ms} ms, "
          f"so a cell can lose up to one response per connection against its ceiling (up to "
          f"{100 / per_conn if per_conn else 0:.0f} %) when an app adds a few ms per request: see "
          f"*resp./conn.* below.\n")
    if (meta.get("repeat") or 1) > 1:
        w(f"- **REPEAT={meta['repeat']}**: every figure is the median over {meta['repeat']} rounds (each with its "
          "own calibration) with its min–max in brackets; `make compare` judges changes against these ranges.\n")
    timeout, longest = meta.get("wrk_timeout_s"), duration_s
    if timeout is not None and timeout > longest:
        w(f"- wrk's --timeout was {timeout} s, longer than a {duration_s} s run, so no response was left out of "
          f"the latency figures.\n")
    elif timeout is not None:
        w(f"- **wrk's --timeout was {timeout} s**, not longer than a {duration_s} s run: every response slower "
          f"than {timeout} s counts as a timeout and is **left out of every latency figure** (docs/traps.md #2); "
          f"read the *timeouts* column beside p99.\n")
    if any(isinstance(t, str) for t in meta.get("threads", [])):
        w("- **vN**: virtual threads on N carrier threads (JDK 21+): a thread-per-request app's bound is then "
          "connections / sleep, like the non-blocking apps.\n")
    if "netty" in containers:
        w("- **netty**: WebFlux on Reactor Netty; its pool size is its event-loop threads.\n")
    return "".join(lines)


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
      "| client thr. | peak thr. | peak RSS MB | CPU box | CPU app | CPU wrk | CPU ms/req | JIT % | load ms/req | app | status |\n")
    w("|---:|" + ("---|" if show_scenario else "") + "---|---|" + "---:|" * 28 + "---|---|\n")
    for c in sorted(wrk_cells, key=lambda c: c["index"] or 0):
        e = c.get("errors")
        errs = "/".join(str(e[k]) for k in ("connect", "read", "write", "status")) if e else "—"
        scenario = f" {c.get('scenario', scenarios.DEFAULT)} |" if show_scenario else ""
        app = c["app"] + (f" · {c['db_driver']}" if c.get("db_driver") else "")
        w(f"| {c['index']} |{scenario} {app} | {c['container']} | {c['threads']} | {c['wrk_threads']} | "
          f"{c['connections']} | {f_int(c['requests'])} | {f_rps(c['rps'])} | {f_rps(c.get('steady_rps'))} | "
          f"{'—' if c['bound_rps'] is None else format(c['bound_rps'], 'g')} | "
          f"{f_rps(c['ceiling_rps'])} | {f_pct(c['pct_of_ceiling'])} | {per_connection(c)} | "
          f"{f_lat(c.get('latency_avg_ms'))} | "
          f"{f_lat(c.get('p50_ms'))} | {f_lat(c.get('p90_ms'))} | {f_lat(c.get('p99_ms'))} | "
          f"{f_lat(c.get('max_ms'))} | {f_int(c.get('timeouts'))} | {f_int(c.get('slow_2s'))} | {errs} | "
          f"{f_int(c.get('unfinished'))} | {f_int(c.get('handler_threads'))} | "
          f"{f_int(c.get('client_threads'))} | {f_int(c.get('peak_threads'))} | {f_mb(c.get('peak_rss_mb'))} | "
          f"{'—' if c.get('cpu_box_pct') is None else str(c['cpu_box_pct']) + ' %'} | "
          f"{f_cores(c.get('cpu_app_cores'))} | {f_cores(c.get('cpu_wrk_cores'))} | "
          f"{f_cores(c.get('cpu_ms_per_request'))} | {f_jit(c)} | {f_load(c)} | {c.get('app_start') or '—'} | {status_text(c)} |\n")

    return out.getvalue()


def f_jit(c):
    """The JIT compiler's share of the app's CPU in the cell's window, ⚠ above a warm window's
    (summary.JIT_WARM): its CPU ms/req is then partly the compiler's."""
    share = c.get("jit_pct")
    if share is None:
        return "—"
    return f"{share:.0f}" + (" ⚠" if share > JIT_WARM else "")


def f_load(c):
    """The CPU the load added per request (less the compiler and the JVM at rest), "few" where too
    few requests came to price one (cpu_load_note in cell.json says why)."""
    if c.get("cpu_ms_per_request_load") is not None:
        return f"{c['cpu_ms_per_request_load']:.3f}"
    return "few" if c.get("cpu_load_note") else "—"


def calibration_table(calibration):
    """The appendix's calibration cells: each load straight at remote-sleep (BACKEND=postgres: pgbench's
    are in the database section)."""
    if calibration and all(c["loadgen"] == "pgbench" for c in calibration):
        return ""
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
        run = read_results(argv[2])
        out = Path(argv[3]) if len(argv) > 3 else Path(argv[2]).with_suffix(".md")
        drawn = [c for s in scenarios.reporting(run["meta"]) for c in s.charts(out.parent, run)]
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
