#!/usr/bin/env python3
"""Draw a SCENARIO=cost run's chart from its results.json: PNG and SVG into RUN_DIR/charts/.

  cost-card   four panels, a bar per variant: CPU µs, bytes allocated (KiB), syscalls and context
              switches per request, each the mean over the variant's forks with its 95 % interval
              as the error bar (the card's figures: labbench/scenarios/cost/card.py)

Runs with the matplotlib pinned in bench/tools/charts-requirements.txt, from the project-local
venv (bench/tools/install.sh matplotlib); the cost scenario calls it at the end of a run.

Usage: .tools/venv/bin/python bench/tools/cost_charts.py RUN_DIR
"""
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")                     # files only, no display
import matplotlib.pyplot as plt          # noqa: E402  (after the backend)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # bench/
from labbench.report.figures import read_results  # noqa: E402
from labbench.scenarios.cost import card  # noqa: E402  (the card's own variants and intervals)

PANELS = (("cpu_us", "CPU µs per request"), ("alloc_kib", "KiB allocated per request"),
          ("syscalls_per_req", "syscalls per request"), ("csw_per_req", "context switches per request"))


def main(run_dir):
    run = read_results(run_dir / "results.json")
    rows = [(label, card.row_intervals(forks)) for label, forks in card.variants(run)]
    if not rows:
        print("cost_charts: no cost cells with figures: no chart")
        return 0
    fig, axes = plt.subplots(2, 2, figsize=(12, 2.2 + 0.45 * len(rows)), layout="constrained")
    ys = list(range(len(rows)))[::-1]              # the card's first variant on top
    for ax, (key, title) in zip(axes.flat, PANELS):
        means = [iv[key].mean if iv[key] else 0 for _, iv in rows]
        # an interval of one fork is infinite: drawn without a bar rather than off the chart
        errs = [iv[key].half_width if iv[key] and iv[key].n > 1 else 0 for _, iv in rows]
        ax.barh(ys, means, xerr=errs, color="tab:blue", alpha=0.75, ecolor="black", capsize=3)
        ax.set_yticks(ys, [label for label, _ in rows], fontsize=7)
        ax.set_title(title, fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    n = max((iv["cpu_us"].n for _, iv in rows if iv["cpu_us"]), default=0)
    fig.suptitle(f"What a request costs each model: mean over {n} fresh JVMs, whisker = 95 % interval", fontsize=10)
    out = run_dir / "charts"
    out.mkdir(exist_ok=True)
    for ext in ("png", "svg"):
        fig.savefig(out / f"cost-card.{ext}", dpi=110)
    print(f"chart: {out / 'cost-card.png'}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
