"""The PostgreSQL server of a BACKEND=postgres run: started by the bench (bench/tools/pg.sh, a
throwaway cluster in RUN_DIR/postgres) or the user's (DB_URL); its facts for the environment
section; and, per measured window, the CPU its processes used and their memory.

A cluster the bench starts is stopped at the end of the run, and on Ctrl-C, TERM or an error:
procs.stop_all() (main's cleanup) runs `pg.sh stop` after stopping our children. pg_ctl puts the
postmaster in a session of its own, so it is no child of ours and stopping our process groups
would never reach it; the stop is registered before pg.sh start runs, so a Ctrl-C in the middle
of the start stops what it started too.

With HOSTS (issue 28) the cluster is a role on the db host like remote-sleep on the backend host:
`pg.sh serve` under bench/tools/host-run.sh, listening on that host's address and open to the app's host
and the first load host, where psql and pgbench run (the client side, as wrk's calibration is). It
stops when its ssh session is told to or ends (a bench that dies stops it too); its CPU and memory
are read there by bench/labbench/pgusage.py, the same code that reads them here.
"""
import re
import shlex
import socket
import subprocess
import threading
import time
from pathlib import Path

from . import db, place, procs
from .pgusage import cluster_pids, cluster_ticks, pss_kb, stat_fields, usage  # noqa: F401  (tests read them here)

PG_SH = "bench/tools/pg.sh"


class Cluster:
    def __init__(self, url, started_by, data_dir=None, bindir="", host_pid=None):
        self.url = url
        self.started_by = started_by        # "the bench (bench/tools/pg.sh)" or "DB_URL (not the bench)"
        self.data_dir = data_dir            # ours here: where postmaster.pid is (its processes are measurable)
        self.host_pid = host_pid            # ours on the db host (HOSTS): its postmaster's pid there
        self.bindir = bindir                # psql and pgbench, where they run (here, or the first load host)
        self.facts = {}

    def postmaster_pid(self):
        """The postmaster's PID (the first line of postmaster.pid), or None (not ours, or stopped)."""
        if self.host_pid or self.data_dir is None:
            return self.host_pid
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def window(self):
        """The CPU and memory of its processes over a measured window (None: not ours to measure)."""
        pid = self.postmaster_pid()
        if not pid:
            return None
        if self.host_pid:
            return Window(pid, read=lambda: usage_on(place.host("db"), pid))
        return Window(pid)


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
    elif place.placed():
        cluster, reason = start_on_host(s, run_dir, bin_dir)
        if reason:
            return None, reason
    else:
        data = (run_dir / "postgres").resolve()
        procs.AT_STOP.append(lambda: stop(data))       # before the start: a Ctrl-C during it stops it too
        log = run_dir / "logs" / "postgres-start.log"
        # the postmaster and its backends inherit the CPUs pg.sh was started on (CPUSETS' backend)
        rc = procs.run(place.command("backend", [PG_SH, "start", str(data), str(free_port()),
                                                 str(db.max_connections(s.db_pool))]), out=log)
        lines = procs.read_lines(log)
        if rc != 0 or not lines or not lines[-1].startswith("postgresql://"):
            return None, f"bench/tools/pg.sh start failed: {lines[-1] if lines else f'exit {rc}'} (see logs/{log.name})"
        cluster = Cluster(lines[-1].strip(), "the bench (bench/tools/pg.sh, stopped at the end)", data / "data", bin_dir)
    facts, reason = read_facts(cluster, run_dir / "logs" / "postgres-facts.log")
    if reason:
        return None, reason
    cluster.facts = facts
    if int(facts.get("max_connections") or 0) < db.max_connections(s.db_pool) - db.MARGIN:
        return None, (f"{cluster.url} takes max_connections={facts.get('max_connections')}: too few for DB_POOL="
                      f"{s.db_pool} in the app plus {s.db_pool} pgbench clients; lower DB_POOL")
    return cluster, None


def start_on_host(s, run_dir, bin_dir, timeout_s=90):
    """HOSTS: `pg.sh serve` on the db host, a role stopped like the others (procs.stop_all); (Cluster,
    None) once it prints its URL and postmaster pid, or (None, why not)."""
    h = place.host("db")
    clients = sorted({h.address, place.address("app"), place.host("loadgen").address})
    rc, port = place.remote_run(h, "python3 -c 'import socket; s = socket.socket(); s.bind((\"\", 0)); "
                                   "print(s.getsockname()[1])'")
    if rc != 0 or not port.strip().isdigit():
        return None, f"no free port on db host {h.name}: {port.strip() or f'exit {rc}'}"
    log = run_dir / "logs" / "postgres-start.log"
    data = f"/tmp/lab-pg-{run_dir.name}-{port.strip()}"        # pg.sh serve deletes it when it stops
    proc = place.start("db", [PG_SH, "serve", data, port.strip(), str(db.max_connections(s.db_pool)), h.address,
                              *clients], out=log)
    deadline = time.monotonic() + timeout_s
    while True:
        lines = procs.read_lines(log)
        url = next((x.strip() for x in lines if x.startswith("postgresql://")), None)
        pid = next((int(m.group(1)) for m in map(re.compile(r"pg\.sh: postmaster pid (\d+)").match, lines) if m), None)
        if url and pid:
            return Cluster(url, f"the bench (bench/tools/pg.sh serve on {h.name}, stopped at the end)",
                           bindir=bin_dir, host_pid=pid), None
        if not procs.alive(proc) or time.monotonic() > deadline:
            why = next((x for x in reversed(lines) if x.startswith("ERROR")), lines[-1] if lines else "no output")
            return None, f"bench/tools/pg.sh serve on {h.name} failed: {why} (see logs/{log.name})"
        time.sleep(0.1)


def stop(data_dir, wait_s=10.0):
    """pg.sh stop (immediate: the data is throwaway); a no-op when it is not running. pg_ctl returns
    once postmaster.pid is gone, a moment before the postmaster's process is: wait for that too,
    so nothing of the cluster outlives the run."""
    pid = Cluster("", "", data_dir / "data").postmaster_pid()
    procs.run([PG_SH, "stop", str(data_dir)], out=data_dir.parent / "postgres-stop.log"
              if data_dir.parent.exists() else None)
    deadline = time.monotonic() + wait_s
    while pid and Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def psql_args(bin_dir, url):
    m = db.URL.fullmatch(url)
    user, host, port, name = m.group(1) or "postgres", m.group(2), m.group(3), m.group(4)
    return [f"{bin_dir}/psql", "-h", host, "-p", port, "-U", user, "-d", name, "-qAt", "-X"]


FACTS = ("server_version", "max_connections", "fsync", "synchronous_commit", "shared_buffers")


def read_facts(cluster, out):
    """Its version and the settings that shape a cell (SHOW ...), through psql; (facts, None) or
    (None, why not: it does not answer)."""
    sql = "; ".join(f"SHOW {f}" for f in FACTS)
    cmd = [*psql_args(cluster.bindir, cluster.url), "-c", sql]
    if place.placed():                     # where pgbench runs: its stdout only (no host-run lines)
        rc, text = place.remote_run(place.host("loadgen"), shlex.join(cmd))
        out.write_text(text)
    else:
        rc = procs.run(cmd, out=out)
    lines = procs.read_lines(out)
    if rc != 0 or len(lines) < len(FACTS):
        return None, f"PostgreSQL at {cluster.url} does not answer psql: {lines[-1] if lines else f'exit {rc}'}"
    facts = dict(zip(FACTS, (line.strip() for line in lines[-len(FACTS):])))
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
