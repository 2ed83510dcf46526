"""WARMUP=auto's rule (labbench/warmup.py) on series of warm-up windows: one that settles, one that
never does, one that settles late, and the edge cases (a compiler thread retired, no requests)."""
import json
import unittest
from pathlib import Path

from labbench import warmup
from labbench.record import CellRecord
from labbench.report.figures import load_fields, mark_again, merge_rounds
from labbench.report import f_jit
from labbench.report.summary import jit_line, twice_line, verdict_text
from labbench.report.tables import group_tables
from labbench.warmup import Window

RECORDED = Path(__file__).parent / "fixtures" / "warmup"


def series(jit_pcts, cost_ms=0.2, requests=30_000, seconds=3.0):
    """Windows with these compiler shares (% of the app's CPU) and CPU per request (a number or a list)."""
    costs = cost_ms if isinstance(cost_ms, list) else [cost_ms] * len(jit_pcts)
    return [Window(seconds, requests, cost * requests, cost * requests * pct / 100) for pct, cost in zip(jit_pcts, costs)]


class Rule(unittest.TestCase):
    def outcome(self, windows):
        return [warmup.verdict(windows[:i])[0] for i in range(1, len(windows) + 1)]

    def test_settles_once_three_windows_in_a_row_are_quiet_and_steady(self):
        # the shape of the probe in issue 26: 61 % of the CPU is the JIT at first, 5-6 % after ~30 s
        w = series([61, 40, 22, 9, 4, 3, 2, 2], cost_ms=[1.8, 0.9, 0.5, 0.25, 0.19, 0.188, 0.187, 0.188])
        self.assertEqual(["warming"] * 6 + ["settled", "settled"], self.outcome(w))
        self.assertEqual(("settled", "JIT settled after 21 s"), warmup.verdict(w[:7]))

    def test_never_settles_is_measured_and_labelled_at_the_cap(self):
        w = series([30, 25, 20] * 7)            # 63 s of a busy compiler
        outcome, text = warmup.verdict(w)
        self.assertEqual(("no steady state", "no steady state within 60 s"), (outcome, text))
        self.assertEqual("warming", warmup.verdict(w[:19])[0])      # 57 s: not yet at the cap

    def test_settles_late_after_a_blip(self):
        # quiet, then a 9 % blip (a late C2 compile) resets the count of windows in a row
        w = series([20, 4, 4, 9, 4, 4, 4])
        self.assertEqual(["warming"] * 6 + ["settled"], self.outcome(w))

    def test_cpu_per_request_must_be_steady_too(self):
        w = series([2, 2, 2, 2], cost_ms=[0.30, 0.25, 0.20, 0.19])    # quiet compiler, cost still falling
        self.assertFalse(warmup.settled(w[:3]))
        self.assertFalse(warmup.settled(w))                              # 0.25 / 0.19: 32 % apart
        self.assertTrue(warmup.settled(w + series([2, 2], cost_ms=[0.19, 0.192])))

    def test_a_dearer_window_with_a_quiet_compiler_is_noise_not_warming(self):
        # measured (async-servlet, Jetty, 1 thread, 100 connections, 3 s windows): the compiler quiet
        # from the 5th window, CPU per request then 0.0494, 0.0486, 0.0526 (+8 %: the box), 0.0761
        # (a 4.2 % compile), 0.0507 ...: the JIT had settled by the 7th window
        w = series([42.9, 39.3, 45.3, 15.5, 2.1, 2.1, 1.4, 4.2, 0.4],
                   cost_ms=[0.3252, 0.1582, 0.1233, 0.0575, 0.0494, 0.0486, 0.0526, 0.0761, 0.0507])
        self.assertEqual(["warming"] * 6 + ["settled"] * 3, self.outcome(w))
        # a fall of more than 5 % is still the JIT at work, however quiet the compiler
        self.assertFalse(warmup.settled(series([2, 2, 2], cost_ms=[0.100, 0.099, 0.094])))
        self.assertTrue(warmup.settled(series([2, 2, 2], cost_ms=[0.100, 0.099, 0.096])))

    def test_unknown_shares_never_count_as_settled(self):
        retired = Window(3.0, 30_000, 6000, -40)      # a compiler thread ended: its CPU left /proc
        idle = Window(3.0, 0, 50, 0)                  # no request: no CPU per request
        quiet = series([2, 2])
        self.assertIsNone(retired.jit_share())
        self.assertFalse(warmup.settled(quiet + [retired]))
        self.assertFalse(warmup.settled(quiet + [idle]))

    def test_the_floor_holds_even_when_quiet_at_once(self):
        w = series([1, 1, 1], seconds=2.0)     # 6 s < the 9 s floor
        self.assertEqual("warming", warmup.verdict(w)[0])
        self.assertEqual("warming", warmup.verdict(w + series([1], seconds=2.0))[0])      # 8 s
        self.assertEqual("settled", warmup.verdict(w + series([1, 1], seconds=2.0))[0])   # 10 s

    def test_window_from_two_stats_readings(self):
        before = {"t": 10.0, "stats": {"completed": 1000, "jvm": {"cpuMs": 5000, "compilerCpuMs": 3000}}}
        after = {"t": 13.0, "stats": {"completed": 31000, "jvm": {"cpuMs": 11000, "compilerCpuMs": 3300}}}
        w = warmup.window(before, after)
        self.assertEqual({"seconds": 3.0, "requests": 30000, "cpu_ms": 6000, "compiler_cpu_ms": 300, "jit_pct": 5.0,
                          "cpu_ms_per_req": 0.2}, w.to_json())

    def test_recorded_warm_ups_reach_a_named_outcome(self):
        recorded = sorted(RECORDED.glob("*.json"))
        self.assertTrue(recorded, f"no recorded warm-ups in {RECORDED}")
        for path in recorded:
            with self.subTest(path.name):
                rec = json.loads(path.read_text())
                windows = [Window(w["seconds"], w["requests"], w["cpu_ms"], w["compiler_cpu_ms"]) for w in rec["windows"]]
                verdicts = [warmup.verdict(windows[:i])[0] for i in range(1, len(windows) + 1)]
                self.assertEqual(rec["outcome"], verdicts[-1], path.name)
                self.assertNotIn("settled", verdicts[:-1], f"{path.name}: it would have stopped earlier")


class MissedReading(unittest.TestCase):
    """A /stats reading that does not come in time (a cold JVM on one CPU) is skipped: the window runs on
    to the next reading, and the warm-up goes on; before, it ended the warm-up as "unknown"."""

    def test_a_late_stats_is_skipped(self):
        from unittest import mock
        cpu, cmds, clock = [0], [], [0.0]

        def get_json(url):
            if len(cmds) == 2:
                return None
            return {"completed": len(cmds) * 3000, "jvm": {"cpuMs": cpu[0], "compilerCpuMs": 0}}

        def run(role, cmd, out):
            cmds.append(cmd)
            cpu[0] += 3000
            clock[0] += 3.0

        with mock.patch.object(warmup.web, "get_json", get_json), mock.patch.object(warmup.place, "run", run), \
                mock.patch.object(warmup.place, "shown", lambda role, cmd: " ".join(cmd)), \
                mock.patch.object(warmup.time, "monotonic", lambda: clock[0]):
            done = warmup._windows("http://h:1/x", 1, 10, Path("/tmp/w.txt"), "http://h:2/stats", "fast calls", None, None)
        self.assertEqual(("settled", 1), (done["outcome"], done["missed_reads"]))
        self.assertEqual([3.0, 6.0, 3.0], [w["seconds"] for w in done["windows"]])


class HandedOff(unittest.TestCase):
    """A fire-and-forget app answers before its calls are done (/stats' `background`): each warm-up
    window ends once they are, remote-sleep answering at once, and the next run at 1 connection (issue 37)."""

    def test_a_window_waits_for_the_calls_it_handed_off(self):
        from unittest import mock
        cpu, background, cmds, posted, clock = [0], [0], [], [], [0.0]

        def get_json(url):
            return {"completed": len(cmds) * 1000, "background": background[0],
                    "jvm": {"cpuMs": cpu[0], "compilerCpuMs": 0}}

        def run(role, cmd, out):
            cmds.append(cmd)
            cpu[0] += 1000
            clock[0] += 3.0
            background[0] = 5000            # each window leaves 5,000 calls behind it

        def sleep(s):
            clock[0] += s
            background[0] = max(0, background[0] - 2500)

        with mock.patch.object(warmup.web, "get_json", get_json), mock.patch.object(warmup.place, "run", run), \
                mock.patch.object(warmup.place, "shown", lambda role, cmd: " ".join(cmd)), \
                mock.patch.object(warmup.remote, "fast", lambda url, schedule: posted.append(schedule) or True), \
                mock.patch.object(warmup.remote, "end_fault", lambda url: posted.append("end")), \
                mock.patch.object(warmup.time, "sleep", sleep), mock.patch.object(warmup.time, "monotonic", lambda: clock[0]):
            done = warmup._windows("http://h:1/fanout?n=10&ms=300", 10, 100, Path("/tmp/w.txt"), "http://h:2/stats",
                                   "the measured request", "http://h:0/fault", "schedule")
        self.assertEqual(["-c", "100"], cmds[0][3:5])
        self.assertTrue(all(c[3:5] == ["-c", "1"] for c in cmds[1:]), cmds)
        self.assertIn("each window ended once the calls it handed off were done", done["how"])
        self.assertIn("61000ms:delay=0", posted)       # the calls waited for answered at once
        self.assertEqual("settled", done["outcome"])
        self.assertEqual(0, background[0])


class Report(unittest.TestCase):
    """results.md says how warm each measured window was (report/summary.py: jit_line, the verdict's ⚠)."""

    def cell(self, app, jit, outcome="settled", seconds=12.0):
        return {"app": app, "container": "jetty", "threads": 1, "status": "ok", "pct_of_ceiling": 99.0,
                "handler_threads": 1, "jit_pct": jit, "warmup_mode": "auto", "warmup_outcome": outcome,
                "warmup_s": seconds, "warmup_text": "no steady state within 60 s" if outcome != "settled" else "JIT settled"}

    def test_the_first_screen_gives_the_jit_share_and_the_warm_ups(self):
        run = {"cells": [self.cell("a", 1.0), self.cell("b", 3.0, seconds=18.0), self.cell("c", 22.5, "no steady state", 60.0)]}
        line = jit_line(run)
        self.assertIn("median **3.0 %**, highest 22.5 % (c jetty threads=1); 1 of 3 cells above 5 %", line)
        self.assertIn("Warm-up (WARMUP=auto): 2 of 3 fresh apps settled, after a median 18 s; "
                      "c jetty threads=1: no steady state within 60 s.", line)
        # The verdict answers "does it keep up?" only (issue 38): the compiler's share sits beside the
        # CPU figures, in the all-cells table, flagged above a warm window's 5 %.
        self.assertEqual("99.0 % ⚠ no steady state · 1 thr.", verdict_text([self.cell("c", 22.5, "no steady state")]))
        self.assertEqual("99.0 % · 1 thr.", verdict_text([self.cell("a", 1.0)]))
        self.assertEqual(("22 ⚠", "1", "—"), (f_jit(self.cell("c", 22.5)), f_jit(self.cell("a", 1.0)), f_jit(self.cell("a", None))))
        before = {k: v for k, v in self.cell("a", None).items() if not k.startswith("warmup")}
        self.assertEqual("", jit_line({"cells": [before]}))   # a run before it
        # a tiny run: no cell had the CPU to price a share, its warm-ups are still said
        self.assertEqual("Warm-up (WARMUP=auto): 1 of 1 fresh apps settled, after a median 12 s.\n",
                         jit_line({"cells": [self.cell("a", None)]}))
        # the sweep warms its reused JVM again at each level: those are warm-ups, not fresh apps
        again = dict(self.cell("a", 1.0, seconds=9.0), app_start="reused")
        self.assertIn("Warm-up (WARMUP=auto): 2 of 2 warm-ups (1 of fresh apps, 1 of a sweep's app again at its "
                      "next level) settled, after a median 12 s.", jit_line({"cells": [self.cell("a", 1.0), again]}))

    def test_a_jvm_grown_to_its_next_pool_is_counted_apart(self):
        # THREADS="1 200": the 200-thread cell's warm-up ran on the 1-thread cell's JVM, grown (cells.App.resize)
        grown = dict(self.cell("a", 1.0, seconds=9.0), threads=200, app_start="resized")
        fresh = [dict(self.cell("a", 1.0, seconds=30.0), app_start="fresh"), self.cell("b", 1.0, seconds=24.0)]
        self.assertIn("Warm-up (WARMUP=auto): 3 of 3 warm-ups (2 of fresh apps, a median 30 s; 1 of an app's JVM "
                      "grown to its next pool size, a median 9 s) settled.", jit_line({"cells": fresh + [grown]}))
        # THREADS="1 200 v1": v1 ran on it too, switched to virtual threads: counted as its own kind
        switched = dict(self.cell("a", 1.0, seconds=15.0), threads="v1", pool_mode="virtual", app_start="resized")
        self.assertIn("Warm-up (WARMUP=auto): 4 of 4 warm-ups (2 of fresh apps, a median 30 s; 1 of an app's JVM grown "
                      "to its next pool size, a median 9 s; 1 of an app's JVM switched to virtual threads, a median 15 s) "
                      "settled.", jit_line({"cells": fresh + [grown, switched]}))

    def test_the_first_screen_counts_the_cells_too_small_to_price(self):
        # a 1-thread sync app: under 100 ms of CPU, so no JIT share, but its "few" still counts
        priced = dict(self.cell("a", 2.0), cpu_ms_per_request_load=0.12, cpu_rest_ms_per_s=3.0)
        few = dict(self.cell("s", None), cpu_rest_ms_per_s=6.6, cpu_load_note="too few requests (10) to price one")
        line = jit_line({"cells": [priced, few]})
        self.assertIn("and less the JVM at rest (3.0–6.6 CPU ms/s) 0.120–0.120 (1 cell with too few requests to price one)", line)


class Twice(unittest.TestCase):
    """A JVM measured twice the same way (report/summary.py: twice_line): the order of the cells."""

    def cell(self, wrk_threads, cpu_app_s, start="reused", requests=1000, **more):
        return {"app": "a", "container": "jetty", "threads": 1, "client": "jdk", "scenario": "call", "loadgen": "wrk",
                "wrk_threads": wrk_threads, "connections": 100, "status": "ok", "app_start": start,
                "cpu_app_s": cpu_app_s, "requests": requests, **more}

    def marked(self, cells):
        mark_again(cells)       # as load_run does
        return {"cells": cells}

    def test_pairs_of_the_same_command_are_compared(self):
        run = self.marked([dict(self.cell(10, 0.20, "fresh"), index=1), dict(self.cell(10, 0.21), index=2),   # +5 %
                           dict(self.cell(10, 0.20, "fresh"), index=3, app="b"), dict(self.cell(10, 0.25), index=4, app="b"),
                           dict(self.cell(10, 0.20, "fresh"), index=5, app="c"), dict(self.cell(100, 0.30), index=6, app="c")])
        self.assertEqual("Twice on one JVM (the same wrk command back to back, 2 JVMs): the second window's CPU "
                         "ms/req +5 to +25 % from the first (median +25 %), within ±10 % in 1 of 2.\n", twice_line(run))

    def test_nothing_to_say_without_such_a_pair(self):
        self.assertEqual("", twice_line(self.marked([self.cell(10, 0.2, "fresh"), self.cell(100, 0.2)])))
        self.assertEqual("", twice_line(self.marked([self.cell(10, 0.2, "fresh"), self.cell(10, 0.2, "fresh")])))
        few = "too few requests (10) to price one"
        self.assertEqual("", twice_line(self.marked([self.cell(10, 0.2, "fresh", 10, cpu_load_note=few),
                                                     self.cell(10, 0.2, requests=10, cpu_load_note=few)])))


    def test_a_second_measurement_is_not_merged_as_another_round(self):
        # before mark_again, merge_rounds took the two cells of WRK_THREADS="10 10" for REPEAT rounds
        def cell(index, rnd, rps):
            return dict(self.cell(10, 0.2), index=index, round=rnd, steady_rps=rps, app_start="fresh" if index % 2 else "reused")
        once = [cell(1, 1, 99.0), cell(2, 1, 98.0)]
        mark_again(once)
        self.assertEqual([(1, None, 99.0), (1, 1, 98.0)],
                         [(c["repeats"], c.get("again"), c["steady_rps"]) for c in merge_rounds(once)])
        rounds = [cell(1, 1, 99.0), cell(2, 1, 98.0), cell(3, 2, 97.0), cell(4, 2, 96.0)]
        mark_again(rounds)
        self.assertEqual([(2, None, [97.0, 99.0]), (2, 1, [96.0, 98.0])],
                         [(c["repeats"], c.get("again"), c["range"]["steady_rps"]) for c in merge_rounds(rounds)])


    def test_the_second_measurement_has_its_own_table(self):
        first, again = dict(self.cell(10, 0.2), steady_rps=99.0), dict(self.cell(10, 0.2), steady_rps=97.0, again=1)
        text = group_tables([first, again], ["a"], ["jetty"], [], 1.0, ["steady"], lambda c: [c["steady_rps"]],
                            heading=lambda *_: "")
        self.assertIn("### 1 thread · wrk -t10 -c100\n", text)
        self.assertIn("### 1 thread · wrk -t10 -c100 · again, on the same JVMs\n", text)
        self.assertEqual(["| a | 99.0 |", "| a | 97.0 |"], [line for line in text.splitlines() if line.startswith("| a ")])


class LoadPrice(unittest.TestCase):
    """CPU per request less the compiler and the JVM at rest (report/figures.py: load_fields)."""

    def record(self, cpu_ms, compiler_ms, window_s=10.0, rest=None):
        return CellRecord(measured={"jvm_cpu_ms": cpu_ms, "jvm_compiler_cpu_ms": compiler_ms, "cpu_window_s": window_s},
                          rest={"seconds": 3.0, "cpu_ms": 30, "compiler_cpu_ms": 6} if rest is None else rest)

    def test_the_load_pays_for_what_it_added(self):
        # at rest 24 ms in 3 s without the compiler: 8 ms/s, 80 ms over the window
        f = load_fields(self.record(500, 50), 1000)
        self.assertEqual({"cpu_rest_ms_per_s": 8.0, "cpu_ms_per_request_load": 0.37, "cpu_load_note": None}, f)

    def test_too_few_requests_get_a_reason_not_a_number(self):
        # a 1-thread sync app: 10 requests add 20 ms to the 80 ms the JVM spends at rest
        f = load_fields(self.record(100, 0), 10)
        self.assertIsNone(f["cpu_ms_per_request_load"])
        self.assertEqual("too few requests (10) to price one: the load added 20 ms of CPU to the 80 ms (± 33) the JVM "
                         "spends at rest over 10 s", f["cpu_load_note"])

    def test_a_rest_that_read_zero_still_has_its_ticks(self):
        # measured: a 1-thread sync app, 9 requests adding 26 ms over a 3 s rest that read 0 ticks;
        # 26 ms is inside the 33 ms one tick per 3 s can hide over a 10 s window
        f = load_fields(self.record(26, 0, rest={"seconds": 3.0, "cpu_ms": 0, "compiler_cpu_ms": 0}), 9)
        self.assertIsNone(f["cpu_ms_per_request_load"])
        self.assertIn("the load added 26 ms of CPU to the 0 ms (± 33)", f["cpu_load_note"])
        # a priced cell: 1,000 requests adding 150 ms
        self.assertEqual(0.15, load_fields(self.record(150, 0, rest={"seconds": 3.0, "cpu_ms": 0, "compiler_cpu_ms": 0}),
                                           1000)["cpu_ms_per_request_load"])

    def test_no_rest_reading_no_figure(self):
        self.assertEqual({"cpu_rest_ms_per_s": None, "cpu_ms_per_request_load": None, "cpu_load_note": None},
                         load_fields(self.record(500, 50, rest={}), 1000))
        # a compiler thread retired inside the window: its CPU left /proc, the share is unknown
        self.assertIsNone(load_fields(self.record(500, -5), 1000)["cpu_ms_per_request_load"])


if __name__ == "__main__":
    unittest.main()
