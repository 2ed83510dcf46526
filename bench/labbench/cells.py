"""The matrix and what runs in it: the calibration cells, the app under test (start, reuse,
verify, warm-up) and one cell, start to record.

A cell's record is cell.json in its directory (record.py), beside the raw files its load generator
and side load wrote (wrk.json, wrk.txt, stats.json, ...); the report builds every file from them.
What a cell does is its scenario's business (scenarios/), how it is loaded its load generator's
(loadgens/): nothing here names either.
"""
import json
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from . import catalog, db, loadgens, place, procs, scenarios
from .checks import is_virtual
from .loadgens import wrk
from .record import CellRecord


@dataclass
class Cell:
    index: int
    scenario: str             # its scenario's name (scenarios.get)
    app: str
    container: str
    threads: str          # "1", "200" or "v1", as --threads takes it
    wrk_threads: int      # wrk cells; None for vegeta's
    connections: int      # wrk cells; None for vegeta's
    loadgen: str = "wrk"  # wrk (closed loop), vegeta (open loop at RATE), or probe (one request at a time)
    round: int = 1        # REPEAT: which round of the matrix
    path: str = ""        # what the load calls (the scenario's path)
    variant: str = ""     # a planner's (the sweep's) variant this cell belongs to
    client: str = catalog.DEFAULT_CLIENT   # the app's outbound HTTP client (--client)
    app_args: tuple = ()  # a planner's extra app flags for this cell (PRESET=2021's capped client pool)
    wrk_timeout: str = "" # a planner's wrk --timeout for this cell (PRESET=2021: wrk's default 2 s)
    db_driver: str = ""   # BACKEND=postgres: the app's database driver (--db-driver); "" = the HTTP backend
    carriers: int = 0     # a JVM that may switch to virtual threads pins their scheduler to this many carriers at start (plan)

    @property
    def pool_mode(self):
        if self.container in catalog.EVENT_LOOP:
            return "event-loop"
        return "virtual" if is_virtual(self.threads) else "platform"

    @property
    def thread_per_request(self):
        """At most `threads` requests in flight. Not on virtual threads: a blocked virtual thread
        holds no carrier, so connections bound it, not N."""
        return catalog.thread_per_request(self.app) and self.pool_mode == "platform"

    @property
    def grows_pool(self):
        """A pool on Jetty or Tomcat, in a scenario that allows it (not a sweep's variant): its JVM
        may be one that ran a smaller pool, given this one (App.resize: grown, or switched to
        virtual threads and back) and warmed again. Netty's event loops are fixed at start, and so
        is the number of carriers: vN only where the JVM pinned N at its start (`carriers`)."""
        if self.pool_mode == "event-loop" or self.variant or not self.scene.grows_pool:
            return False
        return self.pool_mode == "platform" or self.threads == f"v{self.carriers}"

    @property
    def app_key(self):
        # The round too: each REPEAT round starts its apps afresh, so that its figures are another
        # JVM's (two JVMs of one app settle at different CPU costs: docs/traps.md #39). The pool
        # size only where the JVM cannot grow its pool.
        pool = "grows" if self.grows_pool else self.threads
        return self.round, self.app, self.container, pool, self.client, self.app_args, self.db_driver

    @property
    def client_suffix(self):
        """The client in names and labels, only when it is not the default (old runs keep their names)."""
        return "" if self.client == catalog.DEFAULT_CLIENT else self.client

    @property
    def dir_name(self):
        rnd = "" if self.round == 1 else f"r{self.round}-"
        scenario = "" if self.scenario == scenarios.DEFAULT else f"{self.scenario}-"
        load = f"w{self.wrk_threads}-c{self.connections}" if self.loadgen == "wrk" else self.loadgen
        client = f"-{self.client_suffix}" if self.client_suffix else ""
        driver = f"-{self.db_driver}" if self.db_driver else ""
        return f"{self.index:02d}-{rnd}{scenario}{self.app}-{self.container}-t{self.threads}{client}{driver}-{load}"

    @property
    def label(self):
        rnd = "" if self.round == 1 else f"round {self.round}: "
        scenario = "" if self.scenario == scenarios.DEFAULT else f"{self.scenario} "
        load = {"wrk": f"wrk-t={self.wrk_threads} c={self.connections}", "vegeta": "vegeta (open loop)",
                "probe": "one request at a time"}[self.loadgen]
        client = f" client={self.client_suffix}" if self.client_suffix else ""
        driver = f" db={self.db_driver}" if self.db_driver else ""
        return f"{rnd}{scenario}{self.app} {self.container} threads={self.threads}{client}{driver} {load}"

    def skip_reason(self, java_major):
        """Why this machine cannot run the cell (it stays in the matrix as SKIPPED), or None."""
        if is_virtual(self.threads) and java_major < 21:
            return f"virtual threads need JDK 21+ (running {java_major})"
        return self.scene.skip_reason(self.app, java_major)

    @property
    def scene(self):
        return scenarios.get(self.scenario)


def left_out_because(app, container, threads, client=catalog.DEFAULT_CLIENT):
    """(why, what) when a combination does not exist at all (it is not a cell), else None."""
    if client not in catalog.APPS[app].clients:
        only = [a for a in catalog.APPS if catalog.APPS[a].clients == catalog.APPS[app].clients]
        return (f"the {catalog.APPS[app].family} apps call out with the {' or '.join(catalog.APPS[app].clients)} "
                f"client only (one client per model is what they compare)", f"{client} client for {', '.join(only)}")
    if not catalog.runs_on(app, container):
        others = [a for a in catalog.APPS if catalog.runs_on(a, container)]
        return (f"{container} runs only the {', '.join(others)} app (Reactor Netty has no servlet API)",
                f"{app} on {container}")
    if container in catalog.EVENT_LOOP and is_virtual(threads):
        return (f"virtual threads do not apply to Netty's event loops",
                f"{' '.join(a for a in catalog.APPS if catalog.runs_on(a, container))} on {container} "
                f"with THREADS {threads}")
    return None


def pool_rank(threads):
    """The order in which one JVM can take a matrix's pools (App.resize): platform pools as they
    grow, and vN where a 1-thread pool is, since on Jetty it runs on as few platform threads (a
    selector and a spare), and no pool shrinks. THREADS="1 200 v1" runs 1, v1, 200."""
    return (1, 1) if is_virtual(threads) else (int(threads), 0)


def plan(s):
    """The cells in run order (round outermost: the whole matrix, then again, so drift spreads
    evenly over the rounds; then scenario, container, app, pool, and each scenario's own cells:
    wrk settings, then the open loop), and one sentence per reason for the combinations left out.
    A planner (the sweep) makes a matrix of its own."""
    if s.mode != "matrix":
        def make(app, container, threads, wt, conns, variant, client=catalog.DEFAULT_CLIENT, app_args=(),
                 wrk_timeout="", db_driver=""):
            return Cell(len(cells) + 1, scenarios.DEFAULT, app, container, threads, wt, conns,
                        path=scenarios.get(scenarios.DEFAULT).path(s), variant=variant, client=client,
                        app_args=tuple(app_args), wrk_timeout=wrk_timeout, db_driver=db_driver or "")
        cells = []
        for c in scenarios.get(s.mode).plan(s, lambda *a, **k: make(*a, **k)):
            c.index = len(cells) + 1
            cells.append(c)
        return cells, []
    cells, left_out = [], {}
    for rnd in range(1, s.repeat + 1):
        for name in s.scenarios:
            scene = scenarios.get(name)
            for container in s.containers:
                for app in scene.apps(s):
                    gap = db.left_out_because(s, app, name)
                    if gap:
                        why, what = gap
                        if what not in left_out.setdefault(why, []):
                            left_out[why].append(what)
                        continue
                    # A JVM takes its pools in pool_rank's order, and pins the carriers of the first vN
                    carriers = next((int(t[1:]) for t in s.threads if is_virtual(t)), 0) if scene.grows_pool else 0
                    for threads in sorted(s.threads, key=pool_rank) if scene.grows_pool else s.threads:
                        for client in s.clients:
                            gap = left_out_because(app, container, threads, client)
                            if gap:
                                why, what = gap
                                if what not in left_out.setdefault(why, []):
                                    left_out[why].append(what)
                                continue
                            for driver in db.drivers_of(s, app):    # [None] with BACKEND=http
                                def make(loadgen, wt, conns):
                                    return Cell(len(cells) + 1, name, app, container, threads, wt, conns, loadgen,
                                                rnd, scene.path(s), client=client, db_driver=driver or "",
                                                carriers=carriers)
                                for cell in scene.cells(s, make, s.loadgens):
                                    cell.index = len(cells) + 1
                                    cells.append(cell)
    return cells, [f"{why}: no {', '.join(what)}" for why, what in left_out.items()]


@dataclass
class Lab:
    """What every cell needs: the settings, the machine, the run directory, remote-sleep."""
    s: object
    m: object
    run_dir: Path
    remote: object = None       # remote-sleep's process
    db: object = None           # BACKEND=postgres: the PostgreSQL cluster (pg.Cluster), its URL and processes

    def url(self, port, path):
        """A URL of remote-sleep (REMOTE_PORT, on the backend's host) or of the app (its port and
        admin port, on the app's host): 127.0.0.1 unless HOSTS places them (place.py)."""
        return f"http://{place.address('backend' if port == self.s.remote_port else 'app')}:{port}{path}"


def calibrate(lab, summary, rnd=1):
    """One calibration cell per wrk setting (and one for the open loop): the same load straight at
    remote-sleep. Its req/s is the ceiling this box and this closed-loop window can reach
    (docs/traps.md #14); vegeta's is the latency a perfect server shows at RATE. With REPEAT,
    every round measures its own. `summary(dir)` returns the cell's one-line summary. Returns how
    many ran."""
    s = lab.s
    if s.backend == "postgres":
        return calibrate_db(lab, summary, rnd)
    done = []
    remote_stats = lab.url(s.remote_port, "/stats")
    prefix = "" if rnd == 1 else f"r{rnd}-"
    again = f" (round {rnd})" if rnd > 1 else ""
    if "wrk" in s.loadgens:
        for conns in s.connections:
            for wt in s.wrk_threads:
                if (wt, conns) in done:
                    continue
                done.append((wt, conns))
                d = lab.run_dir / "calibration" / f"{prefix}w{wt}-c{conns}"
                d.mkdir(parents=True)
                rec = CellRecord(kind="calibration", round=rnd, wrk_threads=wt, connections=conns,
                                 duration_s=s.duration_s, sleep_ms=s.sleep_ms)
                rec.save(d / "cell.json")
                print(f"== calibration{again}: wrk -t{wt} -c{conns} straight at remote-sleep /sleep")
                wrk.warm_up(s, lab.url(s.remote_port, "/sleep?ms=0"), wt, conns, d / "warmup.txt")
                procs.wait_drained(remote_stats, s.sleep_ms // 1000 + 5)
                reason, rec.measured = wrk.measure(s, d, lab.url(s.remote_port, "/sleep"), wt, conns, lab.remote)
                rec.status = "ok" if reason is None else f"FAILED: {reason}"
                rec.save(d / "cell.json")
                print(f"   ceiling: {summary(d)}")
    for gen in (loadgens.get(name) for name in s.loadgens if name != "wrk"):
        done.append(gen.name)
        d = lab.run_dir / "calibration" / f"{prefix}{gen.name}"
        d.mkdir(parents=True)
        rec = CellRecord(kind="calibration", round=rnd, loadgen=gen.name, rate=s.rate, duration_s=s.duration_s,
                         sleep_ms=s.sleep_ms)
        rec.save(d / "cell.json")
        print(f"== calibration{again}: {gen.name} at {s.rate} req/s straight at remote-sleep /sleep")
        procs.wait_drained(remote_stats, s.sleep_ms // 1000 + 5)
        reason, rec.measured = gen.calibrate(lab, d, lab.url(s.remote_port, "/sleep"))
        rec.status = "ok" if reason is None else f"FAILED: {reason}"
        rec.save(d / "cell.json")
        print(f"   open-loop ceiling: {summary(d)}")
    return len(done)


def calibrate_db(lab, summary, rnd=1):
    """BACKEND=postgres: pgbench with the app's query straight at PostgreSQL, once per load level
    with min(connections, DB pool) clients: what the database serves through as many connections
    as a cell can keep busy (a closed loop of C connections never has more than C queries out, and
    the pool never more than its size). Its tps is the DB cells' ceiling at that level. Returns how many ran."""
    s = lab.s
    levels = db.pgbench_clients(s)
    for clients in levels:
        name = f"pgbench-c{clients}"
        d = lab.run_dir / "calibration" / (f"r{rnd}-{name}" if rnd > 1 else name)
        d.mkdir(parents=True)
        rec = CellRecord(kind="calibration", round=rnd, loadgen="pgbench", connections=clients,
                         duration_s=s.duration_s, sleep_ms=s.sleep_ms, params=db.cell_params(s))
        rec.save(d / "cell.json")
        print(f"== calibration{f' (round {rnd})' if rnd > 1 else ''}: pgbench -c {clients} "
              f"({s.db_query} query) straight at PostgreSQL")
        reason, rec.measured = loadgens.get("pgbench").calibrate(lab, d, clients)
        rec.status = "ok" if reason is None else f"FAILED: {reason}"
        rec.save(d / "cell.json")
        print(f"   ceiling: {summary(d)}")
    return len(levels)


class App:
    """The app under test: at most one runs at a time, reused for the next cell when safe."""

    def __init__(self, lab):
        self.lab = lab
        self.proc = None
        self.key = None
        self.threads = None        # its pool now: --threads at start, or what resize() grew it to
        self.resized_line = None   # the app's lab: line after a resize (its log has the one of its start)
        self.log = None
        self.cds = None            # its class-data archive (JDK 19+)
        self.starts = 0
        self.last_conns = 0        # wrk -c of its last cell
        self.had_side_load = False
        self.rest = {}             # its CPU at rest after its warm-up (wrk.at_rest)
        self.admin = lab.url(lab.s.admin_port, "")

    def can_reuse(self, cell):
        """Only the same app, container and pool, and only once nothing is in flight (docs/traps.md
        #6). A thread-per-request app that had more connections than threads still has the
        excess queued in its container (a 1-thread app: ~C requests x sleep): like any other it is
        drained with remote-sleep answering at once (drain), or restarted where the backend is a
        database. An app that served slow clients is never reused: its queue and connections may be
        in any state."""
        if self.proc is None or self.key != cell.app_key or self.had_side_load or not procs.alive(self.proc):
            return False
        if pool_rank(cell.threads) < pool_rank(self.threads):
            return False               # a pool only grows (resize)
        if cell.variant and cell.connections < self.last_conns:
            # The sweep reuses a variant's JVM upward only (its levels run in ascending order), and
            # warms it up again at each new level (_prepare). Its peak RSS and OS threads are sampled
            # inside the level's own window (procs.Sampler), /stats' peak threads reset before it; what
            # a lower level left behind (a grown heap, a grown pool) is at most what this level needs.
            return False
        queued = catalog.thread_per_request(cell.app) and not is_virtual(self.threads) and self.last_conns > int(self.threads)
        if queued and fault_url(self.lab, cell) is None:
            # A database's queue drains at its pool's pace (a 1-thread app at 100 connections: ~99 s
            # of 1 s queries): a fresh JVM is sooner.
            return False
        # its queue is the pool it has now, whatever the cell's is
        return self.drain(cell, self.last_conns) is None

    def drain(self, cell, conns):
        """Wait until the app has nothing in flight and nothing queued (docs/traps.md #6): None, or
        what it still held at the deadline. Where the backend is remote-sleep, remote-sleep answers
        every new call at once meanwhile, so whatever the app still holds drains at its own pace,
        whatever one request costs its thread: a 1-thread sync app left with 99 requests queued by
        100 connections (~99 s at 1 s each), or a fan-out app whose requests make 10 calls of
        300 ms one after another (3 s each). Before this, each 1-thread sync app was started and
        warmed up again for its second wrk setting (~70 s each, 4 in the default matrix), and a
        fan-out app on one thread failed "still busy after the warm-up" (issue 37). A call already
        waiting at remote-sleep keeps its delay (decided at arrival): the deadline is one call's
        delay, 5 s, and a second per 200 connections to close (~7 s for webflux on Netty at 2,000
        on a 2 x Xeon VM)."""
        fault, s = fault_url(self.lab, cell), self.lab.s
        timeout_s = cell.scene.call_ms(s) // 1000 + 5 + conns // 200
        fast = fault is not None and wrk.fast_remote(fault, f"{(timeout_s + 10) * 1000}ms:delay=0")
        try:
            if procs.wait_drained(self.admin + "/stats", timeout_s):
                return None
            left = procs.get_json(self.admin + "/stats") or {}
            return (f"{left.get('inFlight', '?')} in flight and {left.get('queued', 0)} queued after {timeout_s} s"
                    + (", remote-sleep answering at once" if fast else ""))
        finally:
            if fast:
                wrk.end_fault(fault)

    def resize(self, cell):
        """Grow the idle app's pool to the cell's (POST /pool: Jetty's QueuedThreadPool, Tomcat's
        executor, all threads started as at a fresh start): None, or why not. The cell is then
        warmed up again at its own pool, as a fresh JVM is (_prepare). Measured on the default
        matrix: 26-45 s to start, verify, warm up and read the rest of a fresh JVM at 200 threads,
        16-26 s for a grown one (it compiles the larger pool's paths: docs/traps.md #41)."""
        try:
            code, body = procs.http(f"{self.admin}/pool?threads={cell.threads}", method="POST")
        except OSError as e:
            return f"POST /pool?threads={cell.threads} failed: {getattr(e, 'reason', e)}"
        text = body.decode(errors="replace").strip()
        if code != 200:
            return f"POST /pool?threads={cell.threads} answered HTTP {code}: {text}"
        how = "switched" if is_virtual(self.threads) or is_virtual(cell.threads) else "grown"
        print(f"  pool {how} from {self.threads} to {cell.threads} threads on the running JVM (POST /pool); warmed again at it")
        self.threads, self.resized_line = cell.threads, json.loads(text)["lab"]
        return None

    def start(self, cell):
        """Start the app for a cell and wait until it answers: None, or why not."""
        s, m, module = self.lab.s, self.lab.m, catalog.MODULE_OF[cell.app]
        self.starts += 1
        driver = f"-{cell.db_driver}" if cell.db_driver else ""
        self.log = self.lab.run_dir / "logs" / f"{self.starts:02d}-{cell.app}-{cell.container}-t{cell.threads}{driver}.log"
        # JDK 19+: a class-data archive per app, written when its first JVM exits and mapped by
        # the next ones, starts the app ~0.6 s faster (28 starts in the default matrix). It
        # changes class loading only. An archive older than the jar is deleted: the JVM ignores
        # it and would write a new one only on a normal exit, which stop() skips while an
        # archive exists, so every app would run without one (measured: 2x CPU per request on
        # Tomcat cells, 9-15 s to start, against 2.5 s).
        jar = Path(module, "target", f"{module}.jar")
        cds, self.cds = [], None
        if m.java_major >= 19:
            self.cds = Path(module, "target", f"{cell.app}-jdk{m.java_major}.jsa")
            if self.cds.exists() and self.cds.stat().st_mtime < jar.stat().st_mtime:
                self.cds.unlink()
            cds = ["-XX:+AutoCreateSharedArchive", f"-XX:SharedArchiveFile={self.cds}"]
        # A platform pool that may switch to vN later (POST /pool) needs the virtual-thread scheduler
        # pinned to N carriers from the start: the JDK reads that once (docs/traps.md #17). A platform
        # pool makes no virtual thread, and its lab: line says the scheduler is pinned and unused.
        # Before JAVA_OPTS, so that a user's own -D wins, as at a vN start (where the app refuses a mismatch).
        pin = (["-Djdk.virtualThreadScheduler.parallelism=%d" % cell.carriers, "-Djdk.virtualThreadScheduler.maxPoolSize=%d" % cell.carriers]
               if cell.grows_pool and cell.carriers and not is_virtual(cell.threads) and m.java_major >= 21 else [])
        cmd = [place.java("app", m.java), *cds, *place.jvm_flags("app", s.java_opts), *pin, *s.java_opts, "-jar", str(jar),
               "--app", cell.app, "--container", cell.container, "--threads", cell.threads, "--host", place.address("app"),
               "--port", str(s.app_port), "--admin-port", str(s.admin_port),
               "--remote", self.lab.url(s.remote_port, ""),
               *(["--client", cell.client] if cell.client_suffix else []), *cell.app_args,
               *(db.app_args(s, self.lab.db.url, cell.db_driver) if cell.db_driver else []), *s.app_args]
        self.proc = place.start("app", cmd, out=self.log)
        self.key, self.had_side_load = cell.app_key, False
        self.threads, self.resized_line = cell.threads, None
        return procs.wait_ready(self.proc, self.admin + "/stats", self.log, [s.app_port, s.admin_port],
                                s.start_timeout, host=place.address("app"))

    def stop(self):
        """An app is disposable once its cell is measured, and a graceful stop costs up to its
        shutdown grace (2 s) with requests in flight: KILL it, unless the JVM has yet to write its
        class-data archive, which it does on a normal exit (TERM), once per app. Then it gets 20 s:
        a KILL in the middle of the write would leave a broken archive for good."""
        if self.proc is not None:
            archived = self.cds is None or (self.cds.exists() and self.cds.stat().st_size > 0)
            if archived:
                procs.stop(self.proc, signal.SIGKILL)
            else:
                procs.stop(self.proc, signal.SIGTERM, grace_s=20.0)
        self.proc, self.key, self.threads = None, None, None

    def verify(self, out, cell):
        """One fast request must answer 200 with what its scenario expects (the remote's body,
        "slept N ms"): None, or why not. ms=0 proves the path app -> remote-sleep -> app without
        waiting a sleep."""
        path, expect = cell.scene.verify()
        if cell.db_driver and self.lab.s.db_query == "rows":
            expect = "row "            # DB_QUERY=rows answers lab_rows as JSON: names "row 1" ... "row 10"
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
        """The app's `lab: ...` line: its effective configuration (at its start, or after a resize)."""
        if self.resized_line:
            return self.resized_line
        if self.log is None:
            return ""
        return next((line for line in procs.read_lines(self.log) if line.startswith("lab: ")), "")


def fault_url(lab, cell):
    """remote-sleep's /fault where the cell's backend is remote-sleep; None for a database cell."""
    return lab.url(lab.s.remote_port, "/fault") if lab.s.backend == "http" and not cell.db_driver else None


def run_cell(lab, app, cell):
    """Run one cell and write its record (cell.json) into its directory; returns its status:
    "ok", "FAILED: why" or "SKIPPED: why"."""
    t0 = time.monotonic()

    def since_start():
        return round(time.monotonic() - t0, 2)

    d = lab.run_dir / "cells" / cell.dir_name
    d.mkdir(parents=True)
    rec = _new_record(lab.s, cell)
    rec.save(d / "cell.json")
    skip = cell.skip_reason(lab.m.java_major)
    if skip:
        rec.status, rec.cell_wall_s = f"SKIPPED: {skip}", since_start()
        rec.save(d / "cell.json")
        return rec.status

    gone = sorted({name for role in place.PLACED for name in place.lost_names(role)})
    # HOSTS: a host lost earlier in the run is not asked again (place.lost): the cell fails at once
    reason = (f"host {', '.join(gone)} was lost earlier in this run" if gone
              else _prepare(lab, app, cell, d, rec, since_start))
    if reason is None:
        reason = _measure(lab, app, cell, d, rec, since_start)
    rec.status = "ok" if reason is None else f"FAILED: {reason}"
    if reason is not None:
        app.stop()                     # a broken app is never reused
    rec.cell_wall_s = since_start()
    rec.save(d / "cell.json")
    return rec.status


def _new_record(s, cell):
    """The cell's record as planned: what it will run, nothing measured yet."""
    gen = loadgens.get(cell.loadgen)
    return CellRecord(index=cell.index, round=cell.round, scenario=cell.scenario, loadgen=cell.loadgen,
                      app=cell.app, container=cell.container, threads=cell.threads, pool_mode=cell.pool_mode,
                      thread_per_request=cell.thread_per_request, wrk_threads=cell.wrk_threads,
                      connections=cell.connections, rate=s.rate if gen.open_loop else None, client=cell.client,
                      duration_s=s.duration_s, sleep_ms=s.sleep_ms, variant=cell.variant or None,
                      app_cpus=place.cpu_count("app"),
                      db_driver=cell.db_driver or None,
                      params={**cell.scene.params(s), **(db.cell_params(s) if cell.db_driver else {}), **({"app_args": " ".join(cell.app_args)} if cell.app_args else {}),
                              **({"wrk_timeout": cell.wrk_timeout} if cell.wrk_timeout else {})})


def _prepare(lab, app, cell, d, rec, since_start):
    """The app ready for the cell: reused or (re)started, verified, warmed up when fresh (or a
    sweep's at a new level, or its pool grown), its /stats reset. Returns None, or why the cell cannot run."""
    s = lab.s
    reason, fresh, resized = None, False, False
    if app.can_reuse(cell):
        rec.app_start = "reused"
        if app.threads != cell.threads:
            rec.app_start, resized = "resized", True
            reason = app.resize(cell)
    else:
        app.stop()
        rec.stop_s, rec.app_start = since_start(), "fresh"
        fresh, app.rest = True, {}
        reason = app.start(cell)
        rec.start_s = since_start()
    rec.app_log, rec.lab_line = (f"logs/{app.log.name}" if app.log else ""), (app.lab_line() or None)
    rec.save(d / "cell.json")
    # Verified once, at its start: a reused app has just served a whole cell. Its verify call
    # (?ms=0: a query string the measured request does not have) took other branches all along the
    # request path, and HotSpot threw that compiled path away in the middle of the warm JVM: the
    # next cell was measured recompiling it, the compiler 70 % of its CPU (docs/traps.md #37).
    if reason is None and fresh:
        reason = app.verify(d / "verify.txt", cell)
    # A sweep's JVM reused at its next level is warmed up again, at that level: new connections, a
    # larger pool and queue; already warm, it settles at the rule's floor (9 s) instead of ~30 s fresh.
    # (last_conns: the level of the cell before, on this JVM, which it was warmed up at or for.)
    # So is a JVM whose pool was grown (resize): a fresh JVM would have been warmed at this pool.
    rewarm = resized or (not fresh and bool(cell.variant) and cell.connections != app.last_conns)
    if reason is None and (fresh or rewarm):
        pool = int(cell.threads) if cell.thread_per_request else None
        # an open-loop cell warms up like the first wrk setting would (a few connections per thread).
        wt = cell.wrk_threads or min(s.wrk_threads)
        conns = cell.connections or max(wt, min(s.rate, min(s.connections)))
        # WARMUP=auto warms on the measured request itself, remote-sleep answering fast (loadgens/wrk.py)
        rec.warmup = wrk.warm_up(s, lab.url(s.app_port, cell.scene.warmup_path()), wt, conns, d / "warmup.txt", pool,
                                 stats_url=app.admin + "/stats", measured_url=lab.url(s.app_port, cell.path),
                                 fault_url=fault_url(lab, cell))
        rec.save(d / "cell.json")
        busy = app.drain(cell, conns)
        if busy:
            reason = f"still busy after the warm-up: {busy}"
        elif s.warmup == "auto" and (fresh or resized):   # after a fixed warm-up the JIT is still busy: its "rest" would be the compiler's
            app.rest = wrk.at_rest(app.admin + "/stats")       # (a grown pool idles on more threads: measured again)
    if reason is None:
        rec.rest = app.rest
        try:
            procs.http(app.admin + "/stats/reset", method="POST")
        except OSError:
            reason = "POST /stats/reset failed"
    return reason


def _measure(lab, app, cell, d, rec, since_start):
    """The scenario's side load (if any) started, the load generator's measurement, the side load
    stopped and checked. Returns None, or why the cell failed."""
    s, scene = lab.s, cell.scene
    side = scene.side_load(s, lab.url(s.app_port, ""), d)
    reason = None
    if side:
        app.had_side_load = scene.side_load_resets_app
        reason = side.start()
    if reason is None:
        rec.prep_s = since_start()
        reason, rec.measured = scene.measure(lab, cell, d, lab.url(s.app_port, cell.path), app)
    if side:
        side_exit = side.stop(now=reason is not None)     # the load did not run: no need to wait
        rec.measured["side_load_exit"] = side_exit
        if reason is None and side_exit != 0:
            reason = f"side load exited with {side_exit} (see slow.log)"
        elif reason is None and side.result() is None:
            reason = "side load wrote no result (see its log)"
    return reason
