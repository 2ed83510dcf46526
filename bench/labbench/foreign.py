"""Your own service in the lab (APP_JAR, issue 48): any executable jar, started and measured like the
lab's apps, read from outside its code.

The lab knows nothing of a foreign jar's code. What it needs it reads:
- before the start, from the jar itself: its Main-Class, whether it is Spring Boot (its manifest's
  Spring-Boot-Version), which server it carries (Tomcat, Jetty, Reactor Netty: the libraries in it) and,
  for Boot, whether it is the servlet stack (spring-webmvc) or the reactive one (spring-webflux);
- while it runs, through the lab's Java agent (lab-agent/, `-javaagent`, on the bench's admin port):
  its container, its pool (Tomcat's or Jetty's JMX beans), requests in flight and completed, its
  handler threads, the JVM's own figures. What the agent cannot read it names, with the reason
  (/stats' `unknown`), and the report prints it so: never a guess.

The lab tells the jar only what it must: its port and address (a Boot jar through Boot's own
properties; any other through `{port}` and `{host}` in APP_ARGS), where the slow backend is
(APP_BACKEND's `{url}`), and, for a Boot jar only, the pool THREADS asks for, through Boot's own
properties (Spring Boot's and Reactor Netty's documented ones, printed on the cell's lab: line).
A foreign app's threads are otherwise its own: THREADS with a jar that is not Boot is refused.
"""
import re
import shlex
import zipfile
from dataclasses import dataclass
from pathlib import Path

from . import catalog, procs, web
from .checks import UsageError, is_virtual, split_list
from .knobs import setting
from .paths import ROOT

AGENT_MODULE = "lab-agent"
AGENT_JAR = ROOT / AGENT_MODULE / "target" / f"{AGENT_MODULE}.jar"
# HOSTS: where `make hosts APP_JAR=...` puts the jar in an app host's lab_dir (the bench's commands run there)
HOST_DIR = ".apps"
FAMILY = "foreign"
OWN = "app"               # THREADS of a foreign app left to itself: its own pool, read from the JVM
COST = "cost"             # the cost card's planner
# The planners whose variants may name the jar beside the lab's apps, and the setting that lists them.
BESIDE = {COST: "COST_VARIANTS", "sweep": "SWEEP_VARIANTS", "degrade": "DEGRADE_VARIANTS"}
UNKNOWN_CONTAINER = "own"  # a server the jar carries that the lab does not know (Undertow, Helidon, ...)

SETTINGS = (
    setting("APP_JAR", "", "your own service: an executable jar (a path from the repository's root, or absolute) "
            "run in place of `APPS`, its container and pool read from the running JVM by the lab's agent "
            "(`-javaagent`); [docs/your-service.md](your-service.md)", "value"),
    setting("APP_PATH", "/", "with `APP_JAR`: what the load calls on it, eg, `/orders/42`", "value"),
    setting("APP_BACKEND", "", "with `APP_JAR`: the arguments that tell it where its slow backend is; `{url}` is "
            "remote-sleep's URL that waits `SLEEP_MS` (`http://127.0.0.1:9000/sleep?ms=1000`), `{remote}` its base "
            "URL; eg, `--downstream.url={url}`", "value"),
)

# Boot's libraries that say which server and which web stack a Boot jar runs (BOOT-INF/lib/<name>-<version>.jar).
BOOT_SERVERS = (("tomcat", "tomcat-embed-core-"), ("jetty", "jetty-server-"), ("netty", "reactor-netty-http-"))
# The classes that say the same of a jar that is not Boot (a plain or shaded jar, relocated or not).
CLASS_SERVERS = (("tomcat", "org/apache/catalina/startup/Tomcat.class"),
                 ("jetty", "org/eclipse/jetty/server/Server.class"),
                 ("netty", "reactor/netty/http/server/HttpServer.class"))
# Boot's own pool properties, by server; Reactor Netty's event loops are its system property.
POOL_PROPERTY = {"tomcat": "server.tomcat.threads", "jetty": "server.jetty.threads"}
# Tomcat's and Jetty's minimum spare threads default above small pools (10 and 8): a pool of N keeps min(N, them).
MIN_SPARE_DEFAULT = {"tomcat": 10, "jetty": 8}


@dataclass(frozen=True)
class Jar:
    """What the lab read of a jar before starting it."""
    path: Path
    name: str              # the app's name in the run: the jar's file name less .jar
    main: str              # its Main-Class (Boot's launcher) or Start-Class
    boot: str              # Spring Boot's version, "" for a jar that is not Boot
    servers: tuple         # the servers it carries: ("tomcat",), ("jetty", "tomcat") (the lab's own jars), ()
    stack: str             # Boot: "servlet" (spring-webmvc) or "reactive" (spring-webflux); "" otherwise

    @property
    def describe(self):
        kind = f"Spring Boot {self.boot}, {self.stack or 'no web'} stack" if self.boot else "not Spring Boot"
        return f"{self.path.name} ({kind}; carries {', '.join(self.servers) or 'no server the lab knows'})"


def inspect(text):
    """The jar APP_JAR names, read (UsageError when it is not there, not a jar, or not executable)."""
    path = Path(text).expanduser()
    path = path if path.is_absolute() else ROOT / path
    if not path.is_file():
        raise UsageError(f"APP_JAR: '{text}' is not there (a path from the repository's root, or absolute)")
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            manifest = z.read("META-INF/MANIFEST.MF").decode(errors="replace") if "META-INF/MANIFEST.MF" in names else ""
    except (zipfile.BadZipFile, OSError) as e:
        raise UsageError(f"APP_JAR: '{text}' is not a jar ({e})")
    fields = dict(re.findall(r"^([A-Za-z-]+): *(.*?)\r?$", manifest.replace("\r\n ", "").replace("\n ", ""), re.M))
    if not fields.get("Main-Class"):
        raise UsageError(f"APP_JAR: '{text}' is not an executable jar: its manifest has no Main-Class (java -jar "
                         f"could not start it)")
    boot = fields.get("Spring-Boot-Version", "")
    libs = [n.rsplit("/", 1)[-1] for n in names if n.startswith("BOOT-INF/lib/")]
    if boot:
        servers = tuple(s for s, prefix in BOOT_SERVERS if any(lib.startswith(prefix) for lib in libs))
        if len(servers) > 1:
            # Boot's WebFlux starter brings reactor-netty; a servlet server beside it is the one Boot starts
            servers = tuple(s for s in servers if s != "netty")
        stack = ("servlet" if any(lib.startswith("spring-webmvc-") for lib in libs)
                 else "reactive" if any(lib.startswith("spring-webflux-") for lib in libs) else "")
    else:
        # endswith: a shaded jar relocates them (WireMock's: wiremock/org/eclipse/jetty/server/Server.class)
        servers, stack = tuple(s for s, cls in CLASS_SERVERS if any(n.endswith(cls) for n in names)), ""
    name = re.sub(r"[^a-z0-9]+", "-", path.name.removesuffix(".jar").lower()).strip("-") or "app"
    return Jar(path, name, fields.get("Start-Class") or fields["Main-Class"], boot, tuple(sorted(servers)), stack)


def read(environ, mode):
    """A planner's jar (the cost card, the sweep, degrade), read and registered as an app before the planner
    reads its variants, which may name it beside the lab's apps (a run of its own registers it once every
    setting is checked: parse)."""
    text = (environ.get("APP_JAR") or "").strip()
    if not text or mode not in BESIDE:
        return
    jar = inspect(text)
    if jar.name in catalog.load():
        raise UsageError(f"APP_JAR with {BESIDE[mode]}: {jar.path.name} has the name of one of the lab's apps, beside "
                         f"which it would run: rename the jar")
    register(jar, jar.servers[0] if len(jar.servers) == 1 else UNKNOWN_CONTAINER)


def parse(v, environ, scenario_names, loadgens, mode):
    """APP_JAR and its settings, checked against the rest: {} without APP_JAR, else the jar, what the load
    calls and the jar's arguments, and in a run of its own (SCENARIO=call) the matrix's axes for it (apps,
    containers, threads). UsageError for every combination the lab would have to guess, or cannot run yet."""
    text = v.get("APP_JAR", "").strip()
    if not text:
        for name in ("APP_PATH", "APP_BACKEND"):
            if environ.get(name, "").strip():
                raise UsageError(f"{name} goes with APP_JAR (your own service's jar)")
        return {}
    jar = inspect(text)
    for name, why in (("CLIENT", "its HTTP client is its own"), ("WORK", "the lab's --work is the lab's apps' flag"),
                      ("BACKEND", "the backend is remote-sleep, so far (BACKEND=postgres: not yet)")):
        if environ.get(name, "").strip():
            raise UsageError(f"{name} with APP_JAR: {why}")
    others = [sc for sc in scenario_names if sc not in ("call", *BESIDE)] + ([mode] if mode not in ("matrix", *BESIDE) else [])
    if others:
        raise UsageError(f"APP_JAR runs SCENARIO=call (wrk, vegeta), the sweep, degrade and the cost card, not "
                         f"{' '.join(others)}")
    path = v.get("APP_PATH", "/").strip()
    if not path.startswith("/") or any(c.isspace() for c in path):
        raise UsageError(f"APP_PATH: '{path}' is not a path like /orders/42")
    args = split_args("APP_ARGS", v.get("APP_ARGS", ""))
    own = {"jar": jar, "path": path, "args": args, "backend": split_args("APP_BACKEND", v.get("APP_BACKEND", ""))}
    taken = boot_conflicts(jar, args)
    if taken:
        raise UsageError(f"APP_ARGS sets {' '.join(taken)}: the lab sets that on a Boot jar itself (APP_PORT, "
                         f"the app's address, the MBeans its agent reads)")
    if mode in BESIDE:
        return {**own, **beside_the_lab(jar, environ, args, BESIDE[mode])}
    if environ.get("APPS", "").strip():
        raise UsageError("APPS and APP_JAR: APP_JAR runs your jar in place of the lab's apps; unset APPS "
                         "(compare it with them through make compare, or beside them on the cost card)")
    threads = threads_of(jar, environ.get("THREADS", "").strip(), args)
    if not jar.boot and not any("{port}" in a for a in args):
        raise UsageError(f"APP_JAR: {jar.path.name} is not Spring Boot, so the lab cannot tell it its port: put "
                         f"{{port}} (and {{host}}) where its arguments take them in APP_ARGS, eg, APP_ARGS=\"--port {{port}}\"")
    container = container_of(jar, split_list(environ.get("CONTAINERS", "")))
    register(jar, container)
    return {**own, "apps": [jar.name], "containers": [container], "threads": threads}


def beside_the_lab(jar, environ, args, variants):
    """A planner's run (variants: its setting, COST_VARIANTS, SWEEP_VARIANTS or DEGRADE_VARIANTS): the jar is
    one of its variants, beside the lab's apps or alone (the planner set APPS, CONTAINERS and THREADS from
    them). Only a Boot jar: each variant's pool is set through Boot's properties."""
    if not jar.boot:
        raise UsageError(f"APP_JAR with {variants}: {jar.path.name} is not Spring Boot, and a variant sets its "
                         f"JVM's pool, which the lab can do only through Boot's own properties (run it on its own "
                         f"pool with SCENARIO=call)")
    if jar.name not in split_list(environ.get("APPS", "")):
        raise UsageError(f"APP_JAR with {variants}: it names no variant of {jar.name} (eg, "
                         f"{jar.name}@{(jar.servers or ('tomcat',))[0]}:200 beside the lab's)")
    threads_of(jar, "1", args)        # a pool set in APP_ARGS too is refused, as in a run of its own
    return {}


def split_args(name, text):
    try:
        return shlex.split(text)
    except ValueError as e:
        raise UsageError(f"{name}: {e} in '{text}'")


def threads_of(jar, given, args):
    """THREADS for a jar: its own pool (OWN) when unset; for a Boot jar, the pools to map onto Boot's
    properties; refused for a jar that is not Boot (the lab would have to guess its flags)."""
    if not given:
        return [OWN]
    if not jar.boot:
        raise UsageError(f"THREADS with APP_JAR: {jar.path.name} is not Spring Boot, so its threads are its own: "
                         f"set them in APP_ARGS and leave THREADS unset (the lab reads the pool from the running JVM)")
    threads = split_list(given)
    server = (jar.servers or ("",))[0]
    for t in threads:
        if is_virtual(t) and server == "netty":
            raise UsageError(f"THREADS: '{t}' with {jar.path.name}: virtual threads do not apply to Reactor Netty's event loops")
    taken = [a for a in args if any(a.startswith(f"--{p}") for p in (*POOL_PROPERTY.values(), "spring.threads.virtual"))
             or a.startswith("-Dreactor.netty.ioWorkerCount")]
    if taken:
        raise UsageError(f"THREADS and APP_ARGS both set the pool ({' '.join(taken)}): set it in one place")
    return threads


def container_of(jar, containers):
    """The one container the jar runs: the one it carries, or the one CONTAINERS names among several
    (the lab's own jars carry Jetty and Tomcat: which one APP_ARGS starts); the agent reads it again."""
    if containers:
        if len(containers) > 1 or containers[0] not in jar.servers:
            raise UsageError(f"CONTAINERS with APP_JAR names the one of {', '.join(jar.servers) or 'none'} that "
                             f"{jar.path.name} runs, not '{' '.join(containers)}'")
        return containers[0]
    if len(jar.servers) > 1:
        raise UsageError(f"APP_JAR: {jar.path.name} carries {' and '.join(jar.servers)}: say which one its APP_ARGS "
                         f"starts with CONTAINERS (one of them)")
    return jar.servers[0] if jar.servers else UNKNOWN_CONTAINER


def register(jar, container):
    """The jar as the run's one app (catalog.APPS, for this process). Not thread per request at plan
    time: the lab does not know its model before it runs; the report judges it from what it read."""
    catalog.APPS[jar.name] = catalog.AppInfo(jar.name, "", FAMILY, False, (container,), ("call",),
                                             (catalog.DEFAULT_CLIENT,), f"your own service: {jar.describe}")
    catalog.MODULE_OF[jar.name] = ""


def is_foreign(app):
    info = catalog.APPS.get(app)
    return info is not None and info.family == FAMILY


def unregister(name):
    """Tests: the catalog as catalog.tsv has it again."""
    fresh = catalog.load()
    for table, value in ((catalog.APPS, fresh.get(name)), (catalog.MODULE_OF, fresh.get(name) and fresh[name].module)):
        if value is None:
            table.pop(name, None)
        else:
            table[name] = value


# ---- the command line

def pool_settings(jar, threads):
    """(JVM flags, app arguments, what they say) for a Boot jar's THREADS value; nothing for OWN."""
    if threads == OWN:
        return [], [], "threads=app (its own pool, read from the running JVM)"
    server = (jar.servers or ("",))[0]
    if server == "netty":
        # Reactor Netty's own system property: its event loops (Boot has no property of its own for it)
        flag = f"-Dreactor.netty.ioWorkerCount={threads}"
        return [flag], [], f"threads={threads} → {flag}"
    if is_virtual(threads):
        n = threads[1:]
        jvm = [f"-Djdk.virtualThreadScheduler.parallelism={n}", f"-Djdk.virtualThreadScheduler.maxPoolSize={n}"]
        args = ["--spring.threads.virtual.enabled=true"]
        return jvm, args, f"threads={threads} → {' '.join(args + jvm)}"
    prefix = POOL_PROPERTY.get(server)
    if prefix is None:
        raise UsageError(f"THREADS with {jar.path.name}: no Boot pool property for its server")
    spare = min(int(threads), MIN_SPARE_DEFAULT[server])
    args = [f"--{prefix}.max={threads}", f"--{prefix}.min-spare={spare}"]
    return [], args, f"threads={threads} → {' '.join(args)}"


def on_host(jar):
    """The jar's path in an app host's lab_dir (HOSTS)."""
    return f"{HOST_DIR}/{jar.path.name}"


def command_tail(ctx, jar, threads, host, port, admin_port, remote_base, sleep_ms, remote=False):
    """What follows `java <the lab's JVM flags>`: the pool's JVM flags, the agent, -jar, and the jar's
    arguments (the lab's for a Boot jar, APP_BACKEND's, APP_ARGS); and the cell's lab: line. remote: the
    app runs on a host (HOSTS), where the jars are in its lab_dir, the command's directory."""
    jvm, pool_args, mapping = pool_settings(jar, threads)
    values = {"port": str(port), "host": host, "url": f"{remote_base}/sleep?ms={sleep_ms}", "remote": remote_base}
    fill = [_fill(a, values) for a in (*ctx["backend"], *ctx["args"])]
    # Boot's own properties for where it listens, and Tomcat's MBean registry, which Boot turns off and the
    # agent reads the pool from (~2 MB of heap, Boot's docs say). A user's own setting of these is refused.
    boot = ([f"--server.port={port}", f"--server.address={host}"]
            + (["--server.tomcat.mbeanregistry.enabled=true"] if "tomcat" in jar.servers else [])) if jar.boot else []
    agent = agent_flag(host, admin_port, jar.name, remote)
    line = (f"lab: app={jar.name} jar={jar.describe} {mapping} listen=http://{host}:{port}{ctx['path']} "
            f"agent=http://{host}:{admin_port}/stats" + (f" boot: {' '.join(boot)}" if boot else "")
            + f" args: {' '.join(shlex.quote(a) for a in fill) or '(none)'}")
    return [*jvm, agent, "-jar", on_host(jar) if remote else str(jar.path), *boot, *pool_args, *fill], line


def agent_flag(host, port, app, remote=False):
    """The JVM flag that puts the lab's agent beside an app: /stats on host:port (0: a free port, for a
    lab app whose own admin port the bench reads, the agent only priced: a cost variant's +agent).
    remote: on a host, the agent in its lab_dir."""
    path = AGENT_JAR.relative_to(ROOT) if remote else AGENT_JAR
    return f"-javaagent:{path}=host={host},port={port},app={app}"


def _fill(arg, values):
    for key, value in values.items():
        arg = arg.replace("{" + key + "}", value)
    return arg


def boot_conflicts(jar, args):
    """APP_ARGS that set what the lab sets on a Boot jar itself (a property given twice reads as a list)."""
    if not jar.boot:
        return []
    own = ("--server.port", "--server.address", "--server.tomcat.mbeanregistry.enabled")
    return [a for a in args if a.split("=", 1)[0] in own]


# ---- a started jar: why it did not start, the proof it calls its backend, how it drains

def start_failure(reason, proc, log, s, host):
    """web.wait_ready's reason, said for a jar: the last lines of its log when it exited, which port never
    opened when it did not answer (START_TIMEOUT)."""
    lines = [line for line in procs.read_lines(log) if line.strip() and not line.startswith(("lab-agent: ", "host-run: "))]
    if reason.startswith("exited at start"):
        tail = " | ".join(line.strip()[:200] for line in lines[-5:])
        return f"the jar exited at start; its last log lines: {tail or '(none)'}"
    closed = [f"{name} {port}" for name, port in (("APP_PORT", s.app_port), ("ADMIN_PORT (the lab's agent)", s.admin_port))
              if not web.port_open(port, host)]
    return (f"the jar did not answer within {s.start_timeout} s (START_TIMEOUT): "
            + (f"nothing listens on {' and '.join(closed)} of {host}" if closed else "its ports are open, the agent's /stats silent")
            + ("; a jar that is not Spring Boot is told its port only through {port} in APP_ARGS" if closed and not s.foreign["jar"].boot else ""))


def verify(lab, cell, out, stats_url):
    """GET APP_PATH once: a 2xx answer, remote-sleep's call count up by at least one while it ran (the app
    calls the backend it was given), and the running JVM as the plan has it (its container; for a Boot
    jar, the pool THREADS set, read back from the JVM). None, or why not. No token goes with the request:
    the token is the agent's, and the app's own code has no business with it."""
    s = lab.s
    backend = lab.url(s.remote_port, "/stats")
    before = (web.get_json(backend) or {}).get("completed")
    try:
        code, body = web.http(lab.url(s.app_port, cell.path), timeout=s.sleep_ms / 1000 + 10, token=False)
    except OSError as e:
        return f"verify: GET {cell.path} failed: {getattr(e, 'reason', e)}"
    out.write_bytes(body)
    head = body[:200].decode(errors="replace").replace("\n", " ")
    if not 200 <= code < 300:
        return f"verify: GET {cell.path} answered HTTP {code}: {head}"
    after = (web.get_json(backend) or {}).get("completed")
    if before is not None and after is not None and after <= before:
        return (f"the app did not call the backend it was given: remote-sleep counted 0 calls during GET {cell.path} "
                f"(it answered '{head[:80]}'): check APP_BACKEND")
    return running_as_planned(cell, web.get_json(stats_url) or {})


def running_as_planned(cell, stats):
    """None, or how the running JVM differs from the cell: another container than the jar's, or a Boot
    pool that THREADS set and the JVM does not have (a mapping that did not take)."""
    read = stats.get("container")
    if cell.container != UNKNOWN_CONTAINER and read not in (None, "unknown", cell.container):
        return f"the jar runs {read}, not {cell.container}: set CONTAINERS to the one its APP_ARGS starts"
    if cell.threads != OWN and "threads" in stats and str(stats["threads"]) != cell.threads:
        pool = stats.get("pool") or {}
        return (f"THREADS={cell.threads} did not take: the running JVM's pool reads {stats['threads']} "
                f"({pool.get('source', 'the agent')})")
    return None


def drain_url(app_stats_url, backend_stats_url):
    """Where the bench waits for the app to drain: the agent's /stats where it reads requests in flight,
    else remote-sleep's (nothing waiting at the backend: the app's requests that called it are answered)."""
    stats = web.get_json(app_stats_url) or {}
    return app_stats_url if "inFlight" in stats else backend_stats_url


# ---- the report: what the running JVM said of itself

def cell_params(s):
    """What a foreign cell's record keeps of the jar (cell.json params), for the report, which runs
    without the catalog entry: its name, Boot version, stack and servers."""
    jar = s.foreign["jar"]
    return {"app_jar": {"jar": jar.path.name, "boot": jar.boot, "stack": jar.stack, "servers": list(jar.servers),
                        "path": s.foreign["path"]}}


def judged(r, stats):
    """A foreign cell read from what its JVM said (the agent's /stats when the load ended), or None for the
    lab's own apps or a cell whose JVM said nothing: its pool as read (threads: 8, "v1", or "app" where
    unknown), whether it holds a thread per request, and why. Thread per request only where both are read: a Boot jar of the servlet
    stack (spring-webmvc) on a platform pool the agent read; then its bound is pool / wait, and a cell
    that serves above it says it is not (above_pool)."""
    own = (r.params or {}).get("app_jar")
    if not own or not stats:          # nothing read (a SKIPPED cell, or one that never started): as planned
        return None
    pool, unknown = stats.get("pool") or {}, stats.get("unknown") or {}
    threads = stats.get("threads")
    if threads is None:
        why = unknown.get("pool") or unknown.get("threads") or "the agent read no pool"
        return {"threads": OWN, "pool_mode": "unknown", "thread_per_request": False,
                "bound_how": f"pool unknown ({why}): the bound counts connections"}
    virtual = isinstance(threads, str) and threads.startswith("v")
    mode = "virtual" if virtual else ("event-loop" if pool.get("executor") == "event-loop" else "platform")
    tpr = own.get("stack") == "servlet" and mode == "platform"
    how = (f"a thread per request: Spring MVC (spring-webmvc in the jar) on a platform pool of {threads} read from "
           f"{pool.get('source', 'the JVM')}" if tpr else None)
    return {"threads": threads, "pool_mode": mode, "thread_per_request": tpr, "bound_how": how}


def above_pool(rec, conns, wait_s):
    """A cell judged thread per request that served more than its pool allows is not: its bound goes back
    to the connections', and the cell says so (a controller that returns async frees its thread)."""
    if not rec.get("thread_per_request") or rec.get("rps") is None or rec["bound_rps"] is None:
        return
    if rec["rps"] <= rec["bound_rps"] * 1.01:
        return
    rec["bound_how"] = (f"served {rec['rps']:g} req/s, above the {rec['bound_rps']:g} req/s its pool allows one "
                        f"request per thread: not thread per request; the bound counts connections")
    rec["thread_per_request"], rec["bound_rps"] = False, round(conns / wait_s, 2)


def fields(stats, r):
    """The report's own figures of a foreign cell: the jar, the pool as read and where from, and every
    figure the agent could not read, with its reason."""
    return {"app_jar": r.params["app_jar"], "pool_read": stats.get("pool") or None,
            "container_read": stats.get("container"), "not_read": stats.get("unknown") or {}}
