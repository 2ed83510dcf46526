"""pgbench, the ceiling of BACKEND=postgres: the app's query straight at PostgreSQL with as many
clients as the app's DB pool, for DURATION. Its tps is what the database itself serves through
that many connections; every DB cell is reported as a % of it (like wrk straight at remote-sleep
for the HTTP backend). Chosen by BACKEND, never by LOADGEN."""
import re
import shlex

from .. import place, procs
from ..pg import psql_args
from . import LoadGen

PATTERNS = {
    "tps": (r"^tps = ([0-9.]+) \(without initial connection time\)", float),
    "latency_avg_ms": (r"^latency average = ([0-9.]+) ms", float),
    "transactions": (r"^number of transactions actually processed: (\d+)", int),
    "failed": (r"^number of failed transactions: (\d+)", int),
    "clients": (r"^number of clients: (\d+)", int),
}


def script(s):
    """The app's query as a pgbench script: pg_sleep of SLEEP_MS, or 10 rows of lab_rows."""
    if s.db_query == "sleep":
        return f"SELECT pg_sleep({s.sleep_ms}/1000.0);\n"
    return "SELECT id, name, amount FROM lab_rows ORDER BY id LIMIT 10;\n"


def command(s, bin_dir, url, script_path, clients):
    conn = psql_args(bin_dir, url)[1:9]          # -h host -p port -U user -d db
    return [f"{bin_dir}/pgbench", *conn[:6], "-c", str(clients), "-j", str(min(2, clients)),
            "-T", str(s.duration_s), "-n", "-f", str(script_path), conn[7]]


def parse(text):
    """pgbench's summary lines as numbers (a key is missing when pgbench did not print it)."""
    out = {}
    for key, (pattern, kind) in PATTERNS.items():
        m = re.search(pattern, text, re.M)
        if m:
            out[key] = kind(m.group(1))
    return out


class PgBench(LoadGen):
    name = "pgbench"
    selectable = False
    output = "pgbench.txt"

    def calibrate(self, lab, d, clients):
        """Run pgbench with `clients` clients into d (pgbench.txt), with the box's and the cluster's CPU around it."""
        s = lab.s
        (d / "query.sql").write_text(script(s))
        path = (d / "query.sql").resolve()
        h = place.host("loadgen")
        if h.remote:                   # HOSTS: pgbench runs on the first load host, its script in the run's directory there
            path = place.remote_file("loadgen", 0, f"pgbench-{d.name}.sql")
            if not path or not place.put_text("loadgen", 0, path, script(s)):
                return f"could not write pgbench's script on load host {h.name}", {}
        cmd = command(s, lab.db.bindir, lab.db.url, path, clients)
        print(f"  $ {place.shown('loadgen', cmd)}")
        # the box's CPU: the database's host's (the same box here), where a saturated CPU would cap the tps
        box0, window = place.box_ticks("db"), lab.db.window()
        rc = place.run("loadgen", cmd, out=d / self.output, env=lab.db.client_env())     # PGPASSWORD: never argv
        box1 = place.box_ticks("db")
        if h.remote:                   # now (after a Ctrl-C, with the run's directory)
            place.remote_run(h, f"rm -f -- {shlex.quote(path)}")
        busy, total = box1[0] - box0[0], box1[1] - box0[1]
        measured = {"pgbench_command": " ".join(cmd), "pgbench_exit": rc,
                    "cpu_box_pct": round(100 * busy / total if total else 0, 1), **(window.end() if window else {})}
        figures = parse("\n".join(procs.read_lines(d / self.output)))
        if rc != 0 or "tps" not in figures:
            return f"pgbench exited with {rc} (see {self.output})", measured
        return None, measured

    def calibration_figures(self, r, d):
        """A pgbench calibration's figures: its tps as the DB cells' ceiling, its bound (clients /
        query time, for the sleep query), PostgreSQL's CPU per transaction."""
        f = parse("\n".join(procs.read_lines(d / self.output)))
        query = r.params.get("db_query", "sleep")
        clients = f.get("clients") or r.connections
        cpu = r.measured.get("cpu_db_s")
        return {"wrk_threads": None, "connections": clients, "requests": f.get("transactions"),
                "rps": f.get("tps"), "steady_rps": None, "latency_avg_ms": f.get("latency_avg_ms"),
                "failed": f.get("failed"), "db_query": query,
                "bound_rps": round(1000.0 * clients / r.sleep_ms, 2) if query == "sleep" and clients else None,
                "cpu_db_ms_per_request": round(1000.0 * cpu / f["transactions"], 2)
                if cpu is not None and f.get("transactions") else None,
                "db_pss_mb": round(r.measured["peak_db_pss_kb"] / 1024.0, 1) if r.measured.get("peak_db_pss_kb")
                else None}

    def summary(self, rec):
        """The progress line of a pgbench calibration."""
        bound = f" ({100 * rec['rps'] / rec['bound_rps']:.1f} % of the {rec['bound_rps']:g} tps bound)" \
            if rec.get("bound_rps") and rec.get("rps") else ""
        return (f"{rec.get('rps')} tps{bound}, latency avg {rec.get('latency_avg_ms')} ms, "
                f"{rec.get('failed') or 0} failed, PostgreSQL CPU {rec.get('cpu_db_ms_per_request')} ms/tx, "
                f"box CPU {rec.get('cpu_box_pct')} %")


LOADGEN = PgBench()
