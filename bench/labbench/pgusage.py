"""A PostgreSQL cluster's CPU and memory from /proc: the postmaster and every process it started.
Standalone (the standard library only) because it also runs on a db host of HOSTS= (issue 28),
where `make hosts` copies it and the bench runs `python3 bench/labbench/pgusage.py PID` over ssh:
the same reading there as here (pg.Window).

USAGE: python3 bench/labbench/pgusage.py POSTMASTER_PID   prints "TICKS PSS_KB PROCESSES"
"""
import re
import sys
from pathlib import Path


def stat_fields(pid):
    """(ppid, utime+stime, cutime+cstime) in ticks from /proc/PID/stat, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(") ")[2].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def cluster(postmaster):
    """{pid: stat_fields} of the postmaster and its children (backends, checkpointer, ...): every
    live process of the cluster, from one scan of /proc."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            f = stat_fields(entry.name)
            if f and (int(entry.name) == postmaster or f[0] == postmaster):
                out[int(entry.name)] = f
    return out


def cluster_pids(postmaster):
    """The postmaster and its children: every process of the cluster."""
    return [postmaster, *(pid for pid in cluster(postmaster) if pid != postmaster)]


def cluster_ticks(postmaster, processes=None):
    """CPU ticks the cluster has used: its live processes' own, plus the postmaster's reaped
    children's (cutime: a backend that exited during the window still counts). `processes`: a
    cluster() reading already made."""
    processes = cluster(postmaster) if processes is None else processes
    return sum(own + (children if pid == postmaster else 0) for pid, (_, own, children) in processes.items())


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


def usage(postmaster):
    """(CPU ticks so far, Pss now in kB, processes now) of the cluster."""
    processes = cluster(postmaster)          # one scan of /proc for all three (every second, maybe over ssh)
    return cluster_ticks(postmaster, processes), pss_kb(processes), len(set(processes) | {postmaster})


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: python3 bench/labbench/pgusage.py POSTMASTER_PID")
    print(*usage(int(sys.argv[1])))
