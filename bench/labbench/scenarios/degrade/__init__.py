"""SCENARIO=degrade (issue 17): when the backend slows down, a fault timeline per model.

vegeta sends RATE requests per second (open loop) through a whole timeline: FAULT_AT healthy,
FAULT_FOR of FAULT at remote-sleep (its /fault API: delay=MS, error=PCT or hang), AFTER healthy.
Each variant (app@container:threads[:client], as in the sweep) runs once per MAX_IN_FLIGHT value
(the apps' --max-in-flight admission limit, 0 = none), each on a fresh JVM. Per second it reads,
from vegeta's results, what was offered, answered and answered in time (goodput), and from the
app every 0.5 s what it holds (in flight, queued, threads, heap, RSS); then how long each model
takes to recover after the fault's end, beside what Little's law predicts from its caps.

A planner of its own cells (like the sweep): it owns its settings, plan, measurement (the fault
schedule, the sampler and vegeta around it), figures, report section and charts.

Reading it: the Degrade class below is what the bench calls; its methods hand over to the modules
of this package, which go from the arithmetic to the run and its report:
  options.py    its settings (FAULT, FAULT_AT, FAULT_FOR, AFTER, MAX_IN_FLIGHT, DEGRADE_VARIANTS, GOODPUT_DEADLINE),
                parsed and checked
  model.py      Little's law: what a model's caps let it serve during the fault and how long it takes
                to recover (no cap / a limit that rejects / a cap that queues)
  timeline.py   vegeta's results as one row per second (by send and by completion), the time to
                recover, the fault's window as the remote recorded it
  live.py       one cell: the schedule posted (POST /fault), the Sampler and vegeta, the remote's record
  figures.py    a cell's figures: its results.json part ("degrade": {...}) from those raw files
  report.py     results.md's section and verdict, the console's lines, the charts (bench/degrade_charts.py)
"""
from pathlib import Path

from ... import foreign
from ...checks import UsageError, split_list
from .. import Scenario
from . import live, options, report
from .figures import FIELDS, figures
from .options import NAME, variant_id
from .timeline import ERROR_KINDS
# Names other code reads as degrade.<name> (the tests, bench/degrade_charts.py), from where they live.
from .figures import read_samples  # noqa: F401
from .live import client_timeout_ms  # noqa: F401
from .model import hold_ms, predict  # noqa: F401
from .report import chart_names, degrade_cells, label_of, limit_text, predicted_text  # noqa: F401
from .timeline import RECOVERED_WITHIN, fault_window, per_second, time_to_recover  # noqa: F401


class Degrade(Scenario):
    name = NAME
    settings = options.SETTINGS
    heading = options.HEADING
    fields = FIELDS
    csv_columns = [f for f in FIELDS if f not in ("fault_errors", "prediction")] + [f"fault_errors_{k}" for k in ERROR_KINDS]
    has_ceiling = False

    # ---- settings
    def parse(self, v):
        return options.parse(v)

    def selected(self, argv, environ):
        return argv == [self.name] or self.name in split_list(environ.get("SCENARIO") or "")

    def environ(self, environ, n_cores):
        return options.matrix_environ(environ)

    def with_drivers(self, s):
        raise UsageError("SCENARIO=degrade needs remote-sleep's /fault: BACKEND=http only")

    def fit_limits(self, environ, s, error, held):
        return None

    # ---- the plan and one cell
    def plan(self, s, make):
        """Each variant once per MAX_IN_FLIGHT value, --max-in-flight N only when N > 0; vegeta cells. APP_JAR's
        jar only without a limit: --max-in-flight is the lab's apps' flag (left_out)."""
        cells = []
        for v in s.degrade_variants:
            for limit in s.degrade_limits:
                if limit and foreign.is_foreign(v.app):
                    continue
                c = make(v.app, v.container, v.threads, None, None, variant_id(v, limit), v.client,
                         ("--max-in-flight", str(limit)) if limit else ())
                c.scenario, c.loadgen = self.name, "vegeta"
                cells.append(c)
        return cells

    def left_out(self, s):
        foreign_ = [v.id for v in s.degrade_variants if foreign.is_foreign(v.app)]
        limits = [str(n) for n in s.degrade_limits if n]
        if not (foreign_ and limits):
            return []
        return [f"MAX_IN_FLIGHT is the lab's apps' admission limit (--max-in-flight); APP_JAR's jar has its own, set in "
                f"APP_ARGS: no {', '.join(foreign_)} with MAX_IN_FLIGHT {' '.join(limits)}"]

    def params(self, s):
        if s.mode != self.name:
            return {}
        return {"fault": s.degrade_fault, "fault_at_ms": s.degrade_fault_at_ms, "fault_for_ms": s.degrade_fault_for_ms,
                "after_ms": s.degrade_after_ms, "timeline_ms": s.degrade_timeline_ms, "deadline_ms": s.degrade_deadline_ms,
                "user_app_args": s.raw["APP_ARGS"]}

    def measure(self, lab, cell, d, url, app):
        return live.measure(lab, cell, d, url, app)

    # ---- the run
    def meta_values(self, s):
        return {"mode": self.name, "fault": s.degrade_fault, "fault_at": s.raw["FAULT_AT"], "fault_for": s.raw["FAULT_FOR"],
                "after": s.raw["AFTER"], "goodput_deadline": s.raw["GOODPUT_DEADLINE"],
                "max_in_flight_values": " ".join(map(str, s.degrade_limits)),
                "degrade_variants": " ".join(v.id for v in s.degrade_variants),
                **{f"variant_label.{v.id}": v.label for v in s.degrade_variants}}

    def meta(self, meta):
        if meta.get("mode") == self.name:
            meta["max_in_flight_values"] = [int(x) for x in (meta.get("max_in_flight_values") or "").split()]

    def starting_lines(self, s):
        return report.starting_lines(s)

    def environment_rows(self, meta):
        return report.environment_rows(meta)

    # ---- the report
    def figures(self, record, d):
        return figures(record, d)

    def summary(self, rec):
        return report.summary(rec)

    def verdict(self, run):
        return report.verdict(run)

    def sections(self, run, ctx):
        return [(10, report.section(run, ctx.charts))]

    def charts(self, run_dir, run, draw=False):
        if draw and any(c["status"] == "ok" for c in report.degrade_cells(run)):
            report.draw_charts(run_dir)
        return [(n, t) for n, t in report.chart_names(run) if (Path(run_dir) / "charts" / f"{n}.png").exists()]

    def closing_lines(self, run):
        return report.closing_lines(run)


SCENARIO = Degrade()
