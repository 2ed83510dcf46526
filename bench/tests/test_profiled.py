"""PROFILE=1 over a cell's load (cells._load): the window of every load generator that has one is
profiled, a scenario that profiles its own windows is not profiled twice, and a cell that is not
profiled says why instead of nothing."""
import contextlib
import io
import unittest
import unittest.mock
from pathlib import Path
from types import SimpleNamespace as N

from labbench import cells, plugins, scenarios  # noqa: F401  (plugins: registers the load generators)


class FakeApp:
    def __init__(self):
        self.calls = []

    def profile_start(self):
        self.calls.append("start")
        return True

    def profile_stop(self, where):
        self.calls.append("stop")
        return {"samples": 1}


def load(loadgen, scenario):
    app = FakeApp()
    lab = N(s=N(profile=True, app_port=1), url=lambda port, path: f"http://127.0.0.1:{port}{path}")
    cell = N(loadgen=loadgen, path="/x", scene=scenarios.get(scenario))
    out = io.StringIO()
    with unittest.mock.patch.object(cell.scene.__class__, "measure", lambda self, *a: (None, {})), \
            contextlib.redirect_stdout(out):
        reason, measured = cells._load(lab, app, cell, Path("/nonexistent"))
    return app.calls, measured, out.getvalue()


class ProfiledTest(unittest.TestCase):
    def test_an_open_loop_window_is_profiled(self):
        calls, measured, _ = load("vegeta", "degrade")
        self.assertEqual(["start", "stop"], calls)
        self.assertEqual({"samples": 1}, measured["profile"])

    def test_a_scenario_that_profiles_its_own_windows_is_not_profiled_twice(self):
        calls, measured, text = load("vegeta", "cost")
        self.assertEqual([], calls)
        self.assertNotIn("profile", measured)
        self.assertEqual("", text)

    def test_a_cell_that_is_not_profiled_says_why(self):
        calls, _, text = load("probe", "fanout")
        self.assertEqual([], calls)
        self.assertIn("PROFILE=1: not profiled (probe: one request at a time", text)


if __name__ == "__main__":
    unittest.main()
