"""Two cost runs compared (`make compare`, issue 39): each figure judged by its intervals; across two
machines CPU as a ratio to a reference variant; the same command twice (run twice); two placements
(machine-independent counters); WORK's controls against what they asked."""
import math
import re

from ...report.fmt import work_of
from ...report.interval import difference, interval, ratio
from . import speed
from .card import cells_of, raw_variants, variants


# (key, what) the machine-independent figures compare reads directly across machines; CPU is the
# machine's, compared as a ratio to a reference variant within each run when the runs' CPUs differ.
PORTABLE = (("syscalls_per_req", "syscalls/req"), ("csw_per_req", "ctx sw/req"), ("alloc_kib", "alloc KiB/req"))


def _judge(a, b):
    if not (a and b):
        return "—"
    if a.n < 2 or b.n < 2:
        return "one fork: not judged"
    return "same" if not a.disjoint(b) else ("cheaper" if b.mean < a.mean else "dearer")


def compare(run_a, run_b):
    """Two cost runs, variant by variant, each figure judged by its intervals: `same` where A's and
    B's overlap, else `cheaper` or `dearer` in B. Where the runs' CPUs differ (two machines), CPU is
    compared as each variant's ratio to a reference (the first variant both have), within each run;
    syscalls, context switches and allocation directly."""
    machines = run_a["meta"].get("cpu") != run_b["meta"].get("cpu")
    # one fit over both runs' windows, its medians over both: each run's CPU at the same box speed
    model = None if machines else speed.fit(raw_variants(run_a) + raw_variants(run_b))
    fa, fb = dict(variants(run_a, model)), dict(variants(run_b, model))
    common = [v for v in fa if v in fb]
    if not common:
        return None
    at_speed = (("cpu_us_at_speed", "CPU µs/req at median speed"),) if model else ()
    ref = common[0]
    out = [f"**Cost card, A against B** ({'two machines: CPU as a ratio to ' + ref + ' within each run' if machines else 'one machine'}); "
           "each figure mean ± 95 % interval over the forks; `same` where the intervals overlap.\n",
           "| variant | figure | A | B | verdict |", "|---|---|---:|---:|---|"]
    for v in common:
        cpu = ("cpu_us", "CPU µs/req")
        for key, what in (cpu,) + at_speed + PORTABLE:
            a, b = interval([f.get(key) for f in fa[v]]), interval([f.get(key) for f in fb[v]])
            if key == "cpu_us" and machines:
                ra, rb = ratio(a, interval([f.get(key) for f in fa[ref]])), ratio(b, interval([f.get(key) for f in fb[ref]]))
                text = (lambda r: "—" if r is None or r.low != r.low else f"{r.value:.2f} ({r.low:.2f}–{r.high:.2f})")
                same = ra and rb and ra.low == ra.low and rb.low == rb.low and not (ra.high < rb.low or rb.high < ra.low)
                out.append(f"| {v} | CPU, × {ref}'s | {text(ra)} | {text(rb)} | "
                           f"{'same' if same else ('—' if not (ra and rb) else ('cheaper' if rb.value < ra.value else 'dearer'))} |")
                continue
            out.append(f"| {v} | {what} | {a.text('{:.2f}') if a else '—'} | {b.text('{:.2f}') if b else '—'} | {_judge(a, b)} |")
    judged = controls(run_a, run_b)
    if run_a["meta"].get("rate") == run_b["meta"].get("rate") and not judged:
        placed = [k for k in ("cpusets", "hosts") if run_a["meta"].get(k) != run_b["meta"].get(k)]
        if machines or placed:
            out += ["", f"**Machine-independent** ({'two machines' if machines else ', '.join(placed) + ' differ'}; "
                    "issue 39: within 2 % between placements and machines), B against A:",
                    *within_lines(fa, fb, common, PORTABLE)]
        else:
            out += ["", *repeat_lines(fa, fb, common, model), relative_line(run_a, run_b, common)]
    return "\n".join(out) + "\n" + (judged or "")


def within_lines(fa, fb, common, figures):
    """A line per figure: for how many variants B's mean is within 2 % of A's, and those that are not,
    each with its difference as a % of A's."""
    lines = []
    for key, what in figures:
        diffs = {}
        for v in common:
            a, b = interval([f.get(key) for f in fa[v]]), interval([f.get(key) for f in fb[v]])
            diffs[v] = 100 * (b.mean - a.mean) / abs(a.mean) if a and b and a.mean else None
        close = [v for v in common if diffs[v] is not None and abs(diffs[v]) <= 2.0]
        off = [f"{v} {diffs[v]:+.1f} %" if diffs[v] is not None else f"{v} not measured" for v in common if v not in close]
        lines.append(f"{what} within 2 %: {len(close)} of {len(common)}" + (f" (not: {', '.join(off)})" if off else "") + ".")
    return lines


def inside_line(what, ivs_a, ivs_b, common):
    """For how many variants each run's median sits inside the other run's interval, and which do not."""
    inside = [v for v in common if ivs_a[v] and ivs_b[v] and ivs_b[v].holds(ivs_a[v].median) and ivs_a[v].holds(ivs_b[v].median)]
    return (f"{what}: each run's median inside the other's interval for {len(inside)} of {len(common)} variants"
            + (f" (not: {', '.join(v for v in common if v not in inside)})" if len(inside) < len(common) else "") + ".")


def repeat_lines(fa, fb, common, model=None):
    """The same command run twice on one machine (issue 39's acceptance): how many CPU medians sit in
    the other run's interval (as measured, and at the box's median speed over both runs where the
    probe ran: speed.py), how many variants' syscalls and allocation agree within 2 %, and whether
    every pair that one run separates by CPU is ordered the same way in the other."""
    def ivs(key):
        return {k: {v: interval([f.get(key) for f in forks[v]]) for v in common} for k, forks in (("a", fa), ("b", fb))}
    iv = ivs("cpu_us")
    lines = [inside_line("**Run twice:** CPU", iv["a"], iv["b"], common)]
    if model:
        at = ivs("cpu_us_at_speed")
        lines.append(inside_line(f"CPU at the box's median speed over both runs (fit R² {100 * model.r2:.0f} %)", at["a"], at["b"], common))
    lines += within_lines(fa, fb, common, (("syscalls_per_req", "syscalls/req"), ("alloc_kib", "alloc KiB/req")))
    pairs = [(x, y) for i, x in enumerate(common) for y in common[i + 1:]]
    sep = {k: {(x, y): ratio(iv[k][x], iv[k][y]) for x, y in pairs} for k in ("a", "b")}
    either = [p for p in pairs if any(sep[k][p] and sep[k][p].separable for k in ("a", "b"))]
    flipped = [p for p in either if sep["a"][p] and sep["b"][p] and (sep["a"][p].value - 1) * (sep["b"][p].value - 1) < 0]
    one = [p for p in either if not all(sep[k][p] and sep[k][p].separable for k in ("a", "b"))]
    lines.append(f"Pairs separable by CPU in either run: {len(either)} of {len(pairs)}; in both: {len(either) - len(one)}; "
                 f"ordered the other way in the other run: {len(flipped)}"
                 + (f" ({'; '.join(f'{x} and {y}' for x, y in flipped)})" if flipped else "") + ".")
    return lines


def relative(run, labels):
    """{label: [each fork's CPU / the geometric mean of every label's fork of the same round]}: the forks
    of a run are interleaved by round, so one round's forks ran in one spell of the box, and this ratio
    takes that spell's level out (half an hour later every variant's CPU read +7 to +20 % on the same
    box, cost-pool-a against cost-pool-b). Rounds where a label has no CPU are left out."""
    rounds = {}
    for c in cells_of(run):
        if c.get("scenario") == "cost" and c.get("fork") and c["label"] in labels:
            rounds.setdefault(c.get("round"), {})[c["label"]] = c["fork"].get("cpu_us")
    out = {v: [] for v in labels}
    for cpus in rounds.values():
        if all((cpus.get(v) or 0) > 0 for v in labels):
            mean = math.exp(sum(math.log(cpus[v]) for v in labels) / len(labels))
            for v in labels:
                out[v].append(cpus[v] / mean)
    return out


def relative_line(run_a, run_b, common):
    """Run twice, CPU relative to each run's own level (relative): how many variants' medians sit in the
    other run's interval. Absolute CPU is the box's too; this is what a variant costs against the others."""
    if len(common) < 2:
        return ""
    ra, rb = relative(run_a, common), relative(run_b, common)
    return inside_line("CPU relative to its own run (each fork over the geometric mean of its round's forks, so a spell "
                       "of the box moves a round together)", {v: interval(ra[v]) for v in common},
                       {v: interval(rb[v]) for v in common}, common)


# WORK's pieces (issue 39's controls): (piece, figure, what, the tolerance on what it adds: relative or absolute)
CONTROLS = (("cpu", "cpu_us", "CPU µs/req", 0.05, None), ("alloc", "alloc_kib", "alloc KiB/req", 0.02, None),
            ("syscalls", "syscalls_per_req", "syscalls/req", None, 0.5))


def work_asked(spec):
    """{piece: what it adds per request} of a WORK spec as the app printed it ('cpu=500us,alloc=65536'):
    CPU in µs, allocation in KiB (the array is exactly that many bytes on the heap), syscalls."""
    out = {"cpu": 0.0, "alloc": 0.0, "syscalls": 0.0}
    for piece in re.split(r"[ ,]+", spec or ""):
        key, _, v = piece.partition("=")
        if key == "cpu" and v:
            out["cpu"] = float(v[:-2]) * (1000 if v.endswith("ms") else 1)
        elif key == "alloc" and v:
            out["alloc"] = int(v) / 1024
        elif key == "syscalls" and v:
            out["syscalls"] = float(v)
    return out


def works(run):
    """{variant label: its WORK as its app printed it on its lab: line ('' for none)}."""
    out = {}
    for c in cells_of(run):
        if c.get("scenario") == "cost":
            out.setdefault(c["label"], work_of(c.get("lab_line")))
    return out


def controls(run_a, run_b):
    """Where a variant's WORK differs between A and B: what each piece moved its own counter by, B − A
    over the forks with its 95 % interval (Welch), against what it asked, within issue 39's tolerance
    (CPU ± 5 %, allocation ± 2 %, syscalls ± 0.5). None when no WORK differs."""
    fa, fb, wa, wb = dict(variants(run_a)), dict(variants(run_b)), works(run_a), works(run_b)
    rows = []
    for v in [v for v in fa if v in fb and wa.get(v) != wb.get(v)]:
        asked_a, asked_b = work_asked(wa.get(v)), work_asked(wb.get(v))
        for piece, key, what, rel, absolute in CONTROLS:
            asked = asked_b[piece] - asked_a[piece]
            if not asked:
                continue
            d = difference(interval([f.get(key) for f in fb[v]]), interval([f.get(key) for f in fa[v]]))
            if d is None:
                rows.append(f"| {v} | {what} | {asked:+.2f} | — | not measured |")
                continue
            tol = rel * abs(asked) if rel else absolute
            off = d.value - asked
            verdict = (f"as asked (within ± {tol:.2f})" if abs(off) <= tol
                       else f"off by {off:+.2f} ({100 * off / asked:+.1f} %; ± {tol:.2f} allowed)")
            if d.low == d.low and (d.high - d.low) / 2 > tol:     # the mean is in; the forks are not that close
                verdict += f"; its interval, ± {(d.high - d.low) / 2:.2f}, is wider: the forks spread"
            spread = "one fork each" if d.low != d.low else f"{d.low:+.2f} to {d.high:+.2f}"
            rows.append(f"| {v} | {what} | {asked:+.2f} | {d.value:+.2f} ({spread}) | {verdict} |")
    if not rows:
        return None
    return ("\n**Controls** (issue 39): the work each request did in B and not in A (WORK, from each app's "
            "`lab:` line) moves its own counter by what it asked, B − A, mean over the forks with its 95 % "
            "interval; the tolerance is CPU ± 5 %, allocation ± 2 %, syscalls ± 0.5.\n\n"
            "| variant | counter | asked | moved (95 % interval) | verdict |\n|---|---|---:|---:|---|\n"
            + "\n".join(rows) + "\n")
