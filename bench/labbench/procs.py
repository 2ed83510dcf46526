"""The processes we start on this machine (servers, wrk, side loads, the build), how we stop them,
and what /proc says of them: CPU ticks, peak RSS and threads. place.py runs a role's process here or
on its host; web.py talks to the servers over HTTP.

Every child starts in a process group of its own, so a Ctrl-C in the terminal reaches only the
harness, which then stops each child in order (an app gets its TERM and writes its class-data
archive). The price: nothing else stops them, so every child is on CHILDREN from before it can
run until it has been reaped, and stop_all() (main's cleanup) stops what is left, by group id =
the child's own PID: exactly what we started, never a name.

A bench that is SIGKILLed runs no cleanup (issue 40): each child is told to die with it, SIGKILL
on its parent's death (PR_SET_PDEATHSIG, set before exec; exec keeps it, taskset's too). The
kernel sends it when the thread that forked the child ends, so children start from the main thread
(every caller does). It does not pass to a child's own children, nor past a change of user:
PostgreSQL is run in the foreground for that (pg.py, bench/tools/pg.sh run). And each child's PID
and start time go to the run's record (record_to), which the next run reads (leftovers.py).
"""
import contextlib
import ctypes
import os
import re
import signal
import subprocess
import threading

CHILDREN = []                 # started and not yet reaped: what stop_all() stops
AT_STOP = []                  # what stop_all() also stops, after them: servers that are no child of ours
                              # (the PostgreSQL cluster pg_ctl detaches: pg.stop)
CLK_TCK = os.sysconf("SC_CLK_TCK")   # /proc/PID/stat counts CPU time in these ticks
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
RECORD = []                   # [the file start() records each child in], once record_to() named one
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1         # <linux/prctl.h>
_BENCH = os.getpid()          # the children's parent: the bench


@contextlib.contextmanager
def signals_held():
    """Hold Ctrl-C / TERM for a moment (they arrive right after): a child is never started or
    reaped without CHILDREN knowing."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def in_child():
    """Runs in the child before exec: a group of its own, SIGKILL when the bench dies, and the
    signals we held unblocked (a signal mask survives exec, and a child that cannot get TERM cannot
    be stopped)."""
    os.setpgid(0, 0)
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != _BENCH:        # the bench died before the line above: nothing would kill us
        os.kill(os.getpid(), signal.SIGKILL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def start_time(pid):
    """When a process started (ticks since boot, /proc/PID/stat field 22): with its PID, what names
    it across time (a PID is reused); None when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(") ")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def record_to(path):
    """From now on start() records each child (PID, start time, command) in `path`, after a first
    line for the bench itself; None: no more."""
    RECORD.clear()
    if path is not None:
        with open(path, "w") as f:
            f.write(f"bench\t{os.getpid()}\t{start_time(os.getpid())}\n")
        RECORD.append(path)


def _record(p, cmd):
    if RECORD:
        with open(RECORD[0], "a") as f:
            f.write(f"{p.pid}\t{start_time(p.pid)}\t{' '.join(map(str, cmd))[:300]}\n")


def start(cmd, out=None, env=None, stop_by_stdin=False):
    """Start cmd with its stdout and stderr in the file `out` (None: ours). stop_by_stdin: cmd is a
    role on another host (ssh to bench/tools/host-run.sh, place.py), which stops when its stdin says so
    or ends: kept open until stop()."""
    with signals_held():
        log = open(out, "wb") if out else None
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE if stop_by_stdin else subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT if log else None, env=env, preexec_fn=in_child)
        finally:
            if log:
                log.close()
        CHILDREN.append(p)
        _record(p, cmd)
    return p


def wait(p, timeout=None):
    """Wait for p to exit (at most `timeout` seconds); its exit code, or None if still running."""
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        return None
    _forget(p)
    return p.returncode


def _forget(p):
    with signals_held():
        if p in CHILDREN:
            CHILDREN.remove(p)
    if p.stdin is not None:
        with contextlib.suppress(OSError):
            p.stdin.close()


def run(cmd, out=None, env=None):
    """Start cmd and wait for it: its exit code."""
    return wait(start(cmd, out, env))


def alive(p):
    if p is None:
        return False
    with signals_held():
        running = p.poll() is None
    if not running:
        _forget(p)
    return running


def _signal(p, sig):
    if p.returncode is None:          # never signal a reaped PID: it may be someone else's now
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(p.pid, sig)


def stop(p, sig=signal.SIGTERM, grace_s=5.0):
    """Stop a process we started: `sig` (TERM, or KILL for a server whose shutdown we need
    nothing from) to its group, up to grace_s seconds, then KILL; reap it."""
    if p is None:
        return
    if p.returncode is not None:
        _forget(p)
        return
    if p.stdin is not None:           # a role on another host: the signal's name through ssh (bench/tools/host-run.sh)
        # then KILL the same way, as here: a JVM stuck in its shutdown (one with 500 connections and 200
        # queries queued) outlived its TERM by minutes and held the app's port against the next app
        for name, wait_s in ((signal.Signals(sig).name[3:], grace_s + 5), ("KILL", 10)):    # + the round trip
            with contextlib.suppress(OSError, ValueError):
                p.stdin.write(f"{name}\n".encode())
                p.stdin.flush()
            if wait(p, wait_s) is not None:
                break
        with contextlib.suppress(OSError, ValueError):
            p.stdin.close()
        if p.returncode is not None:
            return
    _signal(p, sig)
    if wait(p, grace_s) is None:
        _signal(p, signal.SIGKILL)
        wait(p)


def stop_all():
    """Stop every child still running, the newest first (an app before remote-sleep), each with its
    stop_signal (TERM unless set: PostgreSQL's is QUIT), then what AT_STOP holds (each once: a second
    stop_all finds nothing left)."""
    for p in list(reversed(CHILDREN)):
        stop(p, getattr(p, "stop_signal", signal.SIGTERM))
    while AT_STOP:
        AT_STOP.pop()()


def read_lines(path):
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


# ---------------------------------------------------------------- CPU from /proc

def proc_ticks(p):
    """user+system CPU ticks process p has used so far (fields 14 and 15 of /proc/PID/stat)."""
    try:
        stat = open(f"/proc/{p.pid}/stat").read()
    except (OSError, AttributeError):
        return 0
    return stat_ticks(stat)


def stat_ticks(stat):
    """user+system ticks from the text of a /proc/PID/stat (here, or read on another host)."""
    fields = stat.rpartition(") ")[2].split()   # drop "pid (comm) ": comm may hold spaces
    return int(fields[11]) + int(fields[12])


def box_ticks():
    """(busy, total, steal) jiffies of the whole box, from the first line of /proc/stat."""
    with open("/proc/stat") as f:
        return cpu_line_ticks(f.readline())


def ticks_share(box0, box1, k):
    """Part k (0: busy, 2: steal) of the CPU time between two (busy, total, steal) readings, in %;
    None when a reading is missing or no time passed."""
    if not box0 or not box1 or box1[1] <= box0[1]:
        return None
    return 100.0 * (box1[k] - box0[k]) / (box1[1] - box0[1])


def cpu_line_ticks(line):
    """(busy, total, steal) from /proc/stat's "cpu ..." line (here, or read on another host). Busy
    counts steal (time the hypervisor gave this VM's CPUs to someone else): a cell's box CPU is then
    what the lab could not use, and its steal share says how much of it was not the lab's."""
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, line.split()[1:9])
    busy = user + nice + system + irq + softirq + steal
    return busy, busy + idle + iowait, steal


def cpus_ticks(stat_text, cpus):
    """(busy, total, steal) of the CPUs `cpus` only, summed from /proc/stat's per-CPU "cpuN" lines."""
    out = [0, 0, 0]
    for line in stat_text.splitlines():
        name = line.split(" ", 1)[0]
        if name[3:].isdigit() and name.startswith("cpu") and int(name[3:]) in cpus:
            out = [a + b for a, b in zip(out, cpu_line_ticks(line))]
    return tuple(out)


# ---------------------------------------------------------------- memory and threads from /proc

def status_fields(text):
    """(VmRSS in kB, Threads) from the text of /proc/PID/status; None for a field it lacks."""
    found = dict(re.findall(r"^(VmRSS|Threads):\s+(\d+)", text, re.M))
    rss, threads = found.get("VmRSS"), found.get("Threads")
    return (None if rss is None else int(rss)), (None if threads is None else int(threads))


class Sampler:
    """Polls a process's /proc/PID/status every `interval_s` on a thread of ours while wrk runs:
    its peak resident memory (VmRSS) and peak OS threads (Threads: every thread of the JVM, GC
    and compiler threads too; a virtual thread is not one). A peak over the measured window
    needs samples, not one reading at the end: a pool shrinks and the GC returns memory. Reading
    two small files 4 times a second costs the box nothing measurable."""

    def __init__(self, pid, interval_s=0.25):
        self.path = f"/proc/{pid}/status"
        self.interval_s = interval_s
        self.peak_rss_kb = self.peak_threads = None
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)

    def _run(self):
        while True:
            self.sample()
            if self._stop.wait(self.interval_s):
                return

    def sample(self):
        try:
            with open(self.path) as f:
                text = f.read()
        except OSError:
            return                      # the process has gone: its peaks so far stand
        self.note(text)

    def note(self, text):
        """One sample: the text of a /proc/PID/status (or its VmRSS and Threads lines)."""
        rss, threads = status_fields(text)
        self.samples += 1
        if rss is not None:
            self.peak_rss_kb = max(rss, self.peak_rss_kb or 0)
        if threads is not None:
            self.peak_threads = max(threads, self.peak_threads or 0)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        """Stop sampling (one last sample first); the peaks."""
        self._stop.set()
        self._thread.join()
        self.sample()
        return self.peak_rss_kb, self.peak_threads
