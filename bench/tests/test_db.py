"""Unit tests of BACKEND=postgres (issue 16), no servers: the settings (bad values exit 2 with ERROR
and the usage, before anything starts), the plan (a row per app x driver, the fan-out apps left out
with their reason), the Little's-law bound, the DB pool's limit from a fake /stats, /proc parsing
of the cluster's processes, and the report of a small hand-made run.

Run: PYTHONPATH=bench python3 -m unittest discover -s bench/tests -t bench
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from labbench import catalog, db, pg, report
from labbench.plan import plan
from labbench.report.limited import saturated
from labbench.settings import UsageError, parse

HERE = Path(__file__).resolve().parent


def pg_settings(mode="matrix", **env):
    return parse({"BACKEND": "postgres", **{k: str(v) for k, v in env.items()}}, mode, n_cores=2)


class SettingsTest(unittest.TestCase):
    def test_defaults(self):
        s = pg_settings()
        self.assertEqual((s.backend, s.db_url, s.db_pool, s.db_query, s.db_executor_threads, s.db_drivers),
                         ("postgres", "", 100, "sleep", 10, []))
        # wrk's default timeout is DURATION + 20 s = 30 s: a pool wait gives up 1 s + one query before it.
        self.assertEqual(s.db_acquire_timeout_ms, 30000 - 1000 - 1000)
        self.assertEqual(parse({}).backend, "http")

    def test_bad_values_exit_2_with_error_and_usage(self):
        bad = {"BACKEND": "mysql", "DB_POOL": "0", "DB_QUERY": "join", "DB_URL": "postgres://lab@h/db",
               "DB_DRIVER": "odbc", "DB_EXECUTOR_THREADS": "x", "DB_ACQUIRE_TIMEOUT_MS": "30000"}
        for name, value in bad.items():
            with self.subTest(name=name):
                env = {**os.environ, "BACKEND": "postgres", "PYTHONPATH": str(HERE.parent), name: value}
                r = subprocess.run([sys.executable, "-m", "labbench"], env=env, cwd=HERE.parents[1],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertTrue(r.stderr.startswith(f"ERROR: "), r.stderr)
                self.assertIn(name if name != "DB_DRIVER" else "DB driver 'odbc'", r.stderr.splitlines()[0])
                self.assertIn("Usage: ./bench.sh", r.stderr)
                self.assertIn("DB_ACQUIRE_TIMEOUT_MS", r.stderr)      # every new variable is in the usage
                self.assertEqual(r.stdout, "")                        # nothing started, nothing printed

    def test_db_settings_need_postgres_and_fit_it(self):
        with self.assertRaisesRegex(UsageError, "DB_URL set, but BACKEND=http"):
            parse({"DB_URL": "postgresql://lab@127.0.0.1:5432/lab"})
        with self.assertRaisesRegex(UsageError, "no outbound HTTP call"):
            pg_settings(CLIENT="jetty")
        with self.assertRaisesRegex(UsageError, "wrk only"):
            pg_settings(LOADGEN="wrk vegeta")
        with self.assertRaisesRegex(UsageError, "more than 2000"):
            pg_settings(DB_POOL=5000)
        self.assertEqual(pg_settings(DB_URL="postgresql://127.0.0.1:5432/lab").db_url, "postgresql://127.0.0.1:5432/lab")


class PlanTest(unittest.TestCase):
    def test_a_cell_per_app_and_driver(self):
        s = pg_settings(APPS="sync-servlet async-servlet webflux", CONTAINERS="jetty", THREADS=1, WRK_THREADS=10)
        cells, left_out = plan(s)
        self.assertEqual([(c.app, c.db_driver) for c in cells],
                         [("sync-servlet", "jdbc"), ("async-servlet", "r2dbc"), ("async-servlet", "jdbc-executor-trap"),
                          ("webflux", "r2dbc"), ("webflux", "jdbc-elastic")])
        self.assertEqual(cells[2].dir_name, "03-async-servlet-jetty-t1-jdbc-executor-trap-w10-c100")
        self.assertEqual(cells[2].label, "async-servlet jetty threads=1 db=jdbc-executor-trap wrk-t=10 c=100")
        self.assertEqual(left_out, [])
        self.assertNotEqual(cells[1].app_key, cells[2].app_key)     # another driver is another app

    def test_driver_filter_and_fanout_left_out_with_reason(self):
        s = pg_settings(SCENARIO="call fanout", APPS="sync-servlet webflux", CONTAINERS="tomcat", THREADS=1,
                        WRK_THREADS=10, DB_DRIVER="r2dbc jdbc-elastic")
        cells, left_out = plan(s)
        self.assertEqual([(c.app, c.db_driver) for c in cells], [("webflux", "r2dbc"), ("webflux", "jdbc-elastic")])
        self.assertIn("DB_DRIVER=r2dbc jdbc-elastic leaves them no driver: no sync-servlet (has jdbc)", left_out)
        fanout = next(x for x in left_out if "fanout apps have no database backend" in x)
        self.assertIn("fanout-sequential", fanout)
        with self.assertRaisesRegex(UsageError, "no cell to run: the fanout apps have no database backend"):
            from labbench.main import plan_run
            plan_run([], {"BACKEND": "postgres", "SCENARIO": "fanout", "THREADS": "1", "WRK_THREADS": "10"})

    def test_http_plan_has_no_driver(self):
        cells, _ = plan(parse({"APPS": "webflux", "THREADS": "1"}))
        self.assertEqual({c.db_driver for c in cells}, {""})

    def test_sweep_runs_each_variant_per_driver(self):
        s = pg_settings("sweep", SWEEP="100 200")
        ids = [v.id for v in s.variants]
        self.assertIn("async-servlet@jetty:1/jdbc-executor-trap", ids)
        self.assertIn("webflux@netty:1/jdbc-elastic", ids)
        self.assertFalse(any(":reactor-netty" in i or ":jetty/" in i for i in ids))   # no HTTP client variants
        cells, _ = plan(s)
        self.assertEqual(len(cells), len(ids) * 2)
        self.assertEqual({c.db_driver for c in cells if c.variant.endswith("/r2dbc")}, {"r2dbc"})
        with self.assertRaisesRegex(UsageError, "no outbound HTTP client"):
            pg_settings("sweep", SWEEP_VARIANTS="webflux@netty:1:reactor-netty")

    def test_app_flags(self):
        s = pg_settings(DB_POOL=20, DB_QUERY="rows")
        self.assertEqual(db.app_args(s, "postgresql://lab@127.0.0.1:5/lab", "r2dbc"),
                         ["--backend", "postgres", "--db-url", "postgresql://lab@127.0.0.1:5/lab", "--db-driver",
                          "r2dbc", "--db-pool", "20", "--db-acquire-timeout-ms", "29000", "--db-executor-threads",
                          "10", "--db-query", "rows", "--db-sleep-ms", "1000"])
        # SLEEP_MS reaches the app: wrk's /call names no ms (a smoke run at SLEEP_MS=200 slept 1 s)
        self.assertEqual(db.app_args(pg_settings(SLEEP_MS=200), "postgresql://lab@127.0.0.1:5/lab", "r2dbc")[-2:],
                         ["--db-sleep-ms", "200"])
        self.assertEqual(db.max_connections(100), 210)


class BoundAndLimitTest(unittest.TestCase):
    def test_bound_is_the_smallest_cap_over_the_query_time(self):
        # 100 connections, 200 platform threads per request, pool 50: the pool caps it, 50 / 1 s.
        n, by = db.in_flight_bound(100, 200, True, 50, "jdbc", 10)
        self.assertEqual((n, by, db.bound_rps(n, 1000)), (50, "DB pool", 50.0))
        # A thread-per-request app on 1 thread: 1 / 0.5 s.
        self.assertEqual(db.in_flight_bound(100, 1, True, 100, "jdbc", 10), (1, "threads"))
        self.assertEqual(db.bound_rps(1, 500), 2.0)
        # Threads do not cap a non-blocking app; the executor caps the trap, not r2dbc.
        self.assertEqual(db.in_flight_bound(100, 1, False, 100, "jdbc-executor-trap", 10), (10, "executor threads"))
        self.assertEqual(db.in_flight_bound(100, 1, False, 100, "r2dbc", 10), (100, "connections"))
        self.assertEqual(db.in_flight_bound(20, "v1", False, 100, "jdbc-elastic", 10), (10, "executor threads"))
        self.assertIsNone(db.bound_rps(10, None))     # rows without a measured query time

    def test_pool_limit_from_stats(self):
        full = {"driver": "jdbc", "size": 10, "active": 0, "idle": 10, "waiting": 0, "peakActive": 10,
                "peakWaiting": 90, "acquireTimeouts": 3, "errors": 0}
        self.assertEqual(db.pool_limit(full), "saturated: the DB pool (10/10 connections busy, up to 90 requests "
                                              "waiting, 3 acquire timeouts)")
        self.assertIsNone(db.pool_limit(dict(full, peakWaiting=0)))      # full, but nobody waited
        self.assertIsNone(db.pool_limit(dict(full, peakActive=9)))       # waiting without a full pool: no
        self.assertIsNone(db.pool_limit(None))
        c = {"db_limit": db.pool_limit(full), "bound_by": "DB pool", "thread_per_request": True, "threads": 200,
             "bound_rps": 10.0, "ceiling_rps": 100.0}
        self.assertEqual(saturated(c), ["the DB pool (10/10 connections busy, up to 90 requests waiting, "
                                        "3 acquire timeouts)"])       # not the thread pool: it was not the cap
        trap = {"bound_by": "executor threads", "db_driver": "jdbc-executor-trap", "db_executor_threads": 10,
                "bound_rps": 10.0, "ceiling_rps": 99.0}
        self.assertEqual(saturated(trap), ["the executor (jdbc-executor-trap: at most 10 queries in flight, "
                                           "10 req/s by Little's law)"])


class ProcTest(unittest.TestCase):
    def test_this_process_is_read_from_proc(self):
        me = os.getpid()
        ppid, own, children = pg.stat_fields(me)
        self.assertEqual(ppid, os.getppid())
        self.assertGreaterEqual(own, 0)
        self.assertIn(me, pg.cluster_pids(me))
        self.assertGreater(pg.pss_kb([me]), 0)
        self.assertIsNone(pg.stat_fields(2 ** 22 + 7))      # gone: None, not an error


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)


PGBENCH_TXT = """pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: query.sql
number of clients: 10
number of threads: 2
duration: 2 s
number of transactions actually processed: 100
number of failed transactions: 0 (0.000%)
latency average = 201.5 ms
initial connection time = 9.1 ms
tps = 49.6 (without initial connection time)
"""


def fake_run(root):
    """A BACKEND=postgres run of two cells: sync-servlet on 1 thread (jdbc) and webflux (r2dbc) whose
    pool of 10 filled up with requests waiting; pgbench's ceiling 49.6 tps."""
    params = {"db_pool": 10, "db_query": "sleep", "db_acquire_timeout_ms": 20800, "db_executor_threads": 10}
    write(root / "meta.txt", "date=2026-11-23T12:00:00Z\napps=sync-servlet webflux\ncontainers=jetty\nthreads=1\n"
          "wrk_threads=2\nconnections=20\nscenarios=call\nloadgens=wrk\nrepeat=1\nduration_s=2\nsleep_ms=200\n"
          "wrk_timeout_s=22\nbackend=postgres\ndb_pool=10\ndb_query=sleep\ndb_acquire_timeout_ms=20800\n"
          "db_executor_threads=10\ndb_drivers=\npg_server_version=15.18\npg_max_connections=30\npg_fsync=off\n"
          "pg_synchronous_commit=off\npg_shared_buffers=128MB\npg_started_by=the bench\n"
          "pg_url=postgresql://lab@127.0.0.1:5/lab\ncores=2\n")
    cal = root / "calibration" / "pgbench"
    write(cal / "cell.json", {"kind": "calibration", "loadgen": "pgbench", "connections": 10, "duration_s": 2,
                              "sleep_ms": 200, "params": params, "status": "ok",
                              "measured": {"cpu_db_s": 0.2, "peak_db_pss_kb": 40960, "cpu_box_pct": 3.0}})
    write(cal / "pgbench.txt", PGBENCH_TXT)
    for i, (app, driver, tpr, rps, pool) in enumerate([
            ("sync-servlet", "jdbc", True, 4.9, {"size": 10, "peakActive": 1, "peakWaiting": 0, "acquireTimeouts": 0}),
            ("webflux", "r2dbc", False, 48.0, {"size": 10, "peakActive": 10, "peakWaiting": 10,
                                               "acquireTimeouts": 0})], 1):
        d = root / "cells" / f"{i:02d}-{app}-jetty-t1-{driver}-w2-c20"
        write(d / "cell.json", {"index": i, "scenario": "call", "app": app, "container": "jetty", "threads": "1",
                                "db_driver": driver, "thread_per_request": tpr, "wrk_threads": 2, "connections": 20,
                                "duration_s": 2, "sleep_ms": 200, "params": params, "status": "ok",
                                "measured": {"cpu_app_s": 0.5, "cpu_db_s": 0.1, "peak_db_pss_kb": 51200,
                                             "peak_rss_kb": 204800, "cpu_box_pct": 20.0}})
        n = int(rps * 2)
        write(d / "wrk.json", {"duration_us": 2000000, "requests": n, "errors": {"connect": 0, "read": 0, "write": 0,
                                                                                "status": 0, "timeout": 0},
                               "latency_us": {"mean": 1, "p50": 200000, "p90": 1, "p99": 210000, "max": 220000},
                               "steady_rps": rps, "steady_how": "per-connection spans", "slow_2s": 0})
        write(d / "stats.json", {"inFlight": 0, "db": {"driver": driver, **pool}})
    # the apps name the pool's size poolSize (the contract: size): both read
    stats = json.loads((root / "cells" / "02-webflux-jetty-t1-r2dbc-w2-c20" / "stats.json").read_text())
    stats["db"]["poolSize"] = stats["db"].pop("size")
    write(root / "cells" / "02-webflux-jetty-t1-r2dbc-w2-c20" / "stats.json", stats)


class ReportTest(unittest.TestCase):
    def test_db_section_and_figures(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "run"
            fake_run(root)
            report.update(root)
            run = json.loads((root / "results.json").read_text())
            sync, flux = run["cells"]
            self.assertEqual((sync["db_driver"], sync["ceiling_rps"], sync["bound_rps"], sync["bound_by"]),
                             ("jdbc", 49.6, 5.0, "threads"))
            self.assertEqual((sync["pct_of_ceiling"], sync["pct_of_bound"]), (9.9, 98.0))
            self.assertEqual(db.ceiling_rps(97.0, 100, 20), 19.4)      # fewer connections than pgbench's clients
            self.assertEqual(db.ceiling_rps(97.0, 100, 1000), 97.0)
            self.assertEqual((flux["bound_rps"], flux["bound_by"], flux["pct_of_bound"]), (50.0, "DB pool", 96.0))
            self.assertEqual(flux["db_limit"], "saturated: the DB pool (10/10 connections busy, up to 10 requests waiting)")
            self.assertEqual((flux["cpu_db_ms_per_request"], flux["db_pss_mb"]), (1.04, 50.0))
            md = (root / "results.md").read_text()
            self.assertIn("## The database backend: PostgreSQL", md)
            self.assertIn("- pgbench with 10 clients, 2 s: **49.6 tps** (99.2 % of its 50 tps bound)", md)
            self.assertIn("| webflux | jetty | 1 thread | r2dbc | 20 | 48.0 | 96.8 % | 50.0 (DB pool) | 96.0 % | 210 ms "
                          "| 0 | 10 / 10 | 10 | 0 | 5.21 | 1.04 | 200 | 50 | the DB pool (10/10 connections busy, "
                          "up to 10 requests waiting) |", md)
            self.assertIn("**How to read this.**", md)
            for column in ("*% of ceiling*", "*bound*", "*% of bound*", "*non-2xx*", "*DB pool peak / size*",
                           "*peak waiting*", "*acquire timeouts*", "*PG CPU ms/req*", "*PG Pss MB*", "*limited by*"):
                self.assertIn(column, md)
            self.assertIn("| webflux · r2dbc |", md)                  # the verdict: a row per driver
            self.assertIn("| PostgreSQL max_connections | 30 |", md)
            self.assertNotIn("## Results\n", md)
            self.assertIn("⚠ below 95 % of the ceiling (pgbench: the same query straight at PostgreSQL)", md)
            self.assertNotIn("straight at remote-sleep", md)           # no HTTP ceiling or bound in a DB run                     # the HTTP tables' remote-sleep ceiling: not here
            self.assertIn("db_driver,db_query,bound_by", (root / "results.csv").read_text().splitlines()[0])
            line = report.summary(root, root / "cells" / "02-webflux-jetty-t1-r2dbc-w2-c20")
            self.assertIn("96.8 % of ceiling (pgbench)", line)
            self.assertIn("saturated: the DB pool", line)

    def test_rows_query_has_no_bound_and_sweep_has_db_columns(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "run"
            fake_run(root)
            for cell in (root / "cells").glob("*/cell.json"):
                data = json.loads(cell.read_text())
                data["params"]["db_query"] = "rows"
                data["variant"] = data["app"] + "/" + data["db_driver"]
                cell.write_text(json.dumps(data))
            with open(root / "meta.txt", "a") as f:
                f.write("mode=sweep\nsweep=20\n")
            report.update(root)
            run = json.loads((root / "results.json").read_text())
            # rows: a fast query's time is the CPU's load, not the query's: no Little's-law bound, % of pgbench only
            self.assertIsNone(run["cells"][1]["bound_rps"])
            self.assertIsNotNone(run["cells"][1]["pct_of_ceiling"])
            md = (root / "results.md").read_text()
            self.assertIn("| DB pool peak / size | waiting | PG CPU ms/req | PG Pss MB | saturated |", md)
            self.assertIn("| 10 / 10 | 10 | 1.04 | 50 | the DB pool (10/10 connections busy, up to 10 requests waiting) |", md)
            self.assertIn("Every level's DB pool and PostgreSQL columns: the sweep's tables above.", md)


if __name__ == "__main__":
    unittest.main()
