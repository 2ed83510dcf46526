"""The PostgreSQL server of a BACKEND=postgres run: started by the bench (bench/tools/pg.sh, a
throwaway cluster in RUN_DIR/postgres) or the user's (DB_URL); its facts for the environment
section; and, per measured window, the CPU its processes used and their memory.

A cluster the bench starts is stopped at the end of the run, and on Ctrl-C, TERM or an error:
procs.stop_all() (main's cleanup) runs `pg.sh stop` after stopping our children. pg_ctl puts the
postmaster in a session of its own, so it is no child of ours and stopping our process groups
would never reach it; the stop is registered before pg.sh start runs, so a Ctrl-C in the middle
of the start stops what it started too.
"""
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

from . import db, place, procs

PG_SH = "bench/tools/pg.sh"


class Cluster:
    def __init__(self, url, started_by, data_dir=None, bindir=""):
        self.url = url
        self.started_by = started_by        # "the bench (bench/tools/pg.sh)" or "DB_URL (not the bench)"
        self.data_dir = data_dir            # ours only: where postmaster.pid is (its processes are measurable)
        self.bindir = bindir
        self.facts = {}

    def postmaster_pid(self):
        """The postmaster's PID (the first line of postmaster.pid), or None (not ours, or stopped)."""
        if self.data_dir is None:
            return None
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def window(self):
        """The CPU and memory of its processes over a measured window (None: not ours to measure)."""
        pid = self.postmaster_pid()
        return Window(pid) if pid else None


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


def start(s, run_dir, bin_dir):
    """The run's PostgreSQL: DB_URL's, or a new cluster sized for the run. (Cluster, None) or
    (None, why not)."""
    if s.db_url:
        cluster = Cluster(s.db_url, "DB_URL (not the bench: its CPU and memory are not measured)", bindir=bin_dir)
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
    rc = procs.run([*psql_args(cluster.bindir, cluster.url), "-c", sql], out=out)
    lines = procs.read_lines(out)
    if rc != 0 or len(lines) < len(FACTS):
        return None, f"PostgreSQL at {cluster.url} does not answer psql: {lines[-1] if lines else f'exit {rc}'}"
    facts = dict(zip(FACTS, (line.strip() for line in lines[-len(FACTS):])))
    facts["started_by"], facts["url"] = cluster.started_by, cluster.url
    return facts, None


# ---------------------------------------------------------------- CPU and memory from /proc

def stat_fields(pid):
    """(ppid, utime+stime, cutime+cstime) in ticks from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(") ")[2].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def cluster_pids(postmaster):
    """The postmaster and its children (backends, checkpointer, ...): every process of the cluster."""
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != postmaster:
            f = stat_fields(entry.name)
            if f and f[0] == postmaster:
                pids.append(int(entry.name))
    return pids


def cluster_ticks(postmaster):
    """CPU ticks the cluster has used: its live processes' own, plus the postmaster's reaped
    children's (cutime: a backend that exited during the window still counts)."""
    total = 0
    for pid in cluster_pids(postmaster):
        f = stat_fields(pid)
        if f:
            total += f[1] + (f[2] if pid == postmaster else 0)
    return total


def pss_kb(pids):
    """Sum of Pss (proportional set size) over the processes: shared memory (shared_buffers, the
    binary) is divided among the processes that map it, so N backends do not count it N times,
    as summing their RSS would."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                m = re.search(r"^Pss:\s+(\d+) kB", f.read(), re.M)
        except OSError:
            continue
        total += int(m.group(1)) if m else 0
    return total


class Window:
    """The cluster's CPU (ticks at start and end) and its peak Pss (sampled every second on a
    thread of ours) over one measured window."""

    def __init__(self, postmaster, interval_s=1.0):
        self.postmaster = postmaster
        self.ticks0 = cluster_ticks(postmaster)
        self.peak_pss_kb, self.processes = 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval_s,), name="pg-sampler", daemon=True)
        self._thread.start()

    def _run(self, interval_s):
        while True:
            self.sample()
            if self._stop.wait(interval_s):
                return

    def sample(self):
        pids = cluster_pids(self.postmaster)
        self.processes = max(self.processes, len(pids))
        self.peak_pss_kb = max(self.peak_pss_kb, pss_kb(pids))

    def end(self):
        """What the window measured, for the cell's record."""
        self._stop.set()
        self._thread.join()
        self.sample()
        return {"cpu_db_s": round((cluster_ticks(self.postmaster) - self.ticks0) / procs.CLK_TCK, 2),
                "peak_db_pss_kb": self.peak_pss_kb, "db_processes": self.processes}
