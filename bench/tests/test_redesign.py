"""The seams of the bench's redesign: a scenario is one module (a toy one, defined here only, goes
through plan -> run directory -> report without touching another file), and the fixes that came
with it, each a test that failed before: compare's join key keeps sweep variants apart, and the
report's wrk-timeout sentence is true for every WRK_TIMEOUT."""
import io
import json
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

from labbench import report, scenarios
from labbench.plan import plan
from labbench.record import CellRecord
from labbench.report import compare
from labbench.knobs import setting
from labbench.settings import parse, usage

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class Toy(scenarios.Scenario):
    """A scenario that only exists in this test: one wrk cell per app, its own field and section."""
    name = "toy"
    settings = (setting("TOY_LEVEL", "7", "the toy's level"),)
    heading = "SCENARIO=toy: a test's own"
    fields = ("toy_level",)

    def parse(self, v):
        return {"toy_level": int(v["TOY_LEVEL"])}

    def params(self, s):
        return {"toy_level": s.toy_level}

    def figures(self, record, d):
        return {"toy_level": record.params.get("toy_level")}

    def sections(self, run, ctx):
        mine = [c for c in run["cells"] if c.get("scenario") == self.name]
        return [(50, "\n## Toy\n\n" + "".join(f"- {c['app']}: level {c['toy_level']}, "
                                                f"{c['steady_rps']} req/s\n" for c in mine))]


class ToyScenarioTest(unittest.TestCase):
    def setUp(self):
        self.saved = list(scenarios.ALL)
        scenarios.register(Toy())                 # the one registration line a new module adds

    def tearDown(self):
        scenarios.ALL[:] = self.saved
        scenarios.rebuild()

    def test_plan_to_report(self):
        s = parse({"SCENARIO": "toy", "TOY_LEVEL": "3", "APPS": "sync-servlet", "CONTAINERS": "tomcat",
                   "THREADS": "1", "WRK_THREADS": "2", "CONNECTIONS": "4"})
        cells, _ = plan(s)
        self.assertEqual([c.dir_name for c in cells], ["01-toy-sync-servlet-tomcat-t1-w2-c4"])
        self.assertIn("SCENARIO=toy: a test's own:\n  TOY_LEVEL=7\n        the toy's level\n", usage({}))
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "run"
            # a real call cell's raw files, recorded as the toy scenario's cell
            src = FIXTURES / "matrix"
            (run / "cells" / cells[0].dir_name).mkdir(parents=True)
            (run / "calibration").mkdir()
            (run / "meta.txt").write_text((src / "meta.txt").read_text().replace("scenarios=call", "scenarios=toy"))
            for f in ("wrk.json", "stats.json"):
                (run / "cells" / cells[0].dir_name / f).write_bytes((src / "cells/01-sync-servlet-tomcat-t1-w2-c4" / f).read_bytes())
            rec = CellRecord(index=1, scenario="toy", app="sync-servlet", container="tomcat", threads="1",
                             wrk_threads=2, connections=4, duration_s=2, sleep_ms=200, thread_per_request=True,
                             params=cells[0].scene.params(s), status="ok")
            rec.save(run / "cells" / cells[0].dir_name / "cell.json")
            report.update(run)
            md = (run / "results.md").read_text()
            self.assertIn("\n## Toy\n\n- sync-servlet: level 3, ", md)
            self.assertEqual(json.loads((run / "results.json").read_text())["cells"][0]["toy"], {"toy_level": 3})
            self.assertIn("toy_level", (run / "results.csv").read_text().splitlines()[0])


class CompareKeyTest(unittest.TestCase):
    def test_two_sweep_variants_at_one_level_stay_apart(self):
        cell = {"scenario": "call", "loadgen": "wrk", "app": "sync-servlet", "container": "jetty", "threads": 200,
                "wrk_threads": 2, "connections": 200, "status": "ok", "steady_rps": 190.0, "p99_ms": 1010.0}
        a = {"meta": {}, "cells": [dict(cell, variant="sync-servlet@jetty:200"),
                                   dict(cell, variant="sync-servlet@jetty:conns", steady_rps=195.0)]}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "a.json"
            path.write_text(json.dumps(a))
            out = io.StringIO()
            with redirect_stdout(out):
                compare.main(["compare", str(path), str(path)])
        self.assertIn("**2 cells in both runs: 2 same", out.getvalue())


class TimeoutSentenceTest(unittest.TestCase):
    def md_with_timeout(self, timeout_s):
        run = report.load_run(FIXTURES / "matrix")
        run["meta"]["wrk_timeout_s"] = timeout_s
        return report.markdown(run)

    def test_a_short_wrk_timeout_is_not_called_harmless(self):
        md = self.md_with_timeout(2)
        self.assertNotIn("no response was left out", md)
        self.assertIn("wrk's --timeout was 2 s**, not longer than a 2 s run", md)

    def test_a_long_wrk_timeout_is(self):
        self.assertIn("wrk's --timeout was 22 s, longer than a 2 s run, so no response was left out",
                      self.md_with_timeout(22))




class LayersTest(unittest.TestCase):
    STACKS = ("[client-1 tid=12];java/lang/Thread.run;jdk/internal/net/http/HttpClientImpl.x;sun/nio/ch/EPoll.wait 30\n"
              "[qtp1-2 tid=13];java/lang/Thread.run;org/eclipse/jetty/io/ManagedSelector.select;sun/nio/ch/EPoll.wait 50\n"
              "[GC Thread#0 tid=3];GCTask::do_it 10\n"
              "[C2 CompilerThread0 tid=4];Compile::Optimize 7\n"
              "[qtp1-3 tid=5];org/eclipse/jetty/server/Server.handle;lab/app/CallServlet.doGet;"
              "org/springframework/web/Foo.bar 2\n"
              "[qtp1-3 tid=5];org/eclipse/jetty/server/Server.handle;lab/app/CallServlet.doGet;java/lang/String.hashCode 1\n")

    def test_each_sample_goes_to_the_code_that_ran(self):
        from labbench.report import layers
        samples, pct = layers.shares(self.STACKS)
        self.assertEqual(samples, 100)
        self.assertEqual(pct, {"client": 30.0, "container": 50.0, "framework": 2.0, "app": 1.0, "gc": 10.0,
                               "jit": 7.0, "other": 0.0})

    def test_shares_sum_to_100(self):
        from labbench.report import layers
        _, pct = layers.shares("a;lab/X.y 1\nb;org/apache/coyote/Z.z 1\nc;reactor/core/Q.q 1\n")
        self.assertEqual(round(sum(pct.values()), 6), 100.0)
        self.assertEqual(sorted(pct.values(), reverse=True)[:3], [33.4, 33.3, 33.3])


    def test_a_profile_taken_while_the_jit_compiles_says_so(self):
        from labbench.report import layers
        cell = {"app": "webflux", "container": "netty", "threads": "1", "connections": 100, "wrk_threads": 2,
                "profile_samples": 100, "cpu_ms_per_request": 1.0}
        warm = dict(cell, cpu_layers={**dict.fromkeys(layers.LAYERS, 0.0), "app": 90.0, "jit": 10.0})
        cold = dict(cell, cpu_layers={**dict.fromkeys(layers.LAYERS, 0.0), "app": 50.0, "jit": 50.0})
        self.assertNotIn("still compiling", layers.section([warm]))
        self.assertIn("JIT ≥ 20 % of the samples in 1 of 2 cells", layers.section([warm, cold]))


class Preset2021Test(unittest.TestCase):
    def test_the_write_ups_matrix_twice(self):
        s = parse({"PRESET": "2021"}, "preset2021", n_cores=2)
        cells, _ = plan(s)
        self.assertEqual(len(cells), 2 * 2 * 3 * 2 * 2)      # two ways x containers x apps x threads x wrk -t
        old = [c for c in cells if c.variant == "as-2021"]
        self.assertTrue(all(c.client == "reactor-netty" and c.app_args == ("--client-max-connections", "16")
                            and c.wrk_timeout == "2s" for c in old))
        lab = [c for c in cells if c.variant == "as-the-lab"]
        self.assertTrue(all(c.client == "jdk" and not c.app_args and not c.wrk_timeout for c in lab))

    def test_bad_preset_and_a_setting_it_owns_are_usage_errors(self):
        from labbench.checks import UsageError
        with self.assertRaises(UsageError):
            parse({"PRESET": "2020"})
        with self.assertRaises(UsageError):
            parse({"PRESET": "2021", "APPS": "webflux"}, "preset2021", n_cores=2)


if __name__ == "__main__":
    unittest.main()
