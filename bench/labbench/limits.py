"""The machine's limits against the largest connection level, checked before anything starts
(docs/traps.md #13): file descriptors, ephemeral ports, accept queues.

Each connection costs a file descriptor in wrk and in remote-sleep, and two in the app (the
incoming one and its client's connection to remote-sleep); each process has its own limit
(`ulimit -n`, inherited from us). A level the machine cannot hold is a UsageError (exit 2)
naming the limit and the command that raises it; a limit we may raise ourselves (as root, the
hard `ulimit -n` up to fs.nr_open) is raised for this run and its children, and said so.
The accept queue is only reported: the apps ask for 8192, the kernel gives min(that, somaxconn).
"""
import os
import resource
from dataclasses import dataclass
from typing import Optional, Tuple

from .checks import UsageError

# Beyond 2 per connection, a JVM holds a few hundred descriptors of its own (jars, the JDK's
# modules file, selectors, pipes, logs): 1024 leaves room.
FD_MARGIN = 1024
# Ports besides the largest level's own: TIME_WAIT left by the previous cell and the warm-up.
PORT_MARGIN = 1000
# Thread ids besides the app's pool: the JVM's own threads, wrk, remote-sleep, the rest of the box.
THREAD_MARGIN = 2000


@dataclass
class Machine:
    """What the kernel lets us have (read by read(), or made up by a test)."""
    soft: int                  # ulimit -n (RLIM_INFINITY stays as it is)
    hard: int
    nr_open: int               # fs.nr_open: no process can have more, root included
    root: bool
    ports: Tuple[int, int]     # net.ipv4.ip_local_port_range
    somaxconn: int             # net.core.somaxconn: caps every accept queue
    pid_max: int = 4194304     # kernel.pid_max: every thread takes an id, machine-wide
    threads_max: int = 1 << 20  # kernel.threads-max


@dataclass
class Plan:
    need_fds: int              # what the app needs at the largest level
    new_limit: Optional[int]   # raise soft and hard ulimit -n to this (root), or None
    notes: list                # sentences for the environment section


def read_int(path, default):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def read():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    big = 1 << 30
    lo_hi = (32768, 60999)
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            lo, hi = map(int, f.read().split())
            lo_hi = (lo, hi)
    except (OSError, ValueError):
        pass
    return Machine(soft=big if soft == resource.RLIM_INFINITY else soft,
                   hard=big if hard == resource.RLIM_INFINITY else hard,
                   nr_open=read_int("/proc/sys/fs/nr_open", 1048576), root=os.geteuid() == 0, ports=lo_hi,
                   somaxconn=read_int("/proc/sys/net/core/somaxconn", 4096),
                   pid_max=read_int("/proc/sys/kernel/pid_max", 4194304),
                   threads_max=read_int("/proc/sys/kernel/threads-max", 1 << 20))


def fds_needed(connections):
    """The app's descriptors at `connections`: 2 per request in flight, plus the JVM's own."""
    return 2 * connections + FD_MARGIN


def plan(max_conns, m, accept_queue=8192, max_threads=0):
    """How this machine holds `max_conns` connections (and an app of `max_threads` platform
    threads, the sweep's `conns` variant): a Plan, or UsageError saying which limit is too low
    and how to raise it."""
    notes = []
    threads_limit = min(m.pid_max, m.threads_max)
    if max_threads + THREAD_MARGIN > threads_limit:
        raise UsageError(
            f"an app with {max_threads} platform threads (+ {THREAD_MARGIN} for everything else running) "
            f"needs more thread ids than kernel.pid_max {m.pid_max} / kernel.threads-max {m.threads_max} "
            f"allow; raise them (`sysctl -w kernel.pid_max={4 * (max_threads + THREAD_MARGIN)}`) or lower the level")
    need = fds_needed(max_conns)
    new_limit = None
    if need > m.hard:
        if not m.root:
            raise UsageError(
                f"{max_conns} connections need ~{need} file descriptors in the app (2 per connection: "
                f"the incoming one and its call to remote-sleep, + {FD_MARGIN} for the JVM), above "
                f"ulimit -n's hard limit {m.hard}; raise it as root (`ulimit -Hn {need}` in the shell "
                f"that runs the bench, or a nofile line in /etc/security/limits.conf) or keep every level "
                f"<= {max_level(m.hard)}")
        if need > m.nr_open:
            raise UsageError(
                f"{max_conns} connections need ~{need} file descriptors in the app, above fs.nr_open "
                f"{m.nr_open}, the most any process may have; raise it with "
                f"`sysctl -w fs.nr_open={need}` or lower the level")
        new_limit = need
        notes.append(f"ulimit -n raised to {need} (soft and hard; was {m.soft}/{m.hard}) for this run and its "
                     f"children: {max_conns} connections need ~2 per connection in the app")
    elif need > m.soft:
        notes.append(f"ulimit -n raised to its hard limit {m.hard} (was {m.soft})")
    lo, hi = m.ports
    ports = hi - lo + 1
    need_ports = 2 * max_conns + PORT_MARGIN
    if need_ports > ports:
        raise UsageError(
            f"{max_conns} connections need ~{need_ports} ephemeral ports (wrk's connections and the "
            f"app's calls to remote-sleep, + {PORT_MARGIN} for the previous cell's TIME_WAIT), more than "
            f"net.ipv4.ip_local_port_range {lo}-{hi} has ({ports}); widen it with "
            f"`sysctl -w net.ipv4.ip_local_port_range=\"1024 65535\"` or lower the level")
    queue = min(accept_queue, m.somaxconn)
    if max_conns > queue:
        notes.append(f"accept queue {queue} (the apps and remote-sleep ask {accept_queue}, net.core.somaxconn "
                     f"caps it at {m.somaxconn}): wrk opens all {max_conns} connections at once, so at levels "
                     f"above {queue} some wait for a retransmitted SYN or ACK (~1 s or more) before they are "
                     f"accepted; the calibration cell pays the same. Raise it with `sysctl -w "
                     f"net.core.somaxconn={max_conns}` (not done here: the bench changes no sysctl)")
    return Plan(need, new_limit, notes)


def open_loop_note(outstanding, m):
    """vegeta may keep `outstanding` requests open (RATE x its timeout, so that it never caps the load
    itself); the sentence saying how many of them the app can hold at once on this machine (m) and what
    happens past that, or None when it holds them all. Said, not changed: capping vegeta there would
    make the load generator the limit of an overloaded cell instead of the app's own."""
    lo, hi = m.ports
    held = min(max_level(m.soft), (hi - lo + 1 - PORT_MARGIN) // 2)
    if outstanding <= held:
        return None
    return (f"vegeta may keep up to {outstanding} requests outstanding (RATE x its timeout: it never caps the load "
            f"itself); the app holds ~{held} at once (ulimit -n {m.soft}: 2 descriptors each + {FD_MARGIN}; "
            f"ephemeral ports {lo}-{hi}: 2 each + {PORT_MARGIN}): a cell whose app falls further behind runs out "
            f"of them (\"Too many open files\" in its log) and reads as failed or not carried")


# ---- HOSTS: each host's own limits (read there by inventory.check before anything starts)

READ_ON_HOST = ("ulimit -Sn; ulimit -Hn; cat /proc/sys/fs/nr_open /proc/sys/net/ipv4/ip_local_port_range "
                "/proc/sys/net/core/somaxconn /proc/sys/kernel/pid_max /proc/sys/kernel/threads-max; id -u")


def parse_host(text):
    """READ_ON_HOST's output as a Machine; None when it is not that."""
    words = ["1073741824" if w == "unlimited" else w for w in text.split()]     # as read() has RLIM_INFINITY
    if len(words) != 9 or not all(w.isdigit() for w in words):
        return None
    soft, hard, nr_open, lo, hi, somaxconn, pid_max, threads_max, uid = map(int, words)
    return Machine(soft=soft, hard=hard, nr_open=nr_open, root=uid == 0, ports=(lo, hi), somaxconn=somaxconn,
                   pid_max=pid_max, threads_max=threads_max)


def host_needs(roles, max_conns, loadgen_share, max_threads, backend):
    """(file descriptors, source ports, threads) one host's roles need at the largest level: the app
    2 per connection (+ the JVM's) and a port per call to the backend (at most the DB pool's
    connections with BACKEND=postgres: its pool is its own cap); remote-sleep and PostgreSQL one
    descriptor per connection; a load host one descriptor and one port per connection of its share.
    bench/tools/host-run.sh raises a role's soft ulimit -n to the hard one; it raises no hard limit."""
    fds = ports = threads = 0
    if "app" in roles:
        fds, threads = fds_needed(max_conns), max_threads
        ports += max_conns if backend == "http" else 0
    if "backend" in roles or "db" in roles:
        fds = max(fds, max_conns + FD_MARGIN)
    if "loadgen" in roles:
        fds = max(fds, loadgen_share + FD_MARGIN)
        ports += loadgen_share
    return fds, ports + PORT_MARGIN, threads


def check_host(m, roles, max_conns, loadgen_share, max_threads, backend):
    """The sentence saying which limit of a host (its Machine m) is too low for its roles at the
    largest level and how to raise it there; None when it holds them."""
    fds, ports, threads = host_needs(roles, max_conns, loadgen_share, max_threads, backend)
    what = f"{max_conns} connections ({' and '.join(roles)})"
    if fds > m.hard:
        return (f"{what} need ~{fds} file descriptors, above its hard ulimit -n {m.hard}; raise it there (a nofile "
                f"line in /etc/security/limits.conf, or LimitNOFILE for its sshd) or keep every level <= "
                f"{max_level(m.hard)}")
    lo, hi = m.ports
    if ports > hi - lo + 1:
        return (f"{what} need ~{ports} source ports, more than its net.ipv4.ip_local_port_range {lo}-{hi} has; "
                f"`make hosts` widens it to 1024-65000, or add load hosts")
    if threads + THREAD_MARGIN > min(m.pid_max, m.threads_max):
        return (f"an app of {threads} platform threads needs more thread ids than its kernel.pid_max {m.pid_max} / "
                f"kernel.threads-max {m.threads_max}")
    return None


def max_level(hard):
    """The largest level a hard ulimit -n holds."""
    return (hard - FD_MARGIN) // 2


def apply(p, hard=None):
    """Raise ulimit -n as planned (root): for us and every child we start. Root without
    CAP_SYS_RESOURCE (eg, in a container) may not raise a hard limit: then say what to do."""
    if p.new_limit is None:
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (p.new_limit, p.new_limit))
    except (ValueError, OSError) as e:
        hard = hard if hard is not None else resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        raise UsageError(f"the app needs ~{p.new_limit} file descriptors at this level (2 per connection + "
                         f"{FD_MARGIN}), above ulimit -n's hard limit {hard}, and raising it failed ({e}: root "
                         f"without CAP_SYS_RESOURCE, eg, in a container); start the bench where the hard limit "
                         f"is higher (a privileged `ulimit -Hn {p.new_limit}`, a nofile line in "
                         f"/etc/security/limits.conf, or the container's nofile ulimit), or keep every level "
                         f"<= {max_level(hard)}")
