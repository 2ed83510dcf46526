"""The bench, top to bottom: settings, machine, run directory, remote-sleep and calibration, the
cells, the end. Ctrl-C or TERM at any point stops exactly the processes we started and keeps
every finished cell (the reports are rewritten on the way out)."""
import dataclasses
import math
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from . import foreign, inventory, leftovers, limits, loadgens, machine, pg, place, plugins, procs, remote, report, rundir, scenarios, web  # noqa: F401  (plugins: registers them)
from .app import App
from .calibration import calibrate
from .cells import Lab, run_cell
from .loadgens import vegeta
from .plan import plan
from .checks import Fatal
from .paths import ROOT
from .rundir import put
from .settings import EXAMPLES, UsageError, example_line, parse, usage


class Stopped(Exception):
    """A signal asked us to stop: exit with 128 + its number (130 for Ctrl-C, 143 for TERM)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def stop_on_signal(signum, _frame):
    # The first signal decides; the cleanup it triggers then runs undisturbed (it is bounded:
    # at most ~5 s per process still running).
    for sig in procs.STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    raise Stopped(128 + signum)


def human_time(s):
    """612 -> 10m12s"""
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def plan_run(argv, env):
    """The settings, the cells, what was left out and why, and the limits plan: the largest level
    checked against the machine's limits before anything starts (UsageError, exit 2, when it
    cannot be held); as root, ulimit -n is raised here for us and every child."""
    planner, s = settings_of(argv, env)
    cells, left_out = plan(s)
    if not cells:
        raise UsageError("no cell to run: " + "; ".join(left_out))
    try:
        limit_plan = apply_limits(s, cells)
    except UsageError as e:
        # A planner may run fewer levels where the machine cannot hold its default (it says so).
        held = limits.max_level(limits.read().hard) // 1000 * 1000
        fit = planner.fit_limits(env, s, e, held) if planner else None
        if fit is None:
            raise
        levels, note = fit
        left_out.append(note)
        s = dataclasses.replace(s, connections=levels)
        cells, _ = plan(s)
        limit_plan = apply_limits(s, cells)
    return s, cells, left_out, limit_plan


def settings_of(argv, env):
    """(the planner or None, the settings): a planner has a matrix of its own (`./bench.sh sweep`, make
    sweep, or any run with SWEEP set)."""
    planner = next((p for p in scenarios.PLANNERS if p.selected(argv, env)), None)
    mode = planner.name if planner else "matrix"
    if argv and argv != [mode]:
        raise UsageError(f"unknown argument '{argv[0]}' (settings are environment variables; "
                         f"the only argument is {' or '.join(f'`{p.name}`' for p in scenarios.PLANNERS)})")
    return planner, parse(env, mode)


def examples():
    """--help's examples, each planned for its cell count (settings.EXAMPLES)."""
    out = []
    for argv, env, what in EXAMPLES:
        _, s = settings_of([argv] if argv else [], env)
        out.append(example_line(argv, env, what, len(plan(s)[0])))
    return out


def largest_pool(cells):
    """The most platform threads any cell's app has (0: none has a numbered pool)."""
    return max((int(c.threads) for c in cells if c.threads.isdigit()), default=0)


def apply_limits(s, cells):
    """The largest level and pool against the machine's limits (UsageError when they cannot be
    held), applied; the plan, for the run's environment section."""
    if s.hosts:            # this machine runs none of the roles: each host's limits are checked there
        return limits.Plan(limits.fds_needed(max(s.connections)), None,
                           ["with HOSTS each host's own limits are checked there (the hosts' lines below)"])
    level, _ = app_level(s, cells)
    limit_plan = limits.plan(level, limits.read(), max_threads=largest_pool(cells))
    limits.apply(limit_plan)
    if any(c.loadgen == "vegeta" for c in cells):
        note = limits.open_loop_note(vegeta.limits(s.rate, s.sleep_ms, s.wrk_timeout_s)[1], limits.read())
        limit_plan.notes.extend([note] if note else [])
    return limit_plan


def app_level(s, cells):
    """(the most requests the app holds at once when it keeps up, what they are): wrk's largest level of
    connections, or the requests vegeta's open loop keeps in flight (RATE x SLEEP_MS), whichever is more."""
    wrk = max((c.connections for c in cells if c.loadgen == "wrk"), default=0)
    if not any(c.loadgen == "vegeta" for c in cells):
        return max(wrk, max(s.connections)), "connections"
    in_flight = math.ceil(s.rate * s.sleep_ms / 1000)
    return (wrk, "connections") if wrk >= in_flight else (in_flight, "requests in flight (vegeta at RATE)")


def main(argv):
    sys.stdout.reconfigure(line_buffering=True)   # progress lines in order with the children's output
    os.chdir(ROOT)                 # the repository: jars, bench/, RESULTS_DIR are relative to it
    if argv[:1] in (["-h"], ["--help"]):
        print(usage(os.environ, examples()))
        return 0
    try:
        s, cells, left_out, limit_plan = plan_run(argv, os.environ)
    except UsageError as e:
        inventory.close()
        print(f"ERROR: {e}", file=sys.stderr)
        print(usage(os.environ, examples()), file=sys.stderr)
        return 2

    place.configure(s.cpusets, s.hosts)
    web.new_token()                       # the run's admin token: every JVM of the run gets it (web.py)
    for sig in procs.STOP_SIGNALS:
        signal.signal(sig, stop_on_signal)
    run_dir, rc, host_limits = None, 0, None
    try:
        leftovers.end_earlier(s.results_dir)      # before the port checks: what a killed run left holds them
        m = machine.check(s)
        if s.hosts:
            inventory.check(s.hosts, s.raw["HOSTS"], m.java, host_jars(s), s.loadgens, s.backend == "postgres",
                            s.raw.get("APP_JAR", "").strip())
            host_limits = inventory.check_limits(s.hosts, max(s.connections), largest_pool(cells), s.backend)
        run_dir = start_run(s, m, cells, left_out, limit_plan, host_limits)
        leftovers.record(run_dir)                 # each child's PID and start time, for a run after a kill
        rc = run(Lab(s, m, run_dir), cells)
    except Fatal as e:
        print(f"ERROR: {e}", file=sys.stderr)
        rc = 1
    except UsageError as e:               # HOSTS: a host unreachable or not provisioned; nothing started
        print(f"ERROR: {e}", file=sys.stderr)
        print(usage(os.environ, examples()), file=sys.stderr)
        rc = 2
    except Stopped as e:
        rc = e.code
    except Exception:
        rc = 1                                # a bug: clean up, say where the cells are, then the traceback
        raise
    finally:
        clean_up(run_dir, rc)
    return rc


def clean_up(run_dir, rc):
    """The end of every run, however it ends: kill exactly what we started, keep every finished cell."""
    for sig in procs.STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    procs.stop_all()
    inventory.close()                     # after the roles: their stops travel through these connections
    if run_dir is None:
        return
    leftovers.forget(run_dir)             # all stopped: nothing for the next run to end
    shutil.rmtree(Path(run_dir) / place.TMP, ignore_errors=True)     # what the KILLed apps left in theirs
    try:
        report.update(run_dir, charts=True)        # a planner's charts too, drawn once at the end
    except Exception as e:                # keep the exit code and the message below
        print(f"WARNING: the reports were not rewritten: {e!r}", file=sys.stderr)
    if rc != 0:
        print(f"stopped (exit {rc}); finished cells are in {run_dir}/results.md", file=sys.stderr)


def host_jars(s):
    """The jars each role's host must hold, the same as this machine's (inventory.check): {role: {its path
    in the host's lab_dir: the file here}}. The lab's agent on every app host (APP_JAR, a cost +agent);
    APP_JAR's jar where `make hosts APP_JAR=...` puts it (foreign.ON_HOST)."""
    modules = sorted({machine.MODULE_OF[a] for a in s.apps} - {""})
    app = {f"{m}/target/{m}.jar": f"{m}/target/{m}.jar" for m in [*modules, foreign.AGENT_MODULE]}
    if s.foreign:
        app[foreign.on_host(s.foreign["jar"])] = str(s.foreign["jar"].path)
    return {"app": app, "backend": {"remote-sleep/target/remote-sleep.jar": "remote-sleep/target/remote-sleep.jar"}}


def start_run(s, m, cells, left_out, limit_plan, host_limits=None):
    """The run directory with its meta.txt, and the environment printed; returns the directory."""
    run_dir, now = rundir.create(s.results_dir)
    facts = machine.facts(s, m)
    meta = run_dir / "meta.txt"
    if s.mode != "matrix":
        put(meta, **scenarios.get(s.mode).meta_values(s))
    put(meta, fds_needed=limit_plan.need_fds, limit_notes=" | ".join(limit_plan.notes))
    put(meta, date=now.strftime("%Y-%m-%dT%H:%M:%SZ"), apps=" ".join(s.apps), containers=" ".join(s.containers),
        threads=" ".join(s.threads), wrk_threads=" ".join(map(str, s.wrk_threads)),
        connections=" ".join(map(str, s.connections)), scenarios=" ".join(s.scenarios))
    for sc in scenarios.ALL:
        if sc not in scenarios.PLANNERS:
            put(meta, **sc.meta_values(s))
    put(meta, loadgens=" ".join(s.loadgens), rate=s.rate, repeat=s.repeat,
        duration_s=s.duration_s, sleep_ms=s.sleep_ms, wrk_timeout_s=s.wrk_timeout_s, warmup_s=s.warmup_s,
        **({"warmup": "auto"} if s.warmup == "auto" else {}),
        java_opts=s.raw["JAVA_OPTS"], app_args=s.raw["APP_ARGS"], work=s.raw.get("WORK", "").strip(), cpusets=place.describe(), app_cds="on" if m.java_major >= 19 else "off",
        **facts, left_out="; ".join(left_out))
    print(f"""== environment
  date:      {now.strftime("%Y-%m-%dT%H:%M:%SZ")}
  JDK:       {facts['jdk']}
  versions:  Jetty {facts['jetty']}, Tomcat {facts['tomcat']}, Spring {facts['spring']}
  wrk:       {facts['wrk']}{f"; {facts['vegeta']} (open loop at {s.rate} req/s)" if facts['vegeta'] else ""}
  CPU, OS:   {facts['cpu']}; {facts['os']}
  limits:    ulimit -n {m.nofile} (hard {m.hard_nofile}; the app needs ~{limit_plan.need_fds} at {' '.join(map(str, app_level(s, cells)))}), somaxconn {facts['somaxconn']}, ephemeral ports {facts['port_range']}
  ports:     remote {s.remote_port} on {place.address("backend")}, app {s.app_port} and admin {s.admin_port} on {place.address("app")}: free
  CPUs:      {cpus_line(s)}
  source:    {facts['git']}
  results:   {run_dir}""")
    for line in host_lines(s, m, run_dir, host_limits):
        print(line)
    for note in limit_plan.notes:
        print(f"== limits: {note}")
    if s.mode != "matrix":
        for line in scenarios.get(s.mode).starting_lines(s):
            print(line)
    if s.backend == "postgres":
        put(meta, **db_meta(s))
        print(f"== backend: PostgreSQL, {s.db_query} query, DB pool {s.db_pool}, acquire timeout "
              f"{s.db_acquire_timeout_ms} ms, executor threads {s.db_executor_threads}"
              f"{', drivers ' + ' '.join(s.db_drivers) if s.db_drivers else ''}; "
              f"{s.db_url or 'a throwaway cluster of the bench (bench/tools/pg.sh)'}")
    for sentence in left_out:
        print(f"== left out of the matrix: {sentence}")
    return run_dir


def cpus_line(s):
    if s.hosts:
        return "each host's `cpus` in HOSTS (taskset there), see the hosts below"
    if s.cpusets:
        return place.describe() + " (CPUSETS, taskset)" + place.jvm_note(s.java_opts)
    return "not pinned: every role shares every CPU (CPUSETS)"


def host_lines(s, m, run_dir, host_limits):
    """HOSTS: where each role runs, each host's CPUs, kernel and JDK, and the round trip from each
    load host to the app's host (into meta.txt too); [] without HOSTS."""
    if not s.hosts:
        return []
    facts = inventory.facts(s.hosts, m.java, host_limits)
    rtt = inventory.round_trip_ms(s.hosts)
    rtt_text = ", ".join(f"{name} {ms if ms is not None else '?'} ms" for name, ms in rtt.items())
    put(run_dir / "meta.txt", hosts=place.describe_hosts(), host_facts="; ".join(facts), round_trip_ms=rtt_text)
    return ([f"== hosts ({s.raw['HOSTS']}): {place.describe_hosts()}"] + [f"   {f}" for f in facts]
            + [f"   round trip, load host -> app host (fastest of 10 TCP connects to its sshd): {rtt_text}"])


def db_meta(s):
    """BACKEND=postgres's settings for meta.txt (the server's facts follow once it answers)."""
    return {"backend": s.backend, "db_url": s.db_url, "db_pool": s.db_pool, "db_query": s.db_query,
            "db_acquire_timeout_ms": s.db_acquire_timeout_ms, "db_executor_threads": s.db_executor_threads,
            "db_drivers": " ".join(s.db_drivers)}


def start_db(lab):
    """BACKEND=postgres: the run's PostgreSQL (DB_URL's, or a cluster of ours sized for the pool),
    its facts into meta.txt and printed."""
    cluster, reason = pg.start(lab.s, lab.run_dir, lab.m.pg_bindir)
    if reason:
        raise Fatal(f"PostgreSQL: {reason}")
    lab.db = cluster
    f = cluster.facts
    put(lab.run_dir / "meta.txt", **{f"pg_{k}": v for k, v in f.items()})
    print(f"== PostgreSQL {f['server_version']} at {cluster.url}, started by {cluster.started_by}: "
          f"max_connections {f['max_connections']}, fsync {f['fsync']}, shared_buffers {f['shared_buffers']}")


def run(lab, cells):
    """remote-sleep, the calibration cells, every cell, the closing lines; 1 if a cell FAILED."""
    s, m, run_dir = lab.s, lab.m, lab.run_dir
    start = time.monotonic()

    # 1. the slow backend (remote-sleep, or PostgreSQL), once for the whole run, and the calibration cells.
    if s.backend == "postgres":
        start_db(lab)
    else:
        remote.start(lab)

    def summarize(d):
        return report.summary(run_dir, d)
    calibrations = calibrate(lab, summarize)

    # 2. the cells, each with a progress line; every cell's record is in its directory, and the
    #    reports are written at the end (also after Ctrl-C), so a stop keeps what finished. With
    #    REPEAT each round starts with its own calibration, the ceiling drifts too (cost's has none).
    total = len(cells)
    to_measure = [c for c in cells if not c.skip_reason(m.java_major)]
    put(run_dir / "meta.txt", cells_planned=total)
    print(f"== {total} cells, {s.duration_s}s each")
    app = App(lab)
    failed = skipped = measured = 0
    measured_s = 0            # the time loads ran in cells: a timed load's DURATION per cell that ran it
    cells_start = time.monotonic()
    for cell in cells:
        if cell.round > 1 and cell.index == next(c.index for c in cells if c.round == cell.round):
            app.stop()
            print(f"== round {cell.round} of {max(c.round for c in cells)}")
            calibrations += calibrate(lab, summarize, cell.round) if cell.scene.calibrates_each_round else 0
        status = run_cell(lab, app, cell)
        if status.startswith("SKIPPED"):
            skipped += 1
        else:
            measured += 1
            failed += status != "ok"
            if status == "ok" and loadgens.get(cell.loadgen).timed:
                measured_s += s.duration_s
        summary = report.summary(run_dir, run_dir / "cells" / cell.dir_name)
        elapsed = int(time.monotonic() - cells_start)
        eta = elapsed * (len(to_measure) - measured) // measured if measured else 0
        print(f"[{cell.index}/{total}] {cell.label} … {summary}  "
              f"(elapsed {human_time(elapsed)}, ETA {human_time(eta)})")
    app.stop()

    # 3. the end: where the results are, and what the harness cost.
    finish(lab, int(time.monotonic() - start), measured_s, calibrations * s.duration_s,
           f"{total} cells ({failed} FAILED" + (f", {skipped} SKIPPED)" if skipped else ")"))
    return 1 if failed else 0


def finish(lab, wall_s, measured_s, calibration_s, cells_text):
    """The reports written, the done line (what the harness cost), each scenario's closing lines."""
    run_dir = lab.run_dir
    put(run_dir / "meta.txt", wall_s=wall_s, measured_s=measured_s, calibration_s=calibration_s)
    report.update(run_dir)
    print(f"== done: {cells_text} in {human_time(wall_s)}: {human_time(measured_s)} measured in cells"
          f" + {human_time(calibration_s)} calibration = {wall_s / measured_s if measured_s else 0:.2f}x the measured time")
    run_figures = report.load_run(run_dir)
    for sc in scenarios.reporting(run_figures["meta"]):
        for line in sc.closing_lines(run_figures):
            print(line)
    print(f"   results: {run_dir}/results.md (also results.json, results.csv, cells/*/wrk.txt, logs/)")
