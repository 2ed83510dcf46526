"""BACKEND=postgres (issue 16): PostgreSQL instead of remote-sleep as the slow backend. Its settings
(checked like every other: ERROR + usage, exit 2), the app flags of a DB cell, the plan's drivers,
the Little's-law bound of a DB cell and what limited it. The cluster itself: pg.py; its ceiling
(pgbench): loadgens/pgbench.py; its report section: report/db.py.

Each app runs once per database driver it has (catalog.tsv's db column), so a model is compared
with the driver that suits it and with the traps (a blocking JDBC call behind a small executor).
"""
import re

from . import catalog
from .checks import UsageError, count, known
from .knobs import setting

BACKENDS = ("http", "postgres")
QUERIES = ("sleep", "rows")
SETTINGS = (
    setting("BACKEND", "http", "the apps' slow backend: `http` (`remote-sleep`) or `postgres` (a throwaway PostgreSQL "
            "the bench starts, [docs/database.md](database.md))", "quiet"),
    setting("DB_URL", "", "`BACKEND=postgres`: `postgresql://[user@]host:port/db` of a server to use instead; the bench "
            "then starts none"),
    # the write-up's "every pool at 100"; pgbench -c too
    setting("DB_POOL", "100", "`BACKEND=postgres`: every app's DB pool (HikariCP or r2dbc-pool), filled before a cell",
            "value"),
    setting("DB_QUERY", "sleep", "`sleep` (`pg_sleep(SLEEP_MS)`: the pool is the cap) or `rows` (10 rows as JSON: CPU "
            "decides)", "value"),
    setting("DB_ACQUIRE_TIMEOUT_MS", "", "how long a request waits for a pooled connection, then 503; empty = "
            "`WRK_TIMEOUT` − `SLEEP_MS` − 1 s", "value"),
    setting("DB_EXECUTOR_THREADS", "10", "the K threads of the two JDBC-on-threads variants (`jdbc-executor-trap`, "
            "`jdbc-elastic`)", "value"),
    setting("DB_DRIVER", "", "only these DB drivers; empty = every driver each app has", "list", meta="db_drivers",
            known=lambda: catalog.DB_DRIVERS),
)
DEFAULTS = {s.name: s.default for s in SETTINGS}
# Drivers whose in-flight queries are capped by DB_EXECUTOR_THREADS, not only by the pool.
EXECUTOR_DRIVERS = ("jdbc-executor-trap", "jdbc-elastic")
URL = re.compile(r"postgresql://(?:([A-Za-z0-9_.-]+)@)?([A-Za-z0-9.-]+):([0-9]{1,5})/([A-Za-z0-9_]+)")
MAX_POOL = 2000     # pg.sh takes max_connections up to 10,000; 2 x 2,000 + margin stays far below
MARGIN = 10         # max_connections beyond the app's pool and pgbench's clients: psql, a stray session


def acquire_timeout_ms(text, wrk_timeout_s, sleep_ms, query):
    """DB_ACQUIRE_TIMEOUT_MS, checked. Default: wrk's timeout less one query and a 1 s margin, so a
    request that waited the longest for a connection and then ran its query still answers (a 503
    when the wait ran out) before wrk gives up on it: every pool wait is then an answer in the
    cell's figures, not a wrk timeout left out of every latency figure (docs/traps.md #2)."""
    query_ms = sleep_ms if query == "sleep" else 0
    limit_ms = wrk_timeout_s * 1000
    if not text:
        return max(1000, limit_ms - query_ms - 1000)
    value = count("DB_ACQUIRE_TIMEOUT_MS", text)
    if value >= limit_ms:
        raise UsageError(f"DB_ACQUIRE_TIMEOUT_MS={value} is not below wrk's --timeout ({wrk_timeout_s} s): a pool "
                         f"wait would end as a wrk timeout, not a 503; lower it or raise WRK_TIMEOUT")
    return value


def parse(v, wrk_timeout_s, sleep_ms):
    """The DB settings from the variables' texts (v: every variable, defaults filled in), checked.
    With BACKEND=http every DB_* must be unset: it would be silently ignored."""
    backend = v["BACKEND"]
    if backend not in BACKENDS:
        raise UsageError(f"BACKEND: '{backend}' is not {' or '.join(BACKENDS)}")
    if backend == "http":
        set_ = [n for n in DEFAULTS if n != "BACKEND" and v[n] and v[n] != DEFAULTS[n]]
        if set_:
            raise UsageError(f"{', '.join(set_)} set, but BACKEND=http: the DB settings need BACKEND=postgres")
        return {"backend": backend}
    url = v["DB_URL"]
    if url and not (URL.fullmatch(url) and 0 < int(URL.fullmatch(url).group(3)) <= 65535):
        raise UsageError(f"DB_URL: '{url}' is not postgresql://[user@]host:port/db")
    pool = count("DB_POOL", v["DB_POOL"])
    if pool > MAX_POOL:
        raise UsageError(f"DB_POOL: {pool} is more than {MAX_POOL} (PostgreSQL runs a process per connection)")
    if v["DB_QUERY"] not in QUERIES:
        raise UsageError(f"DB_QUERY: '{v['DB_QUERY']}' is not {' or '.join(QUERIES)}")
    drivers = known("DB_DRIVER", v["DB_DRIVER"], catalog.DB_DRIVERS, "DB driver") if v["DB_DRIVER"] else []
    return {"backend": backend, "db_url": url, "db_pool": pool, "db_query": v["DB_QUERY"],
            "db_acquire_timeout_ms": acquire_timeout_ms(v["DB_ACQUIRE_TIMEOUT_MS"], wrk_timeout_s, sleep_ms,
                                                        v["DB_QUERY"]),
            "db_executor_threads": count("DB_EXECUTOR_THREADS", v["DB_EXECUTOR_THREADS"]),
            "db_drivers": drivers}


def check_fits(s):
    """What BACKEND=postgres cannot run, said before anything starts: another HTTP client (there is
    no outbound HTTP call), or vegeta (its ceiling is remote-sleep's)."""
    if s.backend != "postgres":
        return
    if s.raw.get("CLIENT") and s.clients != [catalog.DEFAULT_CLIENT]:
        raise UsageError(f"CLIENT={' '.join(s.clients)}: with BACKEND=postgres there is no outbound HTTP call "
                         f"(DB_DRIVER picks the database driver)")
    if s.loadgens != ["wrk"]:
        raise UsageError("LOADGEN: BACKEND=postgres runs wrk only (pgbench is the ceiling of its closed loop)")


def drivers_of(s, app):
    """The drivers an app runs with in this run: [None] for BACKEND=http (one cell, no driver),
    its catalog drivers through the DB_DRIVER filter for postgres ([] when none is left)."""
    if getattr(s, "backend", "http") != "postgres":
        return [None]
    return [d for d in catalog.APPS[app].dbs if not s.db_drivers or d in s.db_drivers]


def left_out_because(s, app, scenario):
    """(why, what) when BACKEND=postgres has no cell for an app in a scenario, else None."""
    if getattr(s, "backend", "http") != "postgres":
        return None
    if not catalog.APPS[app].dbs:
        return (f"the {catalog.APPS[app].family} apps have no database backend (catalog.tsv db: none)", app)
    if scenario != "call":
        return (f"BACKEND=postgres runs the call scenario only (the slow-client scenarios measure the HTTP side)",
                f"{app} in {scenario}")
    if not drivers_of(s, app):
        return (f"DB_DRIVER={' '.join(s.db_drivers)} leaves them no driver",
                f"{app} (has {', '.join(catalog.APPS[app].dbs)})")
    return None


def max_connections(pool):
    """The cluster's max_connections: the app's pool and pgbench's clients (never at once, but an
    app's connections may linger a moment after it is killed) plus a margin."""
    return 2 * pool + MARGIN


def app_args(s, url, driver):
    """The flags of an app that queries PostgreSQL (the app's contract, issue 16)."""
    return ["--backend", "postgres", "--db-url", url, "--db-driver", driver, "--db-pool", str(s.db_pool),
            "--db-acquire-timeout-ms", str(s.db_acquire_timeout_ms),
            "--db-executor-threads", str(s.db_executor_threads), "--db-query", s.db_query,
            # /call names no ms: the query sleeps SLEEP_MS, as remote-sleep's --delay-ms does over HTTP
            "--db-sleep-ms", str(s.sleep_ms)]


def cell_params(s):
    """A DB cell's settings, in its record's params."""
    return {"db_pool": s.db_pool, "db_query": s.db_query, "db_acquire_timeout_ms": s.db_acquire_timeout_ms,
            "db_executor_threads": s.db_executor_threads}


def in_flight_bound(connections, threads, thread_per_request, db_pool, driver, executor_threads):
    """Little's law's numerator for a DB cell: the fewest queries that can be in flight, and what
    caps them. Connections; the platform pool of a thread-per-request app (a thread holds its
    request through the query); the DB pool; the executor of the two executor drivers."""
    caps = [(connections, "connections")]
    if thread_per_request and isinstance(threads, int):
        caps.append((threads, "threads"))
    if db_pool:
        caps.append((db_pool, "DB pool"))
    if driver in EXECUTOR_DRIVERS and executor_threads:
        caps.append((executor_threads, "executor threads"))
    return min(caps, key=lambda c: c[0])


def pgbench_clients(s):
    """pgbench's client counts of a run: min(connections, DB pool) for each load level."""
    return sorted({min(c, s.db_pool) for c in s.connections})


def ceiling_rps(pgbench_tps, pgbench_clients, connections):
    """A DB cell's ceiling: pgbench's tps at min(connections, DB pool) clients (one calibration per
    level). Only a run without that level's pgbench (an older one) scales another level's tps by
    connections / clients: a closed loop of C connections gets at most C queries' worth."""
    if not pgbench_tps:
        return None
    if pgbench_clients and connections and connections < pgbench_clients:
        return round(pgbench_tps * connections / pgbench_clients, 2)
    return pgbench_tps


def bound_rps(n, query_ms):
    """n queries in flight, each query_ms long: at most n / query time per second (None when the
    query's time is unknown)."""
    return round(1000.0 * n / query_ms, 2) if query_ms else None


def pool_size(db):
    """The pool's size from /stats' db object (the apps name it poolSize; the issue's contract size)."""
    return (db or {}).get("poolSize", (db or {}).get("size"))


def pool_limit(db):
    """What the DB pool says of a cell, from /stats' db object: "saturated: the DB pool ..." when
    every connection was busy at once and requests queued for one (peakWaiting: requests that wanted a
    connection beyond the pool's size); else None."""
    if not db:
        return None
    size, peak, waiting = pool_size(db), db.get("peakActive"), db.get("peakWaiting") or 0
    if size and peak is not None and peak >= size and waiting > 0:
        timeouts = db.get("acquireTimeouts") or 0
        return (f"saturated: the DB pool ({peak}/{size} connections busy, up to {waiting} requests waiting"
                + (f", {timeouts} acquire timeouts" if timeouts else "") + ")")
    return None
