"""SCENARIO=cost (issue 39): its plan, perf's counters read, a window divided per request (the JVM at
rest subtracted, each count over its own window), a fork's figures, and the card with its ranking."""
import re
import unittest
from pathlib import Path

from labbench.plan import plan
from labbench.report.figures import read_results
from labbench.scenarios.cost import card, compare, counters, speed
from labbench.settings import UsageError, parse

PERF = """4108.99,msec,task-clock,4108989,100.00,0.815,CPUs utilized
1234,,context-switches,4108989,100.00,243.369,/sec
20125,,raw_syscalls:sys_enter,4108989,100.00,4.898,M/sec
"""


def stats(completed, cpu_ms, compiler_ms, alloc, gc, gc_ms):
    return {"completed": completed, "errors": 0, "inFlight": 1000, "queued": 0,
            "jvm": {"cpuMs": cpu_ms, "compilerCpuMs": compiler_ms, "allocatedBytes": alloc, "gcCount": gc, "gcTimeMs": gc_ms}}


def cost_json(cpu_s_per_window=1.0, rest_ns_per_s=10e6, windows=3, rps=1000.0, alloc_per_req=2048):
    ws = []
    for k in range(windows):
        n0, n1 = 5000 * k, 5000 * (k + 1)
        ws.append({"perf": {"task-clock": cpu_s_per_window * 1e9 + rest_ns_per_s * 5, "context-switches": 2500,
                            "raw_syscalls:sys_enter": 60000},
                   "perf_s": 5, "stats_s": 5000 / rps,
                   "stats0": stats(n0, 1000 * k, 0, n0 * alloc_per_req, 2 * k, 10 * k),
                   "stats1": stats(n1, 1000 * (k + 1), 20, n1 * alloc_per_req, 2 * (k + 1), 10 * (k + 1)),
                   "pss_kb": 512 * 1024, "threads": 40})
    return {"rate": 1000, "in_flight": 1000, "idle": {"pss_kb": 200 * 1024, "threads": 30},
            "warmup": {"text": "JIT settled after 21 s"}, "windows": ws, "rest": {"ns_per_s": rest_ns_per_s}}


class PlanTest(unittest.TestCase):
    def test_forks_interleave_and_a_pool_too_small_is_left_out_with_why(self):
        s = parse({"SCENARIO": "cost", "COST_VARIANTS": "sync-servlet:200 sync-servlet:conns webflux@netty:1",
                   "COST_FORKS": "2"}, "cost", n_cores=2)
        cells, left_out = plan(s)
        self.assertEqual([(c.round, c.variant, c.threads) for c in cells],
                         [(1, "sync-servlet@jetty:conns", "1250"), (1, "webflux@netty:1", "1"),
                          (2, "sync-servlet@jetty:conns", "1250"), (2, "webflux@netty:1", "1")])
        self.assertEqual(["sync-servlet@jetty:200: its 200 threads hold at most 200 of the 1000 requests in flight"], left_out)
        self.assertEqual(("vegeta", 1000, {"app": "1", "backend": "0", "loadgen": "0"}), (cells[0].loadgen, s.rate, s.cpusets))
        self.assertEqual(len({c.app_key for c in cells}), 4)          # a fresh JVM for every fork

    def test_a_variant_with_the_agent_is_its_own_jvm_beside_the_one_without(self):
        s = parse({"SCENARIO": "cost", "COST_VARIANTS": "async-servlet:1 async-servlet:1+agent", "COST_FORKS": "1"},
                  "cost", n_cores=2)
        cells, _ = plan(s)
        self.assertEqual([(c.variant, c.agent) for c in cells],
                         [("async-servlet@jetty:1", False), ("async-servlet@jetty:1+agent", True)])
        self.assertNotEqual(cells[0].app_key, cells[1].app_key)
        self.assertEqual(s.variants[1].label, "async-servlet jetty, 1 thread, with the lab's agent")
        self.assertTrue(cells[1].dir_name.endswith("-t1-agent-vegeta"), cells[1].dir_name)

    def test_bad_values_and_what_it_sets_itself(self):
        for env, words in [({"COST_FORKS": "0"}, "COST_FORKS"), ({"COST_WINDOW": "x"}, "COST_WINDOW"),
                           ({"COST_VARIANTS": "nope:1"}, "COST_VARIANTS"), ({"THREADS": "1"}, "sets THREADS itself"),
                           ({"WORK": "cpu=fast"}, "WORK")]:
            with self.subTest(env=env), self.assertRaises(UsageError) as e:
                parse({"SCENARIO": "cost", **env}, "cost", n_cores=2)
            self.assertIn(words, str(e.exception))


class CountersTest(unittest.TestCase):
    def test_perf_stat_csv_and_what_it_says_when_a_counter_is_missing(self):
        values, error = counters.parse_perf(PERF)
        self.assertEqual(("", 4108990000.0, 1234.0, 20125.0), (error, round(values["task-clock"]), values["context-switches"],
                                                              values["raw_syscalls:sys_enter"]))
        values, error = counters.parse_perf("<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n"
                                            "Error: no permission\n")
        self.assertIsNone(values["raw_syscalls:sys_enter"])
        self.assertEqual("Error: no permission", error)
        self.assertEqual((524288, 40), counters.proc_figures("Rss: 9 kB\nPss:  524288 kB\n", "Name: java\nThreads:\t40\n"))

    def test_per_thread_the_collector_and_the_compiler_are_kept_apart(self):
        text = ("qtp1-12,800.00,msec,task-clock,800000000,100.00,0.8,CPUs utilized\n"
                "GC Thread#0-20,100.00,msec,task-clock,100000000,100.00,0.1,CPUs utilized\n"
                "G1 Conc#0-21,50.00,msec,task-clock,50000000,100.00,0.05,CPUs utilized\n"
                "C2 CompilerThre-22,30.00,msec,task-clock,30000000,100.00,0.03,CPUs utilized\n"
                "lab-agent-sampl-23,4.00,msec,task-clock,4000000,100.00,0.004,CPUs utilized\n"
                "java-11,<not counted>,msec,task-clock,0,100.00,,\n"
                "qtp1-12,900,,context-switches,800000000,100.00,1.1,K/sec\n"
                "java-11,<not counted>,,context-switches,0,100.00,,\n"
                "qtp1-12,5000,,raw_syscalls:sys_enter,800000000,100.00,6.2,K/sec\n"
                "GC Thread#0-20,7,,raw_syscalls:sys_enter,100000000,100.00,0.1,K/sec\n")
        values, error = counters.parse_perf(text)
        self.assertEqual("", error)
        self.assertEqual((984e6, 150e6, 30e6, 4e6, 900.0, 5007.0),
                         (values["task-clock"], values["task-clock:gc"], values["task-clock:jit"], values["task-clock:agent"],
                          values["context-switches"], values["raw_syscalls:sys_enter"]))
        self.assertIn("--per-thread", counters.perf_command(11, 5))

    def test_at_rest_the_collector_and_the_compiler_are_kept_apart_too(self):
        from unittest import mock
        from labbench.scenarios.cost import live
        text = ("qtp1-12,3.00,msec,task-clock,3000000,100.00,0.001,CPUs utilized\n"
                "C2 CompilerThre-22,90.00,msec,task-clock,90000000,100.00,0.03,CPUs utilized\n"
                "qtp1-12,40,,context-switches,3000000,100.00,1.1,K/sec\n"
                "qtp1-12,120,,raw_syscalls:sys_enter,3000000,100.00,6.2,K/sec\n")
        with mock.patch.object(live.place, "beside", lambda p, words, timeout=60: (0, text)), \
                mock.patch.object(live.place, "pid", lambda p: 11):
            rest = live.at_rest(None, seconds=3)
        self.assertEqual((93e6, 31e6, 90e6, 0.0, 120.0),
                         (rest["task_ns"], rest["ns_per_s"], rest["jit_ns"], rest["gc_ns"], rest["syscalls"]))
        self.assertEqual([["C2 CompilerThre", 90_000_000], ["qtp1", 3_000_000]], rest["busiest"])

    def test_a_window_per_request_each_count_over_its_own_window(self):
        w = cost_json()["windows"][0]
        f = counters.window_figures(w["perf"], w["stats0"], w["stats1"], 5, 5.05, 10e6)
        # 5,000 answers over 5.05 s of /stats reads: 990.1 req/s; perf's 5 s: 1 s of load CPU + rest
        self.assertAlmostEqual(990.1, f["rps"], places=1)
        self.assertAlmostEqual(1e9 / 5 / (5000 / 5.05) / 1e3, f["cpu_us"], places=6)
        self.assertAlmostEqual(60000 / 5 / (5000 / 5.05), f["syscalls_per_req"], places=6)
        self.assertEqual((2.0, 0.4, 2.0), (f["alloc_kib"], f["gc_per_1000"], f["gc_ms_per_1000"]))
        self.assertEqual(2.0, f["jit_pct"])


class CardTest(unittest.TestCase):
    def run_of(self, forks):
        cells = []
        for label, cpu in forks:
            cells.append({"scenario": "cost", "round": 1, "label": label,     # its part, flat as a loaded run has it
                          "fork": card.fork_figures(cost_json(cpu_s_per_window=cpu))})
        return {"cells": cells, "meta": {"mode": "cost"}}

    def test_a_fork_is_the_mean_of_its_windows_at_rest_subtracted(self):
        f = card.fork_figures(cost_json())
        self.assertAlmostEqual(200.0, f["cpu_us"])                   # 1 s of load CPU per 5 s, 1,000 req/s
        self.assertAlmostEqual(210.0, f["cpu_us_with_rest"])
        self.assertEqual((512.0, 40.0, True, 2.0), (f["pss_mb_per_1000"], f["threads_per_1000"], f["carried"], f["jit_pct_max"]))

    def test_at_rest_the_compilers_cpu_is_not_subtracted(self):
        c = cost_json(rest_ns_per_s=10e6)
        base = card.fork_figures(c)["cpu_us"]
        # a fork whose JIT recompiled at the load's end: 109.2 ms/s at rest, 103.5 of them the compiler's
        c["rest"] = {"seconds": 3, "task_ns": 3 * 109.2e6, "jit_ns": 3 * 103.5e6, "ns_per_s": 109.2e6}
        f = card.fork_figures(c)
        self.assertAlmostEqual(5.7e3, f["rest_us_per_s"])
        self.assertAlmostEqual(base + (10e6 - 5.7e6) / 1000 / 1e3, f["cpu_us"], places=6)
        del c["rest"]["jit_ns"]         # a run from before 2026-11-27: all of it, as it was subtracted then
        self.assertAlmostEqual(109.2e3, card.fork_figures(c)["rest_us_per_s"])

    def test_carried_is_judged_over_the_forks_windows_together(self):
        c = cost_json()
        c["windows"][2]["stats_s"] = 5000 / 971.9          # one window's answers partly in the next one's
        self.assertTrue(card.fork_figures(c)["carried"])
        for w in c["windows"]:
            w["stats_s"] = 5000 / 975.0                     # every window short: it fell behind
        self.assertFalse(card.fork_figures(c)["carried"])

    def test_steal_is_the_share_of_the_app_hosts_cpu_time_the_hypervisor_took(self):
        cost = cost_json()
        for k, w in enumerate(cost["windows"]):          # (busy, total, steal) jiffies: 1 000 a window, 10 k % stolen
            w["box0"], w["box1"] = [0, 1000 * k, 0], [500, 1000 * (k + 1), 10 * k]
        self.assertAlmostEqual(1.0, card.fork_figures(cost)["steal_pct"])        # (0 + 1 + 2) / 3 %
        self.assertIsNone(card.fork_figures(cost_json())["steal_pct"])            # a run from before: not recorded
        run = {"cells": [{"scenario": "cost", "label": "x", "fork": card.fork_figures(cost)}], "meta": {}}
        self.assertEqual("Steal (the hypervisor's, in the measured windows): 1.0–1.0 % of the app host's CPU time "
                         "by fork, median 1.0 %.\n", card.steal_line(run))
        self.assertEqual("", card.steal_line(self.run_of([("x", 1.0)])))

    def test_a_fork_keeps_what_the_jit_had_compiled_at_its_end(self):
        cost = cost_json()
        cost["windows"][-1]["stats1"]["jvm"].update(nonProfiledCodeKb=5120, profiledCodeKb=2048)
        f = card.fork_figures(cost)
        self.assertEqual((5120, 2048), (f["c2_code_kib"], f["c1_code_kib"]))
        self.assertEqual((None, None), tuple(card.fork_figures(cost_json())[k] for k in ("c2_code_kib", "c1_code_kib")))
        forks = [("x", 1.0), ("x", 1.5)]
        run = self.run_of(forks)
        run["cells"][0]["fork"].update(c2_code_kib=5120, c1_code_kib=2048)
        run["cells"][1]["fork"].update(c2_code_kib=4096, c1_code_kib=3072)
        line = card.spread_lines(run)[0]
        self.assertIn("code C2 5,120 KiB, C1 2,048 KiB", line)
        self.assertIn("code C2 4,096 KiB, C1 3,072 KiB", line)

    def test_the_card_calls_a_difference_only_where_the_intervals_say_so(self):
        run = self.run_of([("cheap", 1.0), ("cheap", 1.01), ("cheap", 0.99),
                           ("dear", 1.5), ("dear", 1.52), ("dear", 1.48),
                           ("close", 1.51), ("close", 1.45), ("close", 1.56)])
        lines = card.ranking(run)
        self.assertTrue(lines[0].startswith("- cheapest: **cheap**, 200.0 ± "), lines)
        self.assertIn("**dear** costs **1.50×** cheap's CPU (95 % CI 1.46–1.54)", " ".join(lines))
        self.assertTrue(any("not separable from" in line for line in lines), lines)
        table = card.card_table(run)
        self.assertIn("| cheap | 3 | 200.0 ± ", table)
        self.assertIn("| 2.00 ± ", table)          # cores for 10,000 req/s: 200 µs x 10,000
        self.assertEqual([], card.spread_lines(self.run_of([("a", 1.0), ("a", 1.01), ("a", 1.0)])))
        self.assertEqual(1, len(card.spread_lines(self.run_of([("a", 1.0), ("a", 1.5)]))))

    def test_the_agent_is_priced_against_the_same_variant_without_it(self):
        base, agent = "async-servlet@jetty:1", "async-servlet@jetty:1+agent"
        lines = card.agent_lines(self.run_of([(base, 1.0), (base, 1.002), (base, 0.998),
                                              (agent, 1.001), (agent, 1.003), (agent, 0.999)]))
        self.assertIn(f"- the lab's agent on {base}: CPU 200.2 ± 1.0 against 200.0 ± 1.0 µs without it: +0.1 %", lines[2])
        self.assertTrue(lines[2].endswith(": within 2 %"), lines[2])
        dear = card.agent_lines(self.run_of([(base, 1.0), (base, 1.01), (base, 0.99),
                                             (agent, 1.1), (agent, 1.11), (agent, 1.09)]))
        self.assertTrue(dear[2].endswith("**more than 2 %**"), dear[2])
        wide = card.agent_lines(self.run_of([(base, 1.0), (base, 1.2), (base, 0.8), (agent, 1.0), (agent, 1.2), (agent, 0.8)]))
        self.assertIn("not resolved at ± 2 % by 3 and 3 forks", wide[2])
        run = self.run_of([(base, 1.0), (base, 1.002), (agent, 1.001), (agent, 1.003)])
        for cell in run["cells"][2:]:
            cell["fork"]["agent_cpu_us"] = 2.0           # its own threads: 2 µs of the ~200 µs a request
        self.assertEqual("- its own threads (`lab-agent-*`, perf's task-clock per thread): 2.00 ± 0.00 µs a request, "
                         "1.00 % of the variant's CPU", card.agent_lines(run)[-1])
        self.assertEqual([], card.agent_lines(self.run_of([(base, 1.0), (base, 1.01)])))

    def test_compare_judges_by_the_intervals_and_across_machines_by_ratios(self):
        a = self.run_of([("x", 1.0), ("x", 1.01), ("x", 0.99), ("y", 2.0), ("y", 2.02), ("y", 1.98)])
        b = self.run_of([("x", 1.0), ("x", 1.02), ("x", 0.99), ("y", 3.0), ("y", 3.03), ("y", 2.97)])
        text = compare.compare(a, b)
        self.assertIn("one machine", text)
        self.assertRegex(text, r"\| x \| CPU µs/req \| 200\.00 ± [0-9.]+ \| 200\.67 ± [0-9.]+ \| same \|")
        self.assertRegex(text, r"\| y \| CPU µs/req \| .* \| dearer \|")
        self.assertIn("| y | syscalls/req | 12.00 ± 0.00 | 12.00 ± 0.00 | same |", text)
        a["meta"]["cpu"], b["meta"]["cpu"] = "2 x AMD EPYC", "2 x Intel(R) Xeon(R) Processor"
        text = compare.compare(a, b)
        self.assertIn("two machines: CPU as a ratio to x within each run", text)
        self.assertRegex(text, r"\| y \| CPU, × x's \| 2\.00 \([0-9.–]+\) \| 2\.99 \([0-9.–]+\) \| dearer \|")

    def test_a_run_twice_counts_medians_inside_the_others_interval_and_pairs_that_flip(self):
        a = self.run_of([("x", 1.0), ("x", 1.01), ("x", 0.99), ("y", 2.0), ("y", 2.02), ("y", 1.98)])
        b = self.run_of([("x", 1.0), ("x", 1.02), ("x", 0.99), ("y", 0.5), ("y", 0.51), ("y", 0.49)])
        a["meta"]["rate"] = b["meta"]["rate"] = 1000
        text = compare.compare(a, b)
        self.assertIn("**Run twice:** CPU: each run's median inside the other's interval for 1 of 2 variants (not: y).", text)
        self.assertIn("syscalls/req within 2 %: 2 of 2.", text)
        self.assertIn("Pairs separable by CPU in either run: 1 of 1; in both: 1; ordered the other way in the other run: 1 (x and y).", text)
        b["meta"]["rate"] = 600                      # not the same command: not judged as a repeat
        self.assertNotIn("Run twice", compare.compare(a, b))

    def test_cpu_relative_to_its_own_run_takes_a_spell_of_the_box_out(self):
        def run(box):           # each round's two forks ran in one spell; the whole of run B in a 30 % slower one
            return {"meta": {"mode": "cost", "rate": 1000}, "cells": [
                {"scenario": "cost", "round": k + 1, "label": label,
                 "fork": card.fork_figures(cost_json(cpu_s_per_window=cpu * box))}
                for k, pair in enumerate([(1.0, 2.0), (1.1, 2.1), (0.95, 1.95)]) for label, cpu in zip("xy", pair)]}
        text = compare.compare(run(1.0), run(1.3))
        self.assertIn("**Run twice:** CPU: each run's median inside the other's interval for 0 of 2 variants", text)
        self.assertIn("CPU relative to its own run (each fork over the geometric mean of its round's forks, so a spell "
                      "of the box moves a round together): each run's median inside the other's interval for 2 of 2 "
                      "variants.", text)
        self.assertAlmostEqual(1 / 2 ** 0.5, compare.relative(run(1.0), ["x", "y"])["x"][0])
        one_sided = run(1.0)                                  # y dearer by half in B, x not: relative CPU sees it
        for c in one_sided["cells"]:
            c["fork"]["cpu_us"] *= 1.5 if c["label"] == "y" else 1.0
        self.assertIn("inside the other's interval for 0 of 2 variants (not: x, y).",
                      compare.relative_line(run(1.0), one_sided, ["x", "y"]))

    def test_two_placements_judge_the_machine_independent_counters_within_two_percent(self):
        a = self.run_of([("x", 1.0), ("x", 1.01), ("x", 0.99), ("y", 2.0), ("y", 2.02), ("y", 1.98)])
        b = self.run_of([("x", 1.1), ("x", 1.12), ("x", 1.09), ("y", 2.0), ("y", 2.02), ("y", 1.98)])
        a["meta"].update(rate=1000, cpusets="app on CPU 1, backend on CPU 0, loadgen on CPU 0")
        b["meta"].update(rate=1000, cpusets="none")
        for c in b["cells"]:                           # y's syscalls 3 % more in B
            if c["label"] == "y":
                c["fork"]["syscalls_per_req"] *= 1.03
        text = compare.compare(a, b)
        self.assertNotIn("Run twice", text)              # CPU moves with the placement: not a repeat
        self.assertIn("**Machine-independent** (cpusets differ; issue 39: within 2 % between placements and machines)", text)
        self.assertIn("syscalls/req within 2 %: 1 of 2 (not: y +3.0 %).", text)
        self.assertIn("ctx sw/req within 2 %: 2 of 2.", text)
        self.assertIn("alloc KiB/req within 2 %: 2 of 2.", text)



class StillWarmingTest(unittest.TestCase):
    """A window whose compiler share is above 5 % after a settled warm-up is the warm-up's: kept apart
    and measured again, at most as many times as there are windows; the card says how many."""

    def run_windows(self, shares, n=3):
        from labbench.scenarios.cost import live
        reads, self.probes = iter(shares), []

        def fake_window(p, stats_url, seconds, speed_out, profiled=None, backend_port=None):
            share = next(reads)
            self.probes.append(speed_out.name)
            return {"stats0": stats(0, 0, 0, 0, 0, 0), "stats1": stats(1000, 1000, 1000 * share, 0, 0, 0)}
        real, live.window = live.window, fake_window
        try:
            return live.warm_windows(None, "", n, 5, Path("cell"))
        finally:
            live.window = real

    def test_a_window_above_five_percent_compiler_is_measured_again(self):
        kept, again = self.run_windows([0.18, 0.044, 0.006, 0.002])
        self.assertEqual([0.044, 0.006, 0.002], [counters.jit_share(w["stats0"], w["stats1"]) for w in kept])
        self.assertEqual(1, len(again))
        self.assertEqual(["speed-1.txt", "speed-2.txt", "speed-3.txt", "speed-4.txt"], self.probes)  # each its own

    def test_a_window_without_its_stats_readings_is_measured_again(self):
        from labbench.scenarios.cost import live
        windows = iter([{"stats0": {}, "stats1": stats(1000, 1000, 0, 0, 0, 0)}]
                       + [{"stats0": stats(0, 0, 0, 0, 0, 0), "stats1": stats(1000, 1000, 0, 0, 0, 0)}] * 3)
        real, live.window = live.window, lambda *a, **k: next(windows)
        try:
            kept, again = live.warm_windows(None, "", 3, 5, Path("cell"))
        finally:
            live.window = real
        self.assertEqual((3, 1), (len(kept), len(again)))
        self.assertTrue(all(w["stats0"] for w in kept))

    def test_past_n_windows_again_the_windows_are_kept_as_they_are(self):
        kept, again = self.run_windows([0.2, 0.2, 0.2, 0.2, 0.2, 0.2])
        self.assertEqual((3, 3), (len(kept), len(again)))

    def test_the_card_counts_them(self):
        c = cost_json()
        c["still_warming"] = [c["windows"][0]]
        run = {"meta": {}, "cells": [{"scenario": "cost", "label": "webflux@netty:1", "round": 1,
                                      "fork": card.fork_figures(c)}]}
        self.assertIn("1 window(s) in 1 of 1 forks read the compiler above 5 %", card.still_warming_line(run))


class WarmUpFloorTest(unittest.TestCase):
    """The warm-up on the measured load runs past the servers' first idle timeouts (30 s: their closes
    make the hot path's compiled code invalid), however early the compiler went quiet."""

    def warm(self, jit_pcts, missed=()):
        from unittest import mock
        from labbench.scenarios.cost import live
        clock, reads = [0.0], iter(range(100))

        def get_json(url):
            k = next(reads)     # 3,000 requests a window at 1 ms of CPU each, the compiler's share as given
            if k in missed:
                return None     # /stats did not answer in time (a cold JVM on one CPU)
            return stats(3000 * k, 3000 * k, sum(30 * p for p in jit_pcts[:k]), 0, 0, 0)
        with mock.patch.object(live.web, "get_json", get_json), \
                mock.patch.object(live.time, "sleep", lambda s: clock.__setitem__(0, clock[0] + s)), \
                mock.patch.object(live.time, "monotonic", lambda: clock[0]), \
                mock.patch("builtins.print"):
            return live.warm_on_load("stats")

    def test_a_quiet_compiler_from_the_start_still_waits_for_the_floor(self):
        from labbench import warmup
        from labbench.scenarios.cost import live
        record = self.warm([0.5] * 20)
        self.assertEqual(("settled", 42.0), (record["outcome"], record["seconds"]))
        self.assertEqual(42, live.FLOOR_S)
        # the control: the same windows under the other scenarios' floor settle after 9 s
        windows = [warmup.Window(3.0, 3000, 3000, 15) for _ in range(20)]
        self.assertEqual("settled", warmup.verdict(windows[:3])[0])

    def test_a_reading_that_does_not_come_is_skipped_not_the_end_of_the_warm_up(self):
        # B's seventh fork (2026-11-27): one late /stats at ~6 s ended its warm-up, and a JVM 6 s old was measured
        record = self.warm([0.5] * 20, missed={2})
        self.assertEqual(("settled", 42.0, 1), (record["outcome"], record["seconds"], record["missed_reads"]))
        self.assertEqual(6.0, record["windows"][1]["seconds"])        # the window ran on to the next reading

    def test_a_stats_that_never_answers_ends_the_warm_up_at_the_cap(self):
        from labbench import warmup
        record = self.warm([0.5] * 20, missed=set(range(1, 100)))
        self.assertEqual("no steady state", record["outcome"])
        self.assertIn(f"no steady state within {warmup.CAP_S} s: /stats did not answer 20 time(s)", record["text"])

    def test_the_first_idle_timeouts_recompiles_past_the_floor_are_waited_for(self):
        # the shape of a Reactor Netty fork (2026-11-27): quiet at 27-33 s, its idle closes' recompiles at 36-45 s
        from labbench import warmup
        shares = [48, 50, 49, 47, 49, 32, 32, 42, 17, 1, 0.6, 0.4, 28, 13, 20, 0.2, 0.2, 2.4, 1.7, 1]
        record = self.warm(shares)
        self.assertEqual(("settled", 54.0), (record["outcome"], record["seconds"]))
        # the control: under the other scenarios' floor it settled at 36 s, in the lull before them
        windows = [warmup.Window(3.0, 3000, 3000, 30 * p) for p in shares]
        self.assertEqual(["warming"] * 11 + ["settled"], [warmup.verdict(windows[:i])[0] for i in range(1, 13)])


class BoxSpeedTest(unittest.TestCase):
    """The box's speed on the app's CPUs in each window (bench/tools/speed-probe.py): read from the
    probe's line, divided out window by window, and the card's CPU at the run's median speed."""

    def test_the_probe_prints_its_line_and_a_missing_one_says_why(self):
        import subprocess
        import sys
        from labbench.scenarios.cost import live
        out = subprocess.run([sys.executable, str(live.SPEED_PROBE), "0.35"], capture_output=True, text=True, timeout=30)
        speed = counters.parse_speed(["host-run: pid 42", *out.stdout.splitlines()])
        self.assertEqual((4, 20000, 4), (speed["bursts"], speed["iterations"], len(speed["burst_ns"])))
        self.assertAlmostEqual(speed["ns_per_iteration"], sum(speed["burst_ns"]) / 80000, places=2)
        self.assertEqual({"error": "python3: not found"}, counters.parse_speed(["host-run: pid 42", "python3: not found"]))
        self.assertEqual({"error": "no output"}, counters.parse_speed([]))

    @staticmethod
    def fork(cpu_s, compute, memory=None):
        """A fork whose k-th window used cpu_s[k] s of CPU (5,000 requests) on a box at compute[k], memory[k]."""
        c = cost_json()
        for k, w in enumerate(c["windows"]):
            w["perf"]["task-clock"] = cpu_s[k] * 1e9 + 10e6 * 5
            w["speed"] = {"ns_per_iteration": compute[k], **({"ns_per_step": memory[k]} if memory else {})}
        return card.fork_figures(c)

    @staticmethod
    def run_of(forks_by_label):
        return {"meta": {}, "cells": [{"scenario": "cost", "label": label, "round": k + 1, "fork": f}
                                      for label, forks in forks_by_label.items() for k, f in enumerate(forks)]}

    def test_cpu_that_follows_the_box_is_fitted_and_divided_out(self):
        # two models, 1.0 and 0.5 s a window at the median speeds (50 ns, 150 ns), each window's CPU
        # × (compute / 50) × (memory / 150)^0.5: the box's, exactly
        boxes = [(50, 150), (60, 150), (50, 200), (45, 120), (55, 170), (52, 140), (48, 160), (58, 130), (50, 150)]

        def forks(base):
            out = []
            for f in range(3):
                w = boxes[3 * f:3 * f + 3]
                out.append(self.fork([base * c / 50 * (m / 150) ** 0.5 for c, m in w], [c for c, _ in w], [m for _, m in w]))
            return out
        run = self.run_of({"x": forks(1.0), "y": forks(0.5)})
        model = speed.fit(card.raw_variants(run))
        self.assertEqual((1.0, 0.5, 1.0, 18), (round(model.a, 6), round(model.b, 6), round(model.r2, 6), model.windows))
        (_, xs), (_, ys) = card.variants(run)
        self.assertEqual({200.0}, {round(f["cpu_us_at_speed"], 6) for f in xs})   # 1.0 s / 5,000 requests at 50 ns, 150 ns
        self.assertEqual({100.0}, {round(f["cpu_us_at_speed"], 6) for f in ys})
        self.assertIn("| CPU µs/req at median speed |", card.card_table(run))
        line = card.speed_line(run)
        self.assertIn("a compute loop 50.7–53.3 ns an iteration by fork, a memory walk 143–167 ns a step.", line)
        self.assertIn("∝ compute^1.00 × memory^0.50: the box's speed explains **100 %**", line)
        self.assertIn("at 50.0 ns and 150 ns. CPU within ± 5 % of its median: 0 of 2 variants as measured, 2 at median speed.", line)

    def test_cpu_that_does_not_follow_the_box_is_left_as_it_is(self):
        # the same CPU in every window whatever the box did: nothing to divide out
        run = self.run_of({v: [self.fork([1.0] * 3, c, [150, 150, 150]) for c in ([50, 60, 40], [45, 55, 50], [52, 48, 58])]
                           for v in ("x", "y")})
        model = speed.fit(card.raw_variants(run))
        self.assertEqual((0.0, 0.0), (round(model.a, 9), round(model.r2, 9)))
        self.assertEqual({200.0}, {round(f["cpu_us_at_speed"], 6) for _, fs in card.variants(run) for f in fs})

    def test_compare_takes_both_runs_at_one_speed(self):
        # run B's box was 20 % slower throughout: as measured every fork is dearer, at one speed the same
        def forks(slow):          # the forks also differ by 2 % of their own, the same in both runs
            return [self.fork([own * slow * c / 50 for c in cs], [slow * c for c in cs])
                    for own, cs in ((1.0, [50, 60, 40]), (1.02, [45, 55, 50]), (0.98, [52, 48, 58]))]
        a, b = self.run_of({"x": forks(1.0), "y": forks(1.0)}), self.run_of({"x": forks(1.2), "y": forks(1.2)})
        for r in (a, b):
            r["meta"] = {"cpu": "Xeon", "rate": 1000}
        text = compare.compare(a, b)
        self.assertRegex(text, r"\| x \| CPU µs/req \| 203\.\d+ ± \d+\.\d+ \| 244\.\d+ ± \d+\.\d+ \| dearer \|")
        self.assertRegex(text, r"\| x \| CPU µs/req at median speed \| 22\d\.\d+ ± \d+\.\d+ \| 22\d\.\d+ ± \d+\.\d+ \| same \|")
        self.assertIn("**Run twice:** CPU: each run's median inside the other's interval for 0 of 2 variants (not: x, y).", text)
        self.assertRegex(text, r"CPU at the box's median speed over both runs \(fit R² 9\d %\): each run's median inside the "
                               r"other's interval for 2 of 2 variants\.")

    def test_without_the_walk_compute_alone_and_without_readings_nothing(self):
        run = self.run_of({v: [self.fork([1.0 * c / 50 for c in cs], cs) for cs in ([50, 60, 40], [45, 55, 50], [52, 48, 58])]
                           for v in ("x", "y")})
        model = speed.fit(card.raw_variants(run))
        self.assertEqual((1.0, 0.0, None), (round(model.a, 6), model.b, model.memory_ns))
        self.assertNotIn("memory", card.speed_line(run))
        few = self.run_of({"x": [self.fork([1.0] * 3, c) for c in ([50, 60, 40], [45, 55, 50], [52, 48, 58])]})
        self.assertIn("Too few windows (18 needed)", card.speed_line(few))            # 9: two numbers would fit noise
        self.assertIsNone(card.variants(few)[0][1][0]["cpu_us_at_speed"])
        run = {"meta": {}, "cells": [{"scenario": "cost", "label": "x", "round": 1, "fork": card.fork_figures(cost_json())}]}
        self.assertNotIn("median speed", card.card_table(run))
        self.assertEqual("", card.speed_line(run))


class NotWholeTest(unittest.TestCase):
    """A fork whose app did not answer /stats in a window, or was busy at rest, is named under the card
    (a WebFlux fork on one Netty loop spun at 97 % of a CPU and 338,469 syscalls a second, 2026-11-27)."""

    def test_a_window_without_stats_and_a_busy_rest_are_named(self):
        c = cost_json(rest_ns_per_s=128e6)
        c["windows"][0]["stats0"], c["windows"][0]["stats1"] = {}, {}
        f = card.fork_figures(c)
        self.assertEqual((3, False), (f["windows"], f["carried"]))
        run = {"meta": {}, "cells": [{"scenario": "cost", "label": "webflux@netty:1", "round": 1, "fork": f}]}
        self.assertEqual("Forks not measured whole (in the card, with less to say): webflux@netty:1's fork 1: 1 of 3 "
                         "windows without /stats (the app did not answer it; it ran 33 % of a CPU with 12,000 syscalls/s); "
                         "at rest 128 ms of CPU a second, subtracted from every window.\n", card.unwhole_line(run))

    def test_a_whole_fork_says_nothing(self):
        run = {"meta": {}, "cells": [{"scenario": "cost", "label": "x", "round": 1, "fork": card.fork_figures(cost_json())}]}
        self.assertEqual("", card.unwhole_line(run))


class SyscallSpreadTest(unittest.TestCase):
    def test_forks_whose_syscalls_spread_show_their_waits(self):
        forks = [{"syscalls_per_req": s, "futex_per_req": fx, "epoll_per_req": 1.0, "cpu_us": 100.0}
                 for s, fx in ((10.0, 2.0), (14.0, 6.0), (10.5, 2.4))]
        run = {"meta": {}, "cells": [{"scenario": "cost", "label": "v", "fork": f} for f in forks]}
        line, = card.spread_lines(run)
        self.assertTrue(line.startswith("- v: syscalls/req ± "), line)
        self.assertIn("its forks: 10.00 (futex 2.00, epoll 1.00); 14.00 (futex 6.00, epoll 1.00)", line)


class ControlsTest(unittest.TestCase):
    """make compare of a run without WORK and one with it: what each piece moved its own counter by,
    against what it asked (issue 39's tolerances), the WORK read from each app's lab: line."""
    def run_of(self, cpu_s, alloc, work):
        cells = [{"scenario": "cost", "round": 1, "label": "v", "lab_line": f"lab: app=x {work} admin=y",
                  "fork": card.fork_figures(cost_json(cpu_s_per_window=c, alloc_per_req=alloc))} for c in cpu_s]
        return {"cells": cells, "meta": {"mode": "cost"}}

    def test_each_piece_against_what_it_asked(self):
        self.assertEqual({"cpu": 2000.0, "alloc": 64.0, "syscalls": 10.0}, compare.work_asked("cpu=2ms,alloc=65536,syscalls=10"))
        off = self.run_of([1.0, 1.01, 0.99], 2048, "")
        # 500 µs x 5,000 requests = 2.5 s more per window; 64 KiB more per request
        on = self.run_of([3.5, 3.52, 3.48], 2048 + 65536, "work=cpu=500us,alloc=65536")
        text = compare.controls(off, on)
        self.assertRegex(text, r"\| v \| CPU µs/req \| \+500\.00 \| \+500\.00 \(\+4[0-9]{2}\.[0-9]{2} to \+5[0-9]{2}\.[0-9]{2}\) \| as asked \(within ± 25\.00\) \|")
        self.assertIn("| v | alloc KiB/req | +64.00 | +64.00 (+64.00 to +64.00) | as asked (within ± 1.28) |", text)
        self.assertNotIn("syscalls/req", text)                  # not asked: not judged
        short = self.run_of([2.0, 2.01, 1.99], 2048 + 65536, "work=cpu=500us,alloc=65536")
        self.assertIn("| v | CPU µs/req | +500.00 | +200.00 (", compare.controls(off, short))
        self.assertIn("off by -300.00 (-60.0 %; ± 25.00 allowed)", compare.controls(off, short))
        self.assertIsNone(compare.controls(off, off))
        self.assertIn("**Controls**", compare.compare(off, on))


SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples"


class RecordedControlsTest(unittest.TestCase):
    """The committed control runs (issue 39's acceptance, on real runs of the 2-core box): each piece of
    WORK moved its own counter by what it asked, within the tolerance, in a thread-per-request model
    (sync-servlet, a platform thread per connection) and an event-loop one (WebFlux on one Netty loop)."""
    def verdicts(self, off, on):
        text = compare.controls(read_results(SAMPLES / off), read_results(SAMPLES / on))
        return {(m.group(1), m.group(2)): m.group(3) for m in
                re.finditer(r"^\| (\S+) \| ([^|]+?) \| [^|]+ \| [^|]+ \| ([^|]+?) \|$", text, re.M) if m.group(1) != "variant"}

    def test_alloc_and_syscalls_at_1000_req_s(self):
        got = self.verdicts("cost-control-off.json", "cost-control-alloc-syscalls.json")
        self.assertEqual({(v, c) for v in ("sync-servlet@jetty:conns", "webflux@netty:1")
                          for c in ("alloc KiB/req", "syscalls/req")}, set(got))
        for key, verdict in got.items():
            self.assertTrue(verdict.startswith("as asked"), (key, verdict))

    def test_cpu_at_600_req_s(self):
        # (at 1,000 req/s 500 µs more per request left the compiler no room on the app's one CPU)
        got = self.verdicts("cost-control-cpu-off.json", "cost-control-cpu.json")
        self.assertEqual({("sync-servlet@jetty:conns", "CPU µs/req"), ("webflux@netty:1", "CPU µs/req")}, set(got))
        for key, verdict in got.items():
            self.assertTrue(verdict.startswith("as asked"), (key, verdict))


if __name__ == "__main__":
    unittest.main()


class ClientConnectionsTest(unittest.TestCase):
    """The app's client's connections to the backend, counted in its host's TCP tables at each window's
    end: the JDK client walks a list of its idle ones on every request (docs/traps.md #42)."""

    TABLES = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:4A6B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 640 1 0 100 0 0 10 0
   1: 0100007F:9C40 0100007F:4A6B 01 00000000:00000000 00:00000000 00000000     0        0 641 1 0 20 4 30 10 -1
   2: 0100007F:4A6B 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 642 1 0 20 4 30 10 -1
   3: 0100007F:9C41 0100007F:4A6B 06 00000000:00000000 03:00000F7A 00000000     0        0 0 3 0
   4: 0100007F:9C42 0100007F:4A6C 01 00000000:00000000 00:00000000 00000000     0        0 643 1 0 20 4 30 10 -1
  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0000000000000000FFFF00000100007F:9C43 0000000000000000FFFF00000100007F:4A6B 01 00000000:00000000 00:00000000 00000000     0        0 644 1 0 20 4 30 10 -1
"""

    def test_established_to_the_backends_port_only(self):
        # 19051 = 0x4A6B: the client's side (1), not the backend's own side (2), a closed one (3) or
        # another port (4); an IPv6 one counts
        self.assertEqual(2, counters.client_connections(self.TABLES, 19051))
        self.assertIsNone(counters.client_connections("", 19051))

    def test_a_fork_keeps_their_mean(self):
        c = cost_json()
        for w, n in zip(c["windows"], (1010, 1020, 1030)):
            w["client_conns"] = n
        self.assertEqual(1020, card.fork_figures(c)["client_conns"])
        self.assertIsNone(card.fork_figures(cost_json())["client_conns"])        # runs before they were counted
