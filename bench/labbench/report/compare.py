#!/usr/bin/env python3
"""Compare two bench runs cell by cell and say, per cell, whether it changed beyond the noise
(what `make compare` prints, as Markdown).

Usage: bench/compare.py A B
  A, B: a run directory (results/<stamp>, results/latest) or its results.json; RUN@N is round N
  of a REPEAT run (eg, A=results/latest@1 B=results/latest@2: the run's own noise).

Cells are joined on (scenario, load generator, app, container, threads, wrk threads, connections,
sweep variant). For the
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
A summary line counts the cells that changed beyond the noise. Python 3 standard library only.
"""
import json
import sys
from pathlib import Path

# variant: two sweep variants can meet in one cell (sync-servlet:200 and :conns at 200 connections).
KEY = ("scenario", "loadgen", "app", "container", "threads", "wrk_threads", "connections", "variant", "client",
       "db_driver")    # BACKEND=postgres: the app's database driver (None for the HTTP backend)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))      # bench/, also when run as a file
from labbench import catalog, scenarios  # noqa: E402

# For runs from before these fields existed: the default scenario, load generator and client.
DEFAULTS = {"scenario": scenarios.DEFAULT, "loadgen": "wrk", "client": catalog.DEFAULT_CLIENT}
# An open-loop (vegeta) cell is judged by what it served and its p99 from the intended send time.
OPEN_LOOP = {"steady_rps": "ol_served_rps", "p99_ms": "ol_p99_ms"}

# Relative noise floors for runs without repeats. Measured: see docs/findings/comparing-runs.md.
NOISE_FLOOR = {"steady_rps": 0.03, "p99_ms": 0.15}
# Below these absolute differences nothing is a change, whatever the ratio (a p99 of 1.004 s vs
# 1.010 s is the same; 0.9 vs 1.0 req/s of a 1-thread sync app is one response).
NOISE_ABS = {"steady_rps": 0.5, "p99_ms": 20.0}
HIGHER_IS_BETTER = {"steady_rps": True, "p99_ms": False}
JIT_WARM = 5.0     # % of the app's CPU: above it a window was still partly the compiler's (summary.JIT_WARM)


def usage_error(message):
    print(f"ERROR: {message}", file=sys.stderr)
    print("Usage: make compare A=<run dir or results.json> B=<run dir or results.json>\n"
          "   eg, make compare A=results/20261121T120000Z B=results/latest\n"
          "       make compare A=results/latest@1 B=results/latest@2   (two rounds of a REPEAT run)", file=sys.stderr)
    sys.exit(2)


def key_of(cell):
    return tuple(cell.get(k) or DEFAULTS.get(k) for k in KEY)


def app_text(key):
    """The app, and its client when it is not the default one, and its database driver if any."""
    text = key[2] if key[8] == DEFAULTS["client"] else f"{key[2]} · {key[8]} client"
    return text + (f" · {key[9]}" if key[9] else "")


def load_text(key):
    """The load column: wrk's -t/-c, or vegeta's open loop."""
    return "vegeta (open loop)" if key[1] == "vegeta" else f"-t{key[5]} -c{key[6]}"


def load(arg, name):
    """A run's meta and cells by key. RUN@N picks round N of a REPEAT run (judged as a run of its own)."""
    if not arg:
        usage_error(f"{name} is missing")
    where, _, rnd = arg.rpartition("@") if "@" in arg else (arg, "", "")
    path = Path(where)
    if path.is_dir():
        path = path / "results.json"
    try:
        run = json.loads(path.read_text())
        cells = run["cells"]
    except FileNotFoundError:
        usage_error(f"{name}={arg}: no such run ({path} not found)")
    except (ValueError, KeyError, TypeError):
        usage_error(f"{name}={arg}: {path} is not a bench results.json")
    meta = run.get("meta", {})
    if rnd:
        if rnd not in run.get("rounds", {}):
            usage_error(f"{name}={arg}: no round {rnd} in {path} (it has {', '.join(run.get('rounds', {})) or 'one round'})")
        cells, meta = run["rounds"][rnd], dict(meta, repeat=1)
    return meta, {key_of(c): c for c in cells}


def ok(cell):
    return cell.get("status", "ok") == "ok"


def metric(cell, field):
    """(median, low, high, repeats) of a metric; steady req/s falls back to wrk's req/s in old runs."""
    if not ok(cell):
        return None
    if cell.get("loadgen") == "vegeta":
        field = OPEN_LOOP[field]
    elif field == "steady_rps" and cell.get("steady_rps") is None:
        field = "rps"
    value = cell.get(field)
    if value is None:
        return None
    low, high = (cell.get("range") or {}).get(field) or (value, value)
    return value, low, high, cell.get("repeats") or 1


def queue_bound(cell):
    """A thread-per-request app with more connections than threads: its p99 is queue order."""
    threads = cell.get("threads")
    conns = cell.get("connections")      # None for an open-loop cell: its queue grows at a steady pace
    return bool(cell.get("thread_per_request")) and isinstance(threads, int) and conns is not None and conns > threads


def verdict(a, b, field):
    """'same', 'better' or 'worse' for metric tuples a and b (see metric()), judged against noise."""
    va, lo_a, hi_a, n_a = a
    vb, lo_b, hi_b, n_b = b
    if abs(vb - va) <= NOISE_ABS[field]:
        return "same"
    if n_a >= 2 and n_b >= 2:
        if lo_b <= hi_a and lo_a <= hi_b:       # the runs' own ranges overlap
            return "same"
    elif abs(vb - va) <= NOISE_FLOOR[field] * max(abs(va), abs(vb)):
        return "same"
    return "better" if (vb > va) == HIGHER_IS_BETTER[field] else "worse"


def overall(verdicts):
    judged = [v for v in verdicts if v in ("same", "better", "worse")]
    if not judged:
        return "—"
    if "worse" in judged:
        return "worse"
    return "better" if "better" in judged else "same"


def fmt(m, field):
    if m is None:
        return "—"
    value, low, high, n = m
    digits = 1 if field == "steady_rps" else 0
    text = f"{value:.{digits}f}"
    if n >= 2:
        text += f" ({low:.{digits}f}–{high:.{digits}f})"
    return text


def change(a, b):
    if a is None or b is None:
        return "—"
    if a[0] == b[0]:
        return "="
    if a[0] == 0:
        return "new"
    return f"{100.0 * (b[0] - a[0]) / a[0]:+.1f} %"


def describe(meta, cells, arg):
    repeats = meta.get("repeat") or 1
    text = (f"`{arg}` ({meta.get('date', '?')}, {meta.get('duration_s', '?')} s cells, sleep "
            f"{meta.get('sleep_ms', '?')} ms, {repeats} round{'s' if repeats != 1 else ''})")
    if cells and all(c.get("steady_rps") is None for c in cells.values()):
        text += " — an older run without steady req/s: its wrk req/s is used, window step and all"
    return text


def compare(a, b):
    """Rows (key, cells, metrics, verdicts, overall) for the cells in both runs."""
    rows = []
    for k in a:
        if k not in b:
            continue
        ca, cb = a[k], b[k]
        metrics, verdicts = {}, {}
        for field in ("steady_rps", "p99_ms"):
            ma, mb = metric(ca, field), metric(cb, field)
            metrics[field] = (ma, mb)
            if ma is None or mb is None:
                verdicts[field] = "—"
            elif field == "p99_ms" and (queue_bound(ca) or queue_bound(cb)):
                verdicts[field] = "— (queue)"
            else:
                verdicts[field] = verdict(ma, mb, field)
        rows.append((k, ca, cb, metrics, verdicts, overall(verdicts.values())))
    return rows


def warmth_note(ca, cb):
    """Where the two cells were measured at a different warmth (issue 26): the JIT compiler's share
    of the app's CPU in the window on opposite sides of 5 %, or a warm-up that settled against one
    that did not. Their CPU differs by the compiler; their throughput rarely does. Empty where a
    run did not record it."""
    ja, jb = ca.get("jit_pct"), cb.get("jit_pct")
    notes = []
    if ja is not None and jb is not None and (ja > JIT_WARM) != (jb > JIT_WARM):
        notes.append(f"JIT {ja:.0f} % → {jb:.0f} % of the app's CPU")
    oa, ob = ca.get("warmup_outcome"), cb.get("warmup_outcome")
    if oa != ob and "no steady state" in (oa, ob):
        notes.append(f"warm-up {oa or ca.get('warmup_mode') or 'fixed'} → {ob or cb.get('warmup_mode') or 'fixed'}")
    return f" (warmth differs: {'; '.join(notes)})" if notes else ""


def status_text(cell):
    return "FAILED" if str(cell.get("status", "")).startswith("FAILED") else "SKIPPED"


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        usage_error("give two runs: A and B")
    meta_a, a = load(argv[1], "A")
    meta_b, b = load(argv[2], "B")
    both_repeat = (meta_a.get("repeat") or 1) >= 2 and (meta_b.get("repeat") or 1) >= 2
    print(f"A = {describe(meta_a, a, argv[1])}  \nB = {describe(meta_b, b, argv[2])}\n")
    if both_repeat:
        print("Noise: each run's own min–max over its rounds (ranges in brackets); a cell changed only "
              "where the ranges do not overlap.\n")
    else:
        print(f"Noise: the lab's measured floor, ±{NOISE_FLOOR['steady_rps'] * 100:g} % for steady req/s and "
              f"±{NOISE_FLOOR['p99_ms'] * 100:g} % for p99 (docs/findings/comparing-runs.md); rerun with REPEAT=3 "
              "to judge against the runs' own spread.\n")
    print("| scenario | app | container | threads | load | A steady req/s | B steady req/s | change "
          "| verdict | A p99 ms | B p99 ms | change | verdict | cell |")
    print("|---|---|---|---:|---" + "|---:" * 3 + "|---" + "|---:" * 3 + "|---|---|")
    rows = compare(a, b)
    counts = {"same": 0, "better": 0, "worse": 0, "—": 0}
    for k, ca, cb, metrics, verdicts, cell_verdict in rows:
        cols = [k[0], app_text(k), k[3], str(k[4]), load_text(k)]
        for field in ("steady_rps", "p99_ms"):
            ma, mb = metrics[field]
            cols += [fmt(ma, field) if ok(ca) else status_text(ca), fmt(mb, field) if ok(cb) else status_text(cb),
                     change(ma, mb), verdicts[field]]
        counts[cell_verdict] += 1
        cols.append(f"**{cell_verdict}**" if cell_verdict in ("better", "worse") else cell_verdict)
        print("| " + " | ".join(cols) + " |")
    judged = counts["same"] + counts["better"] + counts["worse"]
    print(f"\n**{len(rows)} cells in both runs: {counts['same']} same, {counts['better']} better, "
          f"{counts['worse']} worse beyond the noise"
          + (f", {counts['—']} not judged (failed or skipped)" if counts["—"] else "")
          + (f"; {100.0 * counts['same'] / judged:.0f} % same**" if judged else "**"))
    warmth = [f"- {k[0]}: {app_text(k)} {k[3]} threads={k[4]} {load_text(k)}{warmth_note(ca, cb)}"
              for k, ca, cb, *_ in rows if warmth_note(ca, cb)]
    if warmth:
        print("\nMeasured at a different warmth (their CPU differs by the JIT compiler, docs/reading-results.md):")
        print("\n".join(warmth))
    only_a = [k for k in a if k not in b]
    only_b = [k for k in b if k not in a]
    for label, keys in (("Only in A", only_a), ("Only in B", only_b)):
        if keys:
            print(f"\n{label}:")
            for k in keys:
                print(f"- {k[0]}: {app_text(k)} {k[3]} threads={k[4]} {load_text(k)}")
    if not rows:
        print("\n(no cell in common)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
