#!/usr/bin/env python3
"""Compare two bench runs cell by cell and say, per cell, whether it changed beyond the noise
(what `make compare` prints, as Markdown).

Usage: bench/compare.py A B
  A, B: a run directory (results/<stamp>, results/latest) or its results.json; RUN@N is round N
  of a REPEAT run (eg, A=results/latest@1 B=results/latest@2: the run's own noise).

First, what B changed: each setting both runs recorded (meta.txt: THREADS, APPS, SLEEP_MS, APP_ARGS,
DB_POOL, ..., the JDK, the commit, the machine) and the hypervisor steal their cells saw, named
where it differs, narrowed or widened, and the rest listed as the same.

Cells are joined on (scenario, load generator, app, container, threads, wrk threads, connections,
sweep variant, client, database driver). For the
steady-state throughput and the p99 of each cell it prints A, B, the change, and a verdict:
  same    the difference is within the noise;
  better  / worse: beyond the noise, in that direction (more req/s, lower p99 is better);
  —       not judged (a failed or skipped cell, or a p99 that is noise by nature, see below).
What "the noise" is:
  * both runs have repeats (REPEAT >= 2): the runs' own spread. The cell changed only when the two
    min–max ranges do not overlap.
  * otherwise: the noise floor below, measured on this lab's reference machine and documented in
    docs/findings/comparing-runs.md: the largest change seen between runs of the same commit, rounded up.
The p99 of a queue-bound cell (a thread-per-request app with more connections than threads) is not
judged: which queued connections a container serves first changes from run to run (the p99 of one
such cell moved from 1.0 s to 10 s between runs of the same commit), so its throughput decides.
A summary line counts the cells that changed beyond the noise.

Then the cells B's change moved, paired with their A cell and each side's Little's-law bound:
  * a cell whose key is the same but whose bound moved (SLEEP_MS, DB_POOL, RATE changed);
  * a cell that matches one of A on every key field but the knobs B replaced values of (THREADS
    `1 200 v1` → `1 8`, CONTAINERS, CLIENT, WRK_THREADS, CONNECTIONS, the sweep's variants),
    one to one; where it is not one to one, the cells side by side, grouped by what did not change.
Where the ceiling moved (SLEEP_MS, CONNECTIONS) a pair is judged on % of the ceiling, not req/s.
A fan-out probe (one request at a time, no load) is listed apart, its answer time per N A → B.
Runs with nothing to compare (no cell in common, none paired) exit 2 with one line saying what to
run instead. Python 3 standard library only.

The parts, by job: compare_runs (a run loaded, its cells by key), compare_judge (two cells judged
against the noise), compare_settings (the settings paragraph), compare_pairs (pairing across what
B changed), compare_tables (the text of the table and the pairs); this module's main puts them in
order. Tests and callers keep using compare.<name> for the names below.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))      # bench/, also when run as a file
from labbench import plugins  # noqa: E402,F401  (a command line: the scenarios' settings and parts registered)
from labbench.report.compare_judge import NOISE_FLOOR, compare  # noqa: E402
from labbench.report.compare_pairs import bound_moved, nothing_shared, pair_across, replaced_knobs  # noqa: E402
from labbench import scenarios  # noqa: E402
from labbench.report.compare_runs import describe, load, run_of, usage_error  # noqa: E402
from labbench.report.compare_settings import run_wide_text, settings_diff, settings_text  # noqa: E402
from labbench.report.compare_tables import print_only, print_pairs, print_probes, print_table  # noqa: E402
# Names the tests call as compare.<name>, from where they live now.
from labbench.report.compare_judge import warmth_note  # noqa: E402,F401
from labbench.report.compare_pairs import predecessor  # noqa: E402,F401
from labbench.report.compare_runs import key_of, load_text  # noqa: E402,F401


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        usage_error("give two runs: A and B")
    meta_a, a = load(argv[1], "A")
    meta_b, b = load(argv[2], "B")
    print(f"A = {describe(meta_a, a, argv[1])}  \nB = {describe(meta_b, b, argv[2])}\n")
    diff = settings_diff(meta_a, meta_b, a, b)
    print(settings_text(diff) + "\n")
    # two runs of a planner that compares its own way (the cost card: by intervals)
    own = scenarios.BY_NAME.get(meta_a.get("mode")) if meta_a.get("mode") == meta_b.get("mode") else None
    text = own.compare(run_of(argv[1]), run_of(argv[2])) if own else None
    if text:
        print(text)
        return 0
    # A cell of the same key whose bound or ceiling moved (B changed SLEEP_MS, DB_POOL, RATE) is
    # shown with the pairs, its bound beside it, not in the table of cells run alike.
    sleep_moved = None not in (meta_a.get("sleep_ms"), meta_b.get("sleep_ms")) and meta_a["sleep_ms"] != meta_b["sleep_ms"]
    # a probe (one request at a time, no load) has answer times, not a throughput: listed on their own
    probes = [k for k in a if k in b and k[1] == "probe"]
    moved = [k for k in a if k in b and k not in probes and (sleep_moved or bound_moved(a[k], b[k]))]
    same_keys = [k for k in a if k in b and k not in moved and k not in probes]
    knobs = replaced_knobs(a, b)
    pairs, sides = pair_across(a, b, knobs)
    if not same_keys and not moved and not pairs and not sides and not probes:
        # never an empty table: one line under the settings paragraph, which said what differs; exit 2
        # as a usage error does, but returned, so a caller reading stdout keeps that paragraph
        print(f"ERROR: {nothing_shared(a, b)}", file=sys.stderr)
        return 2
    print(noise_text(meta_a, meta_b))
    rows = compare(a, b, same_keys)
    if rows:
        print_table(rows)
    else:
        print("No cell ran with the same settings in both runs: the cells B's change moved are paired below.")
    print_pairs(a, b, moved, pairs, sides, knobs, sleep_moved, run_wide_text(diff))
    if probes:
        print_probes(a, b, probes)
    print_only(a, b, pairs, sides)
    return 0


def noise_text(meta_a, meta_b):
    """What the noise is: the runs' own spread where both repeated, else the lab's measured floor."""
    if (meta_a.get("repeat") or 1) >= 2 and (meta_b.get("repeat") or 1) >= 2:
        return ("Noise: each run's own min–max over its rounds (ranges in brackets); a cell changed only "
                "where the ranges do not overlap.\n")
    return (f"Noise: the lab's measured floor, ±{NOISE_FLOOR['steady_rps'] * 100:g} % for steady req/s and "
            f"±{NOISE_FLOOR['p99_ms'] * 100:g} % for p99 (docs/findings/comparing-runs.md); rerun with REPEAT=3 "
            "to judge against the runs' own spread.\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
