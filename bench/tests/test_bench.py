"""Unit tests of the bench's Python side, no servers needed (bench/tests/smoke-test.sh runs them, ~0.1 s):
the settings parser, the matrix plan, and report.py / compare.py on a hand-made run directory with
the new kinds of cells (virtual threads, SKIPPED, a slow-upload scenario).

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench
"""
import io
import json
import sys
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

from labbench import report
from labbench.plan import plan
from labbench.loadgens import probe, wrk
from labbench.report import compare, figures, fmt
from labbench.settings import UsageError, parse


def settings(**env):
    return parse({k: str(v) for k, v in env.items()})


class SettingsTest(unittest.TestCase):
    def test_defaults_are_the_reference_experiment(self):
        s = settings()
        self.assertEqual(s.threads, ["1", "200", "v1"])
        self.assertEqual(s.containers, ["jetty", "tomcat", "netty"])
        cells, left_out = plan(s)
        self.assertEqual(len(cells), 6 * 2 * 3 * 2 + 2 * 2)    # + webflux on netty with 1 and 200 event loops
        self.assertEqual(len(left_out), 2, left_out)
        self.assertEqual(s.scenarios, ["call"])
        self.assertEqual((s.duration_s, s.wrk_timeout_s, s.warmup, s.warmup_s), (10, 30, "auto", 0))
        self.assertEqual(s.slow_bytes_for("slow-upload"), 4096)
        self.assertEqual(s.slow_bytes_for("slow-download"), 16777216)

    def test_lists_and_virtual_threads(self):
        s = settings(THREADS="1, v1,v16", SCENARIO="call,slow-upload", SLOW_BYTES=100)
        self.assertEqual(s.threads, ["1", "v1", "v16"])
        self.assertEqual(s.scenarios, ["call", "slow-upload"])
        self.assertEqual(s.slow_bytes_for("slow-download"), 100)

    def test_bad_values_say_which(self):
        for env, words in [({"THREADS": "v0"}, "THREADS: 'v0'"), ({"THREADS": "x1"}, "THREADS: 'x1'"),
                           ({"SCENARIO": "nope"}, "unknown scenario 'nope'"),
                           ({"SLOW_CLIENTS": "0"}, "SLOW_CLIENTS: '0'"), ({"SLOW_RATE": "abc"}, "SLOW_RATE: 'abc'"),
                           ({"CONTAINERS": "undertow"}, "unknown container 'undertow'"),
                           ({"WRK_THREADS": "20", "CONNECTIONS": "10"}, "WRK_THREADS=20 > CONNECTIONS=10"),
                           ({"REPEAT": "0"}, "REPEAT: '0'"), ({"RATE": "-5"}, "RATE: '-5'"),
                           ({"LOADGEN": "foo"}, "unknown load generator 'foo'"),
                           ({"WARMUP": "sometimes"}, "WARMUP: 'sometimes' is not auto"), ({"WARMUP": "-1s"}, "WARMUP: '-1s'"),
                           ({"WARMUP": "Auto"}, "WARMUP: 'Auto'")]:
            with self.subTest(env=env), self.assertRaises(UsageError) as e:
                settings(**env)
            self.assertIn(words, str(e.exception))


class PlanTest(unittest.TestCase):
    def test_repeat_runs_the_whole_matrix_again_and_vegeta_adds_one_cell_per_pool(self):
        s = settings(APPS="sync-servlet webflux", CONTAINERS="tomcat", THREADS="1", WRK_THREADS="10 100",
                     LOADGEN="wrk vegeta", REPEAT=2)
        cells, _ = plan(s)
        self.assertEqual(len(cells), 2 * 2 * (2 + 1))   # rounds x apps x (wrk settings + vegeta)
        self.assertEqual([c.round for c in cells], [1] * 6 + [2] * 6)
        self.assertEqual([c.loadgen for c in cells[:3]], ["wrk", "wrk", "vegeta"])
        self.assertEqual(cells[6].dir_name, "07-r2-sync-servlet-tomcat-t1-w10-c100")
        self.assertEqual(cells[2].dir_name, "03-sync-servlet-tomcat-t1-vegeta")

    def test_netty_runs_webflux_only_and_no_virtual_threads(self):
        s = settings(APPS="sync-servlet webflux", CONTAINERS="tomcat netty", THREADS="1 v1", WRK_THREADS=10,
                     SCENARIO="call slow-upload")
        cells, left_out = plan(s)
        self.assertEqual(len(cells), 2 * (4 + 1))      # per scenario: tomcat 2 apps x 2 pools + netty webflux 1
        self.assertEqual([c.index for c in cells], list(range(1, 11)))
        self.assertEqual(len(left_out), 2, left_out)
        self.assertIn("no sync-servlet on netty", left_out[0])
        self.assertIn("no webflux on netty with THREADS v1", left_out[1])
        by_name = {c.dir_name: c for c in cells}
        v1 = by_name["02-sync-servlet-tomcat-tv1-w10-c100"]
        self.assertEqual((v1.pool_mode, v1.thread_per_request), ("virtual", False))
        self.assertEqual(v1.skip_reason(17), "virtual threads need JDK 21+ (running 17)")
        self.assertIsNone(v1.skip_reason(25))
        self.assertTrue(by_name["01-sync-servlet-tomcat-t1-w10-c100"].thread_per_request)
        self.assertEqual(by_name["05-webflux-netty-t1-w10-c100"].pool_mode, "event-loop")
        self.assertIn("06-slow-upload-sync-servlet-tomcat-t1-w10-c100", by_name)

    def test_a_jetty_or_tomcat_pool_grows_on_the_same_jvm(self):
        # THREADS="1 200 v1": one JVM per app and container for its pools (cells.App.resize), taken in
        # the order 1, v1, 200 (no pool shrinks), its carriers pinned for v1; not for Netty's event
        # loops, another scenario, or a second vN (its carriers would be another count)
        s = settings(APPS="sync-servlet webflux", CONTAINERS="jetty netty", THREADS="1 200 v1 v2", WRK_THREADS=10,
                     SCENARIO="call slow-upload")
        cells, _ = plan(s)
        key = {(c.scenario, c.app, c.container, c.threads): c.app_key for c in cells}
        self.assertEqual(key["call", "sync-servlet", "jetty", "1"], key["call", "sync-servlet", "jetty", "200"])
        self.assertEqual(key["call", "sync-servlet", "jetty", "200"], key["call", "sync-servlet", "jetty", "v1"])
        self.assertNotEqual(key["call", "sync-servlet", "jetty", "v1"], key["call", "sync-servlet", "jetty", "v2"])
        self.assertNotEqual(key["call", "webflux", "netty", "1"], key["call", "webflux", "netty", "200"])
        self.assertNotEqual(key["slow-upload", "webflux", "jetty", "1"], key["slow-upload", "webflux", "jetty", "200"])
        order = [c.threads for c in cells if (c.scenario, c.app, c.container) == ("call", "sync-servlet", "jetty")]
        self.assertEqual(["1", "v1", "v2", "200"], order)
        self.assertEqual({1}, {c.carriers for c in cells if c.scenario == "call"})
        self.assertEqual(["1", "200", "v1", "v2"],       # a scenario that keeps a JVM per pool keeps THREADS' order
                         [c.threads for c in cells if (c.scenario, c.app, c.container) == ("slow-upload", "webflux", "jetty")])


class ReuseTest(unittest.TestCase):
    """app.App.can_reuse and prepare with a grown pool: upward only, drained at the old pool, then
    POST /pool, a warm-up and a rest reading again; the app's own answers stand in for a real one."""

    def setUp(self):
        from labbench import app as app_mod, cells as cells_mod
        self.cells, self.app_mod = cells_mod, app_mod
        s = settings(APPS="sync-servlet", CONTAINERS="jetty", THREADS="1 200", WRK_THREADS=10, WARMUP="auto")
        self.plan, _ = plan(s)
        self.lab = cells_mod.Lab(s, None, Path(tempfile.mkdtemp()))
        self.app = app_mod.App(self.lab)
        self.app.proc, self.app.key, self.app.threads, self.app.last_conns = object(), self.plan[0].app_key, "1", 100
        self.calls = []

    def patch(self, module, name, fn):
        from unittest import mock
        p = mock.patch.object(module, name, fn)
        p.start()
        self.addCleanup(p.stop)

    def test_upward_only_after_the_queue_is_drained(self):
        one, two_hundred = self.plan[0], self.plan[1]
        self.patch(self.app_mod.procs, "alive", lambda proc: True)
        self.app.drain = lambda cell, conns: self.calls.append(f"drain at {self.app.threads}, {conns} connections")
        self.assertTrue(self.app.can_reuse(two_hundred))
        self.assertEqual(["drain at 1, 100 connections"], self.calls)     # 100 connections left 99 queued behind 1 thread
        self.app.threads = "200"
        self.assertFalse(self.app.can_reuse(one))        # a pool never shrinks: a fresh JVM

    def test_a_switch_to_virtual_threads_drains_the_platform_queue_first(self):
        s = settings(APPS="sync-servlet", CONTAINERS="jetty", THREADS="1 200 v1", WRK_THREADS=10, WARMUP="auto")
        one, v1, two_hundred = plan(s)[0]
        self.assertEqual(["1", "v1", "200"], [one.threads, v1.threads, two_hundred.threads])
        self.patch(self.app_mod.procs, "alive", lambda proc: True)
        self.app.drain = lambda cell, conns: self.calls.append(f"drain at {self.app.threads}")
        self.app.key = one.app_key
        self.assertTrue(self.app.can_reuse(v1))
        self.app.threads = "v1"
        self.assertTrue(self.app.can_reuse(two_hundred))
        self.assertEqual(["drain at 1", "drain at v1"], self.calls)
        self.app.threads = "200"
        self.assertFalse(self.app.can_reuse(v1))          # Jetty's 201 platform threads would stay
        self.assertFalse(self.app.can_reuse(one))

    def test_prepare_grows_warms_and_reads_the_rest_again(self):
        two_hundred = self.plan[1]
        self.app.can_reuse = lambda cell: True
        answers = {"/pool?threads=200": (200, b'{"lab":"lab: app=sync-servlet container=jetty threads=200 [...]"}\n')}

        def http(url, method="GET", timeout=5.0):
            self.calls.append(f"{method} {url.split(':', 2)[2].split('/', 1)[1]}")
            return answers.get("/" + url.split("/", 3)[3], (200, b"{}"))
        self.patch(self.app_mod.web, "http", http)
        self.patch(self.app_mod.web, "wait_drained", lambda url, s: True)
        self.patch(self.app_mod.warmup, "warm_up", lambda *a, **k: self.calls.append(f"warm up at {a[5]} threads") or {"outcome": "settled"})
        self.patch(self.app_mod.warmup, "at_rest", lambda url: self.calls.append("rest") or {"cpu_ms": 1})
        rec = self.cells._new_record(self.lab.s, two_hundred)
        d = self.lab.run_dir / "c"
        d.mkdir()
        self.assertIsNone(self.app.prepare(two_hundred, d, rec, lambda: 0))
        self.assertEqual(["POST pool?threads=200", "warm up at 200 threads",
                          "POST fault?schedule=16000ms:delay=0", "DELETE fault",     # drained, remote-sleep answering at once
                          "rest", "POST stats/reset"], self.calls)
        self.assertEqual(("resized", "200"), (rec.app_start, self.app.threads))
        self.assertEqual("lab: app=sync-servlet container=jetty threads=200 [...]", rec.lab_line)
        answers["/pool?threads=200"] = (409, b'{"error":"1 requests in flight, 0 queued: resize an idle app"}')
        self.app.threads = "1"
        rec = self.cells._new_record(self.lab.s, two_hundred)
        self.assertEqual("POST /pool?threads=200 answered HTTP 409: {\"error\":\"1 requests in flight, 0 queued: resize an idle app\"}",
                         self.app.prepare(two_hundred, d, rec, lambda: 0))


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_cell(run, name, wrk=True, **kv):
    d = run / "cells" / name
    base = dict(kind="cell", container="tomcat", wrk_threads=10, connections=10, duration_s=2, sleep_ms=200,
                thread_per_request=0, scenario="call", pool_mode="platform", status="ok")
    base.update(kv)
    write(d / "cell.txt", "".join(f"{k}={v}\n" for k, v in base.items()))
    if wrk:
        write(d / "wrk.json", json.dumps({
            "duration_us": 2000000, "requests": 90, "bytes": 9000,
            "errors": {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0},
            "latency_us": {"min": 200000, "mean": 205000, "stdev": 1000, "p50": 204000, "p90": 210000,
                           "p99": 220000, "p999": 221000, "max": 221000},
            "latency_corrected": False, "slow_2s": 0, "slow_2s_how": "test"}))
        write(d / "stats.json", json.dumps({"inFlight": 0, "handlerThreads": ["exec-1"], "clientThreads": ["c-1"]}))


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.run = Path(self.tmp.name) / "run"
        write(self.run / "meta.txt", "date=test\napps=sync-servlet webflux\ncontainers=tomcat\nthreads=1 v1\n"
                                     "wrk_threads=10\nconnections=10\nscenarios=call slow-upload\nduration_s=2\n"
                                     "sleep_ms=200\ncells_planned=4\n")
        write(self.run / "calibration/w10-c10/cell.txt",
              "kind=calibration\nwrk_threads=10\nconnections=10\nduration_s=2\nsleep_ms=200\nstatus=ok\n")
        write(self.run / "calibration/w10-c10/wrk.json", json.dumps({
            "duration_us": 2000000, "requests": 90, "bytes": 0,
            "errors": {"connect": 0, "read": 0, "write": 0, "status": 0, "timeout": 0},
            "latency_us": {"min": 1, "mean": 1, "stdev": 1, "p50": 1, "p90": 1, "p99": 1, "p999": 1, "max": 1}}))
        fake_cell(self.run, "01-sync-servlet-tomcat-t1-w10-c10", index=1, app="sync-servlet", threads=1,
                  thread_per_request=1)
        fake_cell(self.run, "02-sync-servlet-tomcat-tv1-w10-c10", wrk=False, index=2, app="sync-servlet",
                  threads="v1", pool_mode="virtual", status="SKIPPED: virtual threads need JDK 21+ (running 17)")
        fake_cell(self.run, "03-slow-upload-webflux-tomcat-t1-w10-c10", index=3, app="webflux", threads=1,
                  scenario="slow-upload", slow_clients=3, slow_bytes=4096, slow_rate=100, side_load_exit=0)
        write(self.run / "cells/03-slow-upload-webflux-tomcat-t1-w10-c10/slow.json", json.dumps({
            "mode": "upload", "clients": 3, "connected": 3, "bytes_moved": 600, "bytes_per_s": 300.0,
            "completed": 0, "errors": {"refused": 0, "reset": 1, "timeout": 0, "http_4xx": 0, "http_5xx": 0,
                                       "other": 0}}))

    def tearDown(self):
        self.tmp.cleanup()

    def test_skipped_virtual_and_slow_cells(self):
        summary = report.update(self.run, self.run / "cells/02-sync-servlet-tomcat-tv1-w10-c10")
        self.assertEqual(summary, "SKIPPED: virtual threads need JDK 21+ (running 17)")
        cells = {c["index"]: c for c in json.loads((self.run / "results.json").read_text())["cells"]}
        self.assertEqual(cells[1]["threads"], 1)                   # numeric pools stay ints in JSON
        self.assertEqual(cells[2]["threads"], "v1")
        self.assertEqual(cells[2]["bound_rps"], 50)                 # connections / sleep, not 1 / sleep
        self.assertEqual(cells[3]["scenario"], "slow-upload")
        slow = cells[3]["slow-upload"]                             # its scenario's own figures, under its name
        self.assertEqual((slow["slow_bytes_per_s"], slow["slow_errors"]["reset"]), (300.0, 1))
        self.assertNotIn("slow-upload", cells[1])                  # a call cell has none of them
        self.assertNotIn("slow_bytes_per_s", cells[1])
        md = (self.run / "results.md").read_text()
        self.assertIn("### v1: virtual threads on 1 carrier · wrk -t10 -c10", md)
        self.assertIn("| sync-servlet | SKIPPED | | | | |", md)
        self.assertIn("## Slow clients: slow-upload", md)
        self.assertIn("| webflux | 45.0 | 100.0 % | 220 ms | 0 | 300 B/s | 0 | 1 | 1 | 1 |", md)
        self.assertLess(md.index("### 1 thread"), md.index("### v1"))
        csv_head = (self.run / "results.csv").read_text().splitlines()[0]
        self.assertIn("scenario", csv_head)
        self.assertIn("slow_errors_reset", csv_head)

    def test_compare_joins_on_the_scenario(self):
        report.update(self.run)
        old = json.loads((self.run / "results.json").read_text())
        for c in old["cells"]:                 # a results.json from before scenarios existed
            del c["scenario"]
        write(Path(self.tmp.name) / "old.json", json.dumps(old))
        out = io.StringIO()
        with redirect_stdout(out):
            compare.main(["compare.py", str(Path(self.tmp.name) / "old.json"), str(self.run)])
        text = out.getvalue()
        self.assertIn("| call | sync-servlet | tomcat | 1 | -t10 -c10 | 45.0 | 45.0 | = |", text)
        self.assertIn("| call | sync-servlet | tomcat | v1 | -t10 -c10 | SKIPPED | SKIPPED |", text)
        self.assertIn("Only in B:\n- slow-upload: webflux tomcat threads=1 -t10 -c10", text)


class DrainTest(unittest.TestCase):
    """app.App.drain (issue 37): whatever one request costs the app's thread, what it still holds
    drains with remote-sleep answering at once; a database's queue is not waited for."""

    def setUp(self):
        from unittest import mock
        from labbench import app as app_mod, cells as cells_mod
        self.cells, self.app_mod, self.calls, self.in_flight = cells_mod, app_mod, [], 100
        for name, fn in [("http", self.http), ("get_json", lambda url: {"inFlight": self.in_flight, "queued": 7}),
                         ("wait_drained", self.wait_drained)]:
            p = mock.patch.object(app_mod.web, name, fn)
            p.start()
            self.addCleanup(p.stop)

    def http(self, url, method="GET", timeout=5.0):
        self.calls.append(f"{method} {url.split('/', 3)[3]}")
        if "delay=0" in url:
            self.in_flight = 0          # the queue empties once the calls are answered at once
        return 200, b"{}"

    def wait_drained(self, url, timeout_s):
        self.calls.append(f"wait {timeout_s} s")
        return self.in_flight == 0

    def app_for(self, **env):
        s = settings(**env)
        cells, _ = plan(s)
        return self.app_mod.App(self.cells.Lab(s, None, Path(tempfile.mkdtemp()))), cells

    def test_a_blocking_fanout_app_on_one_thread_drains_with_remote_sleep_answering_at_once(self):
        # 10 calls of 300 ms one after another, 100 queued: ~300 s at the calls' own delay
        app, cells = self.app_for(SCENARIO="fanout", FANOUT_APPS="fanout-sequential", CONTAINERS="tomcat",
                                  THREADS="1", WRK_THREADS="10", FANOUT_MS=300)
        self.assertIsNone(app.drain(cells[1], 100))
        self.assertEqual(["POST fault?schedule=15000ms:delay=0", "wait 5 s", "DELETE fault"], self.calls)

    def test_what_it_still_holds_is_the_reason(self):
        app, cells = self.app_for(SCENARIO="fanout", FANOUT_APPS="fanout-sequential", CONTAINERS="tomcat",
                                  THREADS="1", WRK_THREADS="10", FANOUT_MS=30000)
        self.http = lambda url, method="GET", timeout=5.0: self.calls.append(method) or (200, b"{}")   # nothing drains
        from unittest import mock
        with mock.patch.object(self.app_mod.web, "http", self.http):
            self.assertEqual("100 in flight and 7 queued after 35 s, remote-sleep answering at once",
                             app.drain(cells[1], 100))      # a call already at remote-sleep keeps its 30 s

    def test_a_database_queue_is_not_waited_for(self):
        app, cells = self.app_for(APPS="sync-servlet", CONTAINERS="jetty", THREADS="1", WRK_THREADS="10 100",
                                  BACKEND="postgres", DB_URL="postgresql://lab@127.0.0.1:5432/lab")
        app.proc, app.key, app.threads, app.last_conns = object(), cells[1].app_key, "1", 100
        from unittest import mock
        with mock.patch.object(self.app_mod.procs, "alive", lambda proc: True):
            self.assertFalse(app.can_reuse(cells[1]))
        self.assertEqual([], self.calls)

    def test_blocking_fanout_apps_warm_up_one_connection_per_thread(self):
        """A model whose request holds its container thread to the end is warmed as a thread-per-request
        app is: at most a connection per thread, so that no queue forms behind it at all."""
        for app_name, pool in [("fanout-sequential", 1), ("fanout-pool", 1), ("fanout-common-pool", 1),
                               ("fanout-virtual", 1), ("fanout-coroutines-blocking", None), ("fanout-async", None)]:
            app, cells = self.app_for(SCENARIO="fanout", FANOUT_APPS=app_name, CONTAINERS="tomcat", THREADS="1",
                                      WRK_THREADS="10", WARMUP="auto")
            got = []
            from unittest import mock
            with mock.patch.object(self.app_mod.warmup, "warm_up", lambda *a, **k: got.append(a[5]) or {}), \
                    mock.patch.object(self.app_mod.warmup, "at_rest", lambda url: {}), \
                    mock.patch.object(app, "start", lambda cell: None), mock.patch.object(app, "verify", lambda out, cell: None):
                d = app.lab.run_dir / app_name
                d.mkdir()
                rec = self.cells._new_record(app.lab.s, cells[0])
                self.assertIsNone(app.prepare(cells[0], d, rec, lambda: 0))
            self.assertEqual([pool], got, app_name)


class FanoutTest(unittest.TestCase):
    def test_fanout_runs_the_fanout_apps_one_request_at_a_time_then_under_load(self):
        s = settings(SCENARIO="fanout", FANOUT_APPS="fanout-sequential fanout-async", CONTAINERS="tomcat netty",
                     THREADS="1", WRK_THREADS="10", FANOUT_MS=300)
        cells, left_out = plan(s)
        self.assertEqual([(c.app, c.loadgen) for c in cells], [("fanout-sequential", "probe"), ("fanout-sequential", "wrk"),
                                                               ("fanout-async", "probe"), ("fanout-async", "wrk")])
        self.assertEqual(cells[1].path, "/fanout?n=10&ms=300")
        self.assertIn("no fanout-sequential on netty, fanout-async on netty", left_out[0])
        for env, words in [({"FANOUT": "0"}, "FANOUT: '0'"), ({"FANOUT": "1001"}, "more than the apps take"),
                           ({"FANOUT_MS": "x"}, "FANOUT_MS: 'x'"), ({"FANOUT_APPS": "nope"}, "unknown fan-out app")]:
            with self.subTest(env=env), self.assertRaises(UsageError) as e:
                settings(**env)
            self.assertIn(words, str(e.exception))

    def test_a_probe_reads_as_wall_time_and_fire_and_forget_as_two_times(self):
        ok = {"n": 10, "status": 200, "client_ms": 3012.0, "answer": "app=fanout-sequential n=10 ms=300 ok=10 failed=0 wall_ms=3008"}
        faf = {"n": 10, "status": 200, "client_ms": 9.0, "answer": "app=x n=10 ms=300 ok=0 failed=0 wall_ms=3\npending=10",
               "previous": "n=10 answered_ms=3 finished_ms=1240 ok=10 failed=0"}
        self.assertEqual(probe.probe_text(ok), "3.012 s")
        self.assertEqual(probe.probe_text(faf), "answered in 9.0 ms; its 10 calls ended after 1.240 s")


class SteadyTest(unittest.TestCase):
    def wrk(self, requests, steady, how):
        return wrk.wrk_fields({"duration_us": 10e6, "requests": requests, "steady_rps": steady, "steady_how": how,
                                  "errors": dict.fromkeys(("connect", "read", "write", "status", "timeout"), 0),
                                  "latency_us": dict.fromkeys(("mean", "p50", "p90", "p99", "max"), 1)}, 10)

    def test_answers_let_out_in_one_burst_read_as_wrk_req_per_s(self):
        self.assertEqual((10.0, "answers bunched together: wrk's req/s"),
                         tuple(self.wrk(100, 2661.4, "first to last response")[k] for k in ("steady_rps", "steady_how")))
        self.assertEqual(1.0, self.wrk(9, 1.0, "first to last response")["steady_rps"])      # 1-thread sync: kept
        self.assertEqual(99.8, self.wrk(900, 99.8, "per-connection spans")["steady_rps"])


class RoundsTest(unittest.TestCase):
    def test_repeats_become_a_median_with_its_range_and_failed_rounds_are_left_out(self):
        base = {"scenario": "call", "loadgen": "wrk", "app": "webflux", "container": "tomcat", "threads": 1,
                "wrk_threads": 10, "connections": 100}
        rounds = [dict(base, index=i, status="ok", steady_rps=v, rps=v - 9, p99_ms=p)
                  for i, v, p in ((1, 99.0, 1010.0), (13, 98.0, 1500.0), (25, 99.6, 1005.0))]
        rounds.append(dict(base, index=37, status="FAILED: no start"))
        (cell,) = figures.merge_rounds(rounds)
        self.assertEqual((cell["steady_rps"], cell["p99_ms"], cell["repeats"], cell["rounds_failed"]),
                         (99.0, 1010.0, 4, 1))
        self.assertEqual(cell["range"]["steady_rps"], [98.0, 99.6])
        self.assertEqual(cell["index"], 1)
        self.assertEqual(fmt.ranged(cell, "steady_rps", fmt.f_rps), "99.0 (98.0–99.6)")


if __name__ == "__main__":
    sys.exit(unittest.main())
