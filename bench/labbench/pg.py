"""The PostgreSQL server of a BACKEND=postgres run: started by the bench (bench/tools/pg.sh, a
throwaway cluster in RUN_DIR/postgres) or the user's (DB_URL); its facts for the environment
section; and, per measured window, the CPU its processes used and their memory.

A cluster the bench starts is closed to all but the run (issue 40): the apps, psql and pgbench log
in as lab, which is not a superuser, with a password made for the run (secrets.token_urlsafe) that
reaches pg.sh and the apps as LAB_DB_PASSWORD, psql and pgbench as PGPASSWORD, in their environment
only (never argv, which every user sees in ps). A DB_URL's server is the user's: no password is sent.

On one box the postmaster is a child of ours (`pg.sh run`: in the foreground, killed by the kernel
when the bench dies, even by SIGKILL), stopped like the other children at the end of the run, on
Ctrl-C, TERM or an error (procs.stop_all: QUIT, PostgreSQL's immediate shutdown: the data is
throwaway); then `pg.sh clean` drops its home under /tmp, if it had one.

With HOSTS (issue 28) the cluster is a role on the db host like remote-sleep on the backend host:
`pg.sh serve` under bench/tools/host-run.sh, listening on that host's address and open to the app's host
and the first load host, where psql and pgbench run (the client side, as wrk's calibration is). It
stops when its ssh session is told to or ends (a bench that dies stops it too); its CPU and memory
are read there by bench/labbench/pgusage.py, the same code that reads them here.
"""
import re
import secrets
import shlex
import signal
import socket
import subprocess
import threading
import time

from . import db, place, procs
from .pgusage import cluster_pids, cluster_ticks, pss_kb, stat_fields, usage  # noqa: F401  (tests read them here)

PG_SH = "bench/tools/pg.sh"
PASSWORD_ENV = "LAB_DB_PASSWORD"       # pg.sh and the apps read lab's password here (DbConfig)


class Cluster:
    def __init__(self, url, started_by, pid=None, on_host=False, bindir="", password=""):
        self.url = url
        self.started_by = started_by        # "the bench (bench/tools/pg.sh)" or "DB_URL (not the bench)"
        self.pid = pid                      # ours: its postmaster's (a child here, or on the db host)
        self.on_host = on_host              # HOSTS: the postmaster runs on the db host
        self.bindir = bindir                # psql and pgbench, where they run (here, or the first load host)
        self.password = password            # lab's, for a cluster of ours ("" for DB_URL's)
        self.facts = {}

    def postmaster_pid(self):
        """The postmaster's PID, or None (not ours)."""
        return self.pid

    def window(self):
        """The CPU and memory of its processes over a measured window (None: not ours to measure)."""
        pid = self.pid
        if not pid:
            return None
        if self.on_host:
            return Window(pid, read=lambda: usage_on(place.host("db"), pid))
        return Window(pid)

    def client_env(self):
        """The environment psql and pgbench need: PGPASSWORD, for a cluster of ours."""
        return {"PGPASSWORD": self.password} if self.password else {}

    def app_env(self):
        """The environment an app needs to log in (DbConfig reads it)."""
        return {PASSWORD_ENV: self.password} if self.password else {}


def usage_on(h, pid):
    """pgusage.usage read on host h (bench/labbench/pgusage.py there); (0, 0, 0) when it cannot be."""
    rc, out = place.remote_run(h, f"python3 {shlex.quote(h.lab_dir)}/bench/labbench/pgusage.py {pid}")
    fields = out.split() if rc == 0 else []
    return tuple(int(f) for f in fields) if len(fields) == 3 and all(f.isdigit() for f in fields) else (0, 0, 0)


def free_port():
    """A free TCP port on 127.0.0.1 (the kernel's pick) for the bench's own cluster."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bindir():
    """Where psql and pgbench are (pg.sh bindir), or "" when PostgreSQL's programs are missing
    (it only looks: instant, so no child to track)."""
    r = subprocess.run([PG_SH, "bindir"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def bindir_on(h):
    """pg.sh bindir on host h ("" when PostgreSQL's programs are not there)."""
    rc, out = place.remote_run(h, f"{shlex.quote(h.lab_dir)}/{PG_SH} bindir")
    return out.strip() if rc == 0 else ""


def start(s, run_dir, bin_dir):
    """The run's PostgreSQL: DB_URL's, or a new cluster sized for the run. (Cluster, None) or
    (None, why not)."""
    if place.placed():                  # psql and pgbench run on the first load host (the client side)
        bin_dir = bindir_on(place.host("loadgen"))
    if s.db_url:
        cluster = Cluster(s.db_url, "DB_URL (not the bench: its CPU and memory are not measured)", bindir=bin_dir)
        facts, reason = read_facts(cluster, run_dir / "logs" / "postgres-facts.log")
    else:
        starter = start_on_host if place.placed() else start_here
        cluster, facts, reason = starter(s, run_dir, bin_dir, secrets.token_urlsafe(24))
    if reason:
        return None, reason
    cluster.facts = facts
    if int(facts.get("max_connections") or 0) < db.max_connections(s.db_pool) - db.MARGIN:
        return None, (f"{cluster.url} takes max_connections={facts.get('max_connections')}: too few for DB_POOL="
                      f"{s.db_pool} in the app plus {s.db_pool} pgbench clients; lower DB_POOL")
    return cluster, None


def start_here(s, run_dir, bin_dir, password, timeout_s=90):
    """`pg.sh run` as a child of ours, until psql reads its facts: (Cluster, facts, None), or
    (None, None, why not)."""
    data = (run_dir / "postgres").resolve()
    procs.AT_STOP.append(lambda: clean(data))       # after stop_all has stopped the postmaster, our child
    log = run_dir / "logs" / "postgres.log"
    # the postmaster and its backends inherit the CPUs pg.sh was started on (CPUSETS' backend)
    proc = place.start("db", [PG_SH, "run", str(data), str(free_port()), str(db.max_connections(s.db_pool))],
                       out=log, env={PASSWORD_ENV: password})
    proc.stop_signal = signal.SIGQUIT            # immediate shutdown: the data is throwaway
    deadline = time.monotonic() + timeout_s
    while True:
        url = next((x.strip() for x in procs.read_lines(log) if x.startswith("postgresql://")), None)
        if url:
            cluster = Cluster(url, "the bench (bench/tools/pg.sh run, stopped at the end)", proc.pid,
                              bindir=bin_dir, password=password)
            facts, reason = read_facts(cluster, run_dir / "logs" / "postgres-facts.log")
            if reason is None:
                return cluster, facts, None
        if not procs.alive(proc) or time.monotonic() > deadline:
            lines = procs.read_lines(log)
            why = next((x for x in reversed(lines) if "ERROR" in x or "FATAL" in x), lines[-1] if lines else "no output")
            return None, None, f"bench/tools/pg.sh run failed: {why} (see logs/{log.name})"
        time.sleep(0.2)


def start_on_host(s, run_dir, bin_dir, password, timeout_s=90):
    """HOSTS: `pg.sh serve` on the db host, a role stopped like the others (procs.stop_all);
    (Cluster, facts, None) once it prints its URL and postmaster pid and psql reads its facts, or
    (None, None, why not)."""
    h = place.host("db")
    clients = sorted({h.address, place.address("app"), place.host("loadgen").address})
    rc, port = place.remote_run(h, "python3 -c 'import socket; s = socket.socket(); s.bind((\"\", 0)); "
                                   "print(s.getsockname()[1])'")
    if rc != 0 or not port.strip().isdigit():
        return None, None, f"no free port on db host {h.name}: {port.strip() or f'exit {rc}'}"
    log = run_dir / "logs" / "postgres-start.log"
    data = f"/tmp/lab-pg-{run_dir.name}-{port.strip()}"        # pg.sh serve deletes it when it stops
    proc = place.start("db", [PG_SH, "serve", data, port.strip(), str(db.max_connections(s.db_pool)), h.address,
                              *clients], out=log, env={PASSWORD_ENV: password})
    deadline = time.monotonic() + timeout_s
    while True:
        lines = procs.read_lines(log)
        url = next((x.strip() for x in lines if x.startswith("postgresql://")), None)
        pid = next((int(m.group(1)) for m in map(re.compile(r"pg\.sh: postmaster pid (\d+)").match, lines) if m), None)
        if url and pid:
            cluster = Cluster(url, f"the bench (bench/tools/pg.sh serve on {h.name}, stopped at the end)", pid,
                              on_host=True, bindir=bin_dir, password=password)
            facts, reason = read_facts(cluster, run_dir / "logs" / "postgres-facts.log")
            return (None, None, reason) if reason else (cluster, facts, None)
        if not procs.alive(proc) or time.monotonic() > deadline:
            why = next((x for x in reversed(lines) if x.startswith("ERROR")), lines[-1] if lines else "no output")
            return None, None, f"bench/tools/pg.sh serve on {h.name} failed: {why} (see logs/{log.name})"
        time.sleep(0.1)


def clean(data_dir):
    """`pg.sh clean`: once its postmaster has stopped, a cluster's home under /tmp (where root's
    cluster lives when the postgres user cannot reach the run directory) deleted, its logs kept."""
    procs.run([PG_SH, "clean", str(data_dir)], out=data_dir.parent / "postgres-clean.log"
              if data_dir.parent.exists() else None)


def psql_args(bin_dir, url):
    m = db.URL.fullmatch(url)
    user, host, port, name = m.group(1) or "postgres", m.group(2), m.group(3), m.group(4)
    return [f"{bin_dir}/psql", "-h", host, "-p", port, "-U", user, "-d", name, "-qAt", "-X"]


FACTS = ("server_version", "max_connections", "fsync", "synchronous_commit", "shared_buffers")
# name=value lines: read out of a log that may hold other lines too (bench/tools/host-run.sh's)
FACTS_SQL = ("SELECT f || '=' || current_setting(f) FROM unnest(ARRAY['"
             + "', '".join(FACTS) + "']) WITH ORDINALITY AS t(f, i) ORDER BY i")


def read_facts(cluster, out):
    """Its version and the settings that shape a cell, through psql where pgbench runs (with
    PGPASSWORD in its environment); (facts, None) or (None, why not: it does not answer)."""
    cmd = [*psql_args(cluster.bindir, cluster.url), "-c", FACTS_SQL]
    rc = place.run("loadgen", cmd, out, env=cluster.client_env())
    lines = procs.read_lines(out)
    facts = dict(line.strip().split("=", 1) for line in lines if line.strip().split("=", 1)[0] in FACTS)
    if rc != 0 or len(facts) < len(FACTS):
        said = [x for x in lines if not x.startswith("host-run: ")]
        return None, f"PostgreSQL at {cluster.url} does not answer psql: {said[-1] if said else f'exit {rc}'}"
    facts["started_by"], facts["url"] = cluster.started_by, cluster.url
    return facts, None


# ---------------------------------------------------------------- CPU and memory from /proc

class Window:
    """The cluster's CPU (ticks at start and end) and its peak Pss (sampled every second on a
    thread of ours) over one measured window. `read`: pgusage.usage here, or read on its host."""

    def __init__(self, postmaster, interval_s=1.0, read=None):
        self.postmaster = postmaster
        self.read = read or (lambda: usage(postmaster))
        self.ticks0 = self.read()[0]
        self.peak_pss_kb, self.processes = 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), name="pg-sampler", daemon=True)
        self._thread.start()
        # A Ctrl-C mid-window: the cleanup lets its read in flight end before the bench does (on a db
        # host that read is a process there, which a test found alive after the bench had exited).
        procs.AT_STOP.append(self.stop)

    def _run(self, interval_s):
        while True:
            self.sample()
            if self._stop.wait(interval_s):
                return

    def sample(self):
        ticks, pss, processes = self.read()
        self.processes = max(self.processes, processes)
        self.peak_pss_kb = max(self.peak_pss_kb, pss)
        return ticks

    def stop(self):
        """No more samples; returns once the one in flight has ended (remote_run's 20 s at most)."""
        self._stop.set()
        self._thread.join(30)

    def end(self):
        """What the window measured, for the cell's record."""
        procs.AT_STOP.remove(self.stop)
        self.stop()
        ticks = self.sample()
        return {"cpu_db_s": round((ticks - self.ticks0) / procs.CLK_TCK, 2),
                "peak_db_pss_kb": self.peak_pss_kb, "db_processes": self.processes}
