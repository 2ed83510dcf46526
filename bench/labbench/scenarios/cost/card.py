"""The cost card (issue 39): one row per variant, every figure the mean over its forks (fresh JVMs)
± the half-width of its 95 % interval; what 10,000 req/s and 10,000 in flight would take; a ranking
that calls a difference only where the intervals say so; the forks' own figures where they spread."""
import math
import re
import statistics

from ...report.fmt import read_json, work_of
from ...report.interval import difference, interval, ratio
from . import counters, speed, tiers

# (key, column, format): per request, per 1,000 requests, per 1,000 in flight
FIGURES = (("cpu_us", "CPU µs/req", "{:.1f}"), ("cpu_us_at_speed", "CPU µs/req at median speed", "{:.1f}"),
           ("gc_cpu_us", "of it GC µs", "{:.1f}"),
           ("syscalls_per_req", "syscalls/req", "{:.2f}"),
           ("csw_per_req", "ctx sw/req", "{:.3f}"), ("alloc_kib", "alloc KiB/req", "{:.2f}"),
           ("gc_per_1000", "GC /1k req", "{:.3f}"), ("gc_ms_per_1000", "GC ms /1k req", "{:.2f}"),
           ("pss_mb_per_1000", "PSS MB /1k in flight", "{:.0f}"), ("threads_per_1000", "threads /1k in flight", "{:.0f}"))
SPREAD_PCT = 5.0      # a CPU interval wider than this % of its median: its forks are shown
PORTABLE_PCT = 2.0    # the same for syscalls per request (issue 39: machine-independent within 2 %)


def fork_figures(cost):
    """One fork's figures from its cost.json: each window divided (the JVM at rest subtracted), then
    the mean over its windows; its memory and threads per 1,000 in flight at the last window's end."""
    if not cost or not cost.get("windows"):
        return None
    rest = counters.rest_ns_per_s(cost.get("rest"))
    windows = [counters.window_figures(w["perf"], w["stats0"], w["stats1"], w["perf_s"], w["stats_s"], rest)
               for w in cost["windows"]]
    if not windows:
        return None
    readings = speed.window_readings(windows, cost["windows"])
    out = {k: _mean([w.get(k) for w in windows]) for k in ("cpu_us", "cpu_us_with_rest", "gc_cpu_us", "jit_cpu_us",
                                                           "syscalls_per_req", "futex_per_req", "epoll_per_req",
                                                           "csw_per_req", "alloc_kib", "gc_per_1000", "gc_ms_per_1000",
                                                           "rps")}
    last, per_1000 = cost["windows"][-1], 1000.0 / cost["in_flight"]
    out.update(pss_mb_per_1000=None if last.get("pss_kb") is None else last["pss_kb"] / 1024 * per_1000,
               threads_per_1000=None if last.get("threads") is None else last["threads"] * per_1000,
               jit_pct_max=max((w["jit_pct"] for w in windows if w.get("jit_pct") is not None), default=None),
               errors=sum(w.get("errors") or 0 for w in windows), windows=len(windows),
               # windows whose /stats reads failed have no per-request figures: what the app was doing then
               unread=[[100 * w["task_ns"] / w["perf_s"] / 1e9, (w.get("syscalls") or 0) / w["perf_s"]]
                       for w in windows if not w.get("requests") and w.get("task_ns") is not None],
               still_warming=len(cost.get("still_warming") or ()),
               rest_us_per_s=None if rest is None else rest / 1e3,
               # over its windows together: a ~150 ms stall at one window's edge moves answers into the next
               # (WebFlux on Netty, 2026-11-27: 1,001.9, 1,002.3 and 971.9 req/s, 1,000 in flight throughout)
               carried=all(w.get("rps") for w in windows) and _mean([w["rps"] for w in windows]) >= 0.98 * cost["rate"],
               warmup=(cost.get("warmup") or {}).get("text"),
               steal_pct=_mean([counters.steal_pct(w.get("box0"), w.get("box1")) for w in cost["windows"]]),
               speed_ns=_mean([r[1] for r in readings]), memory_ns=_mean([r[2] for r in readings]),
               # the app's client's connections to the backend, busy and idle (none recorded before 2026-11-27)
               client_conns=_mean([w.get("client_conns") for w in cost["windows"]]),
               speed_windows=readings if any(r[1] for r in readings) else None,
               **code_kib((last.get("stats1") or {}).get("jvm") or {}),
               perf_error=next((w["perf_error"] for w in cost["windows"] if w.get("perf_error")), None))
    return out


def code_kib(jvm):
    """What the JIT had compiled at the fork's last window's end (/stats' code heaps; none before
    2026-11-27 or where the code cache is not segmented): C2's code, and C1's that still profiles."""
    c2, c1 = jvm.get("nonProfiledCodeKb"), jvm.get("profiledCodeKb")
    return {"c2_code_kib": c2 if c2 is not None and c2 >= 0 else None,
            "c1_code_kib": c1 if c1 is not None and c1 >= 0 else None}


def _mean(xs):
    xs = [x for x in xs if x is not None]
    return statistics.fmean(xs) if xs else None


def variants(run, model=None):
    """[(label, [fork figures])] in the run's order of variants, from its cost cells: each fork is a
    round of the run (results.json's `rounds`; its `cells` are their medians). Each fork's CPU at the
    box's median speed (speed.py; `model` default: the one fitted over this run) is added as
    cpu_us_at_speed."""
    rows = raw_variants(run)
    model = model or speed.fit(rows)
    return [(label, [dict(f, cpu_us_at_speed=speed.at_speed(f, model)) for f in forks]) for label, forks in rows]


def raw_variants(run):
    out = {}
    for c in [c for cells in (run.get("rounds") or {"1": run["cells"]}).values() for c in cells]:
        if c.get("scenario") == "cost" and c.get("fork"):      # its part, flat in a loaded run
            out.setdefault(c["label"], []).append(c["fork"])
    return list(out.items())


def row_intervals(forks):
    return {k: interval([f.get(k) for f in forks]) for k, _, _ in FIGURES}


def card_table(run):
    """The card: a row per variant, each figure `mean ± half-width` over its n forks."""
    rows = variants(run)
    shown = [fig for fig in FIGURES if fig[0] != "cpu_us_at_speed" or any(f.get(fig[0]) for _, fs in rows for f in fs)]
    out = ["| variant | n | " + " | ".join(col for _, col, _ in shown) + " | cores for 10k req/s | GB for 10k in flight | JIT max % | carried |",
           "|---|---:|" + "---:|" * (len(shown) + 3) + "---|"]
    for label, forks in rows:
        iv = row_intervals(forks)
        cells = [iv[k].text(fmt) if iv[k] else "—" for k, _, fmt in shown]
        cpu, pss = iv["cpu_us"], iv["pss_mb_per_1000"]
        cores = f"{cpu.mean / 100:.2f} ± {cpu.half_width / 100:.2f}" if cpu else "—"
        gb = f"{pss.mean * 10 / 1024:.2f} ± {pss.half_width * 10 / 1024:.2f}" if pss else "—"
        jit = max((f["jit_pct_max"] for f in forks if f.get("jit_pct_max") is not None), default=None)
        carried = "yes" if all(f["carried"] and not f["errors"] for f in forks) else "**no**"
        out.append(f"| {label} | {len(forks)} | " + " | ".join(cells) + f" | {cores} | {gb} | "
                   f"{'—' if jit is None else f'{jit:.1f}'} | {carried} |")
    return "\n".join(out) + "\n"


def ranking(run, key="cpu_us", what="CPU"):
    """Cheapest first; each variant against the next cheaper one: "X costs 1.31× Y's CPU, 95 % CI
    1.25–1.37", or "not separable from Y" where the ratio's interval holds 1."""
    rows = [(label, interval([f.get(key) for f in forks])) for label, forks in variants(run)]
    rows = sorted(((label, iv) for label, iv in rows if iv), key=lambda r: r[1].mean)
    lines = []
    for (cheap, a), (dear, b) in zip(rows, rows[1:]):
        r = ratio(b, a)
        if r is None or r.low != r.low:          # one fork: no interval to judge by
            lines.append(f"- {dear}: {b.mean:.1f} against {cheap}'s {a.mean:.1f} (one fork each: not judged)")
        elif r.separable:
            lines.append(f"- **{dear}** costs **{r.value:.2f}×** {cheap}'s {what} (95 % CI {r.low:.2f}–{r.high:.2f})")
        else:
            lines.append(f"- {dear}: not separable from {cheap} ({r.value:.2f}×, 95 % CI {r.low:.2f}–{r.high:.2f})")
    return ([f"- cheapest: **{rows[0][0]}**, {rows[0][1].text()} µs"] if rows else []) + lines


REST_BUSY_US = 50_000    # the JVM at rest above 5 % of a CPU, its compiler apart (0.7-31 ms a second in the committed runs otherwise): something still ran


def unwhole_line(run):
    """The forks not measured whole: windows whose /stats reads failed (no figure per request: the
    fork's are of its other windows, and `carried` reads no), with what the app did meanwhile; and a
    JVM busy at rest, whose CPU every window had subtracted."""
    out = []
    for label, forks in variants(run):
        for k, f in enumerate(forks, 1):
            why = []
            if f.get("unread"):
                why.append(f"{len(f['unread'])} of {f['windows']} windows without /stats (the app did not answer it; it ran "
                           + ", ".join(f"{pct:.0f} % of a CPU with {sps:,.0f} syscalls/s" for pct, sps in f["unread"]) + ")")
            if (f.get("rest_us_per_s") or 0) > REST_BUSY_US:
                why.append(f"at rest {f['rest_us_per_s'] / 1e3:.0f} ms of CPU a second, subtracted from every window")
            if why:
                out.append(f"{label}'s fork {k}: " + "; ".join(why))
    return ("Forks not measured whole (in the card, with less to say): " + "; ".join(out) + ".\n") if out else ""


def still_warming_line(run):
    """How many windows read the compiler above 5 % after a settled warm-up and were measured again."""
    forks = [(label, f) for label, fs in variants(run) for f in fs]
    again = [(label, f["still_warming"]) for label, f in forks if f.get("still_warming")]
    if not again:
        return ""
    return (f"Windows taken as warm-up: {sum(n for _, n in again)} window(s) in {len(again)} of {len(forks)} forks "
            f"read the compiler above 5 % of the app's CPU after the warm-up and were measured again "
            f"({', '.join(dict.fromkeys(label for label, _ in again))}).\n")


def steal_line(run):
    """The hypervisor's steal the forks' measured windows saw (none recorded before 2026-11-27: no line):
    a CPU figure taken while someone else ran on the box's CPUs reads dearer than the model is."""
    steal = sorted(f["steal_pct"] for _, fs in variants(run) for f in fs if f.get("steal_pct") is not None)
    if not steal:
        return ""
    return (f"Steal (the hypervisor's, in the measured windows): {steal[0]:.1f}–{steal[-1]:.1f} % of the app host's "
            f"CPU time by fork, median {statistics.median(steal):.1f} %.\n")


def speed_line(run):
    """The box's speed the forks' windows saw (speed-probe.py; none recorded before 2026-11-27: no line),
    how much of the windows' CPU it explains, and how many variants' CPU is within SPREAD_PCT as
    measured and at the run's median speed."""
    model = speed.fit(raw_variants(run))
    rows = variants(run, model)
    forks = [f for _, fs in rows for f in fs]
    compute = sorted(f["speed_ns"] for f in forks if f.get("speed_ns"))
    memory = sorted(f["memory_ns"] for f in forks if f.get("memory_ns"))
    if not compute:
        return ""

    def within(key):
        ivs = [interval([f.get(key) for f in fs]) for _, fs in rows]
        return sum(1 for iv in ivs if iv and iv.n > 1 and iv.half_width_pct is not None and iv.half_width_pct <= SPREAD_PCT)
    text = (f"Box speed (bench/tools/speed-probe.py on the app's CPUs during each window): a compute loop "
            f"{compute[0]:.1f}–{compute[-1]:.1f} ns an iteration by fork"
            + (f", a memory walk {memory[0]:.0f}–{memory[-1]:.0f} ns a step" if memory else "") + ". ")
    if model is None:
        return text + f"Too few windows ({speed.MIN_WINDOWS} needed) to fit the CPU to it.\n"
    return (text + f"Over the run's {model.windows} windows, each variant's own level apart, CPU per request "
            f"∝ compute^{model.a:.2f}" + (f" × memory^{model.b:.2f}" if model.b else "")
            + f": the box's speed explains **{100 * model.r2:.0f} %** of the windows' CPU variance. `at median "
            f"speed` is each window's CPU so divided, at {model.compute_ns:.1f} ns"
            + (f" and {model.memory_ns:.0f} ns" if model.b else "")
            + f". CPU within ± {SPREAD_PCT:g} % of its median: {within('cpu_us')} of {len(rows)} variants as "
            f"measured, {within('cpu_us_at_speed')} at median speed.\n")


def spread_lines(run):
    """The variants whose forks differ more than SPREAD_PCT in CPU: each fork's CPU, allocation, GC
    and compiler share, where the cause shows; and more than PORTABLE_PCT in syscalls: each fork's,
    with its futex and epoll waits."""
    out = []
    for label, forks in variants(run):
        iv = interval([f.get("syscalls_per_req") for f in forks])
        if iv and iv.n > 1 and iv.half_width_pct is not None and iv.half_width_pct > PORTABLE_PCT:
            each = "; ".join(f"{f['syscalls_per_req']:.2f} (futex {num(f.get('futex_per_req'))}, "
                             f"epoll {num(f.get('epoll_per_req'))})" for f in forks if f.get("syscalls_per_req") is not None)
            out.append(f"- {label}: syscalls/req ± {iv.half_width_pct:.1f} % of its median; its forks: {each}")
    for label, forks in variants(run):
        iv = interval([f.get("cpu_us") for f in forks])
        if iv and iv.n > 1 and iv.half_width_pct is not None and iv.half_width_pct > SPREAD_PCT:
            each = "; ".join(f"{f['cpu_us']:.1f} µs ({gc_jit(f)}), {f['alloc_kib'] or 0:.2f} KiB, "
                             f"GC {f['gc_per_1000'] or 0:.2f}/1k, JIT ≤ {f['jit_pct_max'] or 0:.1f} %"
                             + (f", steal {f['steal_pct']:.1f} %" if f.get("steal_pct") is not None else "")
                             + (f", box {f['speed_ns']:.1f} ns/it" + (f", {f['memory_ns']:.0f} ns/step" if f.get("memory_ns") else "")
                                + (f" ({f['cpu_us_at_speed']:.1f} µs at median speed)" if f.get("cpu_us_at_speed") else "")
                                if f.get("speed_ns") else "")
                             + (f", code C2 {f['c2_code_kib']:,} KiB, C1 {f['c1_code_kib']:,} KiB"
                                if f.get("c2_code_kib") is not None and f.get("c1_code_kib") is not None else "")
                             + (f", {f['client_conns']:,.0f} client connections" if f.get("client_conns") is not None else "")
                             for f in forks if f.get("cpu_us") is not None)
            out.append(f"- {label}: ± {iv.half_width_pct:.1f} % of its median; its forks: {each}")
    return out


def num(v):
    return "—" if v is None else f"{v:.2f}"


def gc_jit(f):
    """'GC 21.4 µs, JIT 3.0 µs': a fork's collector and compiler threads' CPU per request (perf per thread)."""
    if f.get("gc_cpu_us") is None:
        return "GC, JIT: not split"
    return f"GC {f['gc_cpu_us']:.1f} µs, JIT {f.get('jit_cpu_us') or 0:.1f} µs"


def cell_figures(record, d):
    """A cost cell's part of results.json: its fork's figures (and its variant's label); with PROFILE=1
    its CPU by how its code ran (tiers.py)."""
    cost = read_json(d / "cost.json")
    fork, profile = fork_figures(cost), tiers.of_fork(cost, d)
    if fork is not None and profile is not None:
        fork["profile"] = profile
    return {"label": record.params.get("variant_label") or record.variant, "fork": fork,
            "warmup": (cost or {}).get("warmup", {}).get("text") if cost else None}


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


def repeat_lines(fa, fb, common, model=None):
    """The same command run twice on one machine (issue 39's acceptance): how many CPU medians sit in
    the other run's interval (as measured, and at the box's median speed over both runs where the
    probe ran: speed.py), how many variants' syscalls and allocation agree within 2 %, and whether
    every pair that one run separates by CPU is ordered the same way in the other."""
    def inside_line(key, what):
        ivs = {k: {v: interval([f.get(key) for f in forks[v]]) for v in common} for k, forks in (("a", fa), ("b", fb))}
        inside = [v for v in common if ivs["a"][v] and ivs["b"][v] and ivs["b"][v].holds(ivs["a"][v].median)
                  and ivs["a"][v].holds(ivs["b"][v].median)]
        return ivs, (f"{what}: each run's median inside the other's interval for {len(inside)} of {len(common)} variants"
                     + (f" (not: {', '.join(v for v in common if v not in inside)})" if len(inside) < len(common) else "") + ".")
    iv, line = inside_line("cpu_us", "**Run twice:** CPU")
    lines = [line]
    if model:
        lines.append(inside_line("cpu_us_at_speed", f"CPU at the box's median speed over both runs (fit R² {100 * model.r2:.0f} %)")[1])
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
    for r, cells in (run.get("rounds") or {"1": run["cells"]}).items():
        for c in cells:
            if c.get("scenario") == "cost" and c.get("fork") and c["label"] in labels:
                rounds.setdefault(c.get("round", r), {})[c["label"]] = c["fork"].get("cpu_us")
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
    ivs = {v: (interval(ra[v]), interval(rb[v])) for v in common}
    inside = [v for v, (a, b) in ivs.items() if a and b and a.holds(b.median) and b.holds(a.median)]
    return (f"CPU relative to its own run (each fork over the geometric mean of its round's forks, so a spell of the box "
            f"moves a round together): each run's median inside the other's interval for {len(inside)} of {len(common)} "
            f"variants" + (f" (not: {', '.join(v for v in common if v not in inside)})" if len(inside) < len(common) else "") + ".")


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
    for c in [c for cells in (run.get("rounds") or {"1": run["cells"]}).values() for c in cells]:
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
