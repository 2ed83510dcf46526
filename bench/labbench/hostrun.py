"""The bench's side of bench/tools/host-run.sh (HOSTS=, issues 28 and 40): a role's command as its host
runs it, its environment sent on its ssh's stdin, the heartbeat on that stdin, and each host's private
directory for the run. place.py is the seam the rest of the bench calls; this is how it talks to a host.

The environment goes through stdin, never argv: `ps` on a host shows every process's arguments, and a
role's environment may hold a secret (an admin token, a database password).

The heartbeat: a thread writes "." to every remote role's stdin every BEAT_S s, and host-run.sh ends
its command after SILENCE_S s without a line (TERM, then KILL 10 s later). A bench that dies closes its
ssh's stdin at once (TERM within a round trip); a bench cut off by the network, or stopped, can close
nothing: its roles end within SILENCE_S + 10 s (sshd would keep them until TCP gives up, ~15 min,
where `make hosts` has not set its ClientAliveInterval). bench/tests/hosts-test.sh cuts the bench's
network mid-cell and times it.

The run's files on a host (wrk's JSON, vegeta's targets and results, pgbench's script) go in one
directory per host per run: `mktemp -d` there (mode 0700, a name nobody can take first), made by a
host-run.sh --run-dir that deletes it when it is stopped, when the bench dies or when the heartbeat
stops: no run leaves its files, and nothing deletes a path read back from a file.
"""
import contextlib
import os
import re
import select
import shlex
import subprocess
import threading
import time

from . import procs

BEAT_S = 2                  # a line on every remote role's stdin this often
SILENCE_S = 10              # host-run.sh ends its command after this long without one
SCRIPT = "bench/tools/host-run.sh"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DIR_LINE = re.compile(rb"^host-run: dir (/[A-Za-z0-9._/-]+)$", re.M)

_beating = set()            # the processes whose stdin gets the heartbeat
_dirs = {}                  # Host -> (the process holding its directory, the directory there)
_thread = []                # the heartbeat's, once started
_wake = threading.Event()   # set: beat now (a new process gets its first line at once)


def wrapped(h, cmd, env=None):
    """cmd as it runs on host h: ssh to host-run.sh, with its CPUs, the heartbeat's silence and, when
    there is an environment, --env-stdin (the values themselves go in later, on stdin)."""
    words = [f"{h.lab_dir}/{SCRIPT}", *(["--cpus", h.cpus] if h.cpus else []), "--silence", str(SILENCE_S),
             *(["--env-stdin"] if env else []), "--", *cmd]
    return [*h.ssh, shlex.join(words)]


def env_text(env):
    """The NAME=VALUE lines host-run.sh --env-stdin reads, ended by an empty line; ValueError for a
    name or value a line cannot carry."""
    for k, v in env.items():
        if not ENV_NAME.fullmatch(k) or "\n" in str(v) or "\0" in str(v):
            raise ValueError(f"environment variable {k!r}: not sent to a host (a name, a value of one line)")
    return "".join(f"{k}={v}\n" for k, v in env.items()) + "\n"


def start(h, cmd, out, env=None):
    """Start cmd on host h (its ssh's output in `out`): its environment written first, then the
    heartbeat, then (procs.stop) its stop."""
    text = env_text(env) if env else ""
    p = procs.start(wrapped(h, cmd, env), out=out, stop_by_stdin=True)
    if text:
        with contextlib.suppress(OSError, ValueError):      # an ssh that died at once: its exit says why
            p.stdin.write(text.encode())
            p.stdin.flush()
    beat(p)
    return p


def beat(p):
    """Send the heartbeat to p's stdin from now on (until it ends or its stdin is closed)."""
    _beating.add(p)
    if not _thread:
        _thread.append(threading.Thread(target=_beat_forever, name="heartbeat", daemon=True))
        _thread[0].start()
    _wake.set()


def _beat_forever():
    while True:
        _wake.wait(BEAT_S)
        _wake.clear()
        for p in list(_beating):
            if p.returncode is not None or p.stdin.closed:
                _beating.discard(p)
                continue
            with contextlib.suppress(OSError, ValueError):   # closed meanwhile, or its ssh gone
                p.stdin.write(b".\n")
                p.stdin.flush()


def run_dir(h, timeout_s=20):
    """Host h's private directory for this run, made on the first call and held by a
    host-run.sh --run-dir (a child like a role: stop_all stops it, after the roles, and it deletes the
    directory): (the path, None), or (None, why not)."""
    if h in _dirs:
        return _dirs[h][1], None
    with procs.signals_held():         # a child of ours like any other (procs.CHILDREN)
        p = subprocess.Popen([*h.ssh, shlex.join([f"{h.lab_dir}/{SCRIPT}", "--run-dir", "--silence", str(SILENCE_S)])],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=procs.in_child)
        procs.CHILDREN.append(p)
    beat(p)
    text, deadline = b"", time.monotonic() + timeout_s
    while not DIR_LINE.search(text) and time.monotonic() < deadline:
        ready, _, _ = select.select([p.stderr], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(p.stderr.fileno(), 65536) if ready else b""
        if not chunk:
            break
        text += chunk
    m = DIR_LINE.search(text)
    if not m:
        procs.stop(p)
        p.stderr.close()
        last = text.decode(errors="replace").strip().splitlines()[-1:]
        return None, last[0] if last else f"no directory in {timeout_s} s"
    _dirs[h] = (p, m.group(1).decode())
    return _dirs[h][1], None


def close_dirs():
    """Stop every host's directory holder: each deletes its directory there (a no-op for those
    stop_all stopped already)."""
    while _dirs:
        _, (p, _) = _dirs.popitem()
        procs.stop(p)
        p.stderr.close()
