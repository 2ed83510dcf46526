"""The matrix as data: a cell (one app, container, pool and load, in run order), the combinations that
do not exist and why, and the order in which one JVM may take a matrix's pools. Each scenario makes
its own cells of one app x container x pool (Scenario.cells); a planner (the sweep) its whole matrix."""
from dataclasses import dataclass

from . import catalog, db, foreign, scenarios
from .checks import is_virtual


@dataclass
class Cell:
    index: int
    scenario: str             # its scenario's name (scenarios.get)
    app: str
    container: str
    threads: str          # "1", "200" or "v1", as --threads takes it
    wrk_threads: int      # wrk cells; None for vegeta's
    connections: int      # wrk cells; None for vegeta's
    loadgen: str = "wrk"  # wrk (closed loop), vegeta (open loop at RATE), or probe (one request at a time)
    round: int = 1        # REPEAT: which round of the matrix
    path: str = ""        # what the load calls (the scenario's path)
    variant: str = ""     # a planner's (the sweep's) variant this cell belongs to
    client: str = catalog.DEFAULT_CLIENT   # the app's outbound HTTP client (--client)
    app_args: tuple = ()  # a planner's extra app flags for this cell (PRESET=2021's capped client pool)
    wrk_timeout: str = "" # a planner's wrk --timeout for this cell (PRESET=2021: wrk's default 2 s)
    db_driver: str = ""   # BACKEND=postgres: the app's database driver (--db-driver); "" = the HTTP backend
    carriers: int = 0     # a JVM that may switch to virtual threads pins their scheduler to this many carriers at start (plan)
    agent: bool = False   # the lab's agent beside the app (a cost variant's +agent: what it costs)

    @property
    def pool_mode(self):
        if self.container in catalog.EVENT_LOOP:
            return "event-loop"
        return "virtual" if is_virtual(self.threads) else "platform"

    @property
    def thread_per_request(self):
        """At most `threads` requests in flight. Not on virtual threads: a blocked virtual thread
        holds no carrier, so connections bound it, not N."""
        return catalog.thread_per_request(self.app) and self.pool_mode == "platform"

    @property
    def grows_pool(self):
        """A pool on Jetty or Tomcat, in a scenario that allows it (not a sweep's variant): its JVM
        may be one that ran a smaller pool, given this one (App.resize: grown, or switched to
        virtual threads and back) and warmed again. Netty's event loops are fixed at start, and so
        is the number of carriers: vN only where the JVM pinned N at its start (`carriers`)."""
        if self.pool_mode == "event-loop" or self.variant or not self.scene.grows_pool or foreign.is_foreign(self.app):
            return False
        return self.pool_mode == "platform" or self.threads == f"v{self.carriers}"

    @property
    def app_key(self):
        # The round too: each REPEAT round starts its apps afresh, so that its figures are another
        # JVM's (two JVMs of one app settle at different CPU costs: docs/traps.md #39). The pool
        # size only where the JVM cannot grow its pool.
        pool = "grows" if self.grows_pool else self.threads
        return self.round, self.app, self.container, pool, self.client, self.app_args, self.db_driver, self.agent

    @property
    def client_suffix(self):
        """The client in names and labels, only when it is not the default (old runs keep their names)."""
        return "" if self.client == catalog.DEFAULT_CLIENT else self.client

    @property
    def dir_name(self):
        rnd = "" if self.round == 1 else f"r{self.round}-"
        scenario = "" if self.scenario == scenarios.DEFAULT else f"{self.scenario}-"
        load = f"w{self.wrk_threads}-c{self.connections}" if self.loadgen == "wrk" else self.loadgen
        client = f"-{self.client_suffix}" if self.client_suffix else ""
        driver = f"-{self.db_driver}" if self.db_driver else ""
        agent = "-agent" if self.agent else ""
        return f"{self.index:02d}-{rnd}{scenario}{self.app}-{self.container}-t{self.threads}{client}{driver}{agent}-{load}"

    @property
    def label(self):
        rnd = "" if self.round == 1 else f"round {self.round}: "
        scenario = "" if self.scenario == scenarios.DEFAULT else f"{self.scenario} "
        load = {"wrk": f"wrk-t={self.wrk_threads} c={self.connections}", "vegeta": "vegeta (open loop)",
                "probe": "one request at a time"}[self.loadgen]
        client = f" client={self.client_suffix}" if self.client_suffix else ""
        driver = f" db={self.db_driver}" if self.db_driver else ""
        agent = " +agent" if self.agent else ""
        return f"{rnd}{scenario}{self.app} {self.container} threads={self.threads}{client}{driver}{agent} {load}"

    def skip_reason(self, java_major):
        """Why this machine cannot run the cell (it stays in the matrix as SKIPPED), or None."""
        if is_virtual(self.threads) and java_major < 21:
            return f"virtual threads need JDK 21+ (running {java_major})"
        return self.scene.skip_reason(self.app, java_major)

    @property
    def scene(self):
        return scenarios.get(self.scenario)


def left_out_because(app, container, threads, client=catalog.DEFAULT_CLIENT):
    """(why, what) when a combination does not exist at all (it is not a cell), else None."""
    if client not in catalog.APPS[app].clients:
        only = [a for a in catalog.APPS if catalog.APPS[a].clients == catalog.APPS[app].clients]
        return (f"the {catalog.APPS[app].family} apps call out with the {' or '.join(catalog.APPS[app].clients)} "
                f"client only (one client per model is what they compare)", f"{client} client for {', '.join(only)}")
    if not catalog.runs_on(app, container):
        others = [a for a in catalog.APPS if catalog.runs_on(a, container)]
        return (f"{container} runs only the {', '.join(others)} app (Reactor Netty has no servlet API)",
                f"{app} on {container}")
    if container in catalog.EVENT_LOOP and is_virtual(threads):
        return (f"virtual threads do not apply to Netty's event loops",
                f"{' '.join(a for a in catalog.APPS if catalog.runs_on(a, container))} on {container} "
                f"with THREADS {threads}")
    return None


def pool_rank(threads):
    """The order in which one JVM can take a matrix's pools (App.resize): platform pools as they
    grow, and vN where a 1-thread pool is, since on Jetty it runs on as few platform threads (a
    selector and a spare), and no pool shrinks. THREADS="1 200 v1" runs 1, v1, 200."""
    if not is_virtual(threads) and not threads.isdigit():
        return (0, 0)                  # a foreign app's own pool (foreign.OWN): it is never grown
    return (1, 1) if is_virtual(threads) else (int(threads), 0)


def path_of(s, app, scene):
    """What the load calls on an app: its scenario's path, or APP_PATH on APP_JAR's jar."""
    return s.foreign["path"] if foreign.is_foreign(app) else scene.path(s)


def plan(s):
    """The cells in run order (round outermost: the whole matrix, then again, so drift spreads
    evenly over the rounds; then scenario, container, app, pool, and each scenario's own cells:
    wrk settings, then the open loop), and one sentence per reason for the combinations left out.
    A planner (the sweep) makes a matrix of its own."""
    if s.mode != "matrix":
        def make(app, container, threads, wt, conns, variant, client=catalog.DEFAULT_CLIENT, app_args=(),
                 wrk_timeout="", db_driver=""):
            return Cell(len(cells) + 1, scenarios.DEFAULT, app, container, threads, wt, conns,
                        path=path_of(s, app, scenarios.get(scenarios.DEFAULT)), variant=variant, client=client,
                        app_args=tuple(app_args), wrk_timeout=wrk_timeout, db_driver=db_driver or "")
        cells, planner = [], scenarios.get(s.mode)
        for c in planner.plan(s, lambda *a, **k: make(*a, **k)):
            c.index = len(cells) + 1
            cells.append(c)
        return cells, planner.left_out(s)
    cells, left_out = [], {}
    for rnd in range(1, s.repeat + 1):
        for name in s.scenarios:
            scene = scenarios.get(name)
            for container in s.containers:
                for app in scene.apps(s):
                    gap = db.left_out_because(s, app, name)
                    if gap:
                        why, what = gap
                        if what not in left_out.setdefault(why, []):
                            left_out[why].append(what)
                        continue
                    # A JVM takes its pools in pool_rank's order, and pins the carriers of the first vN
                    carriers = next((int(t[1:]) for t in s.threads if is_virtual(t)), 0) if scene.grows_pool else 0
                    for threads in sorted(s.threads, key=pool_rank) if scene.grows_pool and not s.foreign else s.threads:
                        for client in s.clients:
                            gap = left_out_because(app, container, threads, client)
                            if gap:
                                why, what = gap
                                if what not in left_out.setdefault(why, []):
                                    left_out[why].append(what)
                                continue
                            for driver in db.drivers_of(s, app):    # [None] with BACKEND=http
                                def make(loadgen, wt, conns):
                                    return Cell(len(cells) + 1, name, app, container, threads, wt, conns, loadgen,
                                                rnd, path_of(s, app, scene), client=client, db_driver=driver or "",
                                                carriers=carriers)
                                for cell in scene.cells(s, make, s.loadgens):
                                    cell.index = len(cells) + 1
                                    cells.append(cell)
    return cells, [f"{why}: no {', '.join(what)}" for why, what in left_out.items()]
