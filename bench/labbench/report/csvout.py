"""results.csv: one row per cell, the common columns, then each load generator's and scenario's own
(a dict-valued field such as wrk's errors becomes one column per key: errors_connect, ...)."""
import csv
import io

from .. import loadgens, scenarios

COMMON = [
    "index", "round", "repeats", "scenario", "loadgen", "app", "container", "threads", "client", "pool_mode", "wrk_threads",
    "connections", "duration_s", "sleep_ms",
    "requests", "rps", "steady_rps", "bound_rps", "ceiling_rps", "pct_of_ceiling", "latency_avg_ms", "p50_ms",
    "p90_ms", "p99_ms", "max_ms", "timeouts", "slow_2s", "errors_connect", "errors_read",
    "errors_write", "errors_status", "unfinished", "max_in_flight", "handler_threads",
    "client_threads", "virtual_threads", "carrier_threads", "peak_threads", "cpu_box_pct", "cpu_app_cores",
    "cpu_remote_cores", "cpu_wrk_cores", "cpu_app_s", "cpu_ms_per_request", "peak_rss_mb", "peak_os_threads",
    "variant", "stuck",
]


# BACKEND=postgres runs only (an HTTP run's columns stay as they were).
DB = ["db_driver", "db_query", "bound_by", "pct_of_bound", "db_pool_size", "db_peak_active", "db_peak_waiting",
      "db_acquire_timeouts", "db_errors", "db_limit", "cpu_db_s", "cpu_db_cores", "cpu_db_ms_per_request", "db_pss_mb", "db_processes"]


def columns(with_db=False, mode=None):
    """Every load generator's and scenario's columns; a planner that keeps its own apart (the cost
    card's) only in a run of its own, so that older runs' files keep their columns."""
    own = [f for g in loadgens.ALL for f in g.fields] + [
        col for s in scenarios.ALL if not s.own_csv or s.name == mode for col in getattr(s, "csv_columns", s.fields)]
    return COMMON + (DB if with_db else []) + list(dict.fromkeys(own)) + ["app_start", "status"]


def csv_text(run):
    out = io.StringIO()
    with_db = any(c.get("db_driver") for c in run["cells"])
    writer = csv.DictWriter(out, fieldnames=columns(with_db, run["meta"].get("mode")), extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    for c in run["cells"]:
        row = dict(c)
        for field, value in c.items():
            if isinstance(value, dict) and field != "range":
                for k, v in value.items():
                    row[f"{field}_{k}"] = v
        writer.writerow(row)
    return out.getvalue()
