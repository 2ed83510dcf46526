"""BACKEND=postgres in the reports: a DB cell's figures (its pgbench ceiling, its Little's-law bound,
its DB pool from /stats, PostgreSQL's CPU and memory), the environment rows, the progress-line part
and results.md's section. HTTP runs have none of these keys, so their reports do not change."""
from .. import db
from .limited import saturated
from .fmt import f_cores, f_int, f_lat, f_mb, f_pct, f_rps, read_json, status_text, threads_label, throughput

INT_META = ("db_pool", "db_acquire_timeout_ms", "db_executor_threads")
META_ROWS = (("PostgreSQL", "pg_server_version"), ("started by", "pg_started_by"), ("URL", "pg_url"),
             ("max_connections", "pg_max_connections"), ("fsync / synchronous_commit", "pg_fsync"),
             ("shared_buffers", "pg_shared_buffers"))


def meta(m):
    """meta.txt's DB values typed in place."""
    for key in INT_META:
        if key in m:
            m[key] = int(m[key]) if str(m[key]).isdigit() else None


def environment_rows(m):
    if m.get("backend") != "postgres":
        return []
    rows = [("backend", f"PostgreSQL, query `{m.get('db_query')}`: DB pool {m.get('db_pool')} per app, acquire "
                        f"timeout {m.get('db_acquire_timeout_ms')} ms, executor threads {m.get('db_executor_threads')}, "
                        f"drivers {m.get('db_drivers') or 'all'}")]
    for label, key in META_ROWS:
        value = m.get(key, "?")
        if key == "pg_fsync":
            value = f"{value} / {m.get('pg_synchronous_commit', '?')} (throwaway data: a flush must not be measured)"
        rows.append((f"PostgreSQL {label}" if label != "PostgreSQL" else "PostgreSQL version", value))
    return rows


def query_ms(r, ceiling):
    """One query's time, for the bound: the pg_sleep of DB_QUERY=sleep. None for rows: a fast query's
    time is set by the load on the box's CPU (pgbench's own latency went from 0.17 ms at 4 clients to
    7.9 ms at 100 here), so a Little's-law bound from any one of them is not a bound; its cells are
    read against pgbench's ceiling at the same clients."""
    if r.params.get("db_query", "sleep") == "sleep":
        return r.sleep_ms
    return None


def pgbench_for(ceilings, rnd, connections, pool):
    """The pgbench calibration of a DB cell: same round (else round 1), min(connections, pool)
    clients; else the one nearest above (db.ceiling_rps then scales it down), else any."""
    runs = {k[2]: c for k, c in ceilings.items() if len(k) == 3 and k[1] == "pgbench" and k[0] == rnd} or \
        {k[2]: c for k, c in ceilings.items() if len(k) == 3 and k[1] == "pgbench" and k[0] == 1}
    if not runs:
        return None
    want = min(connections or 0, pool or connections or 0)
    above = [n for n in runs if n >= want]
    return runs[want] if want in runs else runs[min(above)] if above else runs[max(runs)]


def cell_figures(rec, r, d, ceilings):
    """A DB cell's own figures, into rec: its ceiling (pgbench's tps of the same round), its bound
    and what sets it, its DB pool as /stats saw it, PostgreSQL's CPU and memory."""
    ceiling = pgbench_for(ceilings, rec["round"], r.connections, r.params.get("db_pool"))
    n, by = db.in_flight_bound(r.connections, rec["threads"], r.thread_per_request, r.params.get("db_pool"),
                               r.db_driver, r.params.get("db_executor_threads"))
    rec["bound_rps"], rec["bound_by"] = db.bound_rps(n, query_ms(r, ceiling)), by
    rec["ceiling_rps"] = db.ceiling_rps(ceiling.get("rps"), ceiling.get("connections"), r.connections) if ceiling \
        else None
    got = throughput(rec)
    rec["pct_of_ceiling"] = round(100.0 * got / rec["ceiling_rps"], 1) if got is not None and rec["ceiling_rps"] else None
    rec["pct_of_bound"] = round(100.0 * got / rec["bound_rps"], 1) if got is not None and rec["bound_rps"] else None
    pool = (read_json(d / "stats.json") or {}).get("db") or {}
    cpu, requests = r.measured.get("cpu_db_s"), rec.get("requests")
    pss = r.measured.get("peak_db_pss_kb")
    rec.update({
        "db_driver": r.db_driver, "db_query": r.params.get("db_query"),
        "db_pool_size": db.pool_size(pool) or r.params.get("db_pool"), "db_peak_active": pool.get("peakActive"),
        "db_peak_waiting": pool.get("peakWaiting"), "db_acquire_timeouts": pool.get("acquireTimeouts"),
        "db_errors": pool.get("errors"), "db_limit": db.pool_limit(pool),
        "db_executor_threads": r.params.get("db_executor_threads"),
        "cpu_db_s": cpu, "cpu_db_cores": round(cpu / r.duration_s, 2) if cpu is not None and r.duration_s else None,
        "cpu_db_ms_per_request": round(1000.0 * cpu / requests, 2) if cpu is not None and requests
        else None,
        "db_pss_mb": round(pss / 1024.0, 1) if pss else None, "db_processes": r.measured.get("db_processes"),
    })


def summary(rec):
    """A DB cell's part of its progress line."""
    parts = [f"{f_pct(rec.get('pct_of_bound'))} of its {f_rps(rec.get('bound_rps'))} req/s bound ({rec.get('bound_by')})"] \
        if rec.get("bound_rps") else []          # DB_QUERY=rows has none
    parts += [f"DB pool peak {f_int(rec.get('db_peak_active'))}/{f_int(rec.get('db_pool_size'))}, "
             f"waiting {f_int(rec.get('db_peak_waiting'))}, {f_int(rec.get('db_acquire_timeouts'))} acquire timeouts",
             f"PostgreSQL {f_cores(rec.get('cpu_db_ms_per_request'))} CPU ms/req, {f_mb(rec.get('db_pss_mb'))} MB Pss"]
    if rec.get("db_limit"):
        parts.append(rec["db_limit"])
    return ", ".join(parts)


def pgbench_lines(calibration):
    out = []
    for c in calibration:
        if c["loadgen"] != "pgbench":
            continue
        rnd = f" (round {c['round']})" if c.get("repeats", 1) == 1 and c.get("round", 1) > 1 else ""
        out.append(f"- pgbench{rnd} with {c.get('connections')} clients, {c.get('duration_s')} s: "
                   f"**{f_rps(c.get('rps'))} tps**"
                   + (f" ({f_pct(100 * c['rps'] / c['bound_rps'])} of its {c['bound_rps']:g} tps bound)"
                      if c.get("rps") and c.get("bound_rps") else "")
                   + f", latency avg {f_lat(c.get('latency_avg_ms'))}, {f_int(c.get('failed'))} failed, PostgreSQL "
                   f"{f_cores(c.get('cpu_db_ms_per_request'))} CPU ms/tx, {f_mb(c.get('db_pss_mb'))} MB Pss, box CPU "
                   f"{c.get('cpu_box_pct')} % ({status_text(c)})\n")
    return "".join(out)


COLUMNS = ["app", "container", "threads", "driver", "wrk -c", "steady req/s", "% of ceiling", "bound", "% of bound",
           "p99", "non-2xx", "DB pool peak / size", "peak waiting", "acquire timeouts", "app CPU ms/req",
           "PG CPU ms/req", "app RSS MB", "PG Pss MB", "limited by"]

HOW_TO_READ = """
**How to read this.** *% of ceiling*: the cell's steady req/s against pgbench's tps (the same query
straight at PostgreSQL with min(wrk -c, DB pool) clients, measured at each load level: what the database
serves through as many connections as the cell can keep busy). *bound*: Little's law, min(connections, platform
threads of a thread-per-request app, DB pool, executor threads of jdbc-executor-trap / jdbc-elastic) / the
query's time, the smallest named in brackets (none for DB_QUERY=rows: a fast query's time is set by the load on the
CPU, so read its % of ceiling);
*% of bound*: how much of it the model delivered (a model at ~100 % of a bound below the ceiling is limited by
that resource, not broken). *non-2xx*: wrk's status errors: 503 when a request waited longer than
DB_ACQUIRE_TIMEOUT_MS for a pool connection, 502 when the database failed. *DB pool peak / size*: the most
connections busy at once (the app's /stats, over the measured window) against the pool's size; *peak waiting*:
the most requests that wanted a connection while all of the pool's were in use (the app counts requests in
the pool's acquire plus connections in use, minus the pool's size: a queue for the pool); *acquire timeouts*: the waits that ran out (each one a 503).
*app CPU ms/req* and *PG CPU ms/req*: CPU time per answered request of the app's JVM and of every PostgreSQL
process of the cluster (utime + stime from /proc, the postmaster's exited children included); *app RSS MB*: the
app's peak resident memory; *PG Pss MB*: the cluster's peak proportional set size, shared memory divided among
the processes that map it (summing N backends' RSS would count shared_buffers N times). *limited by*: what ran
out, from measurements: "the DB pool" when every connection was busy and requests waited for one, else the pool
by Little's law, box CPU, app CPU or wrk (the sweep's wording, report/limited.py). PG columns are "—" for a
DB_URL server: its processes are not the bench's to read.
"""


def row(c, cores):
    name = [c["app"], c["container"], threads_label(c["threads"]), c.get("db_driver"), str(c.get("connections"))]
    if c["status"] != "ok":
        return name + [status_text(c)] + [""] * (len(COLUMNS) - 6)
    errs = (c.get("errors") or {}).get("status")
    return name + [
        f_rps(throughput(c)), f_pct(c.get("pct_of_ceiling")),
        f"{f_rps(c.get('bound_rps'))} ({c.get('bound_by')})", f_pct(c.get("pct_of_bound")), f_lat(c.get("p99_ms")),
        f_int(errs), f"{f_int(c.get('db_peak_active'))} / {f_int(c.get('db_pool_size'))}",
        f_int(c.get("db_peak_waiting")), f_int(c.get("db_acquire_timeouts")), f_cores(c.get("cpu_ms_per_request")),
        f_cores(c.get("cpu_db_ms_per_request")), f_mb(c.get("peak_rss_mb")), f_mb(c.get("db_pss_mb")),
        "; ".join(saturated(c, cores)) or "—"]


def section(run):
    """results.md's DB section: the server and its pgbench ceiling, a row per DB cell, how to read it."""
    cells = [c for c in run["cells"] if c.get("db_driver")]
    meta = run["meta"]
    if not cells:
        return ""
    lines = ["\n## The database backend: PostgreSQL\n\n",
             f"Every request runs one query (`{meta.get('db_query')}`: "
             + ("`SELECT pg_sleep(SLEEP_MS/1000)`" if meta.get("db_query") == "sleep" else "10 rows of `lab_rows`")
             + f") through the app's DB pool of {meta.get('db_pool')} connections; each app ran once per "
               f"database driver it has. PostgreSQL {meta.get('pg_server_version', '?')}, started by "
               f"{meta.get('pg_started_by', '?')}, max_connections {meta.get('pg_max_connections', '?')}. "
               "The ceiling:\n\n", pgbench_lines(meta.get("calibration") or []), "\n",
             "|" + "".join(f" {h} |" for h in COLUMNS) + "\n|" + "---|" * 4 + "---:|" * (len(COLUMNS) - 5) + "---|\n"]
    if meta.get("mode") == "sweep":      # its every-level tables have the DB columns, a row per level
        lines[-1] = "Every level's DB pool and PostgreSQL columns: the sweep's tables above.\n"
        lines.append(HOW_TO_READ)
        return "".join(lines)
    cores = meta.get("cores") or 2
    for c in sorted(cells, key=lambda c: c["index"] or 0):
        lines.append("|" + "".join(f" {v} |" for v in row(c, cores)) + "\n")
    lines.append(HOW_TO_READ)
    return "".join(lines)
