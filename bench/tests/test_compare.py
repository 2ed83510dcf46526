"""The verdict logic of bench/compare.py on synthetic runs: within the noise -> same; beyond it ->
better or worse in the right direction; repeats judged by their own ranges; queue-bound p99 and
failed cells not judged. Python 3 standard library only (run by the smoke test)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # bench/
from labbench.report import compare  # noqa: E402


def cell(rps, p99, app="webflux", threads=1, tpr=False, rng=None, repeats=1, status="ok", conns=100):
    c = {"scenario": "call", "app": app, "container": "jetty", "threads": threads, "wrk_threads": 10,
         "connections": conns, "steady_rps": rps, "rps": rps, "p99_ms": p99, "thread_per_request": tpr,
         "repeats": repeats, "status": status}
    if rng:
        c["range"] = rng
    return c


def judge(ca, cb):
    rows = compare.compare({compare.key_of(ca): ca}, {compare.key_of(cb): cb})
    (_, _, _, _, verdicts, overall), = rows
    return verdicts["steady_rps"], verdicts["p99_ms"], overall


class VerdictTest(unittest.TestCase):

    def test_within_the_floor_is_same(self):
        self.assertEqual(("same", "same", "same"), judge(cell(99.8, 1010), cell(98.5, 1080)))

    def test_beyond_the_floor_is_better_or_worse_in_the_right_direction(self):
        self.assertEqual(("worse", "worse", "worse"), judge(cell(99.8, 1010), cell(49.9, 2030)))
        self.assertEqual(("better", "better", "better"), judge(cell(49.9, 2030), cell(99.8, 1010)))
        self.assertEqual(("same", "better", "better"), judge(cell(99.8, 1500), cell(99.7, 1010)))

    def test_tiny_absolute_differences_are_same_whatever_the_ratio(self):
        self.assertEqual("same", judge(cell(0.9, 9000, tpr=True), cell(1.0, 9000, tpr=True))[0])

    def test_repeats_are_judged_by_their_own_ranges(self):
        a = cell(95.0, 1010, repeats=3, rng={"steady_rps": [90.0, 99.0], "p99_ms": [1005, 1100]})
        overlapping = cell(91.0, 1090, repeats=3, rng={"steady_rps": [85.0, 92.0], "p99_ms": [1050, 1200]})
        apart = cell(80.0, 1300, repeats=3, rng={"steady_rps": [79.0, 81.0], "p99_ms": [1250, 1400]})
        self.assertEqual(("same", "same", "same"), judge(a, overlapping))
        self.assertEqual(("worse", "worse", "worse"), judge(a, apart))

    def test_queue_bound_p99_and_failed_cells_are_not_judged(self):
        sync = dict(app="sync-servlet", threads=1, tpr=True)
        self.assertEqual(("same", "— (queue)", "same"), judge(cell(0.99, 1000, **sync), cell(0.99, 10000, **sync)))
        self.assertEqual(("—", "—", "—"), judge(cell(99.0, 1010), cell(None, None, status="FAILED: no start")))

    def test_the_summary_counts_cells_beyond_the_noise(self):
        a = {"meta": {}, "cells": [cell(99.8, 1010), cell(99.8, 1010, app="nio-servlet")]}
        b = {"meta": {}, "cells": [cell(99.0, 1020), cell(40.0, 2500, app="nio-servlet")]}
        with tempfile.TemporaryDirectory() as tmp:
            for name, run in (("a.json", a), ("b.json", b)):
                with open(os.path.join(tmp, name), "w") as f:
                    json.dump(run, f)
            out = subprocess.run([sys.executable, compare.__file__, os.path.join(tmp, "a.json"),
                                  os.path.join(tmp, "b.json")], capture_output=True, text=True, check=True).stdout
        self.assertIn("2 cells in both runs: 1 same, 0 better, 1 worse beyond the noise", out)

    def test_a_second_measurement_is_its_own_cell_and_says_so(self):
        first, again = cell(99.0, 1010), dict(cell(98.0, 1012), again=1)      # WRK_THREADS="10 10"
        self.assertNotEqual(compare.key_of(first), compare.key_of(again))
        self.assertEqual("-t10 -c100", compare.load_text(compare.key_of(first)))
        self.assertEqual("-t10 -c100 again", compare.load_text(compare.key_of(again)))

    def test_a_pair_measured_at_a_different_warmth_is_marked(self):
        cold, warm = dict(cell(99.0, 1010), jit_pct=38.0), dict(cell(99.0, 1010), jit_pct=2.5)
        self.assertEqual(" (warmth differs: JIT 38 % → 2 % of the app's CPU)", compare.warmth_note(cold, warm))
        self.assertEqual("", compare.warmth_note(warm, dict(warm, jit_pct=4.9)))
        self.assertEqual("", compare.warmth_note(cell(99.0, 1010), warm))          # a run that did not record it
        stuck = dict(warm, warmup_mode="auto", warmup_outcome="no steady state")
        self.assertEqual(" (warmth differs: warm-up settled → no steady state)",
                         compare.warmth_note(dict(warm, warmup_mode="auto", warmup_outcome="settled"), stuck))
        # listed under the table: the verdict column stays one word (the smoke test reads it)
        with tempfile.TemporaryDirectory() as tmp:
            for name, c in (("a.json", cold), ("b.json", warm)):
                with open(os.path.join(tmp, name), "w") as f:
                    json.dump({"meta": {}, "cells": [c]}, f)
            out = subprocess.run([sys.executable, compare.__file__, os.path.join(tmp, "a.json"),
                                  os.path.join(tmp, "b.json")], capture_output=True, text=True, check=True).stdout
        self.assertRegex(out, r"\| same \|\n")
        self.assertIn("Measured at a different warmth", out)
        self.assertIn("- call: webflux jetty threads=1 -t10 -c100 (warmth differs: JIT 38 % → 2 % of the app's CPU)", out)


    def test_a_probe_is_listed_by_its_answer_times_not_judged_as_a_load(self):
        def probe(*ms):
            return {"scenario": "fanout", "loadgen": "probe", "app": "fanout-pool", "container": "tomcat",
                    "threads": 1, "wrk_threads": None, "connections": None, "steady_rps": None, "bound_rps": 0.0,
                    "probes": [{"n": n, "client_ms": m} for n, m in zip((1, 10), ms)]}
        with tempfile.TemporaryDirectory() as tmp:
            for name, c in (("a.json", probe(304.0, 310.0)), ("b.json", probe(303.0, 3013.0))):
                with open(os.path.join(tmp, name), "w") as f:
                    json.dump({"meta": {}, "cells": [c]}, f)
            out = subprocess.run([sys.executable, compare.__file__, os.path.join(tmp, "a.json"),
                                  os.path.join(tmp, "b.json")], capture_output=True, text=True, check=True).stdout
        self.assertNotIn("-tNone", out)              # never a row of the load table
        self.assertNotIn("cells in both runs", out)
        self.assertIn("- fanout: fanout-pool tomcat threads=1: N=1 304 ms → 303 ms (-0.3 %); "
                      "N=10 310 ms → 3.013 s (+871.9 %)", out)

if __name__ == "__main__":
    unittest.main()

    def test_cells_on_a_grown_pool_say_so_in_the_settings_line(self):
        # THREADS="1 200" on one JVM (cells.App.resize) against a run with a fresh JVM per pool
        fresh = dict(cell(99.0, 1010, threads=200), app_start="fresh")
        with tempfile.TemporaryDirectory() as tmp:
            for name, c in (("a.json", fresh), ("b.json", dict(fresh, app_start="resized"))):
                with open(os.path.join(tmp, name), "w") as f:
                    json.dump({"meta": {}, "cells": [c]}, f)
            out = subprocess.run([sys.executable, compare.__file__, os.path.join(tmp, "a.json"),
                                  os.path.join(tmp, "b.json")], capture_output=True, text=True, check=True).stdout
        self.assertIn("B changed JVMs `a fresh JVM per pool` → `1 pool grown on a running JVM`", out)
        virtual = dict(fresh, threads="v1", pool_mode="virtual")
        with tempfile.TemporaryDirectory() as tmp:
            for name, cs in (("a.json", [fresh, virtual]), ("b.json", [dict(c, app_start="resized") for c in (fresh, virtual)])):
                with open(os.path.join(tmp, name), "w") as f:
                    json.dump({"meta": {}, "cells": cs}, f)
            out = subprocess.run([sys.executable, compare.__file__, os.path.join(tmp, "a.json"),
                                  os.path.join(tmp, "b.json")], capture_output=True, text=True, check=True).stdout
        self.assertIn("B changed JVMs `a fresh JVM per pool` → `1 pool grown and 1 switched to virtual threads on a running JVM`", out)
