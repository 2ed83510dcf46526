"""Check the machine before a run: tools, JDK, free ports, `ulimit -n`, up-to-date jars.

Anything wrong here is the environment's fault, not a setting's: Fatal (ERROR, exit 1) with
what to do about it.
"""
import os
import re
import resource
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import foreign, place, procs, web
from .catalog import MODULE_OF
from .checks import Fatal

SLOWCLIENTS = Path("bench/tools/slowclients.py")   # the side load of the slow-* scenarios


@dataclass
class Machine:
    java: str           # the java binary every server runs on
    java_home: str
    java_version: str   # the first line of `java -version`
    java_major: int
    nofile: str         # ulimit -n after raising it ("unlimited" or a number)
    hard_nofile: str
    vegeta: str = ""    # the pinned vegeta binary, when LOADGEN has vegeta
    pg_bindir: str = "" # BACKEND=postgres: where PostgreSQL's programs are (psql, pgbench, initdb)
    charts: str = ""    # the python of .tools/venv (matplotlib), for a sweep


def check(s):
    """Every check, in order; builds the jars when they are stale. Returns what was found."""
    ensure_tools(["wrk"])
    java_home = subprocess.run(["bench/tools/java-home.sh"], stdout=subprocess.PIPE, text=True).stdout.strip()
    if not java_home:
        raise Fatal("no JDK: set JAVA_HOME")
    os.environ["JAVA_HOME"] = java_home          # the build and every server use it
    java = f"{java_home}/bin/java"
    try:
        lines = subprocess.run([java, "-version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True).stdout.splitlines()
    except OSError as e:
        raise Fatal(f"{java}: {e.strerror} (set JAVA_HOME)")
    version = lines[0] if lines else "?"
    m = re.search(r'version "(\d+)', version)
    major = int(m.group(1)) if m else 0
    if major < 17:
        raise Fatal(f"{java} is '{version}'; the lab needs JDK 17+ (set JAVA_HOME)")
    if any(sc != "call" for sc in s.scenarios) and not SLOWCLIENTS.exists():
        raise Fatal(f"{SLOWCLIENTS} not found: SCENARIO={' '.join(s.scenarios)} needs it for its slow clients")

    for name, port, role in (("REMOTE_PORT", s.remote_port, "backend"), ("APP_PORT", s.app_port, "app"),
                             ("ADMIN_PORT", s.admin_port, "app")):
        if web.port_open(port, place.address(role)):
            raise Fatal(f"port {port} ({name}) is in use on {place.address(role)}: stop what holds it or set {name}")

    nofile, hard = raise_nofile()      # limits.plan() has checked it against the largest level

    vegeta = ensure_vegeta() if "vegeta" in s.loadgens else ""
    # with HOSTS, PostgreSQL and its programs are on the hosts (inventory.check looks there)
    pg_bindir = ensure_postgresql() if s.backend == "postgres" and not s.hosts else ""
    # the planners that draw charts; each through install.sh's lock: a venv being installed beside the run
    # (the smoke test's own install, on a fresh clone) has a python but not yet its matplotlib
    charts = ensure_matplotlib() if s.mode in ("sweep", "degrade", "cost") else ""
    if s.mode == "cost" and not s.hosts:          # with HOSTS, make hosts installs it on the app's host
        ensure_perf()
    build_if_stale(s, java_home)
    return Machine(java, java_home, version, major, nofile, hard, vegeta=vegeta, charts=charts, pg_bindir=pg_bindir)


def ensure_matplotlib():
    """The sweep, SCENARIO=degrade and SCENARIO=cost draw their charts with the pinned matplotlib in .tools/venv, installed once by
    bench/tools/install.sh (which says what to do when python3-venv or pip is missing)."""
    r = subprocess.run(["bench/tools/install.sh", "matplotlib"], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise Fatal("the charts need matplotlib in .tools/venv, which could not be installed (see above); "
                    "fix that and run: bench/tools/install.sh matplotlib")
    return r.stdout.strip()


def ensure_postgresql():
    """BACKEND=postgres needs PostgreSQL's programs (pgbench for the ceiling, psql; initdb and pg_ctl
    for a cluster of the bench's own): bench/tools/install.sh installs Debian's package where it can
    (root with apt-get), else says which command to run."""
    r = subprocess.run(["bench/tools/install.sh", "postgresql"], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise Fatal("BACKEND=postgres needs PostgreSQL's programs (pgbench, psql, initdb), which could not be "
                    "installed (see above); Debian: apt-get install -y postgresql")
    return r.stdout.strip().splitlines()[-1]


def ensure_perf():
    """SCENARIO=cost counts the app's CPU, syscalls and context switches with perf: installed here
    where it can be (bench/tools/install.sh perf); where it cannot, those counters read "—" with the
    reason in each window, and the JVM's own still count."""
    r = subprocess.run(["bench/tools/install.sh", "perf"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or ["perf could not be installed"])[-1].removeprefix("ERROR: ")
        print(f"== perf: {why}: the cost card's CPU, syscalls and context switches will read —")


def ensure_vegeta():
    """The pinned vegeta, built once into .tools/bin by bench/tools/install.sh (which says what to
    do when Go is missing)."""
    r = subprocess.run(["bench/tools/install.sh", "vegeta"], stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise Fatal("LOADGEN has vegeta, which could not be installed (see above); or run with LOADGEN=wrk")
    return r.stdout.strip()


def ensure_tools(tools):
    """Missing tools: install Debian's packages when we are root with apt, else say how."""
    missing = [t for t in tools if not shutil.which(t)]
    if not missing:
        return
    names = " ".join(missing)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {names} with apt-get")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")   # no prompt: it has no terminal
        if procs.run(["apt-get", "update", "-qq"], env=env) != 0 or \
                procs.run(["apt-get", "install", "-y", "-qq"] + missing, out="/dev/null", env=env) != 0:
            raise Fatal(f"apt-get install {names} failed")
    else:
        raise Fatal(f"{names} not found: install it (Debian/Ubuntu: sudo apt-get install -y {names})")


def raise_nofile():
    """Every connection is a file descriptor in wrk, in the app (plus its client connections) and
    in remote-sleep (docs/traps.md #13): raise the soft limit to the hard one; children inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]

    def text(n):
        return "unlimited" if n == resource.RLIM_INFINITY else str(n)
    return text(soft), text(hard)


def newest_mtime(paths):
    newest = 0.0
    for path in paths:
        if path.is_file():
            newest = max(newest, path.stat().st_mtime)
        for root, _dirs, files in os.walk(path):
            for f in files:
                newest = max(newest, os.stat(os.path.join(root, f)).st_mtime)
    return newest


def build_if_stale(s, java_home):
    """Build when a jar is missing or older than any source or pom (tests are `make test`'s job)."""
    modules = ["remote-sleep"]
    for app in s.apps + (s.fanout_apps if "fanout" in s.scenarios else []):
        module = MODULE_OF[app] or foreign.AGENT_MODULE     # APP_JAR: the user's jar is theirs; the lab's agent is ours
        if module not in modules:
            modules.append(module)
    stale = []
    for m in modules:
        jar = Path(m, "target", f"{m}.jar")
        # src/main: a test's source is in no jar, and a jar the build finds up to date keeps its old time
        # (lab-agent's, which no shade step rewrites), so a newer test would call for a build every run.
        sources = [Path("pom.xml"), Path(m, "pom.xml"), Path(m, "src", "main"), Path("lab-common/pom.xml"),
                   Path("lab-common/src/main"), Path("lab-agent/pom.xml"), Path("lab-agent/src/main")]
        if not jar.is_file() or newest_mtime(sources) > jar.stat().st_mtime:
            stale.append(m)
    if not stale:
        return
    # bench/tools/mvn.sh: the Maven Wrapper (./mvnw), which fetches the pinned Maven into .tools/maven once
    # and unpacks its .zip with unzip (the pinned checksum is the zip's).
    for tool in ("unzip", "curl"):
        if not shutil.which(tool):
            raise Fatal(f"the jars of {' '.join(stale)} need a build, and ./mvnw needs {tool} to fetch Maven "
                        f"(Debian: apt-get install -y {tool})")
    # Its output goes to a log: the shade plugin's notes on files that several jars share are
    # Maven WARNING lines by the dozen, and they would be the first screen of a fresh `make bench`.
    log = Path(".tools", "build.log")
    log.parent.mkdir(exist_ok=True)
    print(f"building (jars missing or older than sources: {' '.join(stale)}): "
          f"bench/tools/mvn.sh -B package -DskipTests, its output in {log}")
    env = dict(os.environ, JAVA_HOME=java_home)
    if procs.run(["bench/tools/mvn.sh", "-B", "--no-transfer-progress", "-Dstyle.color=never", "package", "-DskipTests"],
                 out=log, env=env) != 0:
        print("".join(log.read_text(errors="replace").splitlines(keepends=True)[-30:]), end="")
        raise Fatal(f"the build failed (the last lines of {log} above); run: JAVA_HOME={java_home} bench/tools/mvn.sh -B package -DskipTests")


def facts(s, m):
    """What meta.txt records about the environment, in its order after the settings."""
    def pom_version(name):
        found = re.search(rf"<{name}>(.*)</{name}>", Path("pom.xml").read_text())
        return found.group(1) if found else ""

    def first_line(cmd, stderr=subprocess.STDOUT):
        try:
            out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True).stdout
        except OSError:
            return ""
        return out.splitlines()[0] if out else ""

    def read(path, default="?"):
        try:
            return Path(path).read_text().strip()
        except OSError:
            return default

    cpu_model = re.search(r"^model name\s*: (.*)$", read("/proc/cpuinfo", ""), re.M)
    os_name = re.search(r'^PRETTY_NAME="?([^"\n]*)"?$', read("/etc/os-release", ""), re.M)
    git = first_line(["git", "rev-parse", "--short", "HEAD"], stderr=subprocess.DEVNULL) or "none"
    if git != "none" and first_line(["git", "status", "--porcelain"], stderr=subprocess.DEVNULL):
        git += " (uncommitted changes)"
    return {
        "jdk": f"{m.java_version} ({m.java_home})",
        "jetty": pom_version("jetty.version"),
        "tomcat": pom_version("tomcat.version"),
        "spring": pom_version("spring.version"),
        "wrk": first_line(["wrk", "-v"]).split(" Copyright")[0],
        "vegeta": Path(m.vegeta).resolve().name.replace("vegeta-", "vegeta ") if m.vegeta else "",
        "cpu": f"{len(os.sched_getaffinity(0))} x {cpu_model.group(1) if cpu_model else 'unknown'}",
        "os": f"{os_name.group(1) if os_name else os.uname().sysname}, kernel {os.uname().release}",
        "nofile": m.nofile,
        "somaxconn": read("/proc/sys/net/core/somaxconn"),
        "port_range": read("/proc/sys/net/ipv4/ip_local_port_range").replace("\t", "-").replace(" ", "-"),
        "cores": len(os.sched_getaffinity(0)),
        "git": git,
    }
