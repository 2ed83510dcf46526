"""The cost card (issue 39): one row per variant, every figure the mean over its forks (fresh JVMs)
± the half-width of its 95 % interval; what 10,000 req/s and 10,000 in flight would take; a ranking
that calls a difference only where the intervals say so; the forks' own figures where they spread."""
import statistics

from ...report.fmt import read_json
from ...report.interval import interval, ratio
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
    out = {k: _mean([w.get(k) for w in windows]) for k in ("cpu_us", "cpu_us_with_rest", "gc_cpu_us", "jit_cpu_us", "agent_cpu_us",
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
               still_warming=len([w for w in cost.get("still_warming") or () if not counters.unread(w)]),
               unread_again=len([w for w in cost.get("still_warming") or () if counters.unread(w)]),
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


def cells_of(run):
    """Every cell of a run, round by round (a loaded run's `rounds`, else its `cells`)."""
    return [c for cells in (run.get("rounds") or {"1": run["cells"]}).values() for c in cells]


def raw_variants(run):
    out = {}
    for c in cells_of(run):
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
    """How many windows read the compiler above 5 % after a settled warm-up and were measured again; and
    how many were measured again because /stats did not answer at one of their edges."""
    forks = [(label, f) for label, fs in variants(run) for f in fs]
    out = ""
    for key, what in (("still_warming", "read the compiler above 5 % of the app's CPU after the warm-up"),
                      ("unread_again", "missed a /stats reading at an edge (it answered late)")):
        again = [(label, f[key]) for label, f in forks if f.get(key)]
        if again:
            out += (f"{'Windows taken as warm-up' if key == 'still_warming' else 'Windows without a request count'}: "
                    f"{sum(n for _, n in again)} window(s) in {len(again)} of {len(forks)} forks {what} and were "
                    f"measured again ({', '.join(dict.fromkeys(label for label, _ in again))}).\n")
    return out


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


AGENT_PCT = 2.0    # issue 48: the lab's agent may cost at most this % of a request's CPU
AGENT = "+agent"   # a variant's id with the lab's agent beside the app (variants.VARIANT)


def agent_lines(run):
    """What the lab's agent costs (a `+agent` variant beside the same variant without it, one run, their
    forks interleaved): CPU per request with over without, with the ratio's 95 % interval, judged against
    AGENT_PCT: within it, above it, or not resolved where the interval is wider than that."""
    rows = dict(variants(run))
    lines = []
    for label, forks in rows.items():       # a cost cell's label is its variant's id: app@container:threads+agent
        base = rows.get(label.removesuffix(AGENT)) if label.endswith(AGENT) else None
        if base is None:
            continue
        for key, what in (("cpu_us", "CPU"), ("cpu_us_at_speed", "CPU at median speed")):
            a, b = interval([f.get(key) for f in forks]), interval([f.get(key) for f in base])
            r = ratio(a, b)
            if r is None or r.low != r.low:
                continue
            pct, low, high = 100 * (r.value - 1), 100 * (r.low - 1), 100 * (r.high - 1)
            verdict = (f"within {AGENT_PCT:g} %" if high <= AGENT_PCT else f"**more than {AGENT_PCT:g} %**"
                       if low > AGENT_PCT else f"not resolved at ± {AGENT_PCT:g} % by {a.n} and {b.n} forks")
            lines.append(f"- the lab's agent on {label.removesuffix(AGENT)}: {what} {a.text()} against {b.text()} µs "
                         f"without it: {pct:+.1f} % (95 % CI {low:+.1f} to {high:+.1f} %): {verdict}")
        own, cpu = interval([f.get("agent_cpu_us") for f in forks]), interval([f.get("cpu_us") for f in forks])
        if own and cpu and cpu.mean > 0:      # its own threads, counted by perf per thread in every window
            lines.append(f"- its own threads (`lab-agent-*`, perf's task-clock per thread): {own.text('{:.2f}')} µs a "
                         f"request, {100 * own.mean / cpu.mean:.2f} % of the variant's CPU")
    return (["", "The lab's agent (`-javaagent`, its sampler every 100 ms; how `APP_JAR` reads a JVM), priced:"] + lines
            if lines else [])


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
