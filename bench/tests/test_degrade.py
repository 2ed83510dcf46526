"""Unit tests of SCENARIO=degrade (issue 17), no servers needed: its settings and plan, vegeta's
results per second (a hand-made JSON-lines fixture), the time to recover, Little's law, the
remote's fault record, and results.md rendered from a synthetic run directory.

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench
"""
import io
import json
import math
import os
import subprocess
import tempfile
import unittest
from contextlib import redirect_stderr
from pathlib import Path
from unittest import mock

from labbench import main as bench_main, paths, report
from labbench.plan import plan
from labbench.loadgens.vegeta import epoch_s
from labbench.record import CellRecord
from labbench.scenarios import degrade
from labbench.settings import UsageError, parse


def settings(**env):
    env = {k: str(v) for k, v in env.items()}
    return parse(dict({"SCENARIO": "degrade"}, **env), "degrade", n_cores=2)


class SettingsTest(unittest.TestCase):
    def test_defaults(self):
        s = settings()
        self.assertEqual((s.rate, s.loadgens, s.duration_s, s.wrk_timeout_s), (150, ["vegeta"], 50, 85))
        self.assertEqual((s.degrade_fault, s.degrade_fault_at_ms, s.degrade_fault_for_ms, s.degrade_after_ms),
                         ("delay=5000", 10000, 10000, 30000))
        self.assertEqual((s.degrade_limits, s.degrade_deadline_ms), ([0, 180], 2000))
        self.assertEqual([v.id for v in s.degrade_variants],
                         ["sync-servlet@tomcat:200", "sync-servlet@tomcat:v1", "async-servlet@tomcat:1", "webflux@netty:1"])

    def test_an_explicit_rate_and_other_times(self):
        s = settings(RATE=300, FAULT="hang", FAULT_AT="2s", FAULT_FOR="500ms", AFTER="1m", GOODPUT_DEADLINE="250ms")
        self.assertEqual((s.rate, s.degrade_timeline_ms, s.duration_s, s.degrade_deadline_ms), (300, 62500, 63, 250))
        self.assertEqual(s.wrk_timeout_s, 63 + 30)           # hang: no delay of its own to add
        self.assertEqual(settings(FAULT="error=50").degrade_fault, "error=50")

    def test_bad_values_say_which(self):
        for env, words in [({"FAULT": "delay=abc"}, "FAULT: 'delay=abc'"), ({"FAULT": "ok"}, "'ok' is no fault"),
                           ({"FAULT": "error=101"}, "1..100"), ({"FAULT": "slow"}, "FAULT: 'slow'"),
                           ({"FAULT_FOR": "abc"}, "FAULT_FOR: 'abc'"), ({"FAULT_FOR": "0s"}, "FAULT_FOR: '0s'"),
                           ({"FAULT_AT": "10x"}, "FAULT_AT"), ({"AFTER": "500ms"}, "AFTER: '500ms' is shorter"),
                           ({"RATE": "0"}, "RATE: '0'"), ({"MAX_IN_FLIGHT": "-1"}, "MAX_IN_FLIGHT: '-1'"),
                           ({"MAX_IN_FLIGHT": "0 0"}, "twice"), ({"GOODPUT_DEADLINE": "soon"}, "GOODPUT_DEADLINE"),
                           ({"DEGRADE_VARIANTS": "sync-servlet:conns"}, "DEGRADE_VARIANTS: 'sync-servlet@jetty:conns'"),
                           ({"DEGRADE_VARIANTS": "nope:1"}, "unknown app 'nope' in DEGRADE_VARIANTS"),
                           ({"APPS": "webflux"}, "SCENARIO=degrade sets APPS itself"),
                           ({"DURATION": "10s"}, "FAULT_AT + FAULT_FOR + AFTER"),
                           ({"LOADGEN": "wrk"}, "sets LOADGEN itself"),
                           ({"SCENARIO": "call degrade"}, "degrade runs alone"),
                           ({"BACKEND": "postgres"}, "BACKEND=http only"),
                           ({"APP_ARGS": "--max-in-flight 5"}, "MAX_IN_FLIGHT")]:
            with self.subTest(env=env), self.assertRaises(UsageError) as e:
                settings(**env)
            self.assertIn(words, str(e.exception))

    def test_scenario_degrade_selects_it_and_a_bad_value_exits_2_before_anything(self):
        s, cells, _left_out, _limits = bench_main.plan_run([], {"SCENARIO": "degrade"})
        self.assertEqual((s.mode, len(cells)), ("degrade", 8))
        err, cwd = io.StringIO(), os.getcwd()
        try:
            with mock.patch.dict(os.environ, {"SCENARIO": "degrade", "FAULT": "delay=abc"}), \
                    mock.patch.object(bench_main, "start_run") as start, redirect_stderr(err):
                self.assertEqual(bench_main.main([]), 2)
        finally:
            os.chdir(cwd)                   # main works from the repository
        start.assert_not_called()
        self.assertIn("ERROR: FAULT: 'delay=abc'", err.getvalue())
        self.assertIn("Usage:", err.getvalue())


class PlanTest(unittest.TestCase):
    def test_variants_times_limits_with_the_flag_only_above_0(self):
        cells, left_out = plan(settings())
        self.assertEqual(left_out, [])
        self.assertEqual([(c.app, c.container, c.threads, c.app_args) for c in cells], [
            (app, ct, t, args) for app, ct, t in [("sync-servlet", "tomcat", "200"), ("sync-servlet", "tomcat", "v1"),
                                                  ("async-servlet", "tomcat", "1"), ("webflux", "netty", "1")]
            for args in [(), ("--max-in-flight", "180")]])
        self.assertEqual({(c.scenario, c.loadgen, c.path) for c in cells}, {("degrade", "vegeta", "/call")})
        self.assertEqual(len({c.variant for c in cells}), 8)      # two limits of a variant never merge as rounds
        self.assertEqual(cells[1].dir_name, "02-degrade-sync-servlet-tomcat-t200-vegeta")
        cells, _ = plan(settings(MAX_IN_FLIGHT="0", DEGRADE_VARIANTS="webflux@netty:2:reactor-netty"))
        self.assertEqual([(c.threads, c.client, c.app_args) for c in cells], [("2", "reactor-netty", ())])


T0 = epoch_s("2025-01-01T00:00:10Z")      # the fault's start in the fixture


def line(stamp, latency_ms, code, error=""):
    return json.dumps({"attack": "", "seq": 0, "code": code, "timestamp": f"2025-01-01T00:00:{stamp}Z",
                       "latency": int(latency_ms * 1e6), "bytes_out": 0, "bytes_in": 10, "error": error})


# vegeta encode --to=json lines, by hand: send time, latency, code, error.
FIXTURE = "\n".join([
    line("08.200", 1000, 200), line("08.700", 1000, 200),        # sent -2, done -1
    line("09.100", 1200, 200),                                     # sent -1, done 0
    line("10.000", 5000, 200),                                     # sent 0, done 5: too late for goodput
    line("10.500", 10, 503, "503 Service Unavailable"),            # sent 0, done 0: the admission limit
    line("11.250", 3000, 504, "504 Gateway Timeout"),              # sent 1, done 4
    line("11.900", 30000, 0, "Get \"http://127.0.0.1:8080/call\": net/http: request canceled "
                             "(Client.Timeout exceeded while awaiting headers)"),   # sent 1, done 31
    line("12.000", 1, 0, "Get \"http://127.0.0.1:8080/call\": dial tcp: connect: connection refused"),  # sent 2
])


class PerSecondTest(unittest.TestCase):
    def setUp(self):
        self.t = degrade.per_second((json.loads(x) for x in FIXTURE.splitlines()), T0, 2000)

    def test_by_send_second(self):
        rows = {r["t"]: r for r in self.t["by_send"]}
        self.assertEqual(sorted(rows), [-2, -1, 0, 1, 2])
        self.assertEqual([(rows[t]["count"], rows[t]["ok"], rows[t]["goodput"]) for t in sorted(rows)],
                         [(2, 2, 2), (1, 1, 1), (2, 1, 0), (2, 0, 0), (1, 0, 0)])
        self.assertEqual(rows[0]["errors"]["503"], 1)
        self.assertEqual((rows[1]["errors"]["504"], rows[1]["errors"]["timeout"]), (1, 1))
        self.assertEqual(rows[2]["errors"]["connection"], 1)
        self.assertEqual((rows[0]["p50_ms"], rows[0]["p99_ms"]), (10.0, 5000.0))     # every answered request, 503 too
        self.assertEqual(rows[1]["p99_ms"], 3000.0)                                  # vegeta's timeout has no code
        self.assertIsNone(rows[2]["p99_ms"])

    def test_by_completion_second(self):
        rows = {r["t"]: r for r in self.t["by_completion"]}
        self.assertEqual((min(rows), max(rows), len(rows)), (-1, 31, 33))           # empty seconds are there
        self.assertEqual((rows[-1]["count"], rows[-1]["goodput"]), (2, 2))
        self.assertEqual((rows[0]["count"], rows[0]["ok"], rows[0]["errors"]["503"]), (2, 1, 1))
        self.assertEqual((rows[4]["errors"]["504"], rows[5]["ok"], rows[5]["goodput"]), (1, 1, 0))
        self.assertEqual((rows[31]["errors"]["timeout"], rows[2]["errors"]["connection"], rows[10]["count"]), (1, 1, 0))

    def test_healthy_phase(self):
        self.assertEqual(self.t["healthy"], {"answered": 3, "p50_ms": 1000.0, "p99_ms": 1200.0})
        self.assertAlmostEqual(self.t["first_send_s"], -1.8, places=5)


def rows(p99s, start=10, errors_at=()):
    return [{"t": t, "count": 10, "p99_ms": p, "errors": {"503": int(t in errors_at)}}
            for t, p in enumerate(p99s, start)]


class RecoveryTest(unittest.TestCase):
    def test_recovers_at_3_s(self):
        self.assertEqual(degrade.time_to_recover(rows([5000, 4000, 2000] + [1100] * 8), 1000, 10.0), (3.0, 0))

    def test_not_while_it_fails_fast_nor_if_it_slips_back_at_once(self):
        fast_503 = rows([20] * 5 + [1000] * 5, errors_at=range(10, 15))
        self.assertEqual(degrade.time_to_recover(fast_503, 1000, 10.0), (5.0, 0))
        self.assertEqual(degrade.time_to_recover(rows([5000, 1000, 1000, 9000, 1000]), 1000, 10.0), (4.0, 0))

    def test_a_hiccup_after_5_s_back_is_not_the_fault(self):
        # measured: a limit of 180 at 150 req/s answered 47 x 503 13 s after it had recovered
        late = rows([5000] + [1000] * 7 + [1000] * 3, errors_at=[18])
        self.assertEqual(degrade.time_to_recover(late, 1000, 10.0), (1.0, 1))

    def test_never_recovers(self):
        self.assertEqual(degrade.time_to_recover(rows([5000] * 10 + [1000, 9000]), 1000, 10.0), (None, 0))
        self.assertEqual(degrade.time_to_recover(rows([1000] * 5), None, 10.0), (None, 0))   # no healthy p99 to compare    # no healthy p99 to compare


class LittlesLawTest(unittest.TestCase):
    def test_200_threads_queue_and_drain(self):
        p = degrade.predict(150, 1000, 5000, 10, threads=200)
        self.assertEqual((p["regime"], p["served_during"], p["growth"], p["backlog"], p["drain_rate"], p["drain_s"]),
                         ("queues", 40.0, 110.0, 1100.0, 50.0, 22.0))
        self.assertEqual((p["recovery_s"], p["peak"]), (22.0, 1300))
        self.assertIn("1,100 at its end", p["text"])

    def test_no_cap_a_limit_and_no_drain(self):
        free = degrade.predict(150, 1000, 5000, 10)
        self.assertEqual((free["regime"], free["recovery_s"], free["peak"]), ("no cap", 0.0, 750))
        self.assertTrue(free["text"].startswith("no cap: every request waits its delay"))
        limited = degrade.predict(150, 1000, 5000, 10, threads=200, limit=180)
        self.assertEqual((limited["regime"], limited["backlog"], limited["served_during"], limited["recovery_s"]),
                         ("rejects", 0, 36.0, 5.0))
        # measured: --max-in-flight 200 on 200 Tomcat threads rejected nothing, 570 queued in front of the filter
        at_threads = degrade.predict(150, 1000, 5000, 10, threads=200, limit=200)
        self.assertEqual((at_threads["regime"], at_threads["backlog"]), ("queues", 1100.0))
        self.assertIn("never binds", at_threads["text"])
        self.assertEqual(degrade.predict(150, 1000, 5000, 10, limit=200)["regime"], "rejects")   # no threads in front
        short = degrade.predict(150, 1000, 5000, 10, threads=200, limit=100)
        self.assertIsNone(short["recovery_s"])
        self.assertIn("rejects ~50 req/s even when healthy", short["text"])
        self.assertEqual(degrade.predict(150, 1000, 5000, 10, threads=200, limit=300)["regime"], "queues")
        stuck = degrade.predict(250, 1000, 5000, 10, threads=200)
        self.assertIsNone(stuck["recovery_s"])
        self.assertIn("does not drain", stuck["text"])

    def test_hold_time_is_cut_by_the_client_timeout(self):
        self.assertEqual(degrade.hold_ms("delay=5000", 1000, 2000), 2000)
        self.assertEqual(degrade.hold_ms("delay=5000", 1000, None), 5000)
        self.assertEqual(degrade.hold_ms("error=25", 1000, 10000), 750)
        self.assertEqual(degrade.hold_ms("hang", 1000, 10000), 10000)
        lab = ("lab: app=x [...] remote=http://127.0.0.1:9000 [client=jdk-HttpClient HTTP/1.1 maxConnections=unlimited "
               "connectTimeout=2000ms requestTimeout=10000ms executor=2 threads (client-N)]")
        self.assertEqual(degrade.client_timeout_ms(lab), 10000)
        self.assertIsNone(degrade.client_timeout_ms(""))


class FaultWindowTest(unittest.TestCase):
    def test_the_remote_record_wins_then_its_plan_then_ours(self):
        record = {"schedule": "10000ms:ok,10000ms:delay=5000", "startedAtMs": 1000, "current": "ok",
                  "changes": [{"atMs": 1000, "phase": "ok"}, {"atMs": 11004, "phase": "delay=5000"},
                              {"atMs": 21009, "phase": "ok"}],
                  "phases": [{"phase": "ok", "plannedStartMs": 1000, "plannedEndMs": 11000},
                             {"phase": "delay=5000", "plannedStartMs": 11000, "plannedEndMs": 21000}]}
        self.assertEqual(degrade.fault_window(record, "delay=5000", 990, 10000, 10000),
                         (11004, 21009, "remote-sleep's changes"))
        self.assertEqual(degrade.fault_window(dict(record, changes=record["changes"][:2]), "delay=5000", 990, 10000, 10000)[1],
                         21000)
        self.assertEqual(degrade.fault_window(dict(record, changes=[]), "delay=5000", 990, 10000, 10000)[:2], (11000, 21000))
        self.assertEqual(degrade.fault_window(None, "delay=5000", 990, 10000, 10000)[:2], (10990, 20990))
        # one remote serves every cell: an earlier cell's schedule (and its clearing) comes first in the log
        earlier = [{"atMs": 100, "phase": "ok"}, {"atMs": 300, "phase": "delay=5000"}, {"atMs": 500, "phase": "ok"},
                   {"atMs": 990, "phase": "cleared"}]
        self.assertEqual(degrade.fault_window(dict(record, changes=earlier + record["changes"]), "delay=5000", 990,
                                              10000, 10000), (11004, 21009, "remote-sleep's changes"))


def synthetic_results(rate=10, healthy_ms=1000, fault_ms=5000, slow_after=3):
    """vegeta results at `rate` for 50 s, the fault from t=0 to 10: healthy, slow during it, slow
    for `slow_after` seconds after it (a queue), healthy again."""
    out = []
    for i in range(50 * rate):
        t = -10 + i / rate
        lat = fault_ms if 0 <= t < 10 else 4000 if 10 <= t < 10 + slow_after else healthy_ms
        out.append({"timestamp": stamp_of(T0 + t), "latency": int(lat * 1e6), "code": 200, "error": ""})
    return out


def write_run(root, ok=True):
    """A degrade run directory as the bench leaves it: meta.txt and two cells with their raw files."""
    (root / "cells").mkdir(parents=True)
    (root / "meta.txt").write_text(
        "mode=degrade\nfault=delay=5000\nfault_at=10s\nfault_for=10s\nafter=30s\ngoodput_deadline=2s\n"
        "max_in_flight_values=0 100\ndegrade_variants=sync-servlet@tomcat:200\n"
        "variant_label.sync-servlet@tomcat:200=sync-servlet tomcat, 200 threads\ndate=2025-01-01T00:00:00Z\n"
        "apps=sync-servlet\ncontainers=tomcat\nthreads=200\nscenarios=degrade\nloadgens=vegeta\nrate=150\n"
        "duration_s=50\nsleep_ms=1000\nwrk_timeout_s=85\ncells_planned=2\nwrk_threads=10\nconnections=100\n")
    for index, limit in ((1, 0), (2, 100)):
        d = root / "cells" / f"0{index}-degrade-sync-servlet-tomcat-t200-vegeta"
        d.mkdir()
        args = {"app_args": f"--max-in-flight {limit}"} if limit else {}
        rec = CellRecord(index=index, scenario="degrade", loadgen="vegeta", app="sync-servlet", container="tomcat",
                         threads="200", thread_per_request=True, rate=150, duration_s=50, sleep_ms=1000,
                         variant=f"sync-servlet@tomcat:200:max-in-flight={limit}",
                         params={"fault": "delay=5000", "fault_at_ms": 10000, "fault_for_ms": 10000, "after_ms": 30000,
                                 "timeline_ms": 50000, "deadline_ms": 2000, "user_app_args": "", **args},
                         measured={"client_timeout_ms": 10000, "peak_rss_kb": 300 * 1024, "cpu_box_pct": 20.0},
                         status="ok" if ok or index == 1 else "FAILED: remote-sleep has no /fault: rebuild")
        rec.save(d / "cell.json")
        t = degrade.per_second(synthetic_results(slow_after=3 if limit == 0 else 0), T0, 2000)
        t.update(fault_start_ms=int(T0 * 1000), fault_end_ms=int(T0 * 1000) + 10000, fault_end_s=10.0,
                 fault_source="remote-sleep's changes", deadline_ms=2000, end_s=t["first_send_s"] + 50)
        (d / "timeline.json").write_text(json.dumps(t))
        (d / "samples.jsonl").write_text("".join(json.dumps(
            {"t": T0 + k / 2, "inFlight": min(200, 50 + k * 10), "queued": max(0, k * 40 - 200), "liveThreads": 230,
             "heapUsedBytes": (100 + k) * 1048576, "admission": None, "rssKb": 300 * 1024, "osThreads": 240}) + "\n"
            for k in range(-20, 60)))
        (d / "stats.json").write_text(json.dumps({"inFlight": 0, "queued": 0, "admission": (
            {"limit": 100, "inFlight": 0, "peak": 100, "admitted": 5000, "rejected": 2500} if limit else None)}))
    return root


def stamp_of(epoch):
    whole = int(math.floor(epoch))
    ms = round((epoch - whole) * 1000)
    if ms == 1000:
        whole, ms = whole + 1, 0
    return f"2025-01-01T00:{(whole - 1735689600) // 60:02d}:{(whole - 1735689600) % 60:02d}.{ms:03d}Z"


class ReportTest(unittest.TestCase):
    def test_figures_section_verdict_and_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = write_run(Path(tmp) / "run")
            report.update(run)
            free, limited = report.read_results(run / "results.json")["cells"]     # its "degrade" part lifted (flat)
            self.assertEqual((free["healthy_p99_ms"], free["recovery_s"], free["recovery_text"]), (1000.0, 3.0, "3 s"))
            self.assertEqual((free["goodput_before_rps"], free["goodput_during_rps"], free["goodput_after_rps"]),
                             (10.0, 1.0, 8.7))    # 10/s healthy; the 5 s answers miss the deadline; slow 3 s after
            self.assertEqual((free["predicted_recovery_s"], free["predicted_peak"], free["max_in_flight_limit"]), (22.0, 1300, 0))
            self.assertEqual((free["peak_in_flight"], free["peak_queued"], free["peak_live_threads"], free["peak_heap_mb"]),
                             (200, 2160, 230, 159.0))
            self.assertEqual((free["peak_rss_mb"], free["client_timeout_ms"]), (300.0, 10000))
            self.assertEqual((limited["max_in_flight_limit"], limited["admission_rejected"], limited["recovery_s"]),
                             (100, 2500, 0.0))
            self.assertIn("even when healthy", limited["prediction"])
            md = (run / "results.md").read_text()
            self.assertIn("## Verdict: recovery after the fault (delay=5000 for 10s at 150 req/s)", md)
            self.assertIn("## When the backend slows down (SCENARIO=degrade)", md)
            self.assertIn("Timeline: 10s healthy, 10s of `delay=5000` at remote-sleep, 30s healthy again; vegeta at "
                          "**150 req/s**", md)
            self.assertIn("the apps' client timeout: 10,000 ms", md)
            self.assertIn("| sync-servlet tomcat, 200 threads | none | 1.000 s | 10.0 · 1.0 · 8.7 | none | 200 · 2160 "
                          "| 230 | 300 · 159 | **3 s** | 22 s: cap 200", md)
            self.assertIn("(admission: 2,500 rejected)", md)
            self.assertIn("**How to read this.**", md)
            csv_head = (run / "results.csv").read_text().splitlines()[0].split(",")
            self.assertIn("fault_errors_503", csv_head)
            self.assertIn("recovery_s", csv_head)

    def test_a_failed_cell_keeps_its_row(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = write_run(Path(tmp) / "run", ok=False)
            report.update(run)
            md = (run / "results.md").read_text()
            self.assertIn("| sync-servlet tomcat, 200 threads | 100 | FAILED: remote-sleep has no /fault: rebuild |", md)
            self.assertEqual(degrade.SCENARIO.closing_lines(report.load_run(run))[1:],
                             ["   sync-servlet tomcat, 200 threads, limit none: 3 s (22 s)",
                              "   sync-servlet tomcat, 200 threads, limit 100: FAILED: remote-sleep has no /fault: "
                              "rebuild (—)"])

    @unittest.skipUnless(paths.CHART_PYTHON.exists(), "no .tools/venv with matplotlib")
    def test_charts(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = write_run(Path(tmp) / "run")
            report.update(run)
            r = subprocess.run([str(paths.CHART_PYTHON), str(paths.ROOT / "bench" / "tools" / "degrade_charts.py"),
                                str(run)], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for name in ("degrade-goodput", "degrade-01", "degrade-02"):
                for ext in ("png", "svg"):
                    self.assertTrue((run / "charts" / f"{name}.{ext}").exists(), name)
            report.update(run)
            self.assertIn("![", (run / "results.md").read_text())


if __name__ == "__main__":
    unittest.main()
