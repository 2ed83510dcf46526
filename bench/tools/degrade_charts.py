#!/usr/bin/env python3
"""Draw a SCENARIO=degrade run's charts from its results.json and each cell's raw files: PNG and
SVG into RUN_DIR/charts/. Time on the x axis, t = 0 the fault's start as remote-sleep recorded
it; the fault's window shaded (GET /fault's changes, not the plan).

  degrade-NN       one per cell, three panels sharing the time axis: goodput per second (by
                   completion) with the p99 by send second (log scale, right axis); the app's in
                   flight and queued (and its admission limit); its RSS and used heap
  degrade-goodput  every cell's goodput side by side: a column per variant, a row per limit

Runs with the matplotlib pinned in bench/tools/charts-requirements.txt, from the project-local
venv (bench/tools/install.sh matplotlib); labbench/scenarios/degrade/report.py calls it at the end.

Usage: .tools/venv/bin/python bench/tools/degrade_charts.py RUN_DIR
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")                     # files only, no display
import matplotlib.pyplot as plt          # noqa: E402  (after the backend)
from matplotlib.ticker import FuncFormatter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/
from labbench.report.figures import read_results  # noqa: E402  (its degrade part beside the shared keys, flat)
from labbench.scenarios import degrade   # noqa: E402  (the same names and labels results.md shows)

FAULT_COLOUR = "#f4a582"


def load(run_dir, c):
    """(timeline, samples) of a cell, from its directory (beside its vegeta.txt)."""
    d = run_dir / Path(c["wrk_output"]).parent
    timeline = json.loads((d / "timeline.json").read_text())
    return timeline, degrade.read_samples(d / "samples.jsonl")


def shade(ax, timeline):
    ax.axvspan(0, timeline["fault_end_s"], color=FAULT_COLOUR, alpha=0.35, linewidth=0)
    ax.grid(True, alpha=0.3)


def xy(rows, key):
    return [r["t"] + 0.5 for r in rows], [r[key] for r in rows]      # a second's figure at its middle


def cell_chart(run, c, timeline, samples, title):
    fig, (top, mid, low) = plt.subplots(3, 1, figsize=(10, 9), sharex=True, layout="constrained")
    shade(top, timeline)
    top.plot(*xy(timeline["by_send"], "count"), color="grey", linewidth=1, label="offered (by send second)")
    top.plot(*xy(timeline["by_completion"], "ok"), color="tab:green", linewidth=1, linestyle=":", label="2xx (by completion)")
    top.plot(*xy(timeline["by_completion"], "goodput"), color="tab:green", linewidth=1.8,
             label=f"goodput: 2xx within {timeline['deadline_ms'] / 1000:g} s (by completion)")
    top.set_ylabel("requests per second")
    top.set_ylim(bottom=0)
    p99 = top.twinx()
    xs = [r["t"] + 0.5 for r in timeline["by_send"] if r["p99_ms"] is not None]
    ys = [r["p99_ms"] / 1000.0 for r in timeline["by_send"] if r["p99_ms"] is not None]
    p99.plot(xs, ys, color="tab:red", linewidth=1.4, label="p99 by send second (right, log)")
    if timeline["healthy"]["p99_ms"]:
        p99.axhline(degrade.RECOVERED_WITHIN * timeline["healthy"]["p99_ms"] / 1000.0, color="tab:red", linestyle=":",
                    linewidth=1, label=f"{degrade.RECOVERED_WITHIN:g}x the healthy p99: recovered below it")
    p99.set_yscale("log")
    seconds = FuncFormatter(lambda y, _: f"{y:g}")          # 0.5 and 4, not 5 x 10^-1 and 4 x 10^0
    p99.yaxis.set_major_formatter(seconds)
    p99.yaxis.set_minor_formatter(seconds)
    p99.set_ylabel("p99 latency (s), log scale")
    lines = top.get_legend_handles_labels()
    more = p99.get_legend_handles_labels()
    top.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper right")

    shade(mid, timeline)
    t0 = timeline["fault_start_ms"] / 1000.0
    ts = [s["t"] - t0 for s in samples]
    mid.plot(ts, [s.get("inFlight") for s in samples], color="tab:blue", label="in flight (/stats inFlight)")
    mid.plot(ts, [s.get("queued") for s in samples], color="tab:orange", label="queued for a thread (/stats queued)")
    if c.get("max_in_flight_limit"):
        mid.axhline(c["max_in_flight_limit"], color="black", linestyle="--", linewidth=1,
                    label=f"admission limit {c['max_in_flight_limit']}")
    mid.set_ylabel("requests")
    mid.set_ylim(bottom=0)
    mid.legend(fontsize=7, loc="upper right")

    shade(low, timeline)
    low.plot(ts, [None if s.get("rssKb") is None else s["rssKb"] / 1024.0 for s in samples], color="tab:purple",
             label="RSS (/proc)")
    low.plot(ts, [None if s.get("heapUsedBytes") is None else s["heapUsedBytes"] / 1048576.0 for s in samples],
             color="tab:purple", linestyle=":", label="used heap (/stats)")
    low.set_ylabel("MB")
    low.set_ylim(bottom=0)
    low.set_xlabel("seconds since the fault's start (shaded: the fault, as remote-sleep recorded it)")
    low.legend(fontsize=7, loc="upper right")
    top.set_title(f"{title}\n{run['meta'].get('fault')} for {timeline['fault_end_s']:g} s at "
                  f"{run['meta'].get('rate')} req/s; recovered after {c.get('recovery_text')} "
                  f"(predicted {degrade.predicted_text(c)})", fontsize=10)
    return fig


def combined(run, cells):
    """Every cell's goodput by completion, a column per variant, a row per limit."""
    variants = list(dict.fromkeys(degrade.label_of(run, c) for c, _t in cells))
    limits = list(dict.fromkeys(c.get("max_in_flight_limit") for c, _t in cells))
    fig, axes = plt.subplots(len(limits), len(variants), figsize=(3.6 * len(variants), 2.8 * len(limits)),
                             sharex=True, sharey=True, squeeze=False, layout="constrained")
    for ax in axes.flat:
        ax.set_visible(False)
    for c, timeline in cells:
        ax = axes[limits.index(c.get("max_in_flight_limit"))][variants.index(degrade.label_of(run, c))]
        ax.set_visible(True)
        shade(ax, timeline)
        ax.plot(*xy(timeline["by_send"], "count"), color="grey", linewidth=0.8)
        ax.plot(*xy(timeline["by_completion"], "goodput"), color="tab:green", linewidth=1.5)
        ax.set_title(f"{degrade.label_of(run, c)}\nlimit {degrade.limit_text(c.get('max_in_flight_limit'))}: "
                     f"recovered after {c.get('recovery_text')}", fontsize=8)
        ax.set_ylim(bottom=0)
    for ax in axes[-1]:
        ax.set_xlabel("s since the fault's start")
    for row in axes:
        row[0].set_ylabel("goodput req/s (grey: offered)")
    fig.suptitle(f"goodput per second by completion:\n{run['meta'].get('fault')} for {run['meta'].get('fault_for')} "
                 f"at {run['meta'].get('rate')} req/s (shaded: the fault)", fontsize=10)
    return fig


def save(fig, out_dir, name, written):
    for ext in ("png", "svg"):
        path = out_dir / f"{name}.{ext}"
        # No timestamps in the files: the same figures draw the same bytes.
        fig.savefig(path, dpi=100, metadata={"Date": None} if ext == "svg" else {"Software": None})
        written.append(path)
    plt.close(fig)


def draw(run_dir, run):
    out_dir = run_dir / "charts"
    out_dir.mkdir(exist_ok=True)
    titles = dict(degrade.chart_names(run))
    written, cells = [], []
    for c in degrade.degrade_cells(run):
        if c["status"] != "ok":
            continue
        try:
            timeline, samples = load(run_dir, c)
        except (OSError, ValueError) as e:
            print(f"   no chart for cell {c['index']}: {e}", file=sys.stderr)
            continue
        cells.append((c, timeline))
        name = f"degrade-{c['index']:02d}"
        save(cell_chart(run, c, timeline, samples, titles.get(name, name)), out_dir, name, written)
    if cells:
        save(combined(run, cells), out_dir, "degrade-goodput", written)
    return written


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("Usage: .tools/venv/bin/python bench/tools/degrade_charts.py RUN_DIR", file=sys.stderr)
        return 2
    run_dir = Path(argv[1])
    try:
        run = read_results(run_dir / "results.json")
    except (OSError, ValueError) as e:
        print(f"ERROR: {run_dir}/results.json: {e}", file=sys.stderr)
        return 2
    if run["meta"].get("mode") != degrade.NAME:
        print(f"ERROR: {run_dir} is not a SCENARIO=degrade run", file=sys.stderr)
        return 2
    plt.rcParams["svg.hashsalt"] = "lab"      # stable ids in the SVG files
    written = draw(run_dir, run)
    print(f"   charts: {run_dir}/charts/ ({len(written) // 2} charts, PNG and SVG)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
