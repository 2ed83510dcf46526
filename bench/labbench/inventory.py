"""HOSTS=<an Ansible inventory> (issue 28): the host each role runs on, read with Ansible's own
`ansible-inventory --list` (ansible-core pinned in .tools/ansible, bench/tools/install.sh ansible), so
that an inventory means here exactly what it means to `make hosts`' playbook: INI or YAML, group_vars,
ansible_host/ansible_port/ansible_user/ansible_ssh_private_key_file/ansible_ssh_common_args.

Groups: app (one host), backend (one: remote-sleep; BACKEND=http), db (one: PostgreSQL; BACKEND=postgres
without DB_URL), loadgen (one or more: wrk, the connections split evenly; the first also runs psql and
pgbench, the DB's ceiling). Variables of the lab's own: `cpus` (taskset's
CPU list for the roles on that host), `lab_dir` (the repository there; default: this one's path) and
`lab_java` (java there; default: this machine's path), `lab_shared` (true: the host may hold more than
one of the run's groups, and the report says so).

Every value that reaches ssh or a remote shell is checked first (check_values: an address or host
name, a port, a user name, a CPU list in order, absolute paths), so that a bad inventory is an ERROR
naming the host and the value, exit 2, before anything starts; `--` ends ssh's options before every
destination, so that no inventory value can become one.

Every ssh goes through one master connection per host (ControlMaster), opened by the checks: a
command then costs a session, not a handshake (measured on the namespace hosts of
bench/tools/netns-hosts.sh, on the busy 2-core box: ~430 ms a fresh connection, ~150 ms a session
on the master).
"""
import hashlib
import ipaddress
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import hostrun, limits, place
from .checks import UsageError

_control_dir = []          # the masters' socket directory, once made (parse: never on import)

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]*")                  # an inventory host name: a file name here too
LABEL = r"[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?"
HOST_NAME = re.compile(rf"{LABEL}(\.{LABEL})*\.?")
USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
# ansible-inventory fails on an inventory it cannot parse, with Ansible's own reason, instead of
# warning and reading it as empty (then the run said "no host in group app")
STRICT = {"ANSIBLE_INVENTORY_UNPARSED_FAILED": "True", "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED": "True"}


def ansible_bin():
    """.tools/ansible/bin, installed once by bench/tools/install.sh ansible; UsageError when it cannot be."""
    r = subprocess.run(["bench/tools/install.sh", "ansible"], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise UsageError("HOSTS needs ansible-core in .tools/ansible, which could not be installed (see above); "
                         "fix that and run: bench/tools/install.sh ansible")
    return r.stdout.strip()


def read(path):
    """The inventory as ansible-inventory --list's JSON; UsageError when it cannot be read."""
    if not Path(path).exists():
        raise UsageError(f"HOSTS: {path} not found (an Ansible inventory: see docs/hosts.md)")
    r = subprocess.run([f"{ansible_bin()}/ansible-inventory", "-i", str(path), "--list"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **STRICT))
    if r.returncode != 0:                      # Ansible's words as it wrote them, below our line
        raise UsageError(f"HOSTS: ansible-inventory could not read {path}:\n{r.stderr.rstrip()}")
    return json.loads(r.stdout)


def control_dir():
    """The masters' socket directory (mode 0700), made on the first call: by parse, once the
    inventory has passed its checks; removed by close()."""
    if not _control_dir:
        _control_dir.append(tempfile.mkdtemp(prefix="lab-ssh-"))     # short: a socket path has ~100 bytes
    return _control_dir[0]


def is_address(text):
    """An IP address or a host name (RFC 1123 labels: never a leading '-', no space, no quote)."""
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return len(text) <= 253 and bool(HOST_NAME.fullmatch(text))


def cpu_list(value):
    """The `cpus` variable as taskset's text: Ansible reads cpus=0,2 on a host line as a list."""
    return ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def check_values(name, hv):
    """UsageError naming the host and the value when one of its variables could reach ssh or a remote
    shell as something else than it says: an option, a second word, a command."""
    def bad(what, value, want):
        raise UsageError(f"HOSTS: host {name}: {what} {value!r} is not {want}")
    if not NAME.fullmatch(name):
        bad("the name", name, "a host name (letters, digits, '.', '_', ':', '-'; not first '-' or '.')")
    address = str(hv.get("ansible_host", name))
    if not is_address(address):
        bad("ansible_host" if "ansible_host" in hv else "the name (no ansible_host)", address, "an IP address or a host name")
    port = str(hv.get("ansible_port", 22))
    if not (port.isdigit() and 1 <= int(port) <= 65535):
        bad("ansible_port", hv.get("ansible_port"), "a port number (1-65535)")
    if "ansible_user" in hv and not USER.fullmatch(str(hv["ansible_user"])):
        bad("ansible_user", hv["ansible_user"], "a user name")
    cpus = cpu_list(hv.get("cpus", ""))
    if cpus and (not place.CPU_LIST.fullmatch(cpus)
                 or any(int(a) > int(b) for a, b in re.findall(r"([0-9]+)-([0-9]+)", cpus))):
        bad("cpus", cpus, "a CPU list like 1, 0-3 or 0,2-3 (each range low to high)")
    for key in ("lab_dir", "lab_java"):
        if key in hv and not (str(hv[key]).startswith("/") and "\n" not in str(hv[key])):
            bad(key, hv[key], "an absolute path")
    for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):      # ssh options of the user's own
        try:
            shlex.split(str(hv.get(key, "")))
        except ValueError as e:
            bad(key, hv[key], f"ssh options in shell words ({e})")


def host_of(name, hv, here, control="/nonexistent", groups=()):
    """A place.Host from one host's variables (check_values' first), its masters' sockets in `control`."""
    check_values(name, hv)
    address = str(hv.get("ansible_host", name))
    ssh = ["ssh"]
    # The inventory's own ssh options first: for an option given twice ssh takes the first, so these
    # win over the lab's defaults below (eg, a shorter ServerAliveInterval).
    for key in ("ansible_ssh_common_args", "ansible_ssh_extra_args"):
        ssh += shlex.split(str(hv.get(key, "")))
    ssh += ["-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
            # a host lost mid-run ends its ssh within ~10-20 s, and its cell FAILS with the reason
            "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=5",
            # a master idle this long ends: during a run each host holds a session (its directory's,
            # place.run_dir_on); after a bench killed with -9, its masters end this soon after its roles
            "-o", "ControlMaster=auto", "-o", f"ControlPath={control}/%C", "-o", "ControlPersist=10"]
    if hv.get("ansible_port"):
        ssh += ["-p", str(hv["ansible_port"])]
    if hv.get("ansible_ssh_private_key_file"):
        ssh += ["-i", str(hv["ansible_ssh_private_key_file"])]
    user = hv.get("ansible_user")
    ssh += ["--", f"{user}@{address}" if user else address]       # --: the destination is never an option
    return place.Host(name=name, address=address, ssh=tuple(ssh), cpus=cpu_list(hv.get("cpus", "")),
                      lab_dir=str(hv.get("lab_dir", here)), java=str(hv.get("lab_java", "")),
                      port=int(hv.get("ansible_port", 22)), groups=tuple(groups))


def needed(backend, db_url):
    """The groups a run places: the app and the load always; remote-sleep's host for BACKEND=http, the
    db host for a PostgreSQL of the bench's own (with DB_URL the server is the user's, placed by them)."""
    server = ["backend"] if backend == "http" else [] if db_url else ["db"]
    return ["app", *server, "loadgen"]


def parse(path, s_backend="http", here=None, db_url=""):
    """HOSTS -> {role: [Host]} for the groups the run needs; UsageError naming what is wrong."""
    here = here or os.getcwd()
    inv = read(path)
    hostvars = inv.get("_meta", {}).get("hostvars", {})
    names = {}
    wanted = needed(s_backend, db_url)
    for group in wanted:
        names[group] = inv.get(group, {}).get("hosts", [])
        if not names[group]:
            raise UsageError(f"HOSTS: {path} has no host in group '{group}' (BACKEND={s_backend} needs "
                             f"{', '.join(wanted)}; see docs/hosts.md)")
        if group != "loadgen" and len(names[group]) > 1:
            raise UsageError(f"HOSTS: group '{group}' has {len(names[group])} hosts ({', '.join(names[group])}); "
                             f"the lab runs one {group}")
    uses = {}                          # address -> [(name, group)]: one box, whatever its names
    for group, ns in names.items():
        for n in ns:
            check_values(n, hostvars.get(n, {}))
            uses.setdefault(str(hostvars.get(n, {}).get("ansible_host", n)), []).append((n, group))
    for address, at in uses.items():
        if len(at) > 1 and not all(shared(hostvars.get(n, {})) for n, _ in at):
            raise UsageError(f"HOSTS: {address} is {' and '.join(f'{n} in {g}' for n, g in at)}: its roles would "
                             f"share its CPUs and measure each other; give each its own host, or set lab_shared=true "
                             f"for {' and '.join(sorted({n for n, _ in at}))} (the report then says so)")
    control = control_dir()            # every host checked: only now anything on disk
    return {g: [host_of(n, hostvars.get(n, {}), here, control,
                        [g2 for _, g2 in uses[str(hostvars.get(n, {}).get("ansible_host", n))]]) for n in ns]
            for g, ns in names.items()}


def shared(hv):
    """The host's explicit opt-in to hold more than one of the run's roles (lab_shared=true)."""
    return str(hv.get("lab_shared", "")).lower() in ("true", "yes", "1")


def plain_ssh(h):
    """h's ssh command without the run's own master connection and keep-alives: what a user types to check."""
    own = ("ControlMaster", "ControlPath", "ControlPersist", "ServerAliveInterval", "ServerAliveCountMax")
    pairs, i = [], 0
    while i < len(h.ssh):
        if h.ssh[i] == "-o" and i + 1 < len(h.ssh):
            if not h.ssh[i + 1].startswith(own):
                pairs += [h.ssh[i], h.ssh[i + 1]]
            i += 2
        else:
            pairs.append(h.ssh[i])
            i += 1
    return pairs


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def roles_by_host(hosts):
    """{Host: [its roles]} from {role: [Host]}, each host once, in the groups' order."""
    out = {}
    for role, hs in hosts.items():
        for h in hs:
            out.setdefault(h, []).append(role)
    return out


def check(hosts, inventory_path, java_here, jars, loadgens=("wrk",), postgres=False, app_jar=""):
    """Every host reachable with its key, and what its roles need there (the repository's
    bench/tools/host-run.sh; wrk on a load host; java and the same jars as here on the app and backend
    hosts; PostgreSQL on the db host, and its client programs on the first load host when
    `postgres`; its `cpus` there). UsageError naming the host and the command that fixes it. Opens
    each host's master, and once every host has passed, makes its private directory for the run."""
    fix = f"make hosts HOSTS={inventory_path}" + (f" APP_JAR={app_jar}" if app_jar else "")
    roles_of = roles_by_host(hosts)
    for h, roles in roles_of.items():
        what = f"host {h.name} ({h.address}, {' and '.join(roles)})"
        rc, out = place.remote_run(h, "true")
        if rc != 0:
            why = out.strip().splitlines()[-1] if out.strip() else f"ssh exited {rc}"
            raise UsageError(f"HOSTS: {what} cannot be reached: {why}; check with: {shlex.join(plain_ssh(h))} true")
        java = h.java or java_here
        needs = {"bench/tools/host-run.sh": f"test -x {shlex.quote(h.lab_dir)}/bench/tools/host-run.sh"}
        if "loadgen" in roles and "wrk" in loadgens:
            needs["wrk"] = "command -v wrk"
        if "loadgen" in roles and "vegeta" in loadgens:
            needs[".tools/bin/vegeta"] = f"test -x {shlex.quote(h.lab_dir)}/.tools/bin/vegeta"
        if "app" in roles or "backend" in roles:
            needs[java] = f"test -x {shlex.quote(java)}"
        pg_sh = f"{shlex.quote(h.lab_dir)}/bench/tools/pg.sh"
        if "db" in roles:       # the server, and pgusage.py to read its CPU and memory there
            needs["PostgreSQL (bench/tools/pg.sh bindir)"] = f"{pg_sh} bindir"
            needs["python3 and bench/labbench/pgusage.py"] = (f"python3 {shlex.quote(h.lab_dir)}/bench/labbench/pgusage.py 1")
        if postgres and h == hosts["loadgen"][0]:        # psql and pgbench: the DB's facts and ceiling
            needs["psql and pgbench (bench/tools/pg.sh bindir)"] = f"{pg_sh} bindir"
        missing = [name for name, test in needs.items() if place.remote_run(h, test)[0] != 0]
        if missing:
            raise UsageError(f"HOSTS: on {what}: {', '.join(missing)} not found (lab_dir {h.lab_dir}); "
                             f"provision it with: {fix}")
        # host-run.sh too: the bench and it speak one protocol (the environment, the heartbeat)
        wanted = {hostrun.SCRIPT: hostrun.SCRIPT, **{j: here for role in roles for j, here in jars.get(role, {}).items()}}
        rc, out = place.remote_run(h, f"cd {shlex.quote(h.lab_dir)} && sha256sum {' '.join(map(shlex.quote, wanted))}")
        theirs = dict(reversed(line.split(None, 1)) for line in out.splitlines() if rc == 0 and "  " in line)
        stale = [j for j, here in wanted.items() if theirs.get(j, "").strip() != _sha(here)]
        if stale:
            raise UsageError(f"HOSTS: on {what}: {', '.join(stale)} missing or not the same as here (this "
                             f"machine's build); copy them with: {fix}")
        if h.cpus:
            rc, out = place.remote_run(h, f"taskset -c {shlex.quote(h.cpus)} true")
            if rc != 0:
                raise UsageError(f"HOSTS: host {h.name}: cpus={h.cpus} cannot pin there: {out.strip() or f'exit {rc}'}")
    for h in roles_of:
        d, why = hostrun.run_dir(h)
        if d is None:
            raise UsageError(f"HOSTS: host {h.name}: the run's directory could not be made there: {why}")


def check_limits(hosts, max_conns, max_threads, backend):
    """Each host's own limits (ulimit -n, source ports, thread ids: limits.READ_ON_HOST, read there)
    against what its roles need at the largest level; UsageError naming the host and the limit.
    Returns {host name: limits.Machine}, for the environment section. vegeta's rate has no
    connection count of its own: a wrk share is what it is checked against."""
    roles_of = roles_by_host(hosts)
    share = -(-max_conns // len(hosts["loadgen"]))          # the first load host's, the largest
    out = {}
    for h, roles in roles_of.items():
        rc, text = place.remote_run(h, limits.READ_ON_HOST)
        m = limits.parse_host(text) if rc == 0 else None
        if m is None:
            raise UsageError(f"HOSTS: host {h.name}: its limits could not be read ({text.strip()[:200] or f'exit {rc}'})")
        why = limits.check_host(m, roles, max_conns, share, max_threads, backend)
        if why:
            raise UsageError(f"HOSTS: on host {h.name} ({h.address}): {why}")
        out[h.name] = m
    return out


def limits_text(m):
    """A host's limits in one phrase for its line in the environment section."""
    return (f"ulimit -n {m.soft}/{m.hard}, source ports {m.ports[0]}-{m.ports[1]}, somaxconn {m.somaxconn}")


def close():
    """Delete the run's directory on every host, then end every host's master connection (they would
    outlive the run by ControlPersist) and remove their socket directory."""
    hostrun.close_dirs()
    if not _control_dir:
        return
    d = _control_dir.pop()
    for sock in Path(d).glob("*"):
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "--", "x"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(d, ignore_errors=True)


def facts(hosts, java_here, host_limits=None):
    """Each host once: its CPUs, kernel, JDK and limits (check_limits'), for the environment section."""
    out = []
    for h in roles_by_host(hosts):
        java = h.java or java_here
        rc, text = place.remote_run(h, f"nproc; uname -r; {shlex.quote(java)} -version 2>&1 | head -1")
        lines = text.splitlines() if rc == 0 else []
        cpus = lines[0] if lines else "?"
        lim = (host_limits or {}).get(h.name)
        files = place.run_dir_on(h)
        out.append(f"{h.name}: {cpus} CPUs{f' (pinned to {h.cpus})' if h.cpus else ''}, kernel "
                   f"{lines[1] if len(lines) > 1 else '?'}, {lines[2] if len(lines) > 2 else 'java ?'}"
                   + (f", {limits_text(lim)}" if lim else "") + (f", the run's files in {files}" if files else ""))
    return out


def round_trip_ms(hosts):
    """From each load host to the app's host: the fastest of 10 TCP connects to its sshd (bash's
    /dev/tcp, timed by bash's own EPOCHREALTIME, µs: no process started in between), in ms: {host name: ms}."""
    app = hosts["app"][0]
    tcp = shlex.quote(f"/dev/tcp/{app.address}/{app.port}")
    script = (f"best=; for i in 1 2 3 4 5 6 7 8 9 10; do t0=${{EPOCHREALTIME/./}}; exec 3<>{tcp} && "
              f"t1=${{EPOCHREALTIME/./}}; exec 3>&-; d=$(( t1 - t0 )); "
              f"if [ -z \"$best\" ] || [ $d -lt $best ]; then best=$d; fi; done; echo $best")
    out = {}
    for h in hosts["loadgen"]:
        rc, text = place.remote_run(h, f"bash -c {shlex.quote(script)}")
        out[h.name] = round(int(text.strip()) / 1000, 3) if rc == 0 and text.strip().isdigit() else None
    return out

