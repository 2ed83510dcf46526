"""What limited a cell, named from its measurements (the pool by Little's law, a DB pool or
executor, box CPU, the app's CPU on its threads, wrk's): the sweep's knee, the DB table and the
verdicts all say it the same way."""

BUSY = 0.9             # a CPU counts as saturated at >= 90 % of what it can use (the box: >= 95 %)


def pool_threads(c):
    """The N a cell's pool has: 200 for 200, 1 for v1 (carriers), None for none."""
    t = c.get("threads")
    if isinstance(t, int):
        return t
    return int(t[1:]) if isinstance(t, str) and t[1:].isdigit() else None


def saturated(c, cores=2):
    """What saturated in a cell, from its pool and CPU columns: a list of short texts, empty when
    no recorded resource did. The pool: a thread-per-request app's Little's-law bound below the
    ceiling. The box: >= 95 % of all cores busy (wrk, app and remote-sleep share them). The app:
    its CPU near the N threads that may run its code (when N < cores). wrk: near its -t."""
    found = []
    bound, ceiling = c.get("bound_rps"), c.get("ceiling_rps")
    n = pool_threads(c)
    by = c.get("bound_by", "threads")       # a DB cell's bound may be set by its DB pool or executor instead
    if c.get("db_limit"):                   # BACKEND=postgres: every connection busy and requests waiting (/stats)
        found.append(c["db_limit"][len("saturated: "):])
    if c.get("thread_per_request") and by == "threads" and bound and ceiling and bound < BUSY * ceiling:
        found.append(f"the pool ({n} threads: at most {n} requests in flight, {bound:g} req/s by Little's law)")
    if by == "executor threads" and bound and ceiling and bound < BUSY * ceiling:
        k = c.get("db_executor_threads")
        found.append(f"the executor ({c['db_driver']}: at most {k} queries in flight, {bound:g} req/s by Little's law)")
    box = c.get("cpu_box_pct")
    if box is not None and box >= 95:
        found.append(f"box CPU {box:.0f} %")
    app, cpus = c.get("cpu_app_cores"), c.get("app_cpus")
    if app is not None and n and n < min(cores, cpus or cores) and app >= BUSY * n:
        found.append(f"app CPU {app:.2f} cores for its {n} thread{'s' if n != 1 else ''}")
    elif app is not None and cpus and app >= BUSY * cpus:
        found.append(f"app CPU {app:.2f} cores on its {cpus} CPU{'s' if cpus != 1 else ''} (CPUSETS)")
    wrk = c.get("cpu_wrk_cores")
    if wrk is not None and c.get("wrk_threads") and wrk >= BUSY * c["wrk_threads"]:
        found.append(f"wrk CPU {wrk:.2f} cores for -t{c['wrk_threads']}")
    return found
