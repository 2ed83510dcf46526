"""results.json's layout (issue 28): a cell has the shared keys and, under its scenario's name, that
scenario's own figures, and under its load generator's name that one's; never another scenario's
keys set to null. The report and `make compare` read the parts back flat, and read the flat
results.json files written before the parts (docs/samples/*.json) as before."""
import io
import json
import shutil
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

from labbench import loadgens, report, scenarios
from labbench.report import compare
from tests.test_degrade import write_run

HERE = Path(__file__).resolve().parent
OLD_DEGRADE = HERE.parents[1] / "docs" / "samples" / "degrade-sample.json"      # written before the parts: every cell flat
# Every scenario's and load generator's own keys: none may sit at the top of a cell.
OWN_KEYS = {k for s in scenarios.ALL for k in s.fields} | {k for g in loadgens.ALL for k in g.fields}


def written_cells(run_dir):
    """The cells as results.json has them on disk (not read back flat)."""
    return json.loads((run_dir / "results.json").read_text())["cells"]


class LayoutTest(unittest.TestCase):
    def test_a_call_cell_has_no_other_scenarios_keys(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = Path(tmp) / "matrix"
            shutil.copytree(HERE / "fixtures" / "matrix", run,
                            ignore=shutil.ignore_patterns("results.*", "charts"))
            report.update(run)
            cells = [c for c in written_cells(run) if c["scenario"] == "call" and c["loadgen"] == "wrk"]
            self.assertTrue(cells)
            for c in cells:
                self.assertEqual(set(c) & OWN_KEYS, set(), c["index"])
                self.assertEqual(set(c) & {"degrade", "slow-upload", "slow-download", "fanout", "vegeta"}, set())

    def test_a_degrade_cell_has_its_figures_under_degrade(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = write_run(Path(tmp) / "run")
            report.update(run)
            free = written_cells(run)[0]
            self.assertEqual(set(free["degrade"]), set(scenarios.get("degrade").fields))
            self.assertEqual((free["degrade"]["recovery_text"], free["degrade"]["max_in_flight_limit"]), ("3 s", 0))
            self.assertEqual(free["vegeta"]["rate"], 150)                # its load generator's, under vegeta
            self.assertEqual(set(free) & OWN_KEYS, set())
            self.assertNotIn("slow_bytes_per_s", free["degrade"])
            flat = report.read_results(run / "results.json")["cells"][0]     # what every reader sees
            self.assertEqual((flat["recovery_text"], flat["rate"], flat["status"]), ("3 s", 150, "ok"))
            self.assertNotIn("degrade", flat)


class OldFlatFileTest(unittest.TestCase):
    def test_an_old_flat_results_json_still_reads_and_compares(self):
        old = json.loads(OLD_DEGRADE.read_text())
        self.assertIn("recovery_s", old["cells"][0])     # the old layout: flat, other scenarios' keys null
        self.assertIn("slow_bytes_per_s", old["cells"][0])
        run = report.read_results(OLD_DEGRADE)
        self.assertEqual(run["cells"], old["cells"])      # read as it is
        with tempfile.TemporaryDirectory() as tmp:
            rewritten = Path(tmp) / "results.json"       # the same run in today's layout
            rewritten.write_text(report.results_json(run))
            self.assertIn("degrade", json.loads(rewritten.read_text())["cells"][0])
            self.assertEqual(report.markdown(report.read_results(rewritten)), report.markdown(run))
            out = io.StringIO()
            with redirect_stdout(out):
                self.assertEqual(compare.main(["compare", str(OLD_DEGRADE), str(rewritten)]), 0)
        n = len(old["cells"])
        self.assertIn(f"**{n} cells in both runs: {n} same", out.getvalue())


if __name__ == "__main__":
    unittest.main()
