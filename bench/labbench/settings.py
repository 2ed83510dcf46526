"""The bench's settings: environment variables, their defaults, the usage text, and validation.

Every setting is checked here, before anything starts: a bad one is an ERROR + usage, exit 2.
The matrix is data: override any default from the environment, eg, THREADS="1 8 200" ./bench.sh
(lists are space- or comma-separated); an empty or unset variable keeps its default.
"""
import os
import re
from dataclasses import dataclass, field
from typing import List, Optional

# The defaults: the reference experiment.
DEFAULTS = {
    "APPS": "sync-servlet sync-mvc async-servlet async-mvc nio-servlet webflux",
    "CONTAINERS": "jetty tomcat netty",   # netty runs the webflux app only
    "THREADS": "1 200 v1",     # threads that may run application code (--threads of every app); vN = virtual
    "WRK_THREADS": "10 100",   # wrk -t
    "CONNECTIONS": "100",      # wrk -c
    "SCENARIO": "call",        # what else happens during a cell (SCENARIOS below); a list runs each in turn
    "SLOW_CLIENTS": "10",      # slow-* scenarios: how many slow clients run beside wrk
    "SLOW_RATE": "1000",       # bytes per second each slow client sends or reads
    "SLOW_BYTES": "",          # bytes each slow client sends or reads; empty = the scenario's default
    "FANOUT": "1 10 100",      # SCENARIO=fanout: the N of GET /fanout?n=N timed one request at a time
    "FANOUT_MS": "300",        # SCENARIO=fanout: each of the N remote calls' delay (ms)
    "FANOUT_APPS": "",         # SCENARIO=fanout: the fan-out apps; empty = all of them
    "LOADGEN": "wrk",          # wrk (closed loop) and/or vegeta (open loop at RATE req/s), eg, "wrk vegeta"
    "RATE": "50",              # vegeta's constant arrival rate, requests per second
    "REPEAT": "1",             # rounds of the whole matrix; figures are then medians with min–max
    "DURATION": "10s",         # wrk -d for every measured cell
    "SLEEP_MS": "1000",        # remote-sleep's delay: what every /call waits for
    "WRK_TIMEOUT": "",         # wrk --timeout; empty = DURATION + 20 s (see below)
    "WARMUP": "1s",            # unrecorded warm-up of a freshly started app (fast calls); 0 = none
    "REMOTE_PORT": "9000",
    "APP_PORT": "8080",
    "ADMIN_PORT": "8081",
    "RESULTS_DIR": "results",  # runs go to $RESULTS_DIR/<UTC stamp>/, $RESULTS_DIR/latest links the last
    "START_TIMEOUT": "60",     # seconds a server may take to answer after its start
    "JAVA_OPTS": "",           # extra JVM flags for every server, eg, "-Xmx512m"
    "APP_ARGS": "",            # extra app flags, eg, "--client-max-connections 16"
    # `make sweep` / `./bench.sh sweep` (or SWEEP set): a matrix of its own, see SWEEP_VARIANTS below.
    "SWEEP": "100 500 1000 2000 5000 10000",   # the connection levels every sweep variant runs at
    "SWEEP_VARIANTS": "sync-servlet:200 sync-servlet:conns sync-servlet:v1 async-servlet:1 nio-servlet:1 "
                      "webflux:1 webflux@netty:1",
    "SWEEP_CONTAINER": "jetty",  # the container of every variant without @container
}
# wrk's default --timeout is 2 s, and wrk 4 leaves every slower response out of all latency
# figures (lab-notes trap 2). A response cannot take longer than the run, so a timeout of
# DURATION + 20 s hides nothing; the cells still report "slow_2s", responses over 2 s.

KNOWN_APPS = ["sync-servlet", "sync-mvc", "async-servlet", "async-mvc", "nio-servlet", "webflux"]
KNOWN_CONTAINERS = ["jetty", "tomcat", "netty"]
KNOWN_LOADGENS = ["wrk", "vegeta"]
# SCENARIO=fanout runs these instead of APPS: one request, N remote calls (GET /fanout).
KNOWN_FANOUT_APPS = ["fanout-sequential", "fanout-pool", "fanout-common-pool", "fanout-virtual", "fanout-async",
                     "fanout-webflux", "fanout-fire-and-forget", "fanout-coroutines-blocking",
                     "fanout-coroutines-suspending", "fanout-flow-blocking", "fanout-flow-suspending"]
# Under load, every fan-out request makes this many calls (the "throughput at N = 10").
FANOUT_LOAD_N = 10
# Which module's jar serves each app id.
MODULE_OF = {
    "sync-servlet": "sync-servlet", "sync-mvc": "sync-servlet",
    "async-servlet": "async-servlet", "async-mvc": "async-servlet",
    "nio-servlet": "nio-servlet", "webflux": "webflux-app",
    **{app: "fanout-kotlin" if "corout" in app or "flow" in app else "fanout-app" for app in KNOWN_FANOUT_APPS},
}
# Thread-per-request apps: at most `threads` requests in flight on a platform pool, so their
# Little's-law bound is min(connections, threads) / sleep, and requests beyond the pool queue
# inside the container.
THREAD_PER_REQUEST_APPS = ["sync-servlet", "sync-mvc"]

# Scenario -> (slowclients.py --mode, default bytes per slow client); "call" has no side load.
# upload: 4 KiB trickled into a POST body holds a blocking reader for seconds; download: 16 MiB is
# more than the loopback socket buffers take at once, so a slow reader holds a blocking writer.
SCENARIOS = {
    "call": None,
    "slow-upload": ("upload", 4096),
    "slow-download": ("download", 16777216),
    "fanout": None,            # the fan-out apps instead of APPS: one request, N calls (GET /fanout)
}


# A sweep variant is app[@container]:threads, threads = N, vN, or "conns": a pool as large as
# the level's connections (thread-per-request at any scale: what a platform thread per request costs).
VARIANT = re.compile(r"([a-z-]+)(?:@([a-z]+))?:(conns|v?[0-9]+)")
# Settings the sweep sets itself: it runs CONNECTIONS over SWEEP for each variant, the call scenario, wrk only.
NOT_IN_SWEEP = {"APPS": "SWEEP_VARIANTS", "CONTAINERS": "SWEEP_CONTAINER or app@container in SWEEP_VARIANTS",
                "THREADS": "SWEEP_VARIANTS", "CONNECTIONS": "SWEEP", "SCENARIO": "", "LOADGEN": "", "REPEAT": ""}
# --threads takes at most this many (LabConfig.MAX_THREADS): the "conns" variant's largest level.
MAX_APP_THREADS = 10000


@dataclass(frozen=True)
class Variant:
    """One row of the sweep: an app on a container with a pool, run at every SWEEP level."""
    app: str
    container: str
    threads: str              # "200", "v1", or "conns" (= the level's connections)

    @property
    def id(self):
        return f"{self.app}@{self.container}:{self.threads}"

    def threads_at(self, level):
        return str(level) if self.threads == "conns" else self.threads

    @property
    def label(self):
        """eg, "sync-servlet jetty, 200 threads", "webflux netty, 1 event loop"."""
        if self.threads == "conns":
            pool = "threads = connections"
        elif is_virtual(self.threads):
            pool = f"{self.threads} (virtual threads on {self.threads[1:]} carrier{'s' if self.threads != 'v1' else ''})"
        elif self.container == "netty":
            pool = f"{self.threads} event loop{'s' if self.threads != '1' else ''}"
        else:
            pool = f"{self.threads} thread{'s' if self.threads != '1' else ''}"
        return f"{self.app} {self.container}, {pool}"


class UsageError(Exception):
    """A setting is wrong: main prints ERROR + the usage and exits 2 (nothing has started)."""


@dataclass(frozen=True)
class Settings:
    raw: dict                 # every variable's text, defaults filled in (for meta.txt and --help)
    apps: List[str]
    containers: List[str]
    threads: List[str]        # "1", "200", "v1": kept as text, passed to --threads as is
    wrk_threads: List[int]
    connections: List[int]
    scenarios: List[str]
    slow_clients: int
    slow_rate: int
    slow_bytes: Optional[int]  # None = each scenario's default
    loadgens: List[str]
    rate: int
    repeat: int
    fanout: List[int]
    fanout_ms: int
    fanout_apps: List[str]
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
    app_args: List[str]
    mode: str = "matrix"       # "sweep": CONNECTIONS over SWEEP for each of `variants`
    variants: List[Variant] = field(default_factory=list)

    def slow_bytes_for(self, scenario):
        return self.slow_bytes or SCENARIOS[scenario][1]


def is_virtual(threads):
    """THREADS value "vN": virtual threads on N carrier threads (lab-notes traps 11, 16, 17)."""
    return threads.startswith("v")


def raw_values(environ):
    """The text of every setting: the environment's, or the default when unset or empty."""
    return {name: environ.get(name) or default for name, default in DEFAULTS.items()}


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
  WRK_THREADS="{v['WRK_THREADS']}"        wrk -t, each <= every CONNECTIONS value
  CONNECTIONS="{v['CONNECTIONS']}"          wrk -c
  SCENARIO="{v['SCENARIO']}"            known: {' '.join(SCENARIOS)} (a list runs each in turn)
  SLOW_CLIENTS={v['SLOW_CLIENTS']}  SLOW_RATE={v['SLOW_RATE']}  SLOW_BYTES={v['SLOW_BYTES'] or '(default)'}
        slow-* scenarios: slow clients beside wrk, bytes/s each, bytes each
        (default SLOW_BYTES: slow-upload {SCENARIOS['slow-upload'][1]}, slow-download {SCENARIOS['slow-download'][1]})
  FANOUT="{v['FANOUT']}"  FANOUT_MS={v['FANOUT_MS']}  FANOUT_APPS="{v['FANOUT_APPS'] or '(all)'}"
        SCENARIO=fanout: each fan-out app timed one request at a time for each N (GET /fanout?n=N&ms=FANOUT_MS),
        then under wrk's load with N = {FANOUT_LOAD_N}; apps: {' '.join(KNOWN_FANOUT_APPS)}
  LOADGEN="{v['LOADGEN']}"              known: {' '.join(KNOWN_LOADGENS)}: wrk = closed loop (-t x -c), vegeta = open loop
  RATE={v['RATE']}                      vegeta's constant arrival rate, req/s (latency from the intended send time)
  REPEAT={v['REPEAT']}                     rounds of the whole matrix; every figure is then a median with its min–max
  DURATION={v['DURATION']}  WARMUP={v['WARMUP']}  WRK_TIMEOUT={v['WRK_TIMEOUT'] or 'DURATION+20s'}   (N, Ns, Nm or Nh)
  SLEEP_MS={v['SLEEP_MS']}          remote-sleep delay, 1..60000
  REMOTE_PORT={v['REMOTE_PORT']} APP_PORT={v['APP_PORT']} ADMIN_PORT={v['ADMIN_PORT']}   (all on 127.0.0.1)
  RESULTS_DIR={v['RESULTS_DIR']}  START_TIMEOUT={v['START_TIMEOUT']}  JAVA_OPTS="{v['JAVA_OPTS']}"  APP_ARGS="{v['APP_ARGS']}"

The sweep (`make sweep`, `./bench.sh sweep`, or any run with SWEEP set): how far each model scales.
Each variant runs at every level of SWEEP as wrk -c (a fresh app per level, warmed up at that level),
with a calibration cell per level; wrk -t = this machine's cores unless WRK_THREADS is set. It
replaces APPS, CONTAINERS, THREADS, CONNECTIONS (and needs SCENARIO=call, LOADGEN=wrk, REPEAT=1).
  SWEEP="{v['SWEEP']}"     connection levels; each must fit this machine's limits
        (file descriptors: ~2 per connection in the app; ephemeral ports: see the environment lines)
  SWEEP_VARIANTS="{v['SWEEP_VARIANTS']}"
        app[@container]:threads; threads = N, vN (virtual, JDK 21+), or conns (a pool as large as the level)
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
  make sweep                                          # 7 variants x 6 levels, 100..10,000 connections, ~11 min
  SWEEP="100 1000" SWEEP_VARIANTS="sync-servlet:200 async-servlet:1" DURATION=5s ./bench.sh sweep"""


COUNT = re.compile(r"[1-9][0-9]{0,6}")
DURATION = re.compile(r"[1-9][0-9]{0,5}[smh]?")


def seconds_of(duration):
    """Seconds in a wrk-style duration: 10 -> 10, 10s -> 10, 2m -> 120, 1h -> 3600."""
    unit = duration[-1]
    n = int(duration.rstrip("smh"))
    return n * {"m": 60, "h": 3600}.get(unit, 1)


def split_list(text):
    """Lists: "a b", "a,b" and "a, b" all work."""
    return text.replace(",", " ").split()


def counts(name, text):
    """Every value a positive integer, at least one."""
    values = split_list(text)
    if not values:
        raise UsageError(f"{name} is empty")
    for v in values:
        if not COUNT.fullmatch(v):
            raise UsageError(f"{name}: '{v}' is not a positive integer")
    return [int(v) for v in values]


def count(name, text, empty_ok=""):
    if not COUNT.fullmatch(text):
        raise UsageError(f"{name}: '{text}' is not a positive integer{empty_ok}")
    return int(text)


def known(name, text, known_values, what):
    values = split_list(text)
    if not values:
        raise UsageError(f"{name} is empty")
    for v in values:
        if v not in known_values:
            raise UsageError(f"unknown {what} '{v}' in {name} (known: {' '.join(known_values)})")
    return values


def cores():
    return len(os.sched_getaffinity(0))


def sweep_variants(text, default_container):
    """SWEEP_VARIANTS: app[@container]:threads, each checked like APPS, CONTAINERS and THREADS."""
    variants = []
    for spec in split_list(text):
        m = VARIANT.fullmatch(spec)
        if not m:
            raise UsageError(f"SWEEP_VARIANTS: '{spec}' is not app[@container]:threads (threads N, vN or conns)")
        app, container, threads = m.group(1), m.group(2) or default_container, m.group(3)
        known("SWEEP_VARIANTS", app, KNOWN_APPS, "app")
        known("SWEEP_VARIANTS", container, KNOWN_CONTAINERS, "container")
        if threads != "conns" and not COUNT.fullmatch(threads[1:] if is_virtual(threads) else threads):
            raise UsageError(f"SWEEP_VARIANTS: '{spec}': threads must be a positive integer, vN or conns")
        if container == "netty" and (app != "webflux" or is_virtual(threads)):
            raise UsageError(f"SWEEP_VARIANTS: '{spec}': netty runs only the webflux app, on N event loops (not vN)")
        variant = Variant(app, container, threads)
        if variant in variants:
            raise UsageError(f"SWEEP_VARIANTS: '{spec}' is there twice")
        variants.append(variant)
    if not variants:
        raise UsageError("SWEEP_VARIANTS is empty")
    return variants


def sweep_environ(environ, n_cores):
    """The sweep's own matrix as the ordinary settings: CONNECTIONS = SWEEP, wrk -t = cores unless
    set; a setting the sweep replaces must not be set (it would be silently ignored)."""
    for name, instead in NOT_IN_SWEEP.items():
        value = environ.get(name)
        if value and value != {"SCENARIO": "call", "LOADGEN": "wrk", "REPEAT": "1"}.get(name):
            what = f"set {instead} instead" if instead else f"the sweep runs {DEFAULTS[name].split()[0]} only"
            raise UsageError(f"{name}={value}: the sweep sets {name} itself ({what})")
    v = raw_values(environ)
    if v["SWEEP_CONTAINER"] not in ("jetty", "tomcat"):
        raise UsageError(f"SWEEP_CONTAINER: '{v['SWEEP_CONTAINER']}' is not jetty or tomcat "
                         f"(netty runs webflux only: webflux@netty:N in SWEEP_VARIANTS)")
    levels = counts("SWEEP", v["SWEEP"])
    if len(set(levels)) != len(levels):
        raise UsageError(f"SWEEP: a level is there twice ({v['SWEEP']})")
    variants = sweep_variants(v["SWEEP_VARIANTS"], v["SWEEP_CONTAINER"])
    if any(x.threads == "conns" for x in variants) and max(levels) > MAX_APP_THREADS:
        raise UsageError(f"SWEEP: {max(levels)} connections: a 'conns' variant would need --threads {max(levels)}, "
                         f"more than the apps take (1..{MAX_APP_THREADS})")
    env = dict(environ, CONNECTIONS=" ".join(map(str, sorted(levels))),
               WRK_THREADS=environ.get("WRK_THREADS") or str(n_cores),
               APPS=" ".join(dict.fromkeys(x.app for x in variants)),
               CONTAINERS=" ".join(dict.fromkeys(x.container for x in variants)),
               THREADS=" ".join(dict.fromkeys(x.threads for x in variants if x.threads != "conns")) or "1")
    return env, variants


def parse(environ, mode="matrix", n_cores=None):
    """Settings from the environment, or UsageError saying what is wrong. mode "sweep": the
    sweep's matrix (SWEEP, SWEEP_VARIANTS, SWEEP_CONTAINER)."""
    variants = []
    if mode == "sweep":
        environ, variants = sweep_environ(environ, n_cores or cores())
    v = raw_values(environ)
    apps = known("APPS", v["APPS"], KNOWN_APPS, "app")
    containers = known("CONTAINERS", v["CONTAINERS"], KNOWN_CONTAINERS, "container")
    threads = split_list(v["THREADS"])
    if not threads:
        raise UsageError("THREADS is empty")
    for t in threads:
        if not COUNT.fullmatch(t[1:] if is_virtual(t) else t):
            raise UsageError(f"THREADS: '{t}' is not a positive integer or vN (virtual threads on N carriers)")
    wrk_threads = counts("WRK_THREADS", v["WRK_THREADS"])
    connections = counts("CONNECTIONS", v["CONNECTIONS"])
    for t in wrk_threads:
        for c in connections:
            if t > c:
                raise UsageError(f"WRK_THREADS={t} > CONNECTIONS={c}: wrk needs at least one connection per thread")
    if not DURATION.fullmatch(v["DURATION"]):
        raise UsageError(f"DURATION: '{v['DURATION']}' is not a duration like 10s, 2m or 30")
    if v["WARMUP"] != "0" and not DURATION.fullmatch(v["WARMUP"]):
        raise UsageError(f"WARMUP: '{v['WARMUP']}' is not a duration like 2s (or 0)")
    duration_s = seconds_of(v["DURATION"])
    wrk_timeout = v["WRK_TIMEOUT"] or f"{duration_s + 20}s"
    if not DURATION.fullmatch(wrk_timeout):
        raise UsageError(f"WRK_TIMEOUT: '{wrk_timeout}' is not a duration like 30s")
    if not (re.fullmatch(r"[1-9][0-9]{0,4}", v["SLEEP_MS"]) and int(v["SLEEP_MS"]) <= 60000):
        raise UsageError(f"SLEEP_MS: '{v['SLEEP_MS']}' is not an integer in 1..60000")
    ports = {}
    for name in ("REMOTE_PORT", "APP_PORT", "ADMIN_PORT"):
        if not (re.fullmatch(r"[1-9][0-9]{0,4}", v[name]) and int(v[name]) <= 65535):
            raise UsageError(f"{name}: '{v[name]}' is not a port number")
        ports[name] = int(v[name])
    if len(set(ports.values())) != 3:
        raise UsageError("REMOTE_PORT, APP_PORT and ADMIN_PORT must differ")
    start_timeout = count("START_TIMEOUT", v["START_TIMEOUT"])
    if not v["RESULTS_DIR"].strip():
        raise UsageError("RESULTS_DIR is empty")
    scenarios = known("SCENARIO", v["SCENARIO"], list(SCENARIOS), "scenario")
    slow_clients = count("SLOW_CLIENTS", v["SLOW_CLIENTS"])
    slow_rate = count("SLOW_RATE", v["SLOW_RATE"])
    slow_bytes = None
    if v["SLOW_BYTES"]:
        slow_bytes = count("SLOW_BYTES", v["SLOW_BYTES"], " (or empty: the scenario's default)")
    fanout = counts("FANOUT", v["FANOUT"])
    if max(fanout) > 1000:
        raise UsageError(f"FANOUT: {max(fanout)} calls per request is more than the apps take (1..1000)")
    if not (re.fullmatch(r"[0-9]{1,5}", v["FANOUT_MS"]) and int(v["FANOUT_MS"]) <= 60000):
        raise UsageError(f"FANOUT_MS: '{v['FANOUT_MS']}' is not an integer in 0..60000")
    fanout_apps = known("FANOUT_APPS", v["FANOUT_APPS"] or " ".join(KNOWN_FANOUT_APPS), KNOWN_FANOUT_APPS,
                        "fan-out app")
    loadgens = known("LOADGEN", v["LOADGEN"], KNOWN_LOADGENS, "load generator")
    rate = count("RATE", v["RATE"])
    repeat = count("REPEAT", v["REPEAT"])
    if repeat > 20:
        raise UsageError(f"REPEAT: {repeat} rounds is more than 20")
    return Settings(
        raw=v, apps=apps, containers=containers, threads=threads, wrk_threads=wrk_threads,
        connections=connections, scenarios=scenarios, slow_clients=slow_clients, slow_rate=slow_rate,
        slow_bytes=slow_bytes, loadgens=loadgens, rate=rate, repeat=repeat, fanout=fanout,
        fanout_ms=int(v["FANOUT_MS"]), fanout_apps=fanout_apps, duration=v["DURATION"], duration_s=duration_s, warmup=v["WARMUP"],
        warmup_s=seconds_of(v["WARMUP"]), wrk_timeout=wrk_timeout, wrk_timeout_s=seconds_of(wrk_timeout),
        sleep_ms=int(v["SLEEP_MS"]), remote_port=ports["REMOTE_PORT"], app_port=ports["APP_PORT"],
        admin_port=ports["ADMIN_PORT"], results_dir=v["RESULTS_DIR"], start_timeout=start_timeout,
        java_opts=v["JAVA_OPTS"].split(), app_args=v["APP_ARGS"].split(), mode=mode, variants=variants)
