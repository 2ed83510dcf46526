"""The app under test, from start to stop: one JVM at a time, started for a cell or kept for the
next one (reused, its pool grown or switched on the running JVM), verified, warmed up, read at rest,
profiled, drained and stopped. The cell's runner (cells.py) asks it to get ready and the load
generator measures it; nothing else starts or stops a JVM of the lab's apps."""
import json
import shlex
import signal
import urllib.parse
from pathlib import Path

from . import catalog, db, foreign, place, procs, remote, warmup, web
from .checks import is_virtual
from .plan import pool_rank


class App:
    """The app under test: at most one runs at a time, reused for the next cell when safe."""

    def __init__(self, lab):
        self.lab = lab
        self.proc = None
        self.key = None
        self.threads = None        # its pool now: --threads at start, or what resize() grew it to
        self.resized_line = None   # the app's lab: line after a resize (its log has the one of its start)
        self.own_line = None       # APP_JAR: the lab: line the bench writes for a foreign jar (foreign.command_tail)
        self.log = None
        self.cds = None            # its class-data archive (JDK 19+)
        self.profile_root = None   # LAB_PROFILE_DIR: where it may write a profile (the run's directory, or its tmp on a host)
        self.starts = 0
        self.last_conns = 0        # wrk -c of its last cell
        self.had_side_load = False
        self.rest = {}             # its CPU at rest after its warm-up (warmup.at_rest)
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
        if queued and remote.fault_url(self.lab, cell) is None:
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
        fault, s = remote.fault_url(self.lab, cell), self.lab.s
        timeout_s = cell.scene.call_ms(s) // 1000 + 5 + conns // 200
        fast = fault is not None and remote.fast(fault, f"{(timeout_s + 10) * 1000}ms:delay=0")
        stats_url = self.admin + "/stats"
        if foreign.is_foreign(cell.app):        # an app whose in-flight count the agent cannot read: the backend's
            stats_url = foreign.drain_url(stats_url, self.lab.url(s.remote_port, "/stats"))
        try:
            if web.wait_drained(stats_url, timeout_s):
                return None
            left = web.get_json(stats_url) or {}
            handed = f", {left['background']:,} calls handed off and not done" if left.get("background") else ""
            return (f"{left.get('inFlight', '?')} in flight and {left.get('queued', 0)} queued{handed} after {timeout_s} s"
                    + (", remote-sleep answering at once" if fast else ""))
        finally:
            if fast:
                remote.end_fault(fault)

    def resize(self, cell):
        """Grow the idle app's pool to the cell's (POST /pool: Jetty's QueuedThreadPool, Tomcat's
        executor, all threads started as at a fresh start): None, or why not. The cell is then
        warmed up again at its own pool, as a fresh JVM is (_prepare). Measured on the default
        matrix: 26-45 s to start, verify, warm up and read the rest of a fresh JVM at 200 threads,
        16-26 s for a grown one (it compiles the larger pool's paths: docs/traps.md #41)."""
        try:
            code, body = web.http(f"{self.admin}/pool?threads={cell.threads}", method="POST")
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
        if foreign.is_foreign(cell.app):
            return self.start_foreign(cell)
        s, m, module = self.lab.s, self.lab.m, catalog.MODULE_OF[cell.app]
        self.own_line = None
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
        tmp = place.private_tmp("app", self.lab.run_dir)
        # a cost variant's +agent: the lab's agent beside the app on a free port, to price it (its own /stats unread)
        agent = [foreign.agent_flag(place.address("app"), 0, cell.app, place.host("app").remote)] if cell.agent else []
        cmd = [place.java("app", m.java), *cds, *place.jvm_flags("app", s.java_opts), *pin, *agent,
               *([f"-Djava.io.tmpdir={tmp}"] if tmp else []), *s.java_opts, "-jar", str(jar),
               "--app", cell.app, "--container", cell.container, "--threads", cell.threads, "--host", place.address("app"),
               "--port", str(s.app_port), "--admin-port", str(s.admin_port),
               "--remote", self.lab.url(s.remote_port, ""),
               *(["--client", cell.client] if cell.client_suffix else []), *cell.app_args,
               *(db.app_args(s, self.lab.db.url, cell.db_driver) if cell.db_driver else []),
               *(["--work", s.raw["WORK"].strip()] if s.raw.get("WORK", "").strip() else []), *s.app_args]
        # Secrets in the environment, never argv (issue 40): the run's admin token, where a profile may
        # be written (the run directory), the database password.
        # On a host the app writes a profile into its private tmp there; profile_stop fetches it.
        self.profile_root = tmp if tmp and place.host("app").remote else str(self.lab.run_dir.resolve())
        env = {**web.admin_env(), "LAB_PROFILE_DIR": self.profile_root,
               **(self.lab.db.app_env() if cell.db_driver else {})}
        self.proc = place.start("app", cmd, out=self.log, env=env)
        self.key, self.had_side_load = cell.app_key, False
        self.threads, self.resized_line = cell.threads, None
        return web.wait_ready(self.proc, self.admin + "/stats", self.log, [s.app_port, s.admin_port],
                                s.start_timeout, host=place.address("app"))

    def start_foreign(self, cell):
        """APP_JAR: the jar started with the lab's agent on the admin port (foreign.py), told its port and its
        backend; None when both its port and the agent answer, or why not (its last log lines when it exited)."""
        s, m, own = self.lab.s, self.lab.m, self.lab.s.foreign
        self.starts += 1
        self.log = self.lab.run_dir / "logs" / f"{self.starts:02d}-{cell.app}-{cell.container}-t{cell.threads}.log"
        self.cds, self.profile_root = None, None
        tmp = place.private_tmp("app", self.lab.run_dir)
        tail, self.own_line = foreign.command_tail(own, own["jar"], cell.threads, place.address("app"), s.app_port,
                                                   s.admin_port, self.lab.url(s.remote_port, ""), s.sleep_ms,
                                                   place.host("app").remote)
        cmd = [place.java("app", m.java), *place.jvm_flags("app", s.java_opts),
               *([f"-Djava.io.tmpdir={tmp}"] if tmp else []), *s.java_opts, *tail]
        self.proc = place.start("app", cmd, out=self.log, env=web.admin_env())   # the token: the agent's, never argv
        self.key, self.had_side_load = cell.app_key, False
        self.threads, self.resized_line = cell.threads, None
        reason = web.wait_ready(self.proc, self.admin + "/stats", self.log, [s.app_port, s.admin_port],
                                s.start_timeout, host=place.address("app"))
        return reason and foreign.start_failure(reason, self.proc, self.log, s, place.address("app"))

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
        """One request that proves app -> remote -> app (foreign.verify for APP_JAR); None, or why not."""
        if foreign.is_foreign(cell.app):
            return foreign.verify(self.lab, cell, out, self.admin + "/stats")
        return self.verify_lab(out, cell)

    def verify_lab(self, out, cell):
        """One fast request must answer 200 with what its scenario expects (the remote's body,
        "slept N ms"): None, or why not. ms=0 proves the path app -> remote-sleep -> app without
        waiting a sleep."""
        path, expect = cell.scene.verify()
        if cell.db_driver and self.lab.s.db_query == "rows":
            expect = "row "            # DB_QUERY=rows answers lab_rows as JSON: names "row 1" ... "row 10"
        try:
            code, body = web.http(self.lab.url(self.lab.s.app_port, path), timeout=10)
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
        if self.resized_line or self.own_line:
            return self.resized_line or self.own_line
        if self.log is None:
            return ""
        return next((line for line in procs.read_lines(self.log) if line.startswith("lab: ")), "")

    # ---- a cell's preparation: the app ready for it, its /stats reset

    def prepare(self, cell, d, rec, since_start):
        """Reused or (re)started, verified, warmed up when fresh (or a sweep's at a new level, or
        its pool grown), its /stats reset. Returns None, or why the cell cannot run."""
        reason, fresh, resized = None, False, False
        if self.can_reuse(cell):
            rec.app_start = "reused"
            if self.threads != cell.threads:
                rec.app_start, resized = "resized", True
                reason = self.resize(cell)
        else:
            self.stop()
            rec.stop_s, rec.app_start = since_start(), "fresh"
            fresh, self.rest = True, {}
            reason = self.start(cell)
            rec.start_s = since_start()
        rec.app_log, rec.lab_line = (f"logs/{self.log.name}" if self.log else ""), (self.lab_line() or None)
        rec.save(d / "cell.json")
        # Verified once, at its start: a reused app has just served a whole cell. Its verify call
        # (?ms=0: a query string the measured request does not have) took other branches all along the
        # request path, and HotSpot threw that compiled path away in the middle of the warm JVM: the
        # next cell was measured recompiling it, the compiler 70 % of its CPU (docs/traps.md #37).
        if reason is None and fresh:
            reason = self.verify(d / "verify.txt", cell)
        # A sweep's JVM reused at its next level is warmed up again, at that level: new connections, a
        # larger pool and queue; already warm, it settles at the rule's floor (9 s) instead of ~30 s fresh.
        # (last_conns: the level of the cell before, on this JVM, which it was warmed up at or for.)
        # So is a JVM whose pool was grown (resize): a fresh JVM would have been warmed at this pool.
        rewarm = resized or (not fresh and bool(cell.variant) and cell.connections != self.last_conns)
        if reason is None and (fresh or rewarm) and not cell.scene.warms_on_its_load:
            reason = self.warm_up(cell, d, rec, read_rest=fresh or resized)
        if reason is None:
            rec.rest = self.rest
            try:
                web.http(self.admin + "/stats/reset", method="POST")
            except OSError:
                reason = "POST /stats/reset failed"
        return reason

    def warm_up(self, cell, d, rec, read_rest):
        """The warm-up (warmup.py; WARMUP=auto on the measured request itself, remote-sleep answering
        fast), then a drain and, after an automatic one, the JVM's CPU at rest. None, or why not."""
        s, lab = self.lab.s, self.lab
        pool = int(cell.threads) if cell.thread_per_request else None
        # an open-loop cell warms up like the first wrk setting would (a few connections per thread).
        wt = cell.wrk_threads or min(s.wrk_threads)
        conns = cell.connections or max(wt, min(s.rate, min(s.connections)))
        rec.warmup = warmup.warm_up(s, lab.url(s.app_port, cell.scene.warmup_path()), wt, conns, d / "warmup.txt", pool,
                                    stats_url=self.admin + "/stats", measured_url=lab.url(s.app_port, cell.path),
                                    fault_url=remote.fault_url(lab, cell))
        rec.save(d / "cell.json")
        busy = self.drain(cell, conns)
        if busy:
            return f"still busy after the warm-up: {busy}"
        if s.warmup == "auto" and read_rest:   # after a fixed warm-up the JIT is still busy: its "rest" would be the compiler's
            self.rest = warmup.at_rest(self.admin + "/stats")      # (a grown pool idles on more threads: measured again)
        return None

    # ---- PROFILE=1: the app profiles itself (its admin endpoint; nothing attaches from outside)

    def profile_start(self, interval_ms=None):
        """Start the app's profile (every 10 ms of CPU unless asked): its JSON answer (what runs), or None."""
        try:
            status, body = web.http(self.admin + "/profile/start" + (f"?interval_ms={interval_ms}" if interval_ms else ""),
                                    method="POST")
            return json.loads(body) if status == 200 else None
        except (OSError, ValueError):
            return None

    def profile_stop(self, out_dir):
        """Stop the app's profile: it writes flame.html and collapsed.txt into out_dir (on a HOSTS host,
        into the run's private directory there, then copied here: that one goes with the run's); its
        JSON answer."""
        h = place.host("app")
        where = f"{self.profile_root}/profile-{out_dir.parent.name}" if h.remote else str(out_dir.resolve())
        try:
            status, body = web.http(self.admin + "/profile/stop?dir=" + urllib.parse.quote(where), method="POST", timeout=60)
            answer = json.loads(body) if status == 200 else {"error": f"HTTP {status}: {body[:200]!r}"}
        except (OSError, ValueError) as e:
            return {"error": str(e)}
        if h.remote and "error" not in answer:
            out_dir.mkdir(parents=True, exist_ok=True)
            for name in ("flame.html", "collapsed.txt"):
                rc, text = place.remote_run(h, f"cat {shlex.quote(where + '/' + name)}", timeout=60)
                if rc != 0:
                    return {**answer, "error": f"{name} could not be copied from {h.name} (exit {rc})"}
                (out_dir / name).write_text(text)
        return answer
