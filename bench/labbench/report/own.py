"""results.md's section for your own service (APP_JAR): a row per cell, read against its ceiling and its
Little's-law bound like the lab's apps, with what limited it, the pool as its running JVM said (and
where the agent read it), and every figure the agent could not read, with the reason."""
from .fmt import f_int, f_pct, f_rps, status_text, threads_label
from .limited import saturated


def section(run):
    """The section, or "" for a run of the lab's own apps."""
    cells = [c for c in run["cells"] if c.get("app_jar") and c.get("scenario", "call") == "call"]   # the cost card has its own
    if not cells:
        return ""
    jar = cells[0].get("app_jar") or {}
    lines = [f"\n## Your own service: {cells[0]['app']}\n\n",
             f"`{jar.get('jar', '?')}`" + (f", Spring Boot {jar['boot']} ({jar.get('stack') or 'no web'} stack)" if jar.get("boot")
                                           else ", not Spring Boot")
             + f", `GET {jar.get('path', '?')}`. Every figure below was read from outside the app's code: the pool and "
             "the requests by the lab's agent (`-javaagent`, the container's JMX beans), the JVM by its own MXBeans. "
             "**pool (read)** is the pool the running JVM had, not the one asked for; **bound** is Little's law on it "
             "(a thread per request only where the jar is Spring MVC on a platform pool); **limited by** names what "
             "saturated, from the cell's own measurements.\n\n",
             "| threads | load | steady req/s | % of ceiling | bound req/s | % of bound | pool (read) | limited by |\n",
             "|---|---|---:|---:|---:|---:|---|---|\n"]
    for c in cells:
        load = f"wrk -t{c['wrk_threads']} -c{c['connections']}" if c.get("loadgen", "wrk") == "wrk" else c.get("loadgen")
        if c["status"] != "ok":
            lines.append(f"| {threads_label(c['threads'])} | {load} | {status_text(c)} | | | | | |\n")
            continue
        steady, bound = c.get("steady_rps"), c.get("bound_rps")
        of_bound = f_pct(100.0 * steady / bound) if steady is not None and bound else "—"
        lines.append(f"| {threads_label(c['threads'])} | {load} | {f_rps(steady)} | {f_pct(c.get('pct_of_ceiling'))} | "
                     f"{f_rps(bound)} | {of_bound} | {pool_text(c)} | {'; '.join(saturated(c)) or '—'} |\n")
    notes = sorted({f"{k}: unknown ({why})" for c in cells for k, why in (c.get("not_read") or {}).items()})
    hows = sorted({c["bound_how"] for c in cells if c.get("bound_how")})
    lines += [f"\n- bound: {h}" for h in hows]
    lines += [f"\n- {n}" for n in notes]
    return "".join(lines) + ("\n" if hows or notes else "")


def pool_text(c):
    """eg, "8 platform, busy ≤ 8 (Tomcat:type=ThreadPool,…)", "virtual threads, v1", or unknown; a table
    cell, so a `|` of the source's text (a thread-name pattern) is escaped."""
    pool = dict(c.get("pool_read") or {})
    if not pool:
        return "unknown"
    pool["source"] = str(pool.get("source", "?")).replace("|", "\\|")
    if pool.get("executor") == "virtual":
        return f"virtual threads, {c['threads']} ({f_int(c.get('carrier_threads'))} carrier threads seen)"
    if pool.get("executor") == "event-loop":
        loops = pool.get("loops")
        return f"{f_int(loops)} event loop{'s' if loops != 1 else ''} (`{pool['source']}`)"
    peak = f", busy ≤ {f_int(pool.get('peakBusy'))}" if pool.get("peakBusy") is not None else ""
    return f"{f_int(pool.get('max'))} {pool.get('executor', '')}{peak} (`{pool['source']}`)"
