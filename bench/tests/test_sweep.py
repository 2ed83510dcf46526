"""Unit tests of the sweep (`make sweep`), no servers needed: its settings and plan, the
machine-limits check, the knee and memory logic, /proc parsing, and report.py on a hand-made
sweep run (charts too when .tools/venv has matplotlib).

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench
"""
import json
import tempfile
import unittest
from pathlib import Path

from labbench import limits, paths, report
from labbench.report import limited
from labbench.scenarios.sweep import report as sweep_scenario
from labbench.plan import plan
from labbench.procs import status_fields
from labbench.settings import UsageError, parse


def sweep(**env):
    return parse({k: str(v) for k, v in env.items()}, "sweep", n_cores=2)


class SweepSettingsTest(unittest.TestCase):
    def test_default_sweep_is_nine_variants_at_six_levels(self):
        s = sweep()
        self.assertEqual(s.connections, [100, 500, 1000, 2000, 5000, 10000])
        self.assertEqual(s.wrk_threads, [2])                   # wrk -t = cores unless set
        self.assertEqual([v.id for v in s.variants],
                         ["sync-servlet@jetty:200", "sync-servlet@jetty:conns", "sync-servlet@jetty:v1",
                          "async-servlet@jetty:1", "async-servlet@jetty:1:jetty", "nio-servlet@jetty:1", "webflux@jetty:1",
                          "webflux@netty:1", "webflux@netty:1:reactor-netty"])
        cells, left_out = plan(s)
        self.assertEqual((len(cells), left_out), (9 * 6, []))
        self.assertEqual({c.client for c in cells if c.variant == "webflux@netty:1:reactor-netty"}, {"reactor-netty"})
        self.assertEqual([c.connections for c in cells[:6]], [100, 500, 1000, 2000, 5000, 10000])
        conns = [c for c in cells if c.variant == "sync-servlet@jetty:conns"]
        self.assertEqual([c.threads for c in conns], ["100", "500", "1000", "2000", "5000", "10000"])
        self.assertTrue(all(c.thread_per_request for c in conns))
        v1 = next(c for c in cells if c.variant == "sync-servlet@jetty:v1")
        self.assertEqual(v1.skip_reason(17), "virtual threads need JDK 21+ (running 17)")
        netty = [c for c in cells if c.container == "netty"]
        self.assertEqual({(c.app, c.threads, c.pool_mode) for c in netty}, {("webflux", "1", "event-loop")})
        self.assertEqual(cells[0].dir_name, "01-sync-servlet-jetty-t200-w2-c100")

    def test_container_wrk_threads_and_labels_are_overridable(self):
        s = sweep(SWEEP="1000,100", SWEEP_VARIANTS="async-servlet:1 webflux@netty:2 sync-servlet:v2",
                  SWEEP_CONTAINER="tomcat", WRK_THREADS=4)
        self.assertEqual((s.connections, s.wrk_threads, s.containers), ([100, 1000], [4], ["tomcat", "netty"]))
        self.assertEqual([v.label for v in s.variants],
                         ["async-servlet tomcat, 1 thread", "webflux netty, 2 event loops",
                          "sync-servlet tomcat, v2 (virtual threads on 2 carriers)"])

    def test_bad_sweep_values_say_which(self):
        for env, words in [({"SWEEP": "0"}, "SWEEP: '0' is not a positive integer"),
                           ({"SWEEP": "abc"}, "SWEEP: 'abc'"), ({"SWEEP": "100 100"}, "twice"),
                           ({"SWEEP": "20000"}, "--threads 20000"),     # the conns variant's pool
                           ({"SWEEP_VARIANTS": "sync-servlet"}, "not app[@container]:threads"),
                           ({"SWEEP_VARIANTS": "nope:1"}, "unknown app 'nope'"),
                           ({"SWEEP_VARIANTS": "sync-servlet@netty:1"}, "netty runs only webflux, on N event loops"),
                           ({"SWEEP_VARIANTS": "webflux@netty:v1"}, "netty runs only webflux, on N event loops"),
                           ({"SWEEP_VARIANTS": "webflux:0"}, "threads must be"),
                           ({"SWEEP_CONTAINER": "netty"}, "SWEEP_CONTAINER: 'netty'"),
                           ({"APPS": "webflux"}, "the sweep sets APPS itself"),
                           ({"CONNECTIONS": "100"}, "set SWEEP instead"),
                           ({"REPEAT": "2"}, "the sweep sets REPEAT itself"),
                           ({"WRK_THREADS": "200", "SWEEP": "100"}, "WRK_THREADS=200 > CONNECTIONS=100")]:
            with self.subTest(env=env), self.assertRaises(UsageError) as e:
                sweep(**env)
            self.assertIn(words, str(e.exception))


def machine(**kw):
    base = dict(soft=20000, hard=20000, nr_open=1048576, root=False, ports=(32768, 60999), somaxconn=4096)
    base.update(kw)
    return limits.Machine(**base)


class LimitsTest(unittest.TestCase):
    def test_fds_two_per_connection_raised_as_root_up_to_nr_open(self):
        self.assertEqual(limits.fds_needed(10000), 21024)
        p = limits.plan(5000, machine())                                  # fits under the hard limit
        self.assertIsNone(p.new_limit)
        p = limits.plan(10000, machine(root=True))
        self.assertEqual(p.new_limit, 21024)
        self.assertIn("ulimit -n raised to 21024", p.notes[0])
        with self.assertRaises(UsageError) as e:                          # not root: say how
            limits.plan(10000, machine())
        self.assertIn("hard limit 20000", str(e.exception))
        self.assertIn("ulimit -Hn 21024", str(e.exception))
        with self.assertRaises(UsageError) as e:                          # root, above fs.nr_open
            limits.plan(10000, machine(root=True, nr_open=16384, ports=(1024, 65535)))
        self.assertIn("sysctl -w fs.nr_open=21024", str(e.exception))

    def test_ephemeral_ports_and_accept_queue(self):
        with self.assertRaises(UsageError) as e:
            limits.plan(14000, machine(root=True))                          # 29,000 ports > 28,232
        self.assertIn("net.ipv4.ip_local_port_range 32768-60999", str(e.exception))
        p = limits.plan(10000, machine(root=True))
        self.assertTrue(any("accept queue 4096" in n and "somaxconn" in n for n in p.notes), p.notes)
        self.assertEqual(limits.plan(1000, machine()).notes, [])          # nothing to say at 1,000

    def test_vegetas_outstanding_requests_against_what_the_app_holds(self):
        note = limits.open_loop_note(32000, machine())                  # RATE=1000 x 32 s
        self.assertIn("up to 32000 requests outstanding", note)
        self.assertIn("the app holds ~9488 at once (ulimit -n 20000", note)     # (20000 - 1024) / 2
        note = limits.open_loop_note(32000, machine(soft=100000))
        self.assertIn("the app holds ~13616 at once", note)                      # the ports: (28232 - 1000) / 2
        self.assertIsNone(limits.open_loop_note(9488, machine()))

    def test_the_level_of_an_open_loop_run_is_what_vegeta_keeps_in_flight(self):
        from types import SimpleNamespace as N
        from labbench.main import app_level
        s = N(rate=1000, sleep_ms=1000, wrk_timeout_s=32, connections=[100])
        self.assertEqual((1000, "requests in flight (vegeta at RATE)"), app_level(s, [N(loadgen="vegeta", connections=None)]))
        self.assertEqual((100, "connections"), app_level(s, [N(loadgen="wrk", connections=100)]))
        both = [N(loadgen="wrk", connections=5000), N(loadgen="vegeta", connections=None)]
        self.assertEqual((5000, "connections"), app_level(s, both))

    def test_thread_ids_for_a_pool_as_large_as_the_level(self):
        limits.plan(10000, machine(root=True, pid_max=32768), max_threads=10000)   # this machine: fits
        with self.assertRaises(UsageError) as e:
            limits.plan(10000, machine(root=True, pid_max=10000), max_threads=10000)
        self.assertIn("kernel.pid_max 10000", str(e.exception))

    def test_proc_status_fields(self):
        text = "Name:\tjava\nVmPeak:\t 9 kB\nVmRSS:\t  123456 kB\nThreads:\t42\n"
        self.assertEqual(status_fields(text), (123456, 42))
        self.assertEqual(status_fields("Name:\tx\n"), (None, None))


def cell(level, pct=100.0, status="ok", errors=0, **kw):
    c = {"connections": level, "status": status, "pct_of_ceiling": pct, "timeouts": 0, "wrk_threads": 2,
         "errors": {"connect": errors, "read": 0, "write": 0, "status": 0}, "threads": 1,
         "thread_per_request": False, "cpu_box_pct": 50.0, "cpu_app_cores": 0.3, "cpu_wrk_cores": 0.2,
         "cpu_remote_cores": 0.1, "bound_rps": float(level), "ceiling_rps": level * 0.9}
    c.update(kw)
    return c


class KneeTest(unittest.TestCase):
    def test_the_first_level_below_95_percent_or_with_errors(self):
        self.assertIsNone(sweep_scenario.knee([cell(100), cell(1000, 95.0)]))
        k = sweep_scenario.knee([cell(100), cell(1000, 94.9), cell(5000, 50.0)])
        self.assertEqual((k["level"], k["why"]), (1000, ["94.9 % of the ceiling"]))
        k = sweep_scenario.knee([cell(100), cell(1000, 99.0, errors=3)])
        self.assertEqual((k["level"], k["why"]), (1000, ["3 errors"]))
        k = sweep_scenario.knee([cell(100, status="SKIPPED: JDK 17"), cell(500, status="FAILED: did not start")])
        self.assertEqual((k["level"], k["why"]), (500, ["FAILED: did not start"]))

    def test_what_saturated(self):
        pool = cell(500, 44.0, threads=200, thread_per_request=True, bound_rps=200.0, ceiling_rps=450.0)
        self.assertEqual(limited.saturated(pool),
                         ["the pool (200 threads: at most 200 requests in flight, 200 req/s by Little's law)"])
        busy = cell(5000, 88.0, cpu_box_pct=98.5, cpu_app_cores=0.95)
        self.assertEqual(limited.saturated(busy), ["box CPU 98 %", "app CPU 0.95 cores for its 1 thread"])
        self.assertEqual(limited.saturated(cell(5000, 88.0)), [])
        self.assertEqual(limited.saturated(cell(5000, 88.0, cpu_wrk_cores=1.9)), ["wrk CPU 1.90 cores for -t2"])

    def test_memory_per_1000_in_flight_is_the_slope_between_two_levels(self):
        m = sweep_scenario.memory_per_1000([cell(100, peak_rss_mb=150.0, max_in_flight=100),
                                    cell(10000, peak_rss_mb=1140.0, max_in_flight=9900)])
        self.assertEqual(m["mb_per_1000"], 101.0)
        capped = sweep_scenario.memory_per_1000([cell(200, peak_rss_mb=150.0, max_in_flight=200),
                                         cell(10000, peak_rss_mb=160.0, max_in_flight=200)])
        self.assertIsNone(capped["mb_per_1000"])
        self.assertIsNone(sweep_scenario.memory_per_1000([cell(100, peak_rss_mb=150.0)]))


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def wrk_json(rps, p99_ms=1010, connect_errors=0):
    return json.dumps({
        "duration_us": 10000000, "requests": int(rps * 10), "bytes": 0, "steady_rps": rps, "steady_how": "test",
        "errors": {"connect": connect_errors, "read": 0, "write": 0, "status": 0, "timeout": 0},
        "latency_us": {"min": 1000000, "mean": 1005000, "stdev": 1, "p50": 1004000, "p90": 1006000,
                       "p99": p99_ms * 1000, "p999": p99_ms * 1000, "max": p99_ms * 1000}})


class SweepReportTest(unittest.TestCase):
    """A hand-made sweep run: two variants (200 threads, async 1 thread) at 100 and 1,000."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        run = self.run = Path(self.tmp.name) / "run"
        write(run / "meta.txt", "date=test\nmode=sweep\nsweep=100 1000\n"
                                "sweep_variants=sync-servlet@jetty:200 async-servlet@jetty:1\nsweep_container=jetty\n"
                                "variant_label.sync-servlet@jetty:200=sync-servlet jetty, 200 threads\n"
                                "variant_label.async-servlet@jetty:1=async-servlet jetty, 1 thread\n"
                                "apps=sync-servlet async-servlet\ncontainers=jetty\nthreads=200 1\nwrk_threads=2\n"
                                "connections=100 1000\nduration_s=10\nsleep_ms=1000\ncores=2\nfds_needed=3024\n"
                                "limit_notes=\n")
        for level, rps in ((100, 90.0), (1000, 900.0)):
            d = run / "calibration" / f"w2-c{level}"
            write(d / "cell.txt", f"kind=calibration\nwrk_threads=2\nconnections={level}\nduration_s=10\n"
                                  f"sleep_ms=1000\nstatus=ok\n")
            write(d / "wrk.json", wrk_json(rps))
        index = 0
        for variant, app, threads, tpr, figures in (
                ("sync-servlet@jetty:200", "sync-servlet", 200, 1, {100: (90.0, 300, 30, 100), 1000: (199.0, 520, 232, 200)}),
                ("async-servlet@jetty:1", "async-servlet", 1, 0, {100: (90.0, 120, 20, 100), 1000: (890.0, 220, 21, 1000)})):
            for level, (rps, rss_mb, os_threads, in_flight) in figures.items():
                index += 1
                d = run / "cells" / f"{index:02d}-{app}-jetty-t{threads}-w2-c{level}"
                write(d / "cell.txt", "".join(f"{k}={v}\n" for k, v in dict(
                    kind="cell", index=index, app=app, container="jetty", threads=threads, wrk_threads=2,
                    connections=level, duration_s=10, sleep_ms=1000, thread_per_request=tpr, scenario="call",
                    pool_mode="platform", variant=variant, cpu_box_pct=40.0, cpu_app_s=2.0, cpu_remote_s=1.0,
                    cpu_wrk_s=1.0, peak_rss_kb=rss_mb * 1024, peak_os_threads=os_threads, status="ok").items()))
                write(d / "wrk.json", wrk_json(rps))
                write(d / "stats.json", json.dumps({"inFlight": 0, "maxInFlight": in_flight}))

    def tearDown(self):
        self.tmp.cleanup()

    def test_knee_lines_tables_and_memory(self):
        report.update(self.run)
        run = json.loads((self.run / "results.json").read_text())
        cells = {(c["variant"], c["connections"]): c for c in run["cells"]}
        self.assertEqual(cells[("async-servlet@jetty:1", 1000)]["peak_rss_mb"], 220.0)
        self.assertEqual(cells[("async-servlet@jetty:1", 1000)]["cpu_ms_per_request"], 0.22)
        lines = sweep_scenario.knee_lines(run)
        self.assertTrue(lines[0].startswith("sync-servlet jetty, 200 threads: knee at 1000 connections "
                                            "(22.1 % of the ceiling); saturated: the pool"), lines[0])
        self.assertIn("stays at 199.0–199.0 req/s", lines[0])
        self.assertTrue(lines[1].startswith("async-servlet jetty, 1 thread: no knee up to 1000 connections"), lines[1])
        md = (self.run / "results.md").read_text()
        self.assertIn("## How far does each model scale? (the sweep)", md)
        self.assertIn("### How to read the sweep", md)
        self.assertIn("#### async-servlet jetty, 1 thread", md)
        self.assertIn("| async-servlet jetty, 1 thread | 100 → 1000 | 100 → 1000 | 120 → 220 MB | 111.1 | 111.1 | 20 → 21 |", md)
        self.assertIn("| sync-servlet jetty, 200 threads | 100 → 1000 | 100 → 200 | 300 → 520 MB | — (in flight capped at 200 by its pool) | 244.4 |", md)
        self.assertNotIn("## Results", md)                 # the sweep's tables replace the matrix's
        self.assertNotIn("![", md)                          # no charts drawn: none embedded
        self.assertIn("peak_rss_mb", (self.run / "results.csv").read_text().splitlines()[0])

    @unittest.skipUnless(paths.CHART_PYTHON.exists(), "matplotlib not installed (bench/tools/install.sh matplotlib)")
    def test_charts_are_drawn_and_embedded(self):
        report.update(self.run, charts=True)
        for name, _title in sweep_scenario.CHARTS:
            for ext in ("png", "svg"):
                self.assertGreater((self.run / "charts" / f"{name}.{ext}").stat().st_size, 1000, name)
        md = (self.run / "results.md").read_text()
        self.assertIn("![steady req/s vs connections, with the ceiling](charts/sweep-throughput.png)", md)


if __name__ == "__main__":
    unittest.main()
