"""The sweep's report: each variant's knee (the first level it does not hold) and what saturated
there, its plateau, memory per 1,000 in flight, the verdict, its tables and its charts' names."""
from ...report.fmt import error_total, f_cores, f_int, f_lat, f_mb, f_pct, f_rps, num, skipped, status_text, throughput
from ...report.limited import pool_threads, saturated

KNEE_PCT = 95.0        # a level holds when its steady req/s is >= this % of its ceiling, without errors
# Its charts (bench/tools/charts.py draws them): file name in charts/, title.
CHARTS = [("sweep-throughput", "steady req/s vs connections, with the ceiling"),
          ("sweep-p99", "p99 latency vs connections"),
          ("sweep-rss", "peak RSS vs connections"),
          ("sweep-cpu", "CPU ms per request vs connections")]


def sweep_variants(run):
    """[(variant id, label, its cells sorted by level)] in the run's order."""
    meta = run["meta"]
    labels = meta.get("variant_labels") or {}
    ids = meta.get("sweep_variants") or list(dict.fromkeys(c["variant"] for c in run["cells"] if c.get("variant")))
    out = []
    for v in ids:
        cells = sorted((c for c in run["cells"] if c.get("variant") == v), key=lambda c: c["connections"] or 0)
        out.append((v, labels.get(v, v), cells))
    return out


def not_held(c):
    """Why a sweep cell does not hold its level ([] when it does): FAILED, below KNEE_PCT % of
    its ceiling, or errors (wrk's connect/read/write/status errors and timeouts)."""
    if c["status"] != "ok":
        return [c["status"]]
    why = []
    pct = c.get("pct_of_ceiling")
    if pct is None:
        why.append("no ceiling to compare with")
    elif pct < KNEE_PCT:
        why.append(f"{pct:.1f} % of the ceiling")
    errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
    if errors:
        why.append(f"{errors} error{'s' if errors != 1 else ''}")
    return why


def cpu_text(c):
    backend = (f"PostgreSQL {f_cores(c.get('cpu_db_cores'))}" if c.get("db_driver")
               else f"remote-sleep {f_cores(c.get('cpu_remote_cores'))}")
    return (f"box CPU {c.get('cpu_box_pct')} %, app {f_cores(c.get('cpu_app_cores'))} cores, "
            f"wrk {f_cores(c.get('cpu_wrk_cores'))}, {backend}")


def knee(cells, cores=2):
    """The first level of a variant's cells (sorted by level) that does not hold, as
    {"level", "why", "saturated", "cell"}; None when every level held. SKIPPED cells are no
    level at all."""
    for c in cells:
        if skipped(c):
            continue
        why = not_held(c)
        if why:
            return {"level": c["connections"], "why": why, "saturated": saturated(c, cores), "cell": c}
    return None


def plateau(cells):
    """A thread-per-request variant's req/s at the levels past its pool: (min, max, from level)."""
    past = [c for c in cells if c["status"] == "ok" and c.get("thread_per_request")
            and pool_threads(c) and c["connections"] > pool_threads(c) and throughput(c) is not None]
    if not past:
        return None
    rates = [throughput(c) for c in past]
    return min(rates), max(rates), past[0]["connections"]


def knee_lines(run):
    """One line per sweep variant: its knee with why and what saturated, or how far it held."""
    cores = run["meta"].get("cores") or 2
    cal = {c["connections"]: c for c in run["meta"]["calibration"] if c["loadgen"] == "wrk"}
    lines = []
    for _v, label, cells in sweep_variants(run):
        ran = [c for c in cells if not skipped(c)]
        if not ran:
            lines.append(f"{label}: SKIPPED ({cells[0]['status'][len('SKIPPED: '):] if cells else 'no cell'})")
            continue
        k = knee(cells, cores)
        if k is None:
            text = (f"{label}: no knee up to {ran[-1]['connections']} connections (>= {KNEE_PCT:g} % of the "
                    f"ceiling, no errors, at every level; at {ran[-1]['connections']}: {cpu_text(ran[-1])})")
        else:
            sat = "; ".join(k["saturated"]) or f"no recorded resource ({cpu_text(k['cell'])})"
            text = f"{label}: knee at {k['level']} connections ({', '.join(k['why'])}); saturated: {sat}"
            c = cal.get(k["level"]) or {}
            cal_errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
            if cal_errors:
                text += (f" (the calibration had {cal_errors} errors at this level too: the machine's limit, "
                         f"not only the model's)")
        p = plateau(cells)
        if p:
            text += (f"; past {pool_threads(ran[0])} connections it stays at {p[0]:.1f}–{p[1]:.1f} req/s "
                     f"(from {p[2]} on)")
        lines.append(text)
    return lines


def in_flight(c):
    """Requests a cell held in flight: the app's own peak count (/stats maxInFlight), else the
    Little's-law figure min(connections, pool) for thread-per-request, connections for the rest."""
    if c.get("max_in_flight") is not None:
        return c["max_in_flight"]
    n = pool_threads(c)
    return min(c["connections"], n) if c.get("thread_per_request") and n else c["connections"]


def memory_levels(variants):
    """The two levels the memory table compares every variant at: the lowest, and the highest
    at which every variant that ran has an ok cell (so each row compares the same load), or
    None for the latter when no level above the lowest is common."""
    ran = [cells for _v, _l, cells in variants if any(c["status"] == "ok" for c in cells)]
    if not ran:
        return None, None
    levels = sorted({c["connections"] for cells in ran for c in cells})
    common = [lvl for lvl in levels if all(any(c["connections"] == lvl and c["status"] == "ok" for c in cells)
                                           for cells in ran)]
    return levels[0], (common[-1] if len(common) > 1 else None)


def memory_per_1000(cells, hi_level=None):
    """Peak RSS per 1,000 requests in flight, from two levels of one variant: the lowest and
    `hi_level` (default: the highest that ran ok); the slope between them, so the JVM's fixed
    cost drops out. A dict, or None when fewer than two levels ran; its mb_per_1000 is None
    when the in-flight count did not grow with the level (a pool-capped app)."""
    ok = [c for c in cells if c["status"] == "ok" and c.get("peak_rss_mb") is not None]
    if hi_level is not None:
        ok = [c for c in ok if c["connections"] <= hi_level]
    if len(ok) < 2:
        return None
    lo, hi = ok[0], ok[-1]
    d_in = in_flight(hi) - in_flight(lo)
    capped = hi.get("thread_per_request") and pool_threads(hi) and hi["connections"] > pool_threads(hi)
    d_mb = hi["peak_rss_mb"] - lo["peak_rss_mb"]
    row = {"lo": lo, "hi": hi, "in_lo": in_flight(lo), "in_hi": in_flight(hi), "mb_per_1000": None,
           # The same per connection: a pool-capped app holds the rest queued (socket, parsed request).
           "mb_per_1000_conns": round(1000.0 * d_mb / (hi["connections"] - lo["connections"]), 1)}
    if d_in > 0 and not capped:
        row["mb_per_1000"] = round(1000.0 * d_mb / d_in, 1)
    return row


def sweep_section(run, chart_names):
    """The sweep's section: what ran, the knee per variant, the charts, memory per 1,000 in flight,
    and every level per variant (each column is explained in docs/reading-results.md, "Sweep tables")."""
    meta = run["meta"]
    levels = meta.get("sweep") or []
    head = ("\n## How far does each model scale? (the sweep)\n\n"
            f"Each variant ran at every level of `SWEEP` ({', '.join(map(str, levels))} connections; wrk "
            f"-t{' -t'.join(map(str, meta.get('wrk_threads') or []))}, {meta.get('duration_s')} s per cell), "
            f"{jvms_text(run)}, with {calibration_text(run)}.\n\n### How to read the sweep\n\n"
            f"The knee is the first level below {KNEE_PCT:g} % of that level's ceiling, or with "
            f"errors; *saturated* names what ran out there, from a measurement (the pool by Little's law, box CPU "
            f"≥ 95 %, app CPU near its N threads, wrk CPU near its -t). {placement_text(run)} Every column: "
            f"docs/reading-results.md, \"Sweep tables\".\n")
    return head + knees_and_charts(run, chart_names) + memory_table(run) + every_level(run)


def placement_text(run):
    """Where the roles ran: true for the run's own HOSTS or CPUSETS, not just the default."""
    meta = run["meta"]
    roles = f"wrk, {backend_of(run)} and the app"
    if meta.get("hosts"):
        return (f"{roles} ran on hosts of their own ({meta['hosts']}; HOSTS, docs/hosts.md): box CPU is the app's "
                f"host's /proc/stat, and hosts that share one machine all read that machine.")
    if meta.get("cpusets"):
        return f"{roles} shared {meta.get('cores') or 2} cores, pinned: {meta['cpusets']} (CPUSETS, docs/traps.md #38)."
    return f"{roles} share {meta.get('cores') or 2} cores (docs/traps.md #13–#15)."


def jvms_text(run):
    """How the run's levels got their JVMs: a fresh one per level (runs before 2026-11-26), or one per
    variant reused upward (cells.App.can_reuse) and warmed up again at each level."""
    if not any(c.get("app_start") == "reused" and c.get("warmup_mode") for c in run["cells"] if c.get("variant")):
        return "on a fresh JVM per level warmed up at that level"
    return ("on one JVM per variant, reused from each level to the next (a new one where the pool is the level, "
            "`conns`) and warmed up again at each level; its peak RSS and OS threads sampled in each level's own window")


def backend_of(run):
    return "PostgreSQL" if any(c.get("db_driver") for c in run["cells"]) else "remote-sleep"


def calibration_text(run):
    if any(c.get("db_driver") for c in run["cells"]):     # BACKEND=postgres (report/db.py)
        return ("pgbench's tps as the ceiling (the same query straight at PostgreSQL with min(connections, DB pool) "
                "clients, at every level)")
    return "a calibration cell (wrk straight at remote-sleep) at every level"


def knees_and_charts(run, chart_names):
    lines = []
    w = lines.append
    w("\n### Knee per variant\n\n")
    for line in knee_lines(run):
        w(f"- {line}\n")

    if chart_names:
        w("\n### Charts\n\n")
        for name, title in chart_names:
            w(f"![{title}](charts/{name}.png)\n\n")
        w("Each chart also as SVG: " + ", ".join(f"[{name}.svg](charts/{name}.svg)" for name, _ in chart_names)
          + ". One line per variant, connections on a log scale; the throughput chart's dashed line is the "
            "ceiling.\n")

    return "".join(lines)


def memory_table(run):
    lines = []
    w = lines.append
    variants = sweep_variants(run)
    w("\n### Memory per 1,000 in-flight requests\n\n")
    _lo_level, hi_level = memory_levels(variants)
    if hi_level is not None:
        w(f"Every row compares the same two levels: the lowest and {hi_level}, the highest at which every "
          f"variant ran.\n\n")
    w("| variant | levels | in flight | peak RSS | MB per 1,000 in flight | MB per 1,000 connections "
      "| peak OS threads |\n|---|---|---|---|---:|---:|---|\n")
    for _v, label, cells in variants:
        m = memory_per_1000(cells, hi_level)
        if m is None:
            status = next((c["status"] for c in cells if c["status"] != "ok"), "fewer than two levels ran")
            w(f"| {label} | — | — | — | — | — | {status} |\n")
            continue
        lo, hi = m["lo"], m["hi"]
        per = (f"{m['mb_per_1000']:.1f}" if m["mb_per_1000"] is not None
               else f"— (in flight capped at {pool_threads(hi)} by its pool)")
        w(f"| {label} | {lo['connections']} → {hi['connections']} | {m['in_lo']} → {m['in_hi']} | "
          f"{lo['peak_rss_mb']:.0f} → {hi['peak_rss_mb']:.0f} MB | {per} | {m['mb_per_1000_conns']:.1f} | "
          f"{f_int(lo.get('peak_os_threads'))} → {f_int(hi.get('peak_os_threads'))} |\n")

    return "".join(lines)


def every_level(run):
    lines = []
    w = lines.append
    meta = run["meta"]
    cores = meta.get("cores") or 2
    variants = sweep_variants(run)
    cal = {c["connections"]: c for c in meta["calibration"] if c["loadgen"] == "wrk"}
    w("\n### Every level, per variant\n")
    cols = ["connections", "ceiling", "steady req/s", "% of ceiling", "p99", "errors", "in flight", "unfinished",
            "app CPU s", "CPU ms/req", "peak RSS MB", "peak thr.", "box CPU", "app", "wrk", "remote", "saturated"]
    with_db = any(c.get("db_driver") for c in run["cells"])
    if with_db:       # BACKEND=postgres: the ceiling is pgbench's; PostgreSQL's side beside the app's, no remote
        cols[cols.index("remote"):cols.index("remote") + 1] = ["DB pool peak / size", "waiting", "PG CPU ms/req",
                                                                "PG Pss MB"]
    for _v, label, cells in variants:
        w(f"\n#### {label}\n\n")
        w("|" + "".join(f" {h} |" for h in cols) + "\n|" + "---:|" * (len(cols) - 1) + "---|\n")
        for c in cells:
            ceiling = cal.get(c["connections"])
            ceiling_text = f_rps(throughput(ceiling)) if ceiling else "—"
            if with_db:
                ceiling_text = f_rps(c.get("ceiling_rps"))
            if c["status"] != "ok":
                w(f"| {c['connections']} | {ceiling_text} | {status_text(c)} |" + " |" * (len(cols) - 3) + "\n")
                continue
            errors = (error_total(c) or 0) + (c.get("timeouts") or 0)
            w(f"| {c['connections']} | {ceiling_text} | {f_rps(throughput(c))} | {f_pct(c.get('pct_of_ceiling'))} | "
              f"{f_lat(c.get('p99_ms'))} | {errors} | {f_int(c.get('max_in_flight'))} | {f_int(c.get('unfinished'))} | "
              f"{f_cores(c.get('cpu_app_s'))} | "
              f"{f_cores(c.get('cpu_ms_per_request'))} | "
              f"{f_mb(c.get('peak_rss_mb'))} | "
              f"{f_int(c.get('peak_os_threads'))} | "
              f"{'—' if c.get('cpu_box_pct') is None else str(c['cpu_box_pct']) + ' %'} | "
              f"{f_cores(c.get('cpu_app_cores'))} | {f_cores(c.get('cpu_wrk_cores'))} | "
              + (db_columns(c) if with_db else f"{f_cores(c.get('cpu_remote_cores'))} | ")
              + f"{'; '.join(saturated(c, cores)) or '—'} |\n")


    return "".join(lines)


def db_columns(c):
    """BACKEND=postgres: the DB pool and PostgreSQL's CPU per request and memory (report/db.py reads them)."""
    return (f"{f_int(c.get('db_peak_active'))} / {f_int(c.get('db_pool_size'))} | {f_int(c.get('db_peak_waiting'))} | "
            f"{f_cores(c.get('cpu_db_ms_per_request'))} | {f_mb(c.get('db_pss_mb'))} | ")


def knee_text(k):
    return "none" if k is None else f"{k['level']:,}"


def verdict(run):
    """Each variant's % of the ceiling per level, and its knee: the sweep's first screen."""
    levels = run["meta"].get("sweep") or sorted({c["connections"] for c in run["cells"]})
    cores = run["meta"].get("cores") or 2
    out = ["## Verdict: steady req/s as % of each level's ceiling (⚠ does not hold: below "
           f"{KNEE_PCT:g} %, errors or FAILED)\n\n",
           "| variant |" + "".join(f" {lvl:,} |" for lvl in levels) + " knee |\n",
           "|---|" + "---:|" * len(levels) + "---|\n"]
    for _v, label, cells in sweep_variants(run):
        by_level = {c["connections"]: c for c in cells}
        texts = []
        for lvl in levels:
            c = by_level.get(lvl)
            if c is None:
                texts.append("")
            elif c["status"] != "ok":
                texts.append("SKIPPED" if skipped(c) else "FAILED")
            else:
                texts.append(f_pct(c.get("pct_of_ceiling")) + (" ⚠" if not_held(c) else ""))
        k = knee(cells, cores)
        out.append(f"| {label} |" + "".join(f" {x} |" for x in texts)
                   + f" {knee_text(k)} |\n")
    out.append("\nWhy each knee, and what saturated there: *Knee per variant* below.\n")
    return "".join(out)
