"""The bench's settings: environment variables, their defaults, the usage text, and validation.

Every setting is checked here, before anything starts: a bad one is an ERROR + usage, exit 2.
The matrix is data: override any default from the environment, eg, THREADS="1 8 200" ./bench.sh
(lists are space- or comma-separated); an empty or unset variable keeps its default.
"""
import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import List

from . import catalog, db, foreign, inventory, loadgens, place, scenarios
from .checks import COUNT, DURATION, UsageError, count, counts, is_virtual, known, seconds_of, split_list  # noqa: F401
from . import knobs
from .knobs import setting

# The common settings; their defaults are the reference experiment. Each scenario adds its own
# (Scenario.settings), the database its DB_* (db.SETTINGS); knobs.py makes --help and
# docs/settings.md from them. compare: how `make compare` names a change (knobs.Setting).
CORE = (
    setting("APPS", " ".join(catalog.apps_for("call")), "the apps to run",
            "list", known=lambda: catalog.apps_for(scenarios.DEFAULT)),
    setting("CONTAINERS", "jetty tomcat netty", "the containers; `netty` runs the `webflux` app only", "list",
            known=lambda: catalog.CONTAINERS),
    setting("THREADS", "1 200 v1", "`--threads` of every app: threads that may run application code; `vN` = virtual "
            "threads on N carriers; Jetty's and Tomcat's pools run on one JVM (1, v1, 200), grown or switched and warmed "
            "again (`resized`)", "list"),
    setting("CLIENT", "jdk", "the apps' outbound HTTP client (`--client`): `jdk` (the control every model shares), "
            "`reactor-netty`, `jetty`; a list runs each", "list", known=lambda: catalog.CLIENTS),
    setting("PROFILE", "0", "`1`: a CPU profile of the app over each measured window: `flame.html`, `collapsed.txt` "
            "and CPU by layer; in a cost run, each fork's CPU by how its code ran (C2, C1, interpreter ...)"),
    setting("WRK_THREADS", "10 100", "wrk `-t` (each ≤ `CONNECTIONS`); a value twice (`10 10`) measures each JVM again "
            "the same way, and the first screen says how far apart its two windows were", "list"),
    setting("CONNECTIONS", "100", "wrk `-c`", "list"),
    setting("SCENARIO", scenarios.DEFAULT, "what else happens during a cell; a list runs each in turn; `degrade` runs "
            "alone (a matrix of its own)", "list", meta="scenarios", known=lambda: scenarios.SELECTABLE),
    setting("LOADGEN", "wrk", "`wrk` (closed loop) and/or `vegeta` (open loop at `RATE`)", "list", meta="loadgens",
            known=lambda: loadgens.SELECTABLE),
    setting("RATE", "50", "vegeta's constant arrival rate, requests per second", "value"),
    setting("REPEAT", "1", "rounds of the whole matrix; figures are then medians with min–max", "value"),
    setting("DURATION", "10s", "wrk `-d` of every measured cell", "value"),
    setting("SLEEP_MS", "1000", "`remote-sleep`'s delay: what every `/call` waits for", "value"),
    # wrk's default --timeout is 2 s, and wrk 4 leaves every slower response out of all latency
    # figures (docs/traps.md #2). A response cannot take longer than the run, so a timeout of
    # DURATION + 20 s hides nothing; the cells still report "slow_2s", responses over 2 s.
    setting("WRK_TIMEOUT", "", "wrk `--timeout`; empty = `DURATION` + 20 s"),
    setting("WARMUP", "auto", "unrecorded warm-up of a freshly started app (or one whose pool was grown or switched): "
            "`auto` = the measured request in 3 s windows, remote-sleep answering in 1 ms, until the JIT has settled "
            "(compiler ≤ 5 % of the app's CPU, CPU per request no longer falling by > 5 %, 3 in a row; 9–60 s); `Ns` = "
            "N s of fast calls; `0` = none", "value"),
    setting("REMOTE_PORT", "9000", "`remote-sleep`'s port"),
    setting("APP_PORT", "8080", "the app's port"),
    setting("ADMIN_PORT", "8081", "the app's admin port (`/stats`)"),
    setting("RESULTS_DIR", "results", "runs go to `$RESULTS_DIR/<UTC stamp>/`; `latest` links the last"),
    setting("START_TIMEOUT", "60", "seconds a server may take to answer after its start"),
    setting("JAVA_OPTS", "", "extra JVM flags for every server, eg, `-Xmx512m`", "value"),
    setting("APP_ARGS", "", "extra app flags, eg, `--client-max-connections 16`", "value"),
    setting("WORK", "", "work every app adds to each request after its remote call returns, on the thread its model "
            "runs that code: `cpu=500us` (a fixed computation), `alloc=65536` (bytes of heap), `syscalls=10` (writes to "
            "/dev/null), any of them (`--work`); the controls that prove the cost card's counters, and \"my requests "
            "compute too\"", "value"),
    setting("CPUSETS", "", "pin roles to CPUs with `taskset`, eg, `app=1 rest=0`: roles `app`, `backend` "
            "(remote-sleep, PostgreSQL), `loadgen` (wrk, vegeta, pgbench, slow clients), `rest` = the others; the app "
            "may share its CPUs with no other role ([docs/traps.md #38](traps.md#38-the-load-generators-threads-are-in-the-apps-cpu-figure)); "
            "`none`: unpinned, where a scenario would pin (cost)",
            "quiet"),
    setting("HOSTS", "", "an Ansible inventory that puts the roles on hosts of their own (groups `app`, `backend`, "
            "`loadgen`, one or more load hosts; each host's `cpus` pins its roles), reached over ssh; `SCENARIO=call` "
            "and the sweep, with wrk and vegeta, so far ([docs/hosts.md](hosts.md))", "quiet"),
)
CORE_DEFAULTS = {s.name: s.default for s in CORE + db.SETTINGS + foreign.SETTINGS}


# WORK's words (the apps check the values too: --work)
WORK = re.compile(r"(?:(?:cpu=[0-9]{1,7}(?:us|ms)|alloc=[0-9]{1,9}|syscalls=[0-9]{1,5})[ ,]*)+")

# The apps of the matrix (APPS); a scenario may run others (eg, the fan-out apps).
KNOWN_APPS = catalog.apps_for(scenarios.DEFAULT)      # the lab's (an APP_JAR run adds its jar: _matrix asks the catalog)
KNOWN_CONTAINERS = catalog.CONTAINERS
KNOWN_LOADGENS = loadgens.SELECTABLE
MODULE_OF = catalog.MODULE_OF


@dataclass(frozen=True)
class Settings:
    raw: dict                 # every variable's text, defaults filled in (for meta.txt and --help)
    apps: List[str]
    containers: List[str]
    threads: List[str]        # "1", "200", "v1": kept as text, passed to --threads as is
    clients: List[str]        # --client of the apps: jdk (the control every model shares), reactor-netty, jetty
    profile: bool             # PROFILE=1: the app profiles itself over each measured window
    wrk_threads: List[int]
    connections: List[int]
    scenarios: List[str]
    loadgens: List[str]
    rate: int
    repeat: int
    duration: str
    duration_s: int
    warmup: str
    warmup_s: int
    wrk_timeout: str
    wrk_timeout_s: int
    sleep_ms: int
    remote_port: int
    app_port: int
    admin_port: int
    results_dir: str
    start_timeout: int
    java_opts: List[str]
    cpusets: dict             # CPUSETS: {role: taskset CPU list}, {} = nothing pinned (place.py)
    hosts: dict               # HOSTS: {role: [place.Host]}, {} = every role on this machine (inventory.py)
    app_args: List[str]
    mode: str = "matrix"       # or a planner's name (the sweep): its own matrix of cells
    variants: list = field(default_factory=list)   # the sweep's variants
    extra: dict = field(default_factory=dict)      # each scenario's own settings (Scenario.parse)
    backend: str = "http"      # http (remote-sleep) or postgres (db.py); the DB_* below only with postgres
    db_url: str = ""           # DB_URL: a server of the user's; empty: the bench starts one (pg.py)
    db_pool: int = 0
    db_query: str = "sleep"
    db_acquire_timeout_ms: int = 0
    db_executor_threads: int = 0
    db_drivers: list = field(default_factory=list)  # the DB_DRIVER filter; empty: every driver an app has
    foreign: dict = field(default_factory=dict)     # APP_JAR: the jar (foreign.Jar), its path, args and backend args; {} without

    def __getattr__(self, name):
        """A scenario's setting as an attribute, eg, s.slow_clients, s.fanout_ms."""
        extra = self.__dict__.get("extra") or {}
        if name in extra:
            return extra[name]
        raise AttributeError(name)

    def slow_bytes_for(self, scenario):
        return scenarios.get(scenario).bytes_for(self)


def defaults():
    """Every setting's default: the common ones, then each registered scenario's own."""
    return {**CORE_DEFAULTS, **scenarios.defaults()}


def raw_values(environ):
    """The text of every setting: the environment's, or the default when unset or empty."""
    return {name: environ.get(name) or default for name, default in defaults().items()}


def groups():
    """[(heading, [Setting])]: the common settings, the database's, then each registered scenario's own
    (a setting two scenarios share, once): what --help and docs/settings.md list, in this order."""
    out = [("", list(CORE)), ("BACKEND=postgres: a PostgreSQL query per request (each app once per DB driver it "
                              "has: catalog.tsv's db column)", list(db.SETTINGS)),
           ("APP_JAR: your own service, any executable jar, measured like the lab's apps", list(foreign.SETTINGS))]
    seen = {s.name for _, rows in out for s in rows}
    for sc in scenarios.ALL:
        own = [s for s in sc.settings if s.name not in seen]
        seen |= {s.name for s in own}
        if own:
            out.append((sc.heading, own))
    return out


# --help's examples: (arguments, environment, what it is). Each is planned when --help prints its
# cell count, and a test plans every one (tests/test_bench.py): an example cannot drift.
EXAMPLES = (
    ("", {}, "the reference experiment"),
    ("", {"APPS": "async-servlet sync-servlet", "THREADS": "1", "WRK_THREADS": "10"}, ""),
    ("", {"APPS": "webflux", "CONTAINERS": "tomcat", "THREADS": "1 4", "CONNECTIONS": "100 1000"}, ""),
    ("", {"APPS": "sync-servlet webflux", "CONTAINERS": "tomcat netty", "THREADS": "1 v1"}, ""),
    ("", {"SCENARIO": "call slow-upload", "APPS": "sync-servlet nio-servlet", "THREADS": "1", "WRK_THREADS": "10"},
     "slow clients beside wrk"),
    ("", {"APP_ARGS": "--client-max-connections 16", "APPS": "webflux"}, "the 2021 write-up's trap"),
    ("", {"LOADGEN": "wrk vegeta", "RATE": "50", "THREADS": "1", "WRK_THREADS": "10"},
     "closed- and open-loop latency side by side"),
    ("", {"REPEAT": "3"}, "medians with min–max: what `make compare` judges noise by"),
    ("", {"SCENARIO": "fanout", "CONTAINERS": "tomcat", "THREADS": "1", "WRK_THREADS": "10"}, "one request, many calls"),
    ("", {"BACKEND": "postgres", "APPS": "sync-servlet async-servlet webflux", "THREADS": "1"},
     "a PostgreSQL query per request"),
    ("", {"SCENARIO": "degrade"}, "a backend fault mid-run"),
    ("", {"SCENARIO": "degrade", "FAULT": "error=50", "MAX_IN_FLIGHT": "0", "APP_ARGS": "--client-timeout-ms 2000"}, ""),
    ("", {"PRESET": "2021"}, "the 2021 write-up's matrix, as it ran and as the lab runs it"),
    ("cost", {}, "make cost: what a request costs each model, with 95 % intervals over fresh JVMs"),
    ("cost", {"WORK": "cpu=500us"}, "the same with 500 µs of CPU added to every request: the CPU counter's control"),
    ("sweep", {}, "make sweep: how far each model scales"),
    ("sweep", {"BACKEND": "postgres"}, "make sweep BACKEND=postgres: each variant once per DB driver"),
    ("sweep", {"SWEEP": "100 1000", "SWEEP_VARIANTS": "sync-servlet:200 async-servlet:1", "DURATION": "5s"}, ""),
)


def example_line(argv, env, what, n_cells):
    command = " ".join([*(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in env.items()), "./bench.sh", *([argv] if argv else [])])
    return f"  {command:<70} # {what + ': ' if what else ''}{n_cells} cells"


def usage(environ, examples=None):
    """--help: what the bench does, every setting with its current value and what it sets, the examples
    (examples: [(line)], already planned; main plans them)."""
    lines = ["Usage: ./bench.sh [sweep] [--help]      (settings are environment variables)", "",
             "Runs wrk against every app x container x pool size x wrk setting (x scenario) and writes",
             "$RESULTS_DIR/<UTC stamp>/results.{md,json,csv} (+ raw wrk output and server logs). Every setting, with",
             "more on each: docs/settings.md.", "", "Settings (current value):"]
    lines += knobs.usage_lines(groups(), raw_values(environ))
    lines += ["", "Examples:", *(examples or []),
              "  make bench DURATION=30s && make compare A=results/<older stamp> B=results/latest"]
    return "\n".join(lines)


def cores():
    return len(os.sched_getaffinity(0))


def _durations(v):
    """DURATION, WARMUP, WRK_TIMEOUT (default: DURATION + 20 s) and SLEEP_MS checked; the cell's
    seconds and wrk's timeout."""
    if not DURATION.fullmatch(v["DURATION"]):
        raise UsageError(f"DURATION: '{v['DURATION']}' is not a duration like 10s, 2m or 30")
    if v["WARMUP"] not in ("0", "auto") and not DURATION.fullmatch(v["WARMUP"]):
        raise UsageError(f"WARMUP: '{v['WARMUP']}' is not auto, a duration like 2s, or 0")
    duration_s = seconds_of(v["DURATION"])
    wrk_timeout = v["WRK_TIMEOUT"] or f"{duration_s + 20}s"
    if not DURATION.fullmatch(wrk_timeout):
        raise UsageError(f"WRK_TIMEOUT: '{wrk_timeout}' is not a duration like 30s")
    if not (re.fullmatch(r"[1-9][0-9]{0,4}", v["SLEEP_MS"]) and int(v["SLEEP_MS"]) <= 60000):
        raise UsageError(f"SLEEP_MS: '{v['SLEEP_MS']}' is not an integer in 1..60000")
    return duration_s, wrk_timeout


def _matrix(v):
    """APPS, CONTAINERS, THREADS, CLIENT, WRK_THREADS and CONNECTIONS, checked: the matrix's axes."""
    apps = known("APPS", v["APPS"], catalog.apps_for(scenarios.DEFAULT), "app")     # APP_JAR's too, once read
    containers = known("CONTAINERS", v["CONTAINERS"], KNOWN_CONTAINERS, "container")
    threads = split_list(v["THREADS"])
    if not threads:
        raise UsageError("THREADS is empty")
    for t in threads:
        if not COUNT.fullmatch(t[1:] if is_virtual(t) else t):
            raise UsageError(f"THREADS: '{t}' is not a positive integer or vN (virtual threads on N carriers)")
    clients = known("CLIENT", v["CLIENT"], catalog.CLIENTS, "client")
    wrk_threads = counts("WRK_THREADS", v["WRK_THREADS"])
    connections = counts("CONNECTIONS", v["CONNECTIONS"])
    for t in wrk_threads:
        for c in connections:
            if t > c:
                raise UsageError(f"WRK_THREADS={t} > CONNECTIONS={c}: wrk needs at least one connection per thread")
    return apps, containers, threads, clients, wrk_threads, connections


def _ports(v):
    """REMOTE_PORT, APP_PORT and ADMIN_PORT: three different port numbers."""
    ports = {}
    for name in ("REMOTE_PORT", "APP_PORT", "ADMIN_PORT"):
        if not (re.fullmatch(r"[1-9][0-9]{0,4}", v[name]) and int(v[name]) <= 65535):
            raise UsageError(f"{name}: '{v[name]}' is not a port number")
        ports[name] = int(v[name])
    if len(set(ports.values())) != 3:
        raise UsageError("REMOTE_PORT, APP_PORT and ADMIN_PORT must differ")
    return ports


def _hosts(v, scenario_names, loadgens, mode):
    """HOSTS: {role: [Host]} from the inventory, or {}; refused with what it does not place yet."""
    if not v["HOSTS"].strip():
        return {}
    if v["CPUSETS"].strip() not in ("", "none"):
        raise UsageError("HOSTS and CPUSETS: with HOSTS, pin a host's roles with its `cpus` variable in the inventory")
    others = [sc for sc in scenario_names if sc not in ("call", "cost")] + [g for g in loadgens if g not in ("wrk", "vegeta")]
    if others:
        raise UsageError(f"HOSTS places SCENARIO=call, cost and the sweep with LOADGEN=wrk or vegeta so far, not "
                         f"{' '.join(others)}: run those on one machine (HOSTS unset)")
    return inventory.parse(v["HOSTS"].strip(), v.get("BACKEND", "http"), db_url=v.get("DB_URL", "").strip())


def parse(environ, mode="matrix", n_cores=None):
    """Settings from the environment, or UsageError saying what is wrong. mode: "matrix", or the
    name of a planner with a matrix of its own (the sweep: SWEEP, SWEEP_VARIANTS, SWEEP_CONTAINER)."""
    variants = []
    foreign.read(environ, mode)     # a cost run's APP_JAR registered first: its variants may name it
    if mode != "matrix":
        environ, variants = scenarios.get(mode).environ(environ, n_cores or cores())
    v = raw_values(environ)
    apps, containers, threads, clients, wrk_threads, connections = _matrix(v)
    if v["PROFILE"] not in ("0", "1"):
        raise UsageError(f"PROFILE: '{v['PROFILE']}' is not 0 or 1")
    if v["WORK"] and not WORK.fullmatch(v["WORK"].strip()):
        raise UsageError(f"WORK: '{v['WORK']}' is not cpu=Nus|Nms, alloc=BYTES, syscalls=K (space- or comma-separated)")
    duration_s, wrk_timeout = _durations(v)
    ports = _ports(v)
    start_timeout = count("START_TIMEOUT", v["START_TIMEOUT"])
    if not v["RESULTS_DIR"].strip():
        raise UsageError("RESULTS_DIR is empty")
    scenario_names = known("SCENARIO", v["SCENARIO"], scenarios.SELECTABLE, "scenario")
    extra = {}
    for sc in scenarios.ALL:
        extra.update(sc.parse(v))
    loadgens = known("LOADGEN", v["LOADGEN"], KNOWN_LOADGENS, "load generator")
    rate = count("RATE", v["RATE"])
    repeat = count("REPEAT", v["REPEAT"])
    if repeat > 20:
        raise UsageError(f"REPEAT: {repeat} rounds is more than 20")
    db_settings = db.parse(v, seconds_of(wrk_timeout), int(v["SLEEP_MS"]))
    cpusets = place.parse(v["CPUSETS"])
    hosts = _hosts(v, scenario_names, loadgens, mode)
    own = foreign.parse(v, environ, scenario_names, loadgens, mode)
    if own.get("apps"):                # a run of its own: the jar is the matrix's one app
        apps, containers, threads = own["apps"], own["containers"], own["threads"]
    s = Settings(
        raw=v, apps=apps, containers=containers, threads=threads, clients=clients, profile=v["PROFILE"] == "1",
        wrk_threads=wrk_threads,
        connections=connections, scenarios=scenario_names, loadgens=loadgens, rate=rate, repeat=repeat,
        duration=v["DURATION"], duration_s=duration_s, warmup=v["WARMUP"],
        warmup_s=0 if v["WARMUP"] == "auto" else seconds_of(v["WARMUP"]), wrk_timeout=wrk_timeout, wrk_timeout_s=seconds_of(wrk_timeout),
        sleep_ms=int(v["SLEEP_MS"]), remote_port=ports["REMOTE_PORT"], app_port=ports["APP_PORT"],
        admin_port=ports["ADMIN_PORT"], results_dir=v["RESULTS_DIR"], start_timeout=start_timeout,
        java_opts=v["JAVA_OPTS"].split(), cpusets=cpusets, hosts=hosts, mode=mode, variants=variants,
        app_args=[] if own else v["APP_ARGS"].split(),      # with APP_JAR, APP_ARGS are the jar's (foreign.py)
        extra=extra, foreign=own, **db_settings)
    db.check_fits(s)
    if mode != "matrix" and s.backend == "postgres":
        s = dataclasses.replace(s, variants=scenarios.get(mode).with_drivers(s))
    return s
