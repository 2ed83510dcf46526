"""Where a role runs: the one seam every role's command goes through (issue 28). Today every role
runs on this machine; CPUSETS pins roles to CPUs of their own with taskset, so that the app's CPU
is the app's: on 2 shared cores wrk's threads preempt the app's and its CPU per request rises with
them (docs/traps.md #38).

Roles: app (the app under test), backend (remote-sleep, PostgreSQL), loadgen (wrk, vegeta, pgbench,
the slow clients). CPUSETS="app=1 rest=0" gives the app CPU 1 and every other role CPU 0; "rest"
names the roles not given a set of their own. A CPU list is taskset's: "0", "2-3", "0,2-3".
"""
import os
import re
import shutil

from .checks import UsageError

ROLES = ("app", "backend", "loadgen")
CPU_LIST = re.compile(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*")

_cpus = {}      # role -> CPU list text, as parsed from CPUSETS; empty: no pinning


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
    if not text.strip():
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


def configure(cpusets):
    """Set the placement for this run (main, once the settings are parsed)."""
    _cpus.clear()
    _cpus.update(cpusets)


def command(role, cmd):
    """cmd as it runs for `role`: under taskset when CPUSETS pins the role."""
    assert role in ROLES, role
    cpus = _cpus.get(role)
    return ["taskset", "-c", cpus, *cmd] if cpus else list(cmd)


def cpu_count(role):
    """How many CPUs the role may use: its set's size, None when not pinned."""
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
