"""Scenarios as plug-ins: what happens during a cell, and how its results read.

A scenario is one module here that defines a Scenario subclass and owns everything about it: its
settings (defaults, usage lines, validation), its plan (which cells, which apps, what the load
calls), its side load, its verification, its bound and ceiling, its fields and its report section.
The runner, the report and compare ask the scenario of a cell (get(cell.scenario)) and never name
one. A scenario imports this core and never the other way round: labbench/plugins.py imports
each one and registers it, and the core finds it here, by name. Adding a scenario is one new module
plus one line in plugins.py; README "How to add a scenario".
"""
from dataclasses import dataclass
from typing import Dict, Optional

from .. import loadgens


class Scenario:
    name = ""                   # the SCENARIO value (a planner like the sweep has none it is chosen by)
    selectable = True           # SCENARIO takes it
    settings = ()               # its own environment variables (knobs.Setting): --help, docs/settings.md, defaults
    heading = ""                # --help's line above them: which runs read them
    fields = ()                 # its own keys of its cells: under its name in results.json ("degrade": {...}),
                                # absent from other scenarios' cells; results.csv has a column for each
    has_ceiling = True          # a calibration cell of the same wrk load gives its cells a % of ceiling
    calibrates_each_round = True    # with REPEAT each round is calibrated again (the ceiling drifts too)
    side_load_resets_app = False    # an app that served this scenario is never reused
    warms_on_its_load = False   # it warms a fresh app on its measured load itself (the cost scenario): no wrk warm-up
    profiles_itself = False     # PROFILE=1: it profiles its own windows (the cost scenario), not the whole load
    own_csv = False             # a planner whose results.csv columns appear in its own runs only
    own_summary = False         # its progress line is its own summary alone, not its load generator's
    grows_pool = False          # its JVM on a Jetty or Tomcat pool may be given the next pool (grown, or
                                # switched to virtual threads) and warmed again, not a fresh JVM (cells.App.resize)

    # ---- settings
    @property
    def defaults(self) -> Dict[str, str]:
        return {s.name: s.default for s in self.settings}

    def parse(self, v) -> dict:
        """Its settings from the variables' texts, checked (settings.UsageError when wrong)."""
        return {}

    def meta_values(self, s) -> dict:
        """What meta.txt records of its settings."""
        return {}

    def meta(self, meta):
        """meta.txt's text values of its settings, typed in place (for results.json)."""

    # ---- the plan and one cell
    def apps(self, s):
        return s.apps

    def path(self, s):
        """What the load calls."""
        return "/call"

    def left_out(self, s):
        """A planner's combinations that do not apply, one sentence each (why)."""
        return []

    def cells(self, s, make, loadgens):
        """The cells of one app x container x pool (make(loadgen, wrk_threads, connections) builds
        one): by default a wrk cell per wrk setting and an open-loop cell, as LOADGEN asks."""
        out = []
        if "wrk" in loadgens:
            out += [make("wrk", wt, conns) for conns in s.connections for wt in s.wrk_threads]
        out += [make(name, None, None) for name in loadgens if name != "wrk"]
        return out

    def params(self, s) -> dict:
        """Its settings as recorded in each cell's record."""
        return {}

    def verify(self):
        """(path, text the answer must contain): one fast request that proves app -> remote -> app."""
        return "/call?ms=0", "slept"

    def warmup_path(self):
        return "/call?ms=0"

    def measure(self, lab, cell, d, url, app):
        """The cell's load (None or why it failed, measured): by default its load generator's alone;
        a scenario that must act around the load itself (degrade: a fault schedule at remote-sleep and
        a sampler of the app) takes it over."""
        return loadgens.get(cell.loadgen).measure(lab, cell, d, url, app)

    def side_load(self, s, base_url, cell_dir):
        """What runs beside the load (start/stop/result), or None. base_url: the app's, no path."""
        return None

    def skip_reason(self, app, java_major):
        """Why this machine cannot run the app (the cell stays in the matrix as SKIPPED), or None."""
        return None

    def probes(self, s):
        """For the one-request-at-a-time load generator: the requests to time."""
        return []

    def wait_ms(self, record):
        """How long one request waits on the remote at best: its Little's-law time in system."""
        return record.sleep_ms

    def bound(self, record, in_flight, wait_s):
        """Little's law for one cell: (req/s at most, or None where nothing bounds it; how, or None).
        Requests in flight over the time one request takes at best."""
        return in_flight / wait_s, None

    def call_ms(self, s):
        """How long one remote call waits (settings s): a call already at remote-sleep when the bench
        tells it to answer at once still waits this long (cells.App.drain)."""
        return s.sleep_ms

    # ---- the report
    def figures(self, record, d) -> dict:
        """Its own fields of a cell (from the record and its raw files): keys of `fields`."""
        return dict.fromkeys(self.fields)

    def summary(self, rec) -> Optional[str]:
        """Its part of a cell's progress line, or None."""
        return None

    def verdict(self, run):
        """Its own first-screen answer (a Markdown table), or None for the plain verdict table."""
        return None

    def environment_rows(self, meta):
        return []

    def sections(self, run, ctx):
        """results.md text: [(order, text)]; the report puts every scenario's sections by order."""
        return []

    def charts(self, run_dir, run, draw=False):
        """[(file name, title)] of its charts in run_dir/charts (with draw: drawn first)."""
        return []

    def compare(self, run_a, run_b):
        """A planner's own comparison of two of its runs (make compare), as Markdown; None: the cells' table."""
        return None

    def closing_lines(self, run):
        """Lines the bench prints at the end of a run."""
        return []


@dataclass
class Context:
    """What a section needs besides the run: its apps and containers, the calibration, the sleep."""
    apps: list
    containers: list
    calibration: list
    sleep_s: float
    charts: list


# The registry, filled by labbench/plugins.py (register), in its order: --help and the reports
# list the scenarios that way.
ALL = []
BY_NAME, SELECTABLE, PLANNERS = {}, [], []
DEFAULT = "call"            # the scenario of a cell that names none (runs before SCENARIO existed)


def rebuild():
    """The look-ups, from ALL."""
    BY_NAME.clear()
    BY_NAME.update({s.name: s for s in ALL})
    SELECTABLE[:] = [s.name for s in ALL if s.selectable]
    PLANNERS[:] = [s for s in ALL if hasattr(s, "selected")]      # a matrix of their own (the sweep)


def register(scenario):
    """Add a scenario (its settings are then read by settings.parse, its sections by the report)."""
    if scenario.name not in BY_NAME:
        ALL.append(scenario)
        rebuild()


def get(name):
    return BY_NAME[name or DEFAULT]


def reporting(meta):
    """The scenarios whose report hooks (verdict, sections, charts, environment rows, closing lines)
    apply to a run: every one that is not a planner, and the run's own planner (its mode), so that a
    planner's hooks need not ask whether the run is theirs."""
    return [s for s in ALL if s not in PLANNERS or s.name == meta.get("mode")]


def defaults():
    """Every scenario's variables, in ALL's order (settings.DEFAULTS adds them)."""
    out = {}
    for s in ALL:
        out.update(s.defaults)
    return out
