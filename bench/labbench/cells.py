"""The matrix and what runs in it: the calibration cells, the app under test (start, reuse,
verify, warm-up) and one cell, start to record.

A cell's record is its directory: cell.txt (key=value, status last), wrk.json, wrk.txt,
stats.json and, with slow clients, slow.json; bench/report.py builds every report from them.
"""
import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from . import procs, vegeta, wrk
from .rundir import put
from .settings import FANOUT_LOAD_N, MODULE_OF, SCENARIOS, THREAD_PER_REQUEST_APPS, is_virtual
from .sideload import SlowClients


@dataclass
class Cell:
    index: int
    scenario: str
    app: str
    container: str
    threads: str          # "1", "200" or "v1", as --threads takes it
    wrk_threads: int      # wrk cells; None for vegeta's
    connections: int      # wrk cells; None for vegeta's
    loadgen: str = "wrk"  # wrk (closed loop), vegeta (open loop at RATE), or probe (one request at a time)
    round: int = 1        # REPEAT: which round of the matrix
    path: str = "/call"   # what the load calls: /call, or /fanout?n=10&ms=M for SCENARIO=fanout
    variant: str = ""     # the sweep: which variant (Variant.id) this level belongs to

    @property
    def pool_mode(self):
        if self.container == "netty":
            return "event-loop"
        return "virtual" if is_virtual(self.threads) else "platform"

    @property
    def thread_per_request(self):
        """At most `threads` requests in flight. Not on virtual threads: a blocked virtual thread
        holds no carrier, so connections bound it, not N."""
        return self.app in THREAD_PER_REQUEST_APPS and self.pool_mode == "platform"

    @property
    def app_key(self):
        return self.app, self.container, self.threads

    @property
    def dir_name(self):
        rnd = "" if self.round == 1 else f"r{self.round}-"
        scenario = "" if self.scenario == "call" else f"{self.scenario}-"
        load = f"w{self.wrk_threads}-c{self.connections}" if self.loadgen == "wrk" else self.loadgen
        return f"{self.index:02d}-{rnd}{scenario}{self.app}-{self.container}-t{self.threads}-{load}"

    @property
    def label(self):
        rnd = "" if self.round == 1 else f"round {self.round}: "
        scenario = "" if self.scenario == "call" else f"{self.scenario} "
        load = {"wrk": f"wrk-t={self.wrk_threads} c={self.connections}", "vegeta": "vegeta (open loop)",
                "probe": "one request at a time"}[self.loadgen]
        return f"{rnd}{scenario}{self.app} {self.container} threads={self.threads} {load}"

    def skip_reason(self, java_major):
        """Why this machine cannot run the cell (it stays in the matrix as SKIPPED), or None."""
        if (is_virtual(self.threads) or self.app == "fanout-virtual") and java_major < 21:
            return f"virtual threads need JDK 21+ (running {java_major})"
        return None


def left_out_because(app, container, threads):
    """(why, what) when a combination does not exist at all (it is not a cell), else None."""
    if container == "netty" and app != "webflux":
        return "netty runs only the webflux app (Reactor Netty has no servlet API)", f"{app} on netty"
    if container == "netty" and is_virtual(threads):
        return "virtual threads do not apply to Netty's event loops", f"webflux on netty with THREADS {threads}"
    return None


def sweep_plan(s):
    """The sweep: for each variant, each SWEEP level (s.connections) with each wrk -t, in that
    order; the variants' combinations were checked when SWEEP_VARIANTS was parsed."""
    cells = []
    for v in s.variants:
        for conns in s.connections:
            for wt in s.wrk_threads:
                cells.append(Cell(len(cells) + 1, "call", v.app, v.container, v.threads_at(conns), wt, conns,
                                  variant=v.id))
    return cells, []


def plan(s):
    """The cells in run order (round outermost: the whole matrix, then again, so drift spreads
    evenly over the rounds; then scenario, container, app, pool, connections, wrk threads, and
    vegeta's open-loop cell last), and one sentence per reason for the combinations left out."""
    if s.mode == "sweep":
        return sweep_plan(s)
    cells, left_out = [], {}
    for rnd in range(1, s.repeat + 1):
        for scenario in s.scenarios:
            fanout = scenario == "fanout"
            path = f"/fanout?n={FANOUT_LOAD_N}&ms={s.fanout_ms}" if fanout else "/call"
            for container in s.containers:
                for app in s.fanout_apps if fanout else s.apps:
                    for threads in s.threads:
                        gap = left_out_because(app, container, threads)
                        if gap:
                            why, what = gap
                            if what not in left_out.setdefault(why, []):
                                left_out[why].append(what)
                            continue
                        if fanout:       # first one request at a time per FANOUT N, as the write-ups timed it
                            cells.append(Cell(len(cells) + 1, scenario, app, container, threads, None, None,
                                              "probe", rnd, path))
                        if "wrk" in s.loadgens:
                            for conns in s.connections:
                                for wt in s.wrk_threads:
                                    cells.append(Cell(len(cells) + 1, scenario, app, container, threads, wt, conns,
                                                      "wrk", rnd, path))
                        if "vegeta" in s.loadgens:
                            cells.append(Cell(len(cells) + 1, scenario, app, container, threads, None, None,
                                              "vegeta", rnd, path))
    return cells, [f"{why}: no {', '.join(what)}" for why, what in left_out.items()]


@dataclass
class Lab:
    """What every cell needs: the settings, the machine, the run directory, remote-sleep."""
    s: object
    m: object
    run_dir: Path
    remote: object = None       # remote-sleep's process

    def url(self, port, path):
        return f"http://127.0.0.1:{port}{path}"


def calibrate(lab, summary, rnd=1):
    """One calibration cell per wrk setting (and one for vegeta): the same load straight at
    remote-sleep. Its req/s is the ceiling this box and this closed-loop window can reach
    (lab-notes trap 14); vegeta's is the latency a perfect server shows at RATE. With REPEAT,
    every round measures its own. `summary(dir)` rewrites the reports and returns the cell's
    one-line summary. Returns how many ran."""
    s = lab.s
    done = []
    remote_stats = lab.url(s.remote_port, "/stats")
    prefix = "" if rnd == 1 else f"r{rnd}-"
    if "wrk" in s.loadgens:
        for conns in s.connections:
            for wt in s.wrk_threads:
                if (wt, conns) in done:
                    continue
                done.append((wt, conns))
                d = lab.run_dir / "calibration" / f"{prefix}w{wt}-c{conns}"
                d.mkdir(parents=True)
                put(d / "cell.txt", kind="calibration", round=rnd, wrk_threads=wt, connections=conns,
                    duration_s=s.duration_s, sleep_ms=s.sleep_ms)
                print(f"== calibration{f' (round {rnd})' if rnd > 1 else ''}: wrk -t{wt} -c{conns} straight at remote-sleep /sleep")
                wrk.warm_up(s, lab.url(s.remote_port, "/sleep?ms=0"), wt, conns, d / "warmup.txt")
                procs.wait_drained(remote_stats, s.sleep_ms // 1000 + 5)
                reason = wrk.measure(s, d, lab.url(s.remote_port, "/sleep"), wt, conns, lab.remote)
                put(d / "cell.txt", status="ok" if reason is None else f"FAILED: {reason}")
                print(f"   ceiling: {summary(d)}")
    if "vegeta" in s.loadgens:
        done.append("vegeta")
        d = lab.run_dir / "calibration" / f"{prefix}vegeta"
        d.mkdir(parents=True)
        put(d / "cell.txt", kind="calibration", round=rnd, loadgen="vegeta", rate=s.rate,
            duration_s=s.duration_s, sleep_ms=s.sleep_ms)
        print(f"== calibration{f' (round {rnd})' if rnd > 1 else ''}: vegeta at {s.rate} req/s straight at remote-sleep /sleep")
        procs.wait_drained(remote_stats, s.sleep_ms // 1000 + 5)
        reason = vegeta.measure(lab.m.vegeta, d, lab.url(s.remote_port, "/sleep"), s.rate, s.duration_s,
                                s.wrk_timeout_s, s.sleep_ms)
        put(d / "cell.txt", status="ok" if reason is None else f"FAILED: {reason}")
        print(f"   open-loop ceiling: {summary(d)}")
    return len(done)


class App:
    """The app under test: at most one runs at a time, reused for the next cell when safe."""

    def __init__(self, lab):
        self.lab = lab
        self.proc = None
        self.key = None
        self.log = None
        self.cds = None            # its class-data archive (JDK 19+)
        self.starts = 0
        self.last_conns = 0        # wrk -c of its last cell
        self.had_side_load = False
        self.admin = lab.url(lab.s.admin_port, "")

    def can_reuse(self, cell):
        """Only the same app, container and pool, and only once nothing is in flight (lab-notes
        trap 6). A thread-per-request app that had more connections than threads still has the
        excess queued in its container (a 1-thread app: ~C requests x sleep), so restarting it
        is faster than draining it; anything else drains within one sleep. An app that served
        slow clients is never reused: its queue and connections may be in any state."""
        if self.proc is None or self.key != cell.app_key or self.had_side_load or not procs.alive(self.proc):
            return False
        if cell.variant:
            # The sweep starts every level on a fresh JVM, warmed up at that level: its peak RSS
            # and threads are then that level's alone, not what an earlier level left behind.
            return False
        if cell.thread_per_request and self.last_conns > int(cell.threads):
            return False
        return procs.wait_drained(self.admin + "/stats", self.lab.s.sleep_ms // 1000 + 2)

    def start(self, cell):
        """Start the app for a cell and wait until it answers: None, or why not."""
        s, m, module = self.lab.s, self.lab.m, MODULE_OF[cell.app]
        self.starts += 1
        self.log = self.lab.run_dir / "logs" / f"{self.starts:02d}-{cell.app}-{cell.container}-t{cell.threads}.log"
        # JDK 19+: a class-data archive per app, written when its first JVM exits and mapped by
        # the next ones, starts the app ~0.6 s faster (28 starts in the default matrix). It
        # changes class loading only; the JVM rebuilds it by itself when the jar changes.
        cds, self.cds = [], None
        if m.java_major >= 19:
            self.cds = Path(module, "target", f"{cell.app}-jdk{m.java_major}.jsa")
            cds = ["-XX:+AutoCreateSharedArchive", f"-XX:SharedArchiveFile={self.cds}"]
        cmd = [m.java, *cds, *s.java_opts, "-jar", f"{module}/target/{module}.jar", "--app", cell.app,
               "--container", cell.container, "--threads", cell.threads, "--host", "127.0.0.1",
               "--port", str(s.app_port), "--admin-port", str(s.admin_port),
               "--remote", f"http://127.0.0.1:{s.remote_port}", *s.app_args]
        self.proc = procs.start(cmd, out=self.log)
        self.key, self.had_side_load = cell.app_key, False
        return procs.wait_ready(self.proc, self.admin + "/stats", self.log, [s.app_port, s.admin_port],
                                s.start_timeout)

    def stop(self):
        """An app is disposable once its cell is measured, and a graceful stop costs up to ~1 s
        (more with requests queued): KILL it, unless the JVM has yet to write its class-data
        archive, which it does on a normal exit (TERM), once per app."""
        if self.proc is not None:
            archived = self.cds is None or (self.cds.exists() and self.cds.stat().st_size > 0)
            procs.stop(self.proc, signal.SIGKILL if archived else signal.SIGTERM)
        self.proc, self.key = None, None

    def verify(self, out, cell):
        """One fast call must answer 200 with the remote's body ("slept N ms"; a fan-out app: "n=1"):
        None, or why not. ms=0 proves the path app -> remote-sleep -> app without waiting a sleep."""
        # A fan-out app answers "app=… n=1 …" (a fire-and-forget one before its call even ran).
        path, expect = ("/fanout?n=1&ms=0", " n=1 ") if cell.scenario == "fanout" else ("/call?ms=0", "slept")
        try:
            code, body = procs.http(self.lab.url(self.lab.s.app_port, path), timeout=10)
        except OSError as e:
            return f"verify: GET {path} failed: {getattr(e, 'reason', e)}"
        out.write_bytes(body)
        text = body[:200].decode(errors="replace").replace("\n", " ")
        if code != 200:
            return f"verify: GET {path} answered HTTP {code}: {text}"
        if expect not in text:
            return f"verify: GET {path} answered '{text}', not '{expect}'"
        return None

    def lab_line(self):
        """The app's `lab: ...` start line: its effective configuration."""
        if self.log is None:
            return ""
        return next((line for line in procs.read_lines(self.log) if line.startswith("lab: ")), "")


def run_cell(lab, app, cell):
    """Run one cell and write its record into its directory; returns its status: "ok",
    "FAILED: why" or "SKIPPED: why"."""
    s = lab.s
    t0 = time.monotonic()

    def since_start():
        return f"{time.monotonic() - t0:.2f}"

    d = lab.run_dir / "cells" / cell.dir_name
    d.mkdir(parents=True)
    record = d / "cell.txt"
    put(record, kind="cell", index=cell.index, round=cell.round, loadgen=cell.loadgen, app=cell.app,
        container=cell.container, threads=cell.threads, wrk_threads=cell.wrk_threads, connections=cell.connections,
        duration_s=s.duration_s, sleep_ms=s.sleep_ms, thread_per_request=int(cell.thread_per_request),
        scenario=cell.scenario, pool_mode=cell.pool_mode)
    if cell.variant:
        put(record, variant=cell.variant)
    if cell.loadgen == "vegeta":
        put(record, rate=s.rate)
    if cell.scenario == "fanout":
        put(record, fanout_n=FANOUT_LOAD_N, fanout_ms=s.fanout_ms, path=cell.path)
    side_mode = SCENARIOS[cell.scenario]
    if side_mode:
        put(record, slow_clients=s.slow_clients, slow_bytes=s.slow_bytes_for(cell.scenario), slow_rate=s.slow_rate)
    skip = cell.skip_reason(lab.m.java_major)
    if skip:
        status = f"SKIPPED: {skip}"
        put(record, status=status, cell_wall_s=since_start())
        return status

    reason, fresh = None, False
    if app.can_reuse(cell):
        put(record, app_start="reused")
    else:
        app.stop()
        put(record, stop_s=since_start(), app_start="fresh")
        fresh = True
        reason = app.start(cell)
        put(record, start_s=since_start())
    put(record, app_log=f"logs/{app.log.name}" if app.log else "", lab_line=app.lab_line())
    if reason is None:
        reason = app.verify(d / "verify.txt", cell)
    if reason is None and fresh:
        pool = int(cell.threads) if cell.thread_per_request else None
        # vegeta's cell warms up like the first wrk setting would (a few connections per thread).
        wt = cell.wrk_threads or min(s.wrk_threads)
        conns = cell.connections or max(wt, min(s.rate, min(s.connections)))
        fast = "/fanout?n=1&ms=0" if cell.scenario == "fanout" else "/call?ms=0"
        wrk.warm_up(s, lab.url(s.app_port, fast), wt, conns, d / "warmup.txt", pool)
        if not procs.wait_drained(app.admin + "/stats", s.sleep_ms // 1000 + 5):
            reason = "still busy after the warm-up"
    if reason is None:
        try:
            procs.http(app.admin + "/stats/reset", method="POST")
        except OSError:
            reason = "POST /stats/reset failed"

    side = None
    if reason is None and side_mode:
        # Slow clients hold their connections through the whole wrk run: started first, for
        # DURATION + 2 s, and wrk starts once they are connected.
        app.had_side_load = True
        side = SlowClients(side_mode[0], lab.url(s.app_port, "/call"), s.slow_clients,
                           s.slow_bytes_for(cell.scenario), s.slow_rate, s.duration_s + 2, d)
        reason = side.start()
    if reason is None and cell.loadgen == "probe":
        put(record, prep_s=since_start())
        reason = probe(lab, app, cell, d)
    elif reason is None and cell.loadgen == "vegeta":
        put(record, prep_s=since_start())
        reason = vegeta.measure(lab.m.vegeta, d, lab.url(s.app_port, cell.path), s.rate, s.duration_s,
                                s.wrk_timeout_s, s.sleep_ms, stats_url=app.admin + "/stats")
        # Every request vegeta could have had outstanding may still sit in a small pool's queue.
        app.last_conns = vegeta.limits(s.rate, s.sleep_ms, s.wrk_timeout_s)[1]
    elif reason is None:
        put(record, prep_s=since_start())
        reason = wrk.measure(s, d, lab.url(s.app_port, cell.path), cell.wrk_threads, cell.connections,
                             lab.remote, app.proc, app.admin + "/stats")
        app.last_conns = cell.connections
    if side:
        side_exit = side.stop(now=reason is not None)     # wrk did not run: no need to wait
        put(record, side_load_exit=side_exit)
        if reason is None and side_exit != 0:
            reason = f"side load exited with {side_exit} (see slow.log)"
        elif reason is None and side.result() is None:
            reason = "side load wrote no slow.json (see slow.log)"
    status = "ok" if reason is None else f"FAILED: {reason}"
    if reason is not None:
        app.stop()                     # a broken app is never reused
    put(record, status=status, cell_wall_s=since_start())
    return status


def probe(lab, app, cell, d):
    """SCENARIO=fanout: one request at a time for each N of FANOUT (what the write-ups timed),
    into probe.json: the client's wall time, and the app's own answer (ok=, wall_ms=). A
    fire-and-forget app answers before its work is done: once the work can have ended, one more
    request fetches its "previous:" line, which says when it did. None, or why not."""
    s, results = lab.s, []
    for n in s.fanout:
        url = lab.url(s.app_port, f"/fanout?n={n}&ms={s.fanout_ms}")
        limit = n * s.fanout_ms / 1000.0 * 1.5 + 30          # sequential N x M, with room
        print(f"  $ GET {url}")
        t0 = time.monotonic()
        try:
            code, body = procs.http(url, timeout=limit)
        except OSError as e:
            results.append({"n": n, "error": f"no answer within {limit:.0f} s: {getattr(e, 'reason', e)}"})
            continue
        row = {"n": n, "ms": s.fanout_ms, "status": code, "client_ms": round((time.monotonic() - t0) * 1000, 1),
               "answer": body.decode(errors="replace").strip()}
        if "pending=" in row["answer"]:
            time.sleep(min(limit, n * s.fanout_ms / 1000.0 + 2))
            _, later = procs.http(lab.url(s.app_port, "/fanout?n=1&ms=0"), timeout=10)
            row["previous"] = next((line[len("previous: "):] for line in later.decode(errors="replace").splitlines()
                                    if line.startswith("previous: ")), None)
        results.append(row)
    (d / "probe.json").write_text(json.dumps(results, indent=1) + "\n")
    stats = procs.get_json(app.admin + "/stats")
    if stats is not None:
        (d / "stats.json").write_text(json.dumps(stats))
    bad = [r for r in results if r.get("status") != 200]
    return f"{len(bad)} of {len(results)} probes failed: {bad[0].get('error') or bad[0].get('answer')}" if bad else None
