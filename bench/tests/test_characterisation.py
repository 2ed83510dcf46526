"""Characterisation tests: the bench's behaviour pinned before it was restructured, to pass after.

bench/tests/fixtures/<run>/ are small real run directories (bench/tests/fixtures/make-fixtures.sh made them:
a REPEAT=2 matrix with a FAILED and SKIPPED cells, vegeta beside wrk with Netty and v1, slow
clients, fan-out, a sweep, a degrade timeline), each with the results.md/.json/.csv the report
wrote then (the degrade run keeps its charts/*.png as empty files: results.md embeds the charts
that exist, so its list of charts is pinned too). The report must write them again from the raw
files: results.md byte for byte, results.json's data (parsed)
and results.csv's rows (by column name; a new column order is no change); `make compare` on pairs of them, the
plan of the default matrix, sweep, fan-out and vegeta runs, and --help likewise
(bench/tests/fixtures/expected/). A deliberate change of a report's text changes these files in the
same commit, and the diff shows exactly what changed.

Regenerate the expected files after a deliberate change: CHARACTERISATION_WRITE=1 PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench -p test_characterisation.py
"""
import csv
import io
import json
import os
import shutil
import tempfile
import unittest
from contextlib import redirect_stdout
from pathlib import Path

from labbench import main, report, settings
from labbench.plan import plan
from labbench.report import compare

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
EXPECTED = FIXTURES / "expected"
WRITE = os.environ.get("CHARACTERISATION_WRITE") == "1"
RUNS = sorted(d.name for d in FIXTURES.iterdir() if (d / "meta.txt").exists())
OUTPUTS = ("results.md", "results.json", "results.csv")


def parsed(name, text):
    """What a file says: results.json's data, results.csv's rows by column, any other the text."""
    if name.endswith(".json"):
        return json.loads(text)
    if name.endswith(".csv"):
        return list(csv.DictReader(io.StringIO(text)))
    return text


def same_as_expected(test, path, text):
    if WRITE:
        path.write_text(text)
    test.assertTrue(path.exists(), f"{path} missing (CHARACTERISATION_WRITE=1 writes it)")
    test.maxDiff = None
    test.assertEqual(parsed(path.name, path.read_text()), parsed(path.name, text),
                     f"differs from {path.relative_to(HERE)}")


class Reports(unittest.TestCase):
    def test_fixtures_are_there(self):
        self.assertEqual(RUNS, ["degrade", "fanout", "matrix", "openloop", "slow", "sweep"])

    def test_reports_rebuilt_from_raw_files(self):
        for name in RUNS:
            with self.subTest(run=name), tempfile.TemporaryDirectory() as tmp:
                run = Path(tmp) / name
                shutil.copytree(FIXTURES / name, run, ignore=shutil.ignore_patterns(*OUTPUTS))
                report.update(run)
                for out in OUTPUTS:
                    same_as_expected(self, FIXTURES / name / out, (run / out).read_text())


class Compare(unittest.TestCase):
    PAIRS = {"compare-matrix-rounds.md": ("matrix@1", "matrix@2"),
             "compare-openloop-matrix.md": ("openloop", "matrix"),
             "compare-sweep-itself.md": ("sweep", "sweep/results.json")}

    def test_compare_output(self):
        for expected, (a, b) in self.PAIRS.items():
            with self.subTest(pair=expected):
                out = io.StringIO()
                with redirect_stdout(out):
                    compare.main(["compare", str(FIXTURES / a), str(FIXTURES / b)])
                text = out.getvalue().replace(str(FIXTURES) + "/", "")
                same_as_expected(self, EXPECTED / expected, text)


class Plans(unittest.TestCase):
    ENVIRONS = {"plan-default.txt": ({}, "matrix"),
                "plan-sweep.txt": ({}, "sweep"),
                "plan-fanout.txt": ({"SCENARIO": "fanout", "CONTAINERS": "tomcat", "THREADS": "1",
                                     "WRK_THREADS": "10"}, "matrix"),
                "plan-vegeta.txt": ({"LOADGEN": "wrk vegeta", "THREADS": "1 v1", "WRK_THREADS": "10"}, "matrix"),
                "plan-slow.txt": ({"SCENARIO": "slow-upload slow-download", "THREADS": "1 200",
                                   "WRK_THREADS": "10", "REPEAT": "2"}, "matrix")}

    def test_plans(self):
        for expected, (environ, mode) in self.ENVIRONS.items():
            with self.subTest(plan=expected):
                s = settings.parse(environ, mode, n_cores=2)
                cells, left_out = plan(s)
                text = "".join(f"{c.dir_name} | {c.label}\n" for c in cells)
                text += "".join(f"left out: {why}\n" for why in left_out)
                same_as_expected(self, EXPECTED / expected, text)

    def test_help(self):
        same_as_expected(self, EXPECTED / "help.txt", settings.usage({}, main.examples()) + "\n")


if __name__ == "__main__":
    unittest.main()
