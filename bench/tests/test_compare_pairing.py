"""`make compare` across what B changed (issue 27): the settings paragraph (each knob, a changed
commit, JDK, machine, steal), the pairing of cells across a changed knob (one to one, many to one,
none) with each side's Little's-law bound, % of the ceiling where SLEEP_MS or CONNECTIONS moved it,
and the exit 2 of two runs with nothing to compare.

The runs are bench/tests/fixtures/compare/*.json (cut from the committed default run
docs/samples/sample-results-warmup1s.json; bench/tests/fixtures/compare/README.md says how, and which cells are made up),
copies of them edited here, and the characterisation fixtures openloop and matrix.
Python 3 standard library only."""
import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # bench/
from labbench.report import compare  # noqa: E402

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"


def fixture(name):
    return json.loads((FIXTURES / "compare" / name).read_text())


def run_compare(a, b):
    """(exit code, stdout, stderr) of compare.main on two runs given as dicts or paths."""
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for name, run in (("a.json", a), ("b.json", b)):
            if isinstance(run, dict):
                path = Path(tmp) / name
                path.write_text(json.dumps(run))
                run = path
            args.append(str(run))
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            rc = compare.main(["compare", *args])
    return rc, out.getvalue(), err.getvalue()


def settings(a, b):
    """The settings paragraph of two runs given as dicts."""
    ka = {compare.key_of(c): c for c in a["cells"]}
    kb = {compare.key_of(c): c for c in b["cells"]}
    return compare.settings_text(compare.settings_diff(a["meta"], b["meta"], ka, kb))


def without_v1(run):
    run = copy.deepcopy(run)
    run["cells"] = [c for c in run["cells"] if c["threads"] != "v1"]
    run["meta"]["threads"] = [1, 200]
    return run


class SettingsDiffTest(unittest.TestCase):
    def setUp(self):
        self.a = fixture("default.json")

    def edited(self, cells=None, **meta):
        b = copy.deepcopy(self.a)
        b["meta"].update(meta)
        for c in b["cells"]:
            c.update(cells or {})
        return b

    def test_the_issue_loop_names_threads_and_what_b_narrowed(self):
        text = settings(self.a, fixture("threads-1-8.json"))
        self.assertTrue(text.startswith("**Settings:** B changed THREADS `1 200 v1` → `1 8`; "
                                        "narrowed APPS to `sync-servlet async-servlet`; the same: "), text)
        self.assertIn("SCENARIO, LOADGEN, REPEAT, DURATION, SLEEP_MS, WARMUP, JAVA_OPTS, APP_ARGS, JDK, commit, CPU, OS.", text)

    def test_each_knob_is_named(self):
        cases = [
            (dict(containers=["tomcat"]), None, "CONTAINERS `jetty` → `tomcat`"),
            (dict(containers=["jetty", "tomcat"]), None, "widened CONTAINERS to `jetty tomcat`"),
            ({}, {"client": "reactor-netty"}, "CLIENT `jdk` → `reactor-netty`"),
            (dict(app_args="--client-max-connections 50"), None, "APP_ARGS (none) → `--client-max-connections 50`"),
            (dict(sleep_ms=200), None, "SLEEP_MS `1000` → `200`"),
            (dict(connections=[200]), None, "CONNECTIONS `100` → `200`"),
            (dict(wrk_threads=[100]), None, "WRK_THREADS `10` → `100`"),
            (dict(duration_s=30), None, "DURATION `10 s` → `30 s`"),
            (dict(warmup="auto", warmup_s=0), None, "WARMUP `1 s` → `auto`"),
            (dict(java_opts="-XX:+UseZGC"), None, "JAVA_OPTS (none) → `-XX:+UseZGC`"),
            (dict(repeat=3), None, "REPEAT `1` → `3`"),
            (dict(git="2ac4688"), None, "commit `56d94d1` → `2ac4688`"),
            (dict(jdk='openjdk version "21.0.5" 2024-10-15 (/usr/lib/jvm/java-21)'), None, "JDK `25.0.3` → `21.0.5`"),
            (dict(cpu="4 x Intel(R) Xeon(R) Processor"), None, "CPU `2 x AMD EPYC` → `4 x Intel(R) Xeon(R) Processor`"),
            (dict(os="Ubuntu 24.04"), None, "OS `Debian GNU/Linux 12 (bookworm), kernel 6.18.44-fc-v669` → `Ubuntu 24.04`"),
        ]
        for meta, cells, words in cases:
            with self.subTest(words=words):
                self.assertIn(words, settings(self.a, self.edited(cells, **meta)))

    def test_db_pool_and_the_sweep_s_variants(self):
        db = dict(backend="postgres", db_pool=10, db_query="sleep", db_drivers="", db_executor_threads=10,
                  db_acquire_timeout_ms=28000)
        a = self.edited(**db)
        self.assertIn("B changed DB_POOL `10` → `50`; the same:", settings(a, self.edited(**dict(db, db_pool=50))))
        self.assertNotIn("DB_POOL", settings(self.a, self.a))             # an HTTP run has none
        sweep = json.loads((FIXTURES / "sweep" / "results.json").read_text())
        b = copy.deepcopy(sweep)
        b["meta"]["sweep_variants"][0] = "sync-servlet@jetty:8"
        text = settings(sweep, b)
        self.assertIn("SWEEP_VARIANTS `sync-servlet@jetty:4 async-servlet@jetty:1 webflux@netty:1` → "
                      "`sync-servlet@jetty:8 async-servlet@jetty:1 webflux@netty:1`", text)
        self.assertNotRegex(text, r"[ ;]THREADS[ ,]")    # a sweep's THREADS is its variants', said once

    def test_steal_is_named_where_one_run_had_a_busy_host(self):
        quiet, busy = self.edited({"cpu_steal_pct": 0.3}), self.edited({"cpu_steal_pct": 14.2})
        self.assertIn("hypervisor steal (highest of a cell) 0.3 % → 14.2 % of the box", settings(quiet, busy))
        self.assertIn("steal.", settings(quiet, self.edited({"cpu_steal_pct": 0.8})))      # the same, named last
        self.assertNotIn("steal", settings(self.a, busy))                  # A did not record it

    def test_rounds_of_one_run_changed_nothing(self):
        rc, out, _ = run_compare(FIXTURES / "matrix", FIXTURES / "matrix/results.json")
        self.assertEqual(rc, 0)
        self.assertIn("**Settings:** B changed no recorded setting; the same: APPS,", out)
        self.assertIn("commit (uncommitted changes in both)", out)


class PairingTest(unittest.TestCase):
    def test_one_to_one_across_threads_with_each_side_s_bound(self):
        rc, out, _ = run_compare(without_v1(fixture("default.json")), fixture("threads-1-8.json"))
        self.assertEqual(rc, 0)
        self.assertIn("| call | sync-servlet | jetty | 1 | -t10 -c100 | 1.0 | 1.0 | = | same |", out)   # the table stays
        self.assertIn("\nPaired across B's change (alike in every key field but THREADS; each side's Little's-law "
                      "bound in brackets):\n"
                      "- call · sync-servlet · jetty · -t10 -c100: threads 200 → 8: 98.7 → 8.0 req/s (bound 100 → 8), "
                      "p99 1070 → 12641 ms (not judged: queue order): **worse**\n"
                      "- call · async-servlet · jetty · -t10 -c100: threads 200 → 8: 98.2 → 99.2 req/s (bound 100), "
                      "p99 1062 → 1052 ms: same\n", out)
        self.assertIn("**2 pairs across B's change: 1 same, 0 better, 1 worse beyond the noise**", out)
        self.assertIn("Only in A:\n- call: webflux jetty threads=1/200 -t10 -c100 (2 cells)\n", out)   # APPS narrowed: a line per app
        self.assertNotIn("threads=200", out.split("Only in A:")[1].split("webflux")[0])

    def test_one_to_one_across_containers(self):
        rc, out, _ = run_compare(fixture("default.json"), fixture("tomcat.json"))
        self.assertEqual(rc, 0)
        self.assertIn("No cell ran with the same settings in both runs", out)
        self.assertNotIn("| scenario |", out)
        self.assertIn("- call · sync-servlet · threads 200 · -t10 -c100: container jetty → tomcat: 98.7 → 99.4 req/s "
                      "(bound 100), p99 1070 → 1061 ms: same\n", out)

    def test_many_to_one_side_by_side_each_b_cell_judged_against_the_cell_it_replaced(self):
        rc, out, _ = run_compare(fixture("default.json"), fixture("threads-1-8.json"))
        self.assertEqual(rc, 0)
        self.assertIn("- call · sync-servlet · jetty · -t10 -c100:\n"
                      "  - A threads 200: 98.7 req/s (bound 100), p99 1070 ms\n"
                      "  - A threads v1: 98.6 req/s (bound 100), p99 1079 ms\n"
                      "  - B threads 8: 8.0 req/s (bound 8), p99 12641 ms; against A's threads 200: **worse**\n", out)
        self.assertIn("  - B threads 8: 99.2 req/s (bound 100), p99 1052 ms; against A's threads 200: same\n", out)
        self.assertNotIn("Only in B", out)                     # never bare names of cells that have a group
        self.assertNotIn("sync-servlet jetty threads=200", out)

    def test_one_to_many_and_many_to_many(self):
        a, b = fixture("default.json"), fixture("threads-1-8.json")
        b["cells"].append(dict(b["cells"][1], threads=50, steady_rps=49.6, bound_rps=50.0, pct_of_ceiling=49.7))
        _, out, _ = run_compare(without_v1(a), b)          # A's 200 against B's 8 and 50
        self.assertIn("  - B threads 50: 49.6 req/s (bound 50), p99 12641 ms; against A's threads 200: **worse**", out)
        no_one = copy.deepcopy(b)                           # B ran 8 and 50 only: A's 1 and 200 are both candidates
        no_one["cells"] = [c for c in no_one["cells"] if c["threads"] != 1]
        _, out, _ = run_compare(without_v1(a), no_one)
        self.assertIn("  - B threads 8: 8.0 req/s (bound 8), p99 12641 ms\n", out)      # shown, not judged
        self.assertIn("  - A threads 1: 1.0 req/s (bound 1), p99 9046 ms\n", out)

    def test_the_predecessor_is_one_cell_of_the_same_kind_of_threads(self):
        key = ("call", "wrk", "sync-servlet", "jetty", None, 10, 100, None, "jdk", None)

        def k(threads, container="jetty"):
            return key[:3] + (container, threads) + key[5:]
        self.assertEqual(k(200), compare.predecessor(k(8), [k(200), k("v1")], ["threads"]))
        self.assertEqual(k("v1"), compare.predecessor(k("v2"), [k(200), k("v1")], ["threads"]))
        self.assertIsNone(compare.predecessor(k(8), [k(1), k(200)], ["threads"]))
        self.assertEqual(k(200), compare.predecessor(k(8), [k(200), k(1, "tomcat")], ["threads", "container"]))

    def test_a_narrowed_knob_pairs_nothing(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        b["cells"] = [c for c in b["cells"] if c["threads"] != "v1"]
        self.assertEqual([], compare.replaced_knobs({compare.key_of(c): c for c in a["cells"]},
                                                    {compare.key_of(c): c for c in b["cells"]}))
        _, out, _ = run_compare(a, b)
        self.assertIn("Only in A:\n- call: sync-servlet jetty threads=v1 -t10 -c100", out)
        self.assertNotIn("Paired across", out)

    def test_a_run_from_before_bounds_stays_in_the_table(self):
        a = fixture("default.json")
        old = copy.deepcopy(a)
        for c in old["cells"]:
            del c["bound_rps"]
        _, out, _ = run_compare(old, a)
        self.assertIn("**9 cells in both runs: 9 same", out)
        self.assertNotIn("Paired across", out)

    def test_client_pairs_across_the_client(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        for c in b["cells"]:
            c["client"] = "reactor-netty"
        _, out, _ = run_compare(a, b)
        self.assertIn("- call · webflux · jetty · threads 200 · -t10 -c100: client jdk → reactor-netty: 98.1 → 98.1 "
                      "req/s (bound 100), p99 1190 → 1190 ms: same", out)

    def test_the_sweep_s_variants_pair_across_the_variant(self):
        a = json.loads((FIXTURES / "sweep" / "results.json").read_text())
        b = copy.deepcopy(a)
        for c in b["cells"]:
            if c["variant"] == "sync-servlet@jetty:4":
                c.update(variant="sync-servlet@jetty:8", threads=8, bound_rps=40.0, steady_rps=2 * c["steady_rps"])
        _, out, _ = run_compare(a, b)
        self.assertIn("**4 cells in both runs: 4 same", out)
        self.assertIn("- call · sync-servlet · jetty · -t2 -c20: threads 4 → 8: 17.5 → 35.0 req/s (bound 20 → 40), "
                      "p99 1396 → 1396 ms (not judged: queue order): **better**", out)

    def test_app_args_leave_the_cells_in_the_table(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        b["meta"]["app_args"] = "--client-max-connections 50"
        for c in b["cells"]:
            c["steady_rps"] = c["steady_rps"] / 2 if c["threads"] != 1 or c["app"] != "sync-servlet" else c["steady_rps"]
        _, out, _ = run_compare(a, b)
        self.assertIn("| call | async-servlet | jetty | 200 | -t10 -c100 | 98.2 | 49.1 | -50.0 % | worse |", out)
        self.assertNotIn("Paired across", out)              # the bound does not know the cap: the table says it


class CeilingAndBoundTest(unittest.TestCase):
    def test_sleep_ms_is_judged_on_pct_of_the_ceiling_and_its_p99_not_at_all(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        b["meta"]["sleep_ms"] = 200
        for c in b["cells"]:
            c.update(steady_rps=5 * c["steady_rps"], bound_rps=5 * c["bound_rps"], ceiling_rps=5 * c["ceiling_rps"],
                     p99_ms=c["p99_ms"] / 5)
        _, out, _ = run_compare(a, b)
        self.assertNotIn("| scenario |", out)               # every cell's ceiling moved: none ran alike
        self.assertIn("judged on % of the ceiling, which SLEEP_MS or CONNECTIONS moved", out)
        self.assertIn("- call · async-servlet · jetty · threads 200 · -t10 -c100: SLEEP_MS `1000` → `200`: 98.2 → 491.2 "
                      "req/s (bound 100 → 500), 98.4 → 98.4 % of the ceiling, p99 1062 → 212 ms (not judged: SLEEP_MS "
                      "moved it): same", out)
        self.assertIn("**9 pairs across B's change: 9 same, 0 better, 0 worse beyond the noise**", out)

    def test_connections_are_judged_on_pct_of_the_ceiling(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        b["meta"]["connections"] = [200]
        for c in b["cells"]:
            c.update(connections=200, ceiling_rps=199.6, bound_rps=1.0 if c["threads"] == 1 and c["thread_per_request"]
                     else 200.0)
            c["steady_rps"] = 1.0 if c["bound_rps"] == 1.0 else 150.0        # 75 % of the new ceiling
            c["pct_of_ceiling"] = round(100 * c["steady_rps"] / 199.6, 1)
        _, out, _ = run_compare(a, b)
        self.assertIn("- call · webflux · jetty · threads 1 · -t10: connections 100 → 200: 98.1 → 150.0 req/s "
                      "(bound 100 → 200), 98.2 → 75.2 % of the ceiling, p99 1113 → 1113 ms: **worse**", out)
        self.assertIn("- call · sync-servlet · jetty · threads 1 · -t10: connections 100 → 200: 1.0 → 1.0 req/s (bound 1), "
                      "1.0 → 0.5 % of the ceiling", out)

    def test_db_pool_moves_the_bound_so_its_cells_are_paired_not_tabled(self):
        a = fixture("default.json")
        a["meta"].update(backend="postgres", db_pool=10, db_query="sleep")
        a["cells"] = [dict(c, db_driver="jdbc", bound_rps=10.0, steady_rps=9.9, pct_of_ceiling=99.0)
                      for c in a["cells"] if c["app"] == "async-servlet"]
        b = copy.deepcopy(a)
        b["meta"]["db_pool"] = 50
        for c in b["cells"]:
            c.update(bound_rps=50.0, steady_rps=49.6)
        rc, out, _ = run_compare(a, b)
        self.assertEqual(rc, 0)
        self.assertIn("- call · async-servlet · jdbc · jetty · threads v1 · -t10 -c100: DB_POOL `10` → `50`: "
                      "9.9 → 49.6 req/s (bound 10 → 50), p99 1062 → 1062 ms: **better**", out)


class NothingToCompareTest(unittest.TestCase):
    def test_runs_with_no_cell_and_no_pair_in_common_exit_2_with_one_line(self):
        rc, out, err = run_compare(FIXTURES / "openloop", FIXTURES / "matrix")
        self.assertEqual(rc, 2)
        self.assertNotIn("| scenario |", out)
        self.assertIn("**Settings:** B changed APPS `sync-mvc webflux` → `sync-servlet async-servlet`", out)
        self.assertEqual(1, len(err.splitlines()), err)
        self.assertEqual("ERROR: A and B share no cell, and no cell of B differs from one of A only in a setting B "
                         "changed (A ran APPS `sync-mvc webflux`, B `sync-servlet async-servlet`; A ran CONTAINERS "
                         "`jetty netty`, B `tomcat`): run B's settings again with A's APPS=\"sync-mvc webflux\" "
                         "CONTAINERS=\"jetty netty\", and compare that run with A\n", err)

    def test_the_command_line_names_the_settings_of_the_table(self):
        """`make compare` runs compare as a command: it registers the scenarios itself (labbench.plugins),
        or its settings paragraph would name none of their settings."""
        done = subprocess.run([sys.executable, "-m", "labbench.report.compare", str(FIXTURES.parent / "fixtures" / "matrix"),
                               str(FIXTURES.parent / "fixtures" / "matrix")], capture_output=True, text=True, cwd=HERE.parent)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("**Settings:** B changed no recorded setting; the same: APPS, CONTAINERS, THREADS, CLIENT,", done.stdout)

    def test_the_command_exits_2(self):
        a = fixture("default.json")
        b = copy.deepcopy(a)
        for c in b["cells"]:
            c["app"] = "nio-servlet"
        with tempfile.TemporaryDirectory() as tmp:
            for name, run in (("a.json", a), ("b.json", b)):
                (Path(tmp) / name).write_text(json.dumps(run))
            done = subprocess.run([sys.executable, "-m", "labbench.report.compare", f"{tmp}/a.json", f"{tmp}/b.json"],
                                  capture_output=True, text=True, cwd=HERE.parent)
        self.assertEqual(done.returncode, 2)
        self.assertIn('ERROR: A and B share no cell', done.stderr)
        self.assertIn('APPS="sync-servlet async-servlet webflux"', done.stderr)

    def test_an_empty_run(self):
        a = fixture("default.json")
        rc, _, err = run_compare(a, dict(a, cells=[]))
        self.assertEqual(rc, 2)
        self.assertIn("ERROR: B has no cell", err)


if __name__ == "__main__":
    unittest.main()
