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

from . import catalog, db, inventory, loadgens, place, scenarios
from .checks import COUNT, DURATION, UsageError, count, counts, is_virtual, known, seconds_of, split_list  # noqa: F401

# The defaults: the reference experiment. Each scenario adds its own (scenarios/*.py).
CORE_DEFAULTS = {
    "APPS": "sync-servlet sync-mvc async-servlet async-mvc nio-servlet webflux",
    "CONTAINERS": "jetty tomcat netty",   # netty runs the webflux app only
    "THREADS": "1 200 v1",     # threads that may run application code (--threads of every app); vN = virtual
    "CLIENT": "jdk",           # the apps' outbound HTTP client (--client): jdk, reactor-netty, jetty; a list runs each
    "PROFILE": "0",            # 1: a CPU profile of the app over every cell's measured window, CPU by layer
    "WRK_THREADS": "10 100",   # wrk -t
    "CONNECTIONS": "100",      # wrk -c
    "SCENARIO": scenarios.DEFAULT,   # what else happens during a cell (scenarios/); a list runs each in turn
    "LOADGEN": "wrk",          # wrk (closed loop) and/or vegeta (open loop at RATE req/s), eg, "wrk vegeta"
    "RATE": "50",              # vegeta's constant arrival rate, requests per second
    "REPEAT": "1",             # rounds of the whole matrix; figures are then medians with min–max
    "DURATION": "10s",         # wrk -d for every measured cell
    "SLEEP_MS": "1000",        # remote-sleep's delay: what every request waits for
    "WRK_TIMEOUT": "",         # wrk --timeout; empty = DURATION + 20 s (see below)
    "WARMUP": "auto",          # unrecorded warm-up of a freshly started app: auto = fast calls until its JIT settled; Ns = N s of them; 0 = none
    "REMOTE_PORT": "9000",
    "APP_PORT": "8080",
    "ADMIN_PORT": "8081",
    "RESULTS_DIR": "results",  # runs go to $RESULTS_DIR/<UTC stamp>/, $RESULTS_DIR/latest links the last
    "START_TIMEOUT": "60",     # seconds a server may take to answer after its start
    "JAVA_OPTS": "",           # extra JVM flags for every server, eg, "-Xmx512m"
    "APP_ARGS": "",            # extra app flags, eg, "--client-max-connections 16"
    "CPUSETS": "",             # pin roles to CPUs with taskset, eg, "app=1 rest=0" (roles app, backend, loadgen, rest); empty = none
    "HOSTS": "",               # an Ansible inventory placing the roles on hosts of their own (docs/hosts.md); empty = this machine
    **db.DEFAULTS,             # BACKEND=postgres and its DB_* settings (db.py)
}
# wrk's default --timeout is 2 s, and wrk 4 leaves every slower response out of all latency
# figures (docs/traps.md #2). A response cannot take longer than the run, so a timeout of
# DURATION + 20 s hides nothing; the cells still report "slow_2s", responses over 2 s.

# The apps of the matrix (APPS); a scenario may run others (eg, the fan-out apps).
KNOWN_APPS = catalog.apps_for(scenarios.DEFAULT)
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


def usage(environ):
    v = raw_values(environ)
    return f"""Usage: ./bench.sh [sweep] [--help]      (settings are environment variables)

Runs wrk against every app x container x pool size x wrk setting (x scenario) and writes
$RESULTS_DIR/<UTC stamp>/results.{{md,json,csv}} (+ raw wrk output and server logs).

Settings (current value):
  APPS="{v['APPS']}"
        known: {' '.join(KNOWN_APPS)}
  CONTAINERS="{v['CONTAINERS']}"       known: {' '.join(KNOWN_CONTAINERS)} (netty runs webflux only)
  THREADS="{v['THREADS']}"             pool sizes: threads that may run application code;
                               vN = virtual threads on N carrier threads (JDK 21+), eg, v1
  CLIENT="{v['CLIENT']}"               the apps' outbound HTTP client, known: {' '.join(catalog.CLIENTS)} (a list runs each)
  PROFILE={v['PROFILE']}                   1: a CPU profile of the app over each measured window (flame.html, CPU by layer)
  WRK_THREADS="{v['WRK_THREADS']}"        wrk -t, each <= every CONNECTIONS value; one twice ("10 10") measures each JVM again
  CONNECTIONS="{v['CONNECTIONS']}"          wrk -c
  SCENARIO="{v['SCENARIO']}"            known: {' '.join(scenarios.SELECTABLE)} (a list runs each in turn)
{"".join(s.usage(v) for s in scenarios.ALL)}  LOADGEN="{v['LOADGEN']}"              known: {' '.join(KNOWN_LOADGENS)}: wrk = closed loop (-t x -c), vegeta = open loop
  RATE={v['RATE']}                      vegeta's constant arrival rate, req/s (latency from the intended send time;
                               SCENARIO=degrade: 150 unless RATE is set)
  REPEAT={v['REPEAT']}                     rounds of the whole matrix; every figure is then a median with its min–max
  DURATION={v['DURATION']}  WARMUP={v['WARMUP']}  WRK_TIMEOUT={v['WRK_TIMEOUT'] or 'DURATION+20s'}   (N, Ns, Nm or Nh)
                               WARMUP=auto: 3 s windows until the JIT settled (compiler <= 5 % of the app's CPU,
                               CPU/request no longer falling by > 5 %, 3 in a row), 9..60 s; else "no steady state"
  SLEEP_MS={v['SLEEP_MS']}          remote-sleep delay, 1..60000 (BACKEND=postgres: the pg_sleep of DB_QUERY=sleep)
{db.usage(v)}  REMOTE_PORT={v['REMOTE_PORT']} APP_PORT={v['APP_PORT']} ADMIN_PORT={v['ADMIN_PORT']}   (all on 127.0.0.1)
  RESULTS_DIR={v['RESULTS_DIR']}  START_TIMEOUT={v['START_TIMEOUT']}  JAVA_OPTS="{v['JAVA_OPTS']}"  APP_ARGS="{v['APP_ARGS']}"
  CPUSETS="{v['CPUSETS']}"                  pin roles to CPUs (taskset), eg, "app=1 rest=0": roles app, backend (remote-sleep,
                               PostgreSQL), loadgen (wrk, vegeta, pgbench, slow clients), rest = the others
  HOSTS="{v['HOSTS']}"                    an Ansible inventory: groups app, backend, loadgen (one or more) on hosts of
                               their own, reached over ssh (SCENARIO=call and the sweep; wrk, vegeta); docs/hosts.md

The sweep (`make sweep`, `./bench.sh sweep`, or any run with SWEEP set): how far each model scales.
Each variant runs at every level of SWEEP as wrk -c (one app reused upward, warmed up at each level),
with a calibration cell per level; wrk -t = this machine's cores unless WRK_THREADS is set. It
replaces APPS, CONTAINERS, THREADS, CONNECTIONS (and needs SCENARIO=call, LOADGEN=wrk, REPEAT=1).
  SWEEP="{v['SWEEP']}"     connection levels; each must fit this machine's limits
        (file descriptors: ~2 per connection in the app; ephemeral ports: see the environment lines)
  SWEEP_VARIANTS="{v['SWEEP_VARIANTS']}"
        app[@container]:threads[:client]; threads = N, vN (virtual, JDK 21+), or conns (a pool as large as the level);
        client = jdk (default), reactor-netty or jetty
  SWEEP_CONTAINER={v['SWEEP_CONTAINER']}        container of every variant without @container (jetty or tomcat)

Examples:
  ./bench.sh                                          # the reference experiment: 76 cells, ~17 min
  APPS="async-servlet sync-servlet" THREADS=1 WRK_THREADS=10 ./bench.sh
  APPS=webflux CONTAINERS=tomcat THREADS="1 4" CONNECTIONS="100 1000" ./bench.sh
  APPS="sync-servlet webflux" CONTAINERS="tomcat netty" THREADS="1 v1" ./bench.sh
  SCENARIO="call slow-upload" APPS="sync-servlet nio-servlet" THREADS=1 WRK_THREADS=10 ./bench.sh
  APP_ARGS="--client-max-connections 16" APPS=webflux ./bench.sh   # the 2021 write-up's trap
  LOADGEN="wrk vegeta" RATE=50 THREADS=1 WRK_THREADS=10 ./bench.sh  # closed- and open-loop latency side by side
  REPEAT=3 ./bench.sh                                 # medians with min–max: what `make compare` judges noise by
  SCENARIO=fanout CONTAINERS=tomcat THREADS=1 WRK_THREADS=10 ./bench.sh   # one request, many calls
  make bench DURATION=30s && make compare A=results/<older stamp> B=results/latest
  BACKEND=postgres APPS="sync-servlet async-servlet webflux" THREADS=1 ./bench.sh   # a PostgreSQL query per request
  SCENARIO=degrade ./bench.sh                         # a backend fault mid-run: 4 variants x 2 limits, 50 s each, ~10 min
  SCENARIO=degrade FAULT=error=50 MAX_IN_FLIGHT=0 APP_ARGS="--client-timeout-ms 2000" ./bench.sh
  make sweep                                          # 9 variants x 6 levels, 100..10,000 connections, ~14 min
  make sweep BACKEND=postgres                         # the sweep, each variant once per DB driver
  SWEEP="100 1000" SWEEP_VARIANTS="sync-servlet:200 async-servlet:1" DURATION=5s ./bench.sh sweep"""


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
    if v["CPUSETS"].strip():
        raise UsageError("HOSTS and CPUSETS: with HOSTS, pin a host's roles with its `cpus` variable in the inventory")
    others = [sc for sc in scenario_names if sc != "call"] + [g for g in loadgens if g not in ("wrk", "vegeta")]
    if others:
        raise UsageError(f"HOSTS places SCENARIO=call and the sweep with LOADGEN=wrk or vegeta so far, not "
                         f"{' '.join(others)}: run those on one machine (HOSTS unset)")
    return inventory.parse(v["HOSTS"].strip(), v.get("BACKEND", "http"), db_url=v.get("DB_URL", "").strip())


def parse(environ, mode="matrix", n_cores=None):
    """Settings from the environment, or UsageError saying what is wrong. mode: "matrix", or the
    name of a planner with a matrix of its own (the sweep: SWEEP, SWEEP_VARIANTS, SWEEP_CONTAINER)."""
    variants = []
    if mode != "matrix":
        environ, variants = scenarios.get(mode).environ(environ, n_cores or cores())
    v = raw_values(environ)
    apps = known("APPS", v["APPS"], KNOWN_APPS, "app")
    containers = known("CONTAINERS", v["CONTAINERS"], KNOWN_CONTAINERS, "container")
    threads = split_list(v["THREADS"])
    if not threads:
        raise UsageError("THREADS is empty")
    for t in threads:
        if not COUNT.fullmatch(t[1:] if is_virtual(t) else t):
            raise UsageError(f"THREADS: '{t}' is not a positive integer or vN (virtual threads on N carriers)")
    clients = known("CLIENT", v["CLIENT"], catalog.CLIENTS, "client")
    if v["PROFILE"] not in ("0", "1"):
        raise UsageError(f"PROFILE: '{v['PROFILE']}' is not 0 or 1")
    wrk_threads = counts("WRK_THREADS", v["WRK_THREADS"])
    connections = counts("CONNECTIONS", v["CONNECTIONS"])
    for t in wrk_threads:
        for c in connections:
            if t > c:
                raise UsageError(f"WRK_THREADS={t} > CONNECTIONS={c}: wrk needs at least one connection per thread")
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
    s = Settings(
        raw=v, apps=apps, containers=containers, threads=threads, clients=clients, profile=v["PROFILE"] == "1",
        wrk_threads=wrk_threads,
        connections=connections, scenarios=scenario_names, loadgens=loadgens, rate=rate, repeat=repeat,
        duration=v["DURATION"], duration_s=duration_s, warmup=v["WARMUP"],
        warmup_s=0 if v["WARMUP"] == "auto" else seconds_of(v["WARMUP"]), wrk_timeout=wrk_timeout, wrk_timeout_s=seconds_of(wrk_timeout),
        sleep_ms=int(v["SLEEP_MS"]), remote_port=ports["REMOTE_PORT"], app_port=ports["APP_PORT"],
        admin_port=ports["ADMIN_PORT"], results_dir=v["RESULTS_DIR"], start_timeout=start_timeout,
        java_opts=v["JAVA_OPTS"].split(), cpusets=cpusets, hosts=hosts, app_args=v["APP_ARGS"].split(), mode=mode, variants=variants,
        extra=extra, **db_settings)
    db.check_fits(s)
    if mode != "matrix" and s.backend == "postgres":
        s = dataclasses.replace(s, variants=scenarios.get(mode).with_drivers(s))
    return s
