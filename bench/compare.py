#!/usr/bin/env python3
"""Compare two bench runs cell by cell, as a Markdown table (what `make compare` prints).

Usage: bench/compare.py A B
  A, B: a run directory (results/<stamp>, results/latest) or its results.json.
Cells are joined on (scenario, app, container, threads, wrk threads, connections), a run from
before scenarios existed being all "call"; each row shows req/s,
p99 and timeouts for A and B and the change from A to B in %, then the responses slower than
2 s (what wrk's default --timeout would have counted). Cells found in only one run are listed
after the table; a FAILED or SKIPPED cell shows that word instead of its numbers. Python 3
standard library only.
"""
import json
import sys
from pathlib import Path

KEY = ("scenario", "app", "container", "threads", "wrk_threads", "connections")
DEFAULTS = {"scenario": "call"}      # for runs from before the key existed


def usage_error(message):
    print(f"ERROR: {message}", file=sys.stderr)
    print("Usage: make compare A=<run dir or results.json> B=<run dir or results.json>\n"
          "   eg, make compare A=results/20261121T120000Z B=results/latest", file=sys.stderr)
    sys.exit(2)


def load(arg, name):
    if not arg:
        usage_error(f"{name} is missing")
    path = Path(arg)
    if path.is_dir():
        path = path / "results.json"
    try:
        run = json.loads(path.read_text())
        cells = run["cells"]
    except FileNotFoundError:
        usage_error(f"{name}={arg}: no such run ({path} not found)")
    except (ValueError, KeyError, TypeError):
        usage_error(f"{name}={arg}: {path} is not a bench results.json")
    return run.get("meta", {}), {tuple(c.get(k, DEFAULTS.get(k)) for k in KEY): c for c in cells}


def fmt(x, unit=""):
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.1f}{unit}"
    return f"{x}{unit}"


def change(a, b):
    """B relative to A in %, or a word when a percentage means nothing."""
    if a is None or b is None:
        return "—"
    if a == b:
        return "="
    if a == 0:
        return "new" if b else "="
    return f"{100.0 * (b - a) / a:+.1f} %"


def value(cell, field):
    if cell.get("status", "ok") != "ok":
        return None
    return cell.get(field)


def shown(cell, field):
    """The value, or why there is none: FAILED or SKIPPED."""
    status = cell.get("status", "ok")
    if status != "ok":
        return "SKIPPED" if status.startswith("SKIPPED") else "FAILED"
    return fmt(cell.get(field))


def describe(meta, arg):
    return f"`{arg}` ({meta.get('date', '?')}, {meta.get('duration_s', '?')} s cells, sleep {meta.get('sleep_ms', '?')} ms)"


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        usage_error("give two runs: A and B")
    meta_a, a = load(argv[1], "A")
    meta_b, b = load(argv[2], "B")
    print(f"A = {describe(meta_a, argv[1])}  \nB = {describe(meta_b, argv[2])}\n")
    print("| scenario | app | container | threads | wrk -t | -c | A req/s | B req/s | change | A p99 ms "
          "| B p99 ms | change | A timeouts | B timeouts | change | A > 2 s | B > 2 s |")
    print("|---|---|---|---:|---:|---:" + "|---:" * 11 + "|")
    both = [k for k in a if k in b]
    for k in both:
        ca, cb = a[k], b[k]
        row = [str(x) for x in k]
        for field in ("rps", "p99_ms", "timeouts"):
            va, vb = value(ca, field), value(cb, field)
            row += [shown(ca, field), shown(cb, field), change(va, vb)]
        # wrk's timeouts depend on --timeout; "> 2 s" is the same count at wrk's default 2 s.
        row += [fmt(value(ca, "slow_2s")), fmt(value(cb, "slow_2s"))]
        print("| " + " | ".join(row) + " |")
    only_a = [k for k in a if k not in b]
    only_b = [k for k in b if k not in a]
    for label, keys in (("Only in A", only_a), ("Only in B", only_b)):
        if keys:
            print(f"\n{label}:")
            for k in keys:
                print(f"- {k[0]}: {k[1]} {k[2]} threads={k[3]} wrk-t={k[4]} c={k[5]}")
    if not both:
        print("\n(no cell in common)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
