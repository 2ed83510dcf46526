"""Where a role runs: the one seam every role's command goes through (issue 28). Unset, every role
runs on this machine; CPUSETS pins roles to CPUs of their own with taskset, so that the app's CPU
is the app's: on 2 shared cores wrk's threads preempt the app's and its CPU per request rises with
them (docs/traps.md #38). HOSTS=<an Ansible inventory> puts each role on a host of its own: the
bench then starts, stops and reads it there over ssh (bench/tools/host-run.sh), and reaches the app and
remote-sleep at their hosts' addresses. The runner, the scenarios and the report never ask where a
role runs: they call start/run/address/ticks here.

Roles: app (the app under test), backend (remote-sleep), db (PostgreSQL: on this machine it is the
backend's, CPUs included), loadgen (wrk, vegeta, pgbench and psql, the slow clients).
CPUSETS="app=1 rest=0" gives the app CPU 1 and every other role CPU 0; "rest" names the roles not
given a set of their own. A CPU list is taskset's: "0", "2-3", "0,2-3". With HOSTS a host's `cpus`
variable does the same on that host.
"""
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import hostrun, procs
from .checks import UsageError

ROLES = ("app", "backend", "loadgen")             # CPUSETS' roles
PLACED = ("app", "backend", "db", "loadgen")      # HOSTS' groups: where a role can run
CPU_LIST = re.compile(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*")

_cpus = {}      # role -> CPU list text, as parsed from CPUSETS; empty: no pinning
_hosts = {}     # role -> [Host], as parsed from HOSTS; empty: every role on this machine
_started = {}   # a remote role's process (its ssh) -> (its Host, its log): where to read its pid
_lost = set()   # hosts whose ssh ended 255 mid-run (lost())
_made = set()   # (Host, its run directory) whose private tmp private_tmp() has made


@dataclass(frozen=True)
class Host:
    """Where a role runs. `ssh` is the command that reaches it, () for this machine."""
    name: str
    address: str
    ssh: tuple = ()
    cpus: str = ""              # taskset's CPU list for the roles on it ("": every CPU)
    lab_dir: str = ""           # the repository there (bench/tools/host-run.sh, the jars)
    java: str = ""              # the JDK's java there ("": the same path as here)
    port: int = 22              # its sshd's
    groups: tuple = field(default=(), compare=False)

    @property
    def remote(self):
        return bool(self.ssh)


LOCAL = Host("local", "127.0.0.1")


def cpus_of(text):
    """The CPUs a taskset list names, eg, "0,2-3" -> {0, 2, 3}."""
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def parse(text, available=None):
    """CPUSETS -> {role: CPU list} (every role, or {} when unset); UsageError when a role is
    unknown or twice, a list is malformed or names a CPU this process may not use, or the app
    shares a CPU with another role (then its CPU is not its own)."""
    if not text.strip() or text.strip() == "none":    # none: unpinned, where a planner would pin (cost)
        return {}
    if shutil.which("taskset") is None:
        raise UsageError("CPUSETS needs taskset, which is not installed: apt-get install util-linux")
    available = os.sched_getaffinity(0) if available is None else available
    given = {}
    for item in text.split():
        role, eq, cpus = item.partition("=")
        if not eq or role not in (*ROLES, "rest"):
            raise UsageError(f"CPUSETS: '{item}' is not ROLE=CPUS (roles: {', '.join(ROLES)}, rest)")
        if role in given:
            raise UsageError(f"CPUSETS: {role} is there twice")
        if not CPU_LIST.fullmatch(cpus) or any(int(a) > int(b) for a, b in re.findall(r"([0-9]+)-([0-9]+)", cpus)):
            raise UsageError(f"CPUSETS: '{cpus}' ({role}) is not a CPU list like 1, 0-3 or 0,2-3")
        missing = sorted(cpus_of(cpus) - set(available))
        if missing:
            raise UsageError(f"CPUSETS: {role}={cpus}: CPU {', '.join(map(str, missing))} is not one this "
                             f"machine lets the bench use ({compact(available)})")
        given[role] = cpus
    rest = given.pop("rest", None)
    out = {role: given.get(role, rest) for role in ROLES if given.get(role, rest)}
    if "app" in out:
        shared = [r for r in out if r != "app" and cpus_of(out[r]) & cpus_of(out["app"])]
        if shared:
            raise UsageError(f"CPUSETS: the app's CPUs ({out['app']}) are also {', '.join(shared)}'s: "
                             f"give the other roles CPUs of their own, eg, CPUSETS=\"app=1 rest=0\"")
    return out


def compact(cpus):
    """{0, 1, 2, 5} -> "0-2,5"."""
    cpus, runs = sorted(cpus), []
    for c in cpus:
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)


def configure(cpusets, hosts=None):
    """Set the placement for this run (main, once the settings are parsed): CPUSETS' {role: CPUs},
    and HOSTS' {role: [Host]} (None: every role here)."""
    _cpus.clear()
    _cpus.update(cpusets)
    _hosts.clear()
    _hosts.update(hosts or {})
    _lost.clear()
    _made.clear()


def command(role, cmd, i=0, env=None):
    """cmd as it runs for `role` (its i-th host): under taskset when CPUSETS pins the role; through
    ssh and bench/tools/host-run.sh (with the host's `cpus`; `env` goes in on its stdin: hostrun.py)
    when HOSTS puts it elsewhere."""
    assert role in PLACED, role
    h = host(role, i)
    if h.remote:
        return hostrun.wrapped(h, cmd, env)
    cpus = _cpus.get("backend" if role == "db" else role)
    return ["taskset", "-c", cpus, *cmd] if cpus else list(cmd)


def shown(role, cmd, i=0):
    """cmd as a run's records show it: as it runs here (taskset included), or "[host] cmd"."""
    h = host(role, i)
    return f"[{h.name}] {shlex.join(cmd)}" if h.remote else " ".join(command(role, cmd))


def start(role, cmd, out, env=None, i=0):
    """Start `role`'s cmd where the role runs; its output (ssh's, for a remote role) in `out`; `env`
    added to its environment (on a host: sent on its stdin, in no command line)."""
    h = host(role, i)
    if h.remote:
        p = hostrun.start(h, cmd, out, env)
        _started[p] = (h, Path(out))
        return p
    return procs.start(command(role, cmd), out=out, env=dict(os.environ, **env) if env else None)


def run(role, cmd, out, env=None, i=0):
    """Start and wait: the command's exit code (ssh's 255: the host was not reached or was lost)."""
    return wait(start(role, cmd, out, env, i))


def wait(p):
    """Wait for a process start() started: its exit code (ssh's 255: the host was not reached or was lost)."""
    rc = procs.wait(p)
    _started.pop(p, None)          # ended: nothing reads its pid again (a warm-up starts hundreds)
    return rc


def placed():
    """True when HOSTS puts the roles on hosts of their own."""
    return bool(_hosts)


def placed_roles():
    """The roles HOSTS placed in this run ([] without HOSTS)."""
    return [r for r in PLACED if r in _hosts]


def hosts(role):
    """The role's hosts ([LOCAL] without HOSTS); loadgen may have several."""
    return _hosts.get(role) or [LOCAL]


def host(role, i=0):
    return hosts(role)[i]


def address(role):
    """The address a role's servers listen on and are reached at."""
    return host(role).address


def java(role, here):
    """The java binary for a role's JVM: `here` (this machine's), or the host's `lab_java`."""
    h = host(role)
    return h.java or here if h.remote else here


def lost(h=None):
    """Mark host h lost (its ssh ended 255 mid-run: unreachable); the hosts so marked, without h.
    A lost host is not asked again in this run: each call would wait its ssh's connect timeout."""
    if h is not None:
        _lost.add(h)
    return set(_lost)


def lost_names(role, indices=None):
    """The names of the role's hosts (those at `indices`, default all) lost earlier in this run."""
    hs = hosts(role)
    return [h.name for h in (hs if indices is None else [hs[i] for i in indices]) if h in _lost]


def remote_run(h, command, timeout=20):
    """A short command on host h (its shell's words): (exit code, stdout text). ssh's own failure
    (255) or no answer in `timeout` marks the host lost, as a role's lost ssh does: its CPU would
    otherwise read 0 and every later call would wait for ssh's timeouts again."""
    if h in _lost:
        return 255, f"host {h.name} was lost earlier in this run"
    with procs.signals_held():     # a group of its own: a Ctrl-C at the terminal is the bench's to act on
        p = subprocess.Popen([*h.ssh, command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=procs.in_child)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        lost(h)
        return 255, ""
    except BaseException:
        # Stopped mid-command (Ctrl-C, TERM): a read of /proc or a mkdir takes ms, so let it end
        # rather than cut its ssh, which left the command running on the host after the bench had
        # gone (hosts-test, 2026-11-27); past FINISH_S it is killed.
        try:
            p.communicate(timeout=FINISH_S)
        except BaseException:
            p.kill()
            p.wait()
        raise
    if p.returncode == 255:
        lost(h)
    return p.returncode, out if p.returncode == 0 else err


FINISH_S = 3.0     # how long a short remote command may take to end once the bench is stopping


def remote_pid(p):
    """The pid bench/tools/host-run.sh gave a remote role's command, from the first line of its log."""
    h, log = _started[p]
    for line in procs.read_lines(log)[:5]:
        m = re.match(r"host-run: pid (\d+)", line)
        if m:
            return int(m.group(1))
    return None


def pid(p):
    """The pid of a process start() started, on its host (a remote role's: host-run's, from its log)."""
    return remote_pid(p) if p in _started else p.pid


def beside(p, words, timeout=60):
    """A short command on the host of the process p runs on, not pinned to its CPUs, so that it does
    not take the role's CPU (perf counting the app, a read of its /proc): (exit code, its stdout and
    stderr as text)."""
    if p in _started:
        return remote_run(_started[p][0], f"{shlex.join(words)} 2>&1", timeout=timeout)
    r = subprocess.run(words, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout


def ticks(p):
    """user+system CPU ticks process p (started by start()) has used so far, on its host."""
    if p not in _started:
        return procs.proc_ticks(p)
    pid = remote_pid(p)
    rc, out = remote_run(_started[p][0], f"cat /proc/{pid}/stat") if pid else (1, "")
    return procs.stat_ticks(out) if rc == 0 else 0


def cpu_s(p):
    """The CPU seconds process p (started by start()) has used so far, on its host."""
    return ticks(p) / procs.CLK_TCK


def box_ticks(role, i=0):
    """(busy, total, steal) jiffies of the role's host (procs.box_ticks, read there)."""
    return box_ticks_of(host(role, i))


def box_ticks_of(h):
    """A host's (busy, total, steal): its whole box, or where `cpus` pins its roles, those CPUs only:
    what its roles could use (on the namespace hosts, which share one box, the only reading that is
    each host's own)."""
    if not h.remote:
        return procs.box_ticks()
    if h.cpus:
        rc, out = remote_run(h, "grep '^cpu[0-9]' /proc/stat")
        return procs.cpus_ticks(out, cpus_of(h.cpus)) if rc == 0 else (0, 0, 0)
    rc, out = remote_run(h, "head -1 /proc/stat")
    return procs.cpu_line_ticks(out) if rc == 0 else (0, 0, 0)


def sampler(p):
    """The peak-RSS-and-threads sampler of a started process, on its host (procs.Sampler here)."""
    return RemoteSampler(p) if p in _started else procs.Sampler(p.pid)


class RemoteSampler(procs.Sampler):
    """procs.Sampler for a process on another host: one ssh that prints its /proc/PID/status lines
    VmRSS and Threads every 0.25 s (a process per sample would cost the bench's host more than the
    reading), read on a thread of ours into the same peaks. The loop there ends when its ssh goes
    (its next write fails) or the process does."""

    def __init__(self, p, interval_s=0.25):
        super().__init__(None, interval_s)
        self.host, self.pid = _started[p][0], remote_pid(p)
        self._proc = None

    def start(self):
        loop = (f"while grep -E '^(VmRSS|Threads):' /proc/{self.pid}/status; do echo .; sleep {self.interval_s}; done")
        with procs.signals_held():         # a child of ours like any other: stop_all() stops it too
            self._proc = subprocess.Popen([*self.host.ssh, loop], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, text=True, preexec_fn=procs.in_child)
            procs.CHILDREN.append(self._proc)
        return super().start()

    def _run(self):
        text = ""
        for line in self._proc.stdout:
            if line.strip() == ".":
                self.note(text)
                text = ""
            else:
                text += line

    def stop(self):
        procs.stop(self._proc)
        self._thread.join(5)
        return self.peak_rss_kb, self.peak_threads


def ran_cpu_s(log):
    """A finished remote command's CPU seconds: bench/tools/host-run.sh's `times` (children's line) at
    the end of its log; None when it is not there."""
    lines = procs.read_lines(Path(log))
    for k, line in enumerate(lines):
        if line.startswith("host-run: exit ") and k + 2 < len(lines):
            t = re.findall(r"(\d+)m([0-9.]+)s", lines[k + 2])
            if len(t) == 2:
                return round(sum(int(m) * 60 + float(sec) for m, sec in t), 2)
    return None


def fetch(role, i, remote_path, local_path):
    """Copy a file a role wrote on its host here (bytes as they are), and only once it is written
    here (synced, then renamed into place), delete it there; False when it is not there."""
    h = host(role, i)
    if h in _lost:
        return False
    try:
        r = subprocess.run([*h.ssh, f"cat -- {shlex.quote(remote_path)}"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120)
    except subprocess.TimeoutExpired:
        return False
    if r.returncode != 0:
        return False
    local = Path(local_path)
    part = local.with_name(local.name + ".part")
    with open(part, "wb") as f:
        f.write(r.stdout)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, local)
    remote_run(h, f"rm -f -- {shlex.quote(remote_path)}")
    return True


def run_dir_on(h):
    """Host h's private directory for this run (hostrun.run_dir: made once, deleted at the run's
    end, Ctrl-C included); None when it could not be made (the host lost)."""
    return None if h in _lost else hostrun.run_dir(h)[0]


def private_tmp(role, run_dir):
    """The role's JVM's java.io.tmpdir: a directory of this run's that only the bench's user can enter
    (Tomcat's work directory, async-profiler's library, a profile's JFR dump go there): `tmp` in the run's
    directory here, or in the host's private run directory, deleted with it. In /tmp a KILLed app
    (as every cell ends) left them for good, under names another user could make first (issue 40)."""
    h = host(role)
    if h.remote:
        d = run_dir_on(h)
        if d and (h, d) not in _made and remote_run(h, f"mkdir -m 700 -p {shlex.quote(d + '/tmp')}")[0] == 0:
            _made.add((h, d))            # once a run per host: not an ssh round trip at every app start
        return f"{d}/tmp" if (h, d) in _made else None
    d = Path(run_dir).resolve() / TMP
    d.mkdir(mode=0o700, exist_ok=True)
    return str(d)


TMP = "tmp"       # private_tmp's directory in a run's: removed at the run's end (main.clean_up, leftovers)


def remote_file(role, i, name):
    """A path for a run's file `name` on the role's i-th host, in its private directory; None when
    there is none."""
    d = run_dir_on(host(role, i))
    return f"{d}/{name}" if d else None


def put_text(role, i, remote_path, text):
    """Write a small text file on the role's host (eg, vegeta's targets); False when it could not."""
    return remote_run(host(role, i), f"printf %s {shlex.quote(text)} > {shlex.quote(remote_path)}")[0] == 0


def cpu_count(role):
    """How many CPUs the role may use: its set's size (CPUSETS, or its host's `cpus`), None when not pinned."""
    if placed():
        return len(cpus_of(host(role).cpus)) if host(role).cpus else None
    return len(cpus_of(_cpus[role])) if role in _cpus else None


def jvm_flags(role, java_opts):
    """JVM flags a pinned role needs to stay the JVM it would be unpinned: on fewer than 2 CPUs
    HotSpot's ergonomics pick Serial GC instead of G1 (not a "server-class machine"), so a JVM pinned
    to 1 CPU would be measured with another collector; G1 is asked for unless JAVA_OPTS names one."""
    n = cpu_count(role)
    if n is None or n >= 2 or any(o.startswith("-XX:+Use") and o.endswith("GC") for o in java_opts):
        return []
    return ["-XX:+UseG1GC"]


def jvm_note(java_opts):
    """What jvm_flags added, for the environment line ('' when nothing)."""
    pinned = [r for r in ("app", "backend") if jvm_flags(r, java_opts)]
    return (f"; {' and '.join(pinned)} JVM{'s' if len(pinned) > 1 else ''} with -XX:+UseG1GC (on 1 CPU HotSpot "
            f"would pick Serial GC)") if pinned else ""


def describe():
    """One line for the environment section: each role's CPUs, or '' when nothing is pinned."""
    return ", ".join(f"{role} on CPU {_cpus[role]}" for role in ROLES if role in _cpus)


def describe_hosts():
    """One line for the environment section: each role's host(s), address and CPUs; '' without HOSTS."""
    def one(h):
        return f"{h.name} {h.address}" + (f" CPU {h.cpus}" if h.cpus else "")
    shared = {h.name: h.groups for role in PLACED for h in _hosts.get(role, []) if len(h.groups) > 1}
    return "; ".join([f"{role} on {', '.join(one(h) for h in hosts(role))}" for role in PLACED if role in _hosts]
                     + [f"{n} shared by {' and '.join(gs)} (lab_shared)" for n, gs in shared.items()])
