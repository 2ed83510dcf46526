"""APP_JAR (issue 48), without a server: what the lab reads of a jar before it starts it, every setting it
refuses with the reason, the command line and lab: line it makes (Boot's THREADS mapping), and how the
report reads a foreign cell from what its JVM said. The jars are made here (zip files with a manifest
and the names the lab looks for); the smoke test runs real ones.

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench -p test_foreign.py
"""
import tempfile
import unittest
import zipfile
from pathlib import Path

from labbench import catalog, foreign
from labbench.main import host_jars
from labbench.plan import plan
from labbench.record import CellRecord
from labbench.report import figures
from labbench.settings import UsageError, parse

BOOT_LIBS = ("spring-webmvc-7.0.1.jar", "tomcat-embed-core-11.0.14.jar", "spring-boot-4.0.0.jar")


def make_jar(folder, name, main="example.Main", boot="", libs=(), classes=()):
    path = Path(folder, name)
    with zipfile.ZipFile(path, "w") as z:
        manifest = "Manifest-Version: 1.0\n" + (f"Main-Class: {main}\n" if main else "")
        if boot:
            manifest += f"Spring-Boot-Version: {boot}\nStart-Class: example.orders.OrdersApplication\n"
        z.writestr("META-INF/MANIFEST.MF", manifest)
        for lib in libs:
            z.writestr(f"BOOT-INF/lib/{lib}", b"")
        for cls in classes:
            z.writestr(cls, b"")
    return path


class Jars(unittest.TestCase):
    """A Boot jar and a plain one in a folder of the test's own."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name
        self.boot = make_jar(self.dir, "boot-service.jar", boot="4.0.0", libs=BOOT_LIBS)
        self.plain = make_jar(self.dir, "Plain_Server-1.2.jar", classes=("org/eclipse/jetty/server/Server.class",))


class ForeignTest(Jars):

    def settings(self, **env):
        s = parse({k: str(v) for k, v in env.items()})
        for app in s.apps:
            self.addCleanup(foreign.unregister, app)
        return s

    def refused(self, words, **env):
        with self.assertRaises(UsageError) as e:
            self.settings(**env)
        self.assertIn(words, str(e.exception))

    def test_a_boot_jar_is_read_before_it_starts(self):
        jar = foreign.inspect(str(self.boot))
        self.assertEqual((jar.name, jar.boot, jar.servers, jar.stack, jar.main),
                         ("boot-service", "4.0.0", ("tomcat",), "servlet", "example.orders.OrdersApplication"))
        reactive = foreign.inspect(str(make_jar(self.dir, "rx.jar", boot="4.0.0",
                                                libs=("spring-webflux-7.0.1.jar", "reactor-netty-http-1.3.0.jar"))))
        self.assertEqual((reactive.servers, reactive.stack), (("netty",), "reactive"))

    def test_the_run_is_the_jar_alone_on_its_own_pool(self):
        s = self.settings(APP_JAR=self.boot, APP_PATH="/orders/42")
        self.assertEqual((s.apps, s.containers, s.threads), (["boot-service"], ["tomcat"], [foreign.OWN]))
        cells, _ = plan(s)
        self.assertEqual([(c.app, c.container, c.threads, c.path, c.grows_pool) for c in cells],
                         [("boot-service", "tomcat", "app", "/orders/42", False)] * 2)
        self.assertEqual(catalog.APPS["boot-service"].family, foreign.FAMILY)

    def test_boot_threads_map_onto_boots_own_properties(self):
        s = self.settings(APP_JAR=self.boot, THREADS="200 8 v1", WRK_THREADS=10)
        jar = s.foreign["jar"]
        self.assertEqual(foreign.pool_settings(jar, "8"), ([], ["--server.tomcat.threads.max=8",
                                                                "--server.tomcat.threads.min-spare=8"],
                                                           "threads=8 → --server.tomcat.threads.max=8 --server.tomcat.threads.min-spare=8"))
        jvm, args, _ = foreign.pool_settings(jar, "v1")
        self.assertEqual((jvm, args), (["-Djdk.virtualThreadScheduler.parallelism=1", "-Djdk.virtualThreadScheduler.maxPoolSize=1"],
                                       ["--spring.threads.virtual.enabled=true"]))
        self.assertEqual([c.threads for c in plan(s)[0]], ["200", "8", "v1"])

    def test_the_command_tells_the_jar_its_port_backend_and_agent(self):
        s = self.settings(APP_JAR=self.boot, APP_BACKEND="--downstream.url={url}", THREADS="8")
        tail, line = foreign.command_tail(s.foreign, s.foreign["jar"], "8", "127.0.0.1", 8080, 8081,
                                          "http://127.0.0.1:9000", 1000)
        self.assertEqual(tail, [f"-javaagent:{foreign.AGENT_JAR}=host=127.0.0.1,port=8081,app=boot-service", "-jar",
                                str(self.boot), "--server.port=8080", "--server.address=127.0.0.1",
                                "--server.tomcat.mbeanregistry.enabled=true", "--server.tomcat.threads.max=8",
                                "--server.tomcat.threads.min-spare=8", "--downstream.url=http://127.0.0.1:9000/sleep?ms=1000"])
        self.assertIn("threads=8 → --server.tomcat.threads.max=8", line)
        plain = self.settings(APP_JAR=self.plain, APP_ARGS="--listen {host}:{port} --to {remote}")
        tail, _ = foreign.command_tail(plain.foreign, plain.foreign["jar"], foreign.OWN, "127.0.0.1", 8080, 8081,
                                       "http://127.0.0.1:9000", 1000)
        self.assertEqual(tail[-4:], ["--listen", "127.0.0.1:8080", "--to", "http://127.0.0.1:9000"])

    def test_on_a_host_the_jar_and_the_agent_are_in_its_lab_dir(self):
        s = self.settings(APP_JAR=self.boot, THREADS="8")
        tail, _ = foreign.command_tail(s.foreign, s.foreign["jar"], "8", "10.0.0.11", 8080, 8081, "http://10.0.0.12:9000",
                                       1000, remote=True)
        self.assertEqual(tail[:3], ["-javaagent:lab-agent/target/lab-agent.jar=host=10.0.0.11,port=8081,app=boot-service",
                                    "-jar", ".apps/boot-service.jar"])
        # what inventory.check compares there: the jar in .apps with this one, the agent with this build's
        jars = host_jars(s)["app"]
        self.assertEqual(jars, {"lab-agent/target/lab-agent.jar": "lab-agent/target/lab-agent.jar",
                                ".apps/boot-service.jar": str(self.boot)})

    def test_every_bad_input_is_refused_with_its_reason(self):
        not_a_jar = Path(self.dir, "notes.jar")
        not_a_jar.write_text("hello")
        library = make_jar(self.dir, "library.jar", main="")
        for words, env in [
                ("is not there", {"APP_JAR": f"{self.dir}/missing.jar"}),
                ("is not a jar", {"APP_JAR": not_a_jar}),
                ("not an executable jar: its manifest has no Main-Class", {"APP_JAR": library}),
                ("is not Spring Boot, so its threads are its own: set them in APP_ARGS",
                 {"APP_JAR": self.plain, "THREADS": "8", "APP_ARGS": "--port {port}"}),
                ("cannot tell it its port: put {port}", {"APP_JAR": self.plain}),
                ("APPS and APP_JAR", {"APP_JAR": self.boot, "APPS": "sync-servlet"}),
                ("THREADS and APP_ARGS both set the pool", {"APP_JAR": self.boot, "THREADS": "8",
                                                            "APP_ARGS": "--server.tomcat.threads.max=8"}),
                ("APP_ARGS sets --server.port", {"APP_JAR": self.boot, "APP_ARGS": "--server.port=9999"}),
                ("runs SCENARIO=call (wrk, vegeta), the sweep, degrade and the cost card, not slow-upload", {"APP_JAR": self.boot, "SCENARIO": "slow-upload"}),
                ("BACKEND with APP_JAR", {"APP_JAR": self.boot, "BACKEND": "postgres"}),
                ("APP_PATH: 'orders'", {"APP_JAR": self.boot, "APP_PATH": "orders"}),
                ("APP_BACKEND goes with APP_JAR", {"APP_BACKEND": "--x={url}"}),
                ("CONTAINERS with APP_JAR names the one of tomcat", {"APP_JAR": self.boot, "CONTAINERS": "jetty"})]:
            with self.subTest(words=words):
                self.refused(words, **env)
        self.assertNotIn("boot-service", catalog.APPS)      # nothing registered by a refused run

    def test_the_lab_s_own_jar_says_which_container(self):
        both = make_jar(self.dir, "sync-servlet.jar", classes=("org/eclipse/jetty/server/Server.class",
                                                               "org/apache/catalina/startup/Tomcat.class"))
        self.refused("carries jetty and tomcat: say which one", APP_JAR=both, APP_ARGS="--port {port}")
        s = self.settings(APP_JAR=both, APP_ARGS="--port {port}", CONTAINERS="tomcat")
        self.assertEqual((s.apps, s.containers), (["sync-servlet"], ["tomcat"]))


class BesideTheLabTest(Jars):
    """The cost card: the jar as one of COST_VARIANTS beside the lab's apps (a Boot jar only)."""

    def cost(self, **env):
        self.addCleanup(foreign.unregister, "boot-service")
        return parse({"SCENARIO": "cost", **{k: str(v) for k, v in env.items()}}, "cost", n_cores=2)

    def test_a_boot_jar_is_a_variant_beside_the_lab_s(self):
        s = self.cost(APP_JAR=self.boot, APP_PATH="/orders/42", COST_VARIANTS="async-servlet:1 boot-service@tomcat:v1",
                      COST_FORKS=1, APP_ARGS="--spring.main.banner-mode=off")
        cells, _ = plan(s)
        self.assertEqual([(c.app, c.container, c.threads, c.path) for c in cells],
                         [("async-servlet", "jetty", "1", "/call"), ("boot-service", "tomcat", "v1", "/orders/42")])
        self.assertEqual((s.app_args, s.foreign["args"]), ([], ["--spring.main.banner-mode=off"]))   # the jar's only

    def test_what_the_card_cannot_run_is_refused(self):
        for words, env in [("is not Spring Boot, and a variant sets its JVM's pool",
                            {"APP_JAR": self.plain, "COST_VARIANTS": "plain-server-1-2@jetty:1"}),
                           ("COST_VARIANTS: it names no variant of boot-service", {"APP_JAR": self.boot}),
                           ("boot-service runs on tomcat only", {"APP_JAR": self.boot, "COST_VARIANTS": "boot-service@jetty:v1"})]:
            with self.subTest(words=words), self.assertRaises(UsageError) as e:
                self.cost(**env)
            self.assertIn(words, str(e.exception))
        mine = make_jar(self.dir, "sync-servlet.jar", boot="4.0.0", libs=BOOT_LIBS)
        with self.assertRaises(UsageError) as e:
            self.cost(APP_JAR=mine, COST_VARIANTS="sync-servlet:v1")
        self.assertIn("has the name of one of the lab's apps", str(e.exception))
        self.assertEqual(catalog.APPS["sync-servlet"].module, "sync-servlet")


    def planned(self, mode, **env):
        self.addCleanup(foreign.unregister, "boot-service")
        s = parse({**({"SWEEP": "100 200"} if mode == "sweep" else {"SCENARIO": mode}),
                   **{k: str(v) for k, v in env.items()}}, mode, n_cores=2)
        return s, *plan(s)

    def test_the_sweep_runs_it_at_every_level(self):
        s, cells, _ = self.planned("sweep", APP_JAR=self.boot, APP_PATH="/orders/42",
                                   SWEEP_VARIANTS="boot-service:8 boot-service:conns sync-servlet:200")
        self.assertEqual([(c.app, c.container, c.threads, c.connections, c.path) for c in cells][:4],
                         [("boot-service", "tomcat", "8", 100, "/orders/42"), ("boot-service", "tomcat", "8", 200, "/orders/42"),
                          ("boot-service", "tomcat", "100", 100, "/orders/42"), ("boot-service", "tomcat", "200", 200, "/orders/42")])
        self.assertEqual(cells[-1].path, "/call")

    def test_degrade_runs_it_without_the_lab_s_admission_limit(self):
        s, cells, left_out = self.planned("degrade", APP_JAR=self.boot, DEGRADE_VARIANTS="boot-service:200 sync-servlet:200",
                                          MAX_IN_FLIGHT="0 180")
        self.assertEqual([(c.app, c.app_args) for c in cells],
                         [("boot-service", ()), ("sync-servlet", ()), ("sync-servlet", ("--max-in-flight", "180"))])
        self.assertIn("no boot-service@tomcat:200 with MAX_IN_FLIGHT 180", left_out[0])
        with self.assertRaises(UsageError) as e:
            self.planned("sweep", APP_JAR=self.plain, SWEEP_VARIANTS="plain-server-1-2@jetty:1")
        self.assertIn("SWEEP_VARIANTS: Plain_Server-1.2.jar is not Spring Boot", str(e.exception))


class ReadFromTheJvmTest(unittest.TestCase):
    """The report's view of a foreign cell: its pool and model as its agent read them."""
    OWN = {"app_jar": {"jar": "boot-service.jar", "boot": "4.0.0", "stack": "servlet", "servers": ["tomcat"]}}

    def record(self, threads="app"):
        return CellRecord(app="boot-service", container="tomcat", threads=threads, connections=100, sleep_ms=1000,
                          params=self.OWN)

    def test_degrade_predicts_from_the_pool_read(self):
        from labbench.scenarios.degrade.figures import cell_prediction
        r = CellRecord(app="boot-service", container="tomcat", threads="200", sleep_ms=1000, rate=150,
                       params={**self.OWN, "fault": "delay=5000", "fault_for_ms": 10000})
        pool = {"threads": 200, "pool": {"executor": "platform", "max": 200, "source": "Tomcat:type=ThreadPool"}}
        self.assertIn("cap 200", cell_prediction(r, r.params, 10000, pool)["text"])        # as the lab's 200 threads
        self.assertAlmostEqual(cell_prediction(r, r.params, 10000, pool)["recovery_s"], 22, delta=0.5)
        self.assertIn("no cap", cell_prediction(r, r.params, 10000, {"threads": "v1", "pool": {"executor": "virtual"}})["text"])

    def test_the_pool_read_decides_the_bound(self):
        stats = {"threads": 8, "pool": {"executor": "platform", "max": 8, "source": "Tomcat:type=ThreadPool"}}
        view = foreign.judged(self.record(), stats)
        self.assertEqual((view["threads"], view["pool_mode"], view["thread_per_request"]), (8, "platform", True))
        self.assertIn("a platform pool of 8 read from Tomcat:type=ThreadPool", view["bound_how"])
        virtual = foreign.judged(self.record("v1"), {"threads": "v1", "pool": {"executor": "virtual"}})
        self.assertEqual((virtual["pool_mode"], virtual["thread_per_request"]), ("virtual", False))
        unknown = foreign.judged(self.record(), {"unknown": {"pool": "no Jetty MBean"}})
        self.assertEqual((unknown["threads"], unknown["thread_per_request"]), ("app", False))
        self.assertIn("pool unknown (no Jetty MBean)", unknown["bound_how"])
        self.assertIsNone(foreign.judged(CellRecord(app="sync-servlet"), stats))
        self.assertIsNone(foreign.judged(self.record("v1"), {}))      # SKIPPED on JDK 17: nothing read, as planned

    def test_a_cell_above_its_pool_is_not_thread_per_request(self):
        rec = {"thread_per_request": True, "rps": 95.0, "bound_rps": 8.0}
        foreign.above_pool(rec, 100, 1.0)
        self.assertEqual((rec["thread_per_request"], rec["bound_rps"]), (False, 100.0))
        self.assertIn("not thread per request", rec["bound_how"])
        kept = {"thread_per_request": True, "rps": 8.0, "bound_rps": 8.0}
        foreign.above_pool(kept, 100, 1.0)
        self.assertEqual(kept["bound_rps"], 8.0)

    def test_the_pool_read_in_a_table_cell(self):
        from labbench.report import own
        loops = {"threads": 1, "pool_read": {"executor": "event-loop", "loops": 1, "source": "reactor-http-(nio|epoll)-\\d+"}}
        self.assertEqual("1 event loop (`reactor-http-(nio\\|epoll)-\\d+`)", own.pool_text(loops))
        tomcat = {"threads": 8, "pool_read": {"executor": "platform", "max": 8, "peakBusy": 8, "source": "Tomcat:type=ThreadPool"}}
        self.assertEqual("8 platform, busy ≤ 8 (`Tomcat:type=ThreadPool`)", own.pool_text(tomcat))
        self.assertEqual("unknown", own.pool_text({"threads": "app", "pool_read": None}))

    def test_bound_of_a_cell_uses_the_pool_read(self):
        self.assertEqual(figures._bound(self.record(), figures.scenarios.get("call"), 8, True)[2], 8.0)
        self.assertEqual(figures._bound(self.record(), figures.scenarios.get("call"), "app", False)[2], 100.0)


if __name__ == "__main__":
    unittest.main()
