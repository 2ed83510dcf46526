"""compare's text: the table of the cells run alike in both runs, the lines of the pairs across
B's change, and the cells of one run only."""
from .compare_judge import change, fmt, judge, metric, ok, rate_field, warmth_note
from .compare_pairs import KNOBS, change_text, knob_fields, knob_text, label, predecessor
from .compare_runs import app_text, load_text
from .fmt import f_lat


def status_text(cell):
    return "FAILED" if str(cell.get("status", "")).startswith("FAILED") else "SKIPPED"


def number(v):
    return "?" if v is None else f"{round(v, 1):g}"


def shown(c, field):
    return fmt(metric(c, field), field) if ok(c) else status_text(c)


P99_NOT_JUDGED = {"— (queue)": " (not judged: queue order)", "— (sleep)": " (not judged: SLEEP_MS moved it)"}


def figures(cells, rate, p99_verdict=""):
    """'99.2 → 8.0 req/s (bound 100 → 8), 99.2 → 8.0 % of the ceiling, p99 1070 → 12410 ms' for one
    or two cells; a bound both sides share is said once."""
    bounds = [number(c.get("bound_rps")) for c in cells]
    text = (f"{' → '.join(shown(c, 'steady_rps') for c in cells)} req/s "
            f"(bound {bounds[0] if len(set(bounds)) == 1 else ' → '.join(bounds)})")
    if rate == "pct_of_ceiling":
        text += f", {' → '.join(shown(c, rate) for c in cells)} % of the ceiling"
    return text + f", p99 {' → '.join(shown(c, 'p99_ms') for c in cells)} ms{P99_NOT_JUDGED.get(p99_verdict, '')}"


def bold(v):
    return f"**{v}**" if v in ("better", "worse") else v


def pair_line(ka, kb, ca, cb, knobs, what, sleep_moved, counts):
    rate = rate_field(ca, cb, sleep_moved)
    _, verdicts, cell_verdict = judge(ca, cb, rate, sleep_moved)
    counts[cell_verdict] += 1
    return (f"- {label(ka, knobs)}: {what}: {figures([ca, cb], rate, verdicts['p99_ms'])}: {bold(cell_verdict)}"
            f"{warmth_note(ca, cb)}")


def side_lines(keys_a, keys_b, a, b, knobs, sleep_moved, counts):
    """A group that is not one to one: A's cells, then B's, each B cell judged against the A cell it
    replaced where that is one cell (predecessor)."""
    shown_rate = "pct_of_ceiling" if sleep_moved or "connections" in knobs else "steady_rps"
    lines = [f"- {label(keys_a[0], knobs)}:"]
    for ka in keys_a:
        lines.append(f"  - A {knob_text(ka, knobs)}: {figures([a[ka]], shown_rate)}")
    for kb in keys_b:
        line = f"  - B {knob_text(kb, knobs)}: {figures([b[kb]], shown_rate)}"
        ka = predecessor(kb, keys_a, knobs)
        if ka is not None:
            rate = rate_field(a[ka], b[kb], sleep_moved)
            v = judge(a[ka], b[kb], rate, sleep_moved)[2]
            counts[v] += 1
            line += (f"; against A's {knob_text(ka, knobs)}"
                     f"{' (on % of the ceiling)' if rate == 'pct_of_ceiling' else ''}: {bold(v)}")
        lines.append(line)
    return lines


def counts_text(counts, what):
    return (f"**{sum(counts.values())} {what}: {counts['same']} same, {counts['better']} better, {counts['worse']} "
            "worse beyond the noise" + (f", {counts['—']} not judged (failed or skipped)" if counts["—"] else "")
            + "**")


def only_lines(keys):
    """The cells of one run only, a line per scenario and app (a narrowed APPS or CONTAINERS leaves
    dozens): its containers, threads and loads as alternatives, and how many cells that is."""
    groups = {}
    for k in keys:
        groups.setdefault((k[0], app_text(k)), []).append(k)
    lines = []
    for (scenario, app), ks in groups.items():
        def alt(texts):
            return "/".join(dict.fromkeys(texts))
        text = f"- {scenario}: {app} {alt(k[3] for k in ks)} threads={alt(str(k[4]) for k in ks)} "
        if all(k[1] == "vegeta" for k in ks):
            text += "vegeta (open loop)"
        else:
            text += " ".join(alt(part) for part in zip(*(load_text(k).split(" ", 1) for k in ks)))
        lines.append(text + (f" ({len(ks)} cells)" if len(ks) > 1 else ""))
    return lines


def print_table(rows):
    """The table of the cells run alike in both, its summary line and the pairs at a different warmth."""
    print("| scenario | app | container | threads | load | A steady req/s | B steady req/s | change "
          "| verdict | A p99 ms | B p99 ms | change | verdict | cell |")
    print("|---|---|---|---:|---" + "|---:" * 3 + "|---" + "|---:" * 3 + "|---|---|")
    counts = {"same": 0, "better": 0, "worse": 0, "—": 0}
    for k, ca, cb, metrics, verdicts, cell_verdict in rows:
        cols = [k[0], app_text(k), k[3], str(k[4]), load_text(k)]
        for field in ("steady_rps", "p99_ms"):
            ma, mb = metrics[field]
            cols += [fmt(ma, field) if ok(ca) else status_text(ca), fmt(mb, field) if ok(cb) else status_text(cb),
                     change(ma, mb), verdicts[field]]
        counts[cell_verdict] += 1
        cols.append(bold(cell_verdict))
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


def print_pairs(a, b, moved, pairs, sides, knobs, sleep_moved, run_wide):
    """The cells B's change moved, each judged: those of one key whose bound moved (`run_wide` says
    what moved it), the pairs across the knobs B replaced, the groups that are not one to one."""
    counts = {"same": 0, "better": 0, "worse": 0, "—": 0}
    lines = []
    for k in moved:
        lines.append(pair_line(k, k, a[k], b[k], (), run_wide, sleep_moved, counts))
    for ka, kb in pairs:
        lines.append(pair_line(ka, kb, a[ka], b[kb], knobs, change_text(ka, kb, a[ka], b[kb], knob_fields(ka, kb, knobs)),
                               sleep_moved, counts))
    ceiling_moved = sleep_moved or "connections" in knobs
    if lines:
        alike = "every key field" + (f" but {', '.join(KNOBS[f] for f in knobs)}" if knobs else "")
        print(f"\nPaired across B's change (alike in {alike}; each side's Little's-law bound in brackets"
              + ("; judged on % of the ceiling, which SLEEP_MS or CONNECTIONS moved" if ceiling_moved else "") + "):")
        print("\n".join(lines))
    if sides:
        print(f"\nSide by side, not one to one (alike in every key field but {', '.join(KNOBS[f] for f in knobs)}; "
              "a B cell is judged against the A cell it replaced where that is one cell of the same kind of threads):")
        for keys_a, keys_b in sides:
            print("\n".join(side_lines(keys_a, keys_b, a, b, knobs, sleep_moved, counts)))
    if lines or sides:
        print("\n" + counts_text(counts, "pairs across B's change"))


def print_only(a, b, pairs, sides):
    """The cells of one run only that no pair or group took, A's then B's."""
    grouped = {k for ka, kb in pairs for k in (ka, kb)} | {k for ga, gb in sides for k in ga + gb}
    only_a = [k for k in a if k not in b and k not in grouped]
    only_b = [k for k in b if k not in a and k not in grouped]
    for name, keys in (("Only in A", only_a), ("Only in B", only_b)):
        if keys:
            print(f"\n{name}:")
            print("\n".join(only_lines(keys)))


def print_probes(a, b, keys):
    """Cells that sent one request at a time (the fan-out probe): no load, no throughput to judge,
    so each N's answer time A → B, the change beside it; one sample a side, so no verdict."""
    print("\nOne request at a time (a probe, not a load: one answer per N a side, shown, not judged):")
    for k in keys:
        times_a = {p.get("n"): p for p in a[k].get("probes") or ()}
        parts = []
        for p in b[k].get("probes") or ():
            pa = times_a.get(p.get("n"))
            ma, mb = (pa or {}).get("client_ms"), p.get("client_ms")
            parts.append(f"N={p.get('n')} {f_lat(ma)} → {f_lat(mb)} ({change(*((m,) if m is not None else None for m in (ma, mb)))})")
        print(f"- {k[0]}: {app_text(k)} {k[3]} threads={k[4]}: " + ("; ".join(parts) or "no answers"))
