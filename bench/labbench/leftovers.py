"""What an earlier run of ours left running (issue 40). Each run records its children in its
directory (procs.record_to: RESULTS_DIR/<run>/children.txt, a first line for the bench itself) and
deletes the record once it has stopped them. A record still there whose bench is gone is a run that
was killed (SIGKILL: by hand, or the OOM killer): before the next run checks its ports, each
child of it still running, the same PID with the same start time (a PID is reused; its start time
is not), is named and ended, SIGKILL to its process group. On one box its children die with it
anyway (procs.in_child); this is for what did not: a child of another thread, a host's ssh.
"""
import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

from . import pg, place, procs

RECORD = "children.txt"


def record(run_dir):
    """This run's children are recorded in its directory from now on."""
    procs.record_to(Path(run_dir) / RECORD)


def forget(run_dir):
    """The run has stopped every child: its record goes (and no later start is recorded)."""
    procs.record_to(None)
    with contextlib.suppress(OSError):
        (Path(run_dir) / RECORD).unlink()


def read(path):
    """(the bench's (pid, start time) or None, [(pid, start time, command)]) of a record."""
    bench, children = None, []
    for line in procs.read_lines(Path(path)):
        fields = line.split("\t", 2)
        if len(fields) == 3 and fields[0] == "bench" and fields[1].isdigit() and fields[2].isdigit():
            bench = (int(fields[1]), int(fields[2]))
        elif len(fields) == 3 and fields[0].isdigit() and fields[1].isdigit():
            children.append((int(fields[0]), int(fields[1]), fields[2]))
    return bench, children


def running(pid, started):
    """True when the process `pid` is the one that started at `started` (and not a zombie)."""
    if procs.start_time(pid) != started:
        return False
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()[0] != "Z"
    return False


def end_earlier(results_dir, wait_s=10.0):
    """Before this run starts: every earlier run in results_dir whose bench is gone, its children
    still running named and ended (SIGKILL), waited for (at most wait_s), its throwaway PostgreSQL's
    home cleaned, its record deleted. A record whose bench still runs is another run's: left alone.
    Returns the lines it printed."""
    said = []
    for path in sorted(Path(results_dir).glob(f"*/{RECORD}")):
        bench, children = read(path)
        if bench and running(*bench):
            continue
        left = [(pid, started, what) for pid, started, what in children if running(pid, started)]
        for pid, started, what in left:
            said.append(f"== ending pid {pid}, left running by the run {path.parent.name} (killed before it could stop it): "
                        f"{what[:160]}")
            print(said[-1])
            for kill in (os.killpg, os.kill):        # its group is its own (procs.in_child)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + wait_s
        while any(running(pid, started) for pid, started, _ in left) and time.monotonic() < deadline:
            time.sleep(0.05)
        if (path.parent / "postgres").is_dir():
            pg.clean(path.parent / "postgres")
        shutil.rmtree(path.parent / place.TMP, ignore_errors=True)      # its apps' java.io.tmpdir
        with contextlib.suppress(OSError):
            path.unlink()
    return said
