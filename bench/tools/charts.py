#!/usr/bin/env python3
"""Draw a sweep run's charts from its results.json: PNG and SVG into RUN_DIR/charts/.

One line per variant, connections on a log scale:
  sweep-throughput  steady req/s, with the ceiling (wrk straight at remote-sleep) dashed, and
                    beside it the same as % of each level's ceiling (the knee's 95 % line dotted)
  sweep-p99         wrk's p99 latency (log scale: a queueing model's p99 is 10-100x the others')
  sweep-rss         the app's peak resident memory
  sweep-cpu         the app's CPU ms per answered request
A FAILED or SKIPPED level is a gap in its line.

Runs with the matplotlib pinned in bench/tools/charts-requirements.txt, from the project-local
venv (bench/tools/install.sh matplotlib); the sweep (labbench/scenarios/sweep/) calls it at the end.

Usage: .tools/venv/bin/python bench/tools/charts.py RUN_DIR
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")                     # files only, no display
import matplotlib.pyplot as plt          # noqa: E402  (after the backend)
from matplotlib.ticker import FuncFormatter  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/
from labbench.report.figures import read_results  # noqa: E402  (results.json as the report reads it)
from labbench.report.fmt import throughput      # noqa: E402  (the same figures results.md shows)
from labbench.scenarios.sweep import report as sweep   # noqa: E402  (the knee and the charts the report names)

# Same variant, same look, in every chart and every run.
MARKERS = "osD^v<>ph*"


def level_ticks(ax, levels):
    ax.set_xscale("log")
    ax.set_xticks(levels)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda x, _: ""))
    ax.set_xlabel("connections (wrk -c), log scale")
    ax.grid(True, which="major", alpha=0.3)


def series(cells, value):
    """(levels, values) of one variant; None where a level has no figure (a gap in the line)."""
    xs, ys = [], []
    for c in cells:
        xs.append(c["connections"])
        ys.append(value(c) if c["status"] == "ok" else None)
    return xs, [float("nan") if y is None else y for y in ys]


def ceilings(meta, levels):
    """(the ceiling per level, its legend): wrk straight at remote-sleep, or for BACKEND=postgres
    pgbench at min(level, DB pool) clients, one per level."""
    ceiling = {c["connections"]: throughput(c) for c in meta["calibration"]
               if c["loadgen"] == "wrk" and c["status"] == "ok"}
    pgbench = [c for c in meta["calibration"] if c["loadgen"] == "pgbench" and c["status"] == "ok" and c.get("rps")]
    if not pgbench:
        return ceiling, "ceiling (wrk straight at remote-sleep)"
    by_clients = {c.get("connections"): c["rps"] for c in pgbench if c.get("round", 1) == 1}
    pool = max(by_clients)
    return {lvl: by_clients.get(min(lvl, pool)) for lvl in levels}, "ceiling (pgbench, min(connections, DB pool) clients)"


# Each chart: its y axis, the figure of a cell it plots, its scale.
CHARTS = {
    "sweep-throughput": ("steady req/s, log scale", lambda c: throughput(c), "log"),
    "sweep-p99": ("p99 latency (s), log scale", lambda c: None if c.get("p99_ms") is None else c["p99_ms"] / 1000.0, "log"),
    "sweep-rss": ("app peak RSS (MB)", lambda c: c.get("peak_rss_mb"), "linear"),
    "sweep-cpu": ("app CPU ms per request", lambda c: c.get("cpu_ms_per_request"), "linear"),
}


def draw(run, out_dir):
    meta = run["meta"]
    variants = [(v, label, cells) for v, label, cells in sweep.sweep_variants(run)
                if any(c["status"] == "ok" for c in cells)]
    levels = meta.get("sweep") or sorted({c["connections"] for _v, _l, cells in variants for c in cells})
    subtitle = f"{meta.get('date', '')} · {meta.get('cpu', '')} · wrk -d{meta.get('duration_s')}s"
    titles = dict(sweep.CHARTS)
    out_dir.mkdir(exist_ok=True)
    written = []
    for name, (ylabel, value, yscale) in CHARTS.items():
        if name == "sweep-throughput":
            fig, ax = throughput_figure(variants, levels, *ceilings(meta, levels), subtitle)
        else:
            fig, ax = plt.subplots(figsize=(9, 5.5), layout="constrained")
        for i, (_v, label, cells) in enumerate(variants):
            xs, ys = series(cells, value)
            ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], linewidth=1.6, markersize=5, label=label)
        level_ticks(ax, levels)
        ax.set_yscale(yscale)
        if yscale == "linear":
            ax.set_ylim(bottom=0)
        else:                              # 200 and 0.5, not 2 x 10^2 and 5 x 10^-1
            ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:,.0f}" if y >= 10 else f"{y:g}"))
        ax.set_ylabel(ylabel)
        ax.set_title(f"{titles[name]}\n{subtitle}", fontsize=10)
        ax.legend(fontsize=8, loc="upper left" if name == "sweep-throughput" else "best")
        for ext in ("png", "svg"):
            path = out_dir / f"{name}.{ext}"
            # No timestamps in the files: the same figures draw the same bytes.
            fig.savefig(path, dpi=110, metadata={"Date": None} if ext == "svg" else {"Software": None})
            written.append(path)
        plt.close(fig)
    return written


def throughput_figure(variants, levels, ceiling, ceiling_label, subtitle):
    """req/s (log-log: a plateau is flat, the ceiling a diagonal) beside the same as % of each
    level's ceiling, where the knee's 95 % line is: (the figure, the req/s axes)."""
    fig, (ax, pct) = plt.subplots(1, 2, figsize=(14, 5.5), layout="constrained")
    xs = sorted(ceiling)
    ax.plot(xs, [ceiling[x] for x in xs], linestyle="--", color="black", linewidth=1.5, label=ceiling_label)
    for i, (_v, label, cells) in enumerate(variants):
        pct.plot(*series(cells, lambda c: c.get("pct_of_ceiling")), marker=MARKERS[i % len(MARKERS)],
                 linewidth=1.6, markersize=5, label=label)
    pct.axhline(sweep.KNEE_PCT, color="grey", linestyle=":", linewidth=1.2, label=f"{sweep.KNEE_PCT:g} %: below it is the knee")
    level_ticks(pct, levels)
    pct.set_ylim(0, 105)
    pct.set_ylabel("% of that level's ceiling")
    pct.set_title(f"% of the ceiling vs connections\n{subtitle}", fontsize=10)
    pct.legend(fontsize=8, loc="lower left")
    return fig, ax


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("Usage: .tools/venv/bin/python bench/tools/charts.py RUN_DIR", file=sys.stderr)
        return 2
    run_dir = Path(argv[1])
    try:
        run = read_results(run_dir / "results.json")
    except (OSError, ValueError) as e:
        print(f"ERROR: {run_dir}/results.json: {e}", file=sys.stderr)
        return 2
    if run["meta"].get("mode") != "sweep":
        print(f"ERROR: {run_dir} is not a sweep run (make sweep)", file=sys.stderr)
        return 2
    plt.rcParams["svg.hashsalt"] = "lab"      # stable ids in the SVG files
    written = draw(run, run_dir / "charts")
    print(f"   charts: {run_dir}/charts/ ({len(written) // 2} charts, PNG and SVG: "
          f"{', '.join(p.stem for p in written[::2])})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
