"""SCENARIO=slow-upload and slow-download: K slow clients beside wrk's normal traffic, each holding a
connection while it sends a POST body, or reads a response, at SLOW_RATE bytes/s. A model that
reads or writes bodies without blocking keeps its normal traffic at the call scenario's level; one
that blocks gives each slow client a thread for as long as it takes (docs/traps.md #18).

A side load has start() (None when it runs, else the reason), stop() (waits for its own end,
then stops it; its exit code) and result() (its JSON).
"""
import json
import re
import time

from .. import place, procs
from ..checks import count
from ..knobs import setting
from ..report.fmt import (error_total, f_bytes_per_s, f_int, f_lat, f_pct, f_rps, num, ranged, read_json,
                          throughput)
from ..report.tables import group_tables
from . import DEFAULT, Scenario

# slowclients.py prints this once all its clients are connected, or after 2 s at most.
CONNECTED = re.compile(r"^slowclients: (\d+) connected")


class SlowClients:
    """K clients that upload or download slowly (bench/tools/slowclients.py), each holding a
    connection, for `duration_s`; writes slow.json and slow.log into the cell directory."""

    def __init__(self, mode, url, clients, nbytes, rate, duration_s, cell_dir):
        self.cmd = ["python3", "bench/tools/slowclients.py", "--mode", mode, "--url", url,
                    "--clients", str(clients), "--bytes", str(nbytes), "--rate", str(rate),
                    "--duration", str(duration_s), "--json", str(cell_dir / "slow.json")]
        self.duration_s = duration_s
        self.json = cell_dir / "slow.json"
        self.log = cell_dir / "slow.log"
        self.proc = None
        self.started = 0.0

    def start(self, connect_timeout_s=3.0):
        print(f"  $ {' '.join(self.cmd)} &")
        self.started = time.monotonic()
        self.proc = procs.start(place.command("loadgen", self.cmd), out=self.log)
        deadline = self.started + connect_timeout_s
        while time.monotonic() < deadline:
            if any(CONNECTED.match(line) for line in procs.read_lines(self.log)):
                return None
            if not procs.alive(self.proc):
                lines = procs.read_lines(self.log)
                return f"side load exited at start (exit {self.proc.returncode}): {lines[-1] if lines else ''}"
            time.sleep(0.05)
        return f"side load did not report its clients connected within {connect_timeout_s:g}s (see slow.log)"

    def stop(self, grace_s=5.0, now=False):
        """Wait until its --duration is over plus grace_s (or not at all: `now`), then stop it;
        its exit code (128 + signal when it had to be stopped, shell style)."""
        if self.proc is None:
            return None
        left = 0 if now else self.started + self.duration_s + grace_s - time.monotonic()
        if procs.wait(self.proc, max(left, 0)) is None:
            procs.stop(self.proc)
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc

    def result(self):
        try:
            return json.loads(self.json.read_text())
        except (OSError, ValueError):
            return None


SLOW_ERRORS = ("refused", "reset", "timeout", "http_4xx", "http_5xx", "other")
SLOW_KEYS = ("slow_clients", "slow_bytes", "slow_rate", "side_load_exit", "slow_connected",
             "slow_bytes_moved", "slow_bytes_per_s", "slow_completed", "slow_errors")


def slow_error_total(c):
    errs = c.get("slow_errors")
    return None if errs is None else sum(v for v in errs.values() if isinstance(v, int))


class SlowClientsScenario(Scenario):
    # both slow scenarios read them (two registrations of one class: --help lists them once)
    settings = (
        setting("SLOW_CLIENTS", "10", "slow clients beside wrk in a `slow-*` cell", "value"),
        setting("SLOW_RATE", "1000", "bytes per second each slow client sends or reads", "value"),
        setting("SLOW_BYTES", "", "bytes each slow client sends or reads; empty = the scenario's default (4096 up, "
                "16777216 down)"),
    )
    heading = "SCENARIO=slow-upload, slow-download: slow clients beside wrk"
    fields = SLOW_KEYS
    csv_columns = [k for k in SLOW_KEYS if k != "slow_errors"] + [f"slow_errors_{k}" for k in SLOW_ERRORS]
    side_load_resets_app = True      # its queue and connections may be in any state afterwards

    def __init__(self, name, mode, default_bytes, what, blocking_what):
        self.name, self.mode, self.default_bytes = name, mode, default_bytes
        self.what, self.blocking_what = what, blocking_what

    def bytes_for(self, s):
        return s.slow_bytes or self.default_bytes

    def params(self, s):
        return {"slow_clients": s.slow_clients, "slow_bytes": self.bytes_for(s), "slow_rate": s.slow_rate}

    def side_load(self, s, url, cell_dir):
        # Slow clients hold their connections through the whole wrk run: started first, for
        # DURATION + 2 s, and wrk starts once they are connected.
        return SlowClients(self.mode, url + "/call", s.slow_clients, self.bytes_for(s), s.slow_rate, s.duration_s + 2, cell_dir)

    def figures(self, record, d):
        """Its settings, and what slow.json says the slow clients did."""
        slow = read_json(d / "slow.json") or {}
        errors = slow.get("errors")
        p = record.params
        return {
            "slow_clients": p.get("slow_clients"), "slow_bytes": p.get("slow_bytes"), "slow_rate": p.get("slow_rate"),
            "side_load_exit": record.measured.get("side_load_exit"),
            "slow_connected": slow.get("connected"),
            "slow_bytes_moved": slow.get("bytes_moved"),
            "slow_bytes_per_s": slow.get("bytes_per_s"),
            "slow_completed": slow.get("completed"),
            "slow_errors": errors if isinstance(errors, dict) else None,
        }

    def summary(self, rec):
        return (f"slow clients {f_bytes_per_s(rec.get('slow_bytes_per_s'))}, "
                f"{f_int(rec.get('slow_completed'))} completed, {f_int(slow_error_total(rec))} errors")

    def sections(self, run, ctx):
        slow = [c for c in run["cells"] if c.get("scenario") == self.name and c.get("loadgen", "wrk") == "wrk"]
        if self.name not in (run["meta"].get("scenarios") or []):
            return []
        return [(20, self.section(slow, ctx))]

    def section(self, slow, ctx):
        scenario = self.name
        example = slow[0] if slow else {}
        what = self.what
        text = (f"\n## Slow clients: {scenario}\n\n"
                f"During each cell {f_int(example.get('slow_clients'))} clients {what} "
                f"{f_int(example.get('slow_bytes'))} bytes at {f_int(example.get('slow_rate'))} bytes/s each "
                f"(bench/tools/slowclients.py), started before wrk and still running when it stops; wrk sends the "
                f"same normal `GET /call` traffic as in the tables above. **steady req/s**, **% of ceiling**, "
                f"**p99** and **errors** are wrk's normal traffic (its ceiling is the same calibration, "
                f"without slow clients); **slow B/s**, **slow done** and **slow err.** are what the slow "
                f"clients measured (slow.json: bytes_per_s, completed, errors); **handler** and "
                f"**client** count the app's threads that ran application code and handled the remote's "
                f"answer. Under each table, **stuck on** is `/stats`' busyThreads read the moment wrk stopped: which of those "
                f"threads was blocked, and on what ({self.blocking_what}, "
                f"or the remote call); *none* means no thread was held.\n\n"
                f"How to read it: a model that {'reads bodies' if self.mode == 'upload' else 'writes bodies'} "
                f"without blocking keeps its normal traffic at the `call` scenario's level whatever the slow "
                f"clients do; one that blocks gives each slow client a thread for as long as it takes, so with "
                f"fewer threads than slow clients the normal traffic queues behind them (a few % of the ceiling, "
                f"errors or a p99 of many seconds). With more threads than slow clients (eg, 200 threads for "
                f"{f_int(example.get('slow_clients'))} clients) a model that gives each slow client one of its "
                f"pool threads copes: the pool hides the problem until slow clients outnumber threads. One that "
                f"makes them share a small pool of another kind does not, however large the container's pool: "
                f"`async-servlet` writes its answers from the HTTP client's callback threads (`client-N`, "
                f"`--client-executor-threads`, 2 by default), so two slow readers stop every answer. *stuck on* "
                f"names the threads a model lost, and what they wait for.\n")
        return text + group_tables(
            slow, ctx.apps, ctx.containers, ctx.calibration, ctx.sleep_s,
            ["steady req/s", "% of ceiling", "p99", "errors", "slow B/s", "slow done", "slow err.", "handler", "client"],
            lambda c: [f_rps(throughput(c)), ranged(c, "pct_of_ceiling", f_pct), ranged(c, "p99_ms", f_lat),
                       f_int(error_total(c)), f_bytes_per_s(c.get("slow_bytes_per_s")),
                       f_int(c.get("slow_completed")), f_int(slow_error_total(c)),
                       f_int(c.get("handler_threads")), f_int(c.get("client_threads"))],
            annotate=lambda c: f"stuck on — {c['stuck']}" if c.get("stuck") else None)


class SlowUpload(SlowClientsScenario):
    """Parses the settings both slow scenarios share (SLOW_CLIENTS, SLOW_RATE, SLOW_BYTES), once."""

    def parse(self, v):
        slow_bytes = None
        if v["SLOW_BYTES"]:
            slow_bytes = count("SLOW_BYTES", v["SLOW_BYTES"], " (or empty: the scenario's default)")
        return {"slow_clients": count("SLOW_CLIENTS", v["SLOW_CLIENTS"]), "slow_rate": count("SLOW_RATE", v["SLOW_RATE"]),
                "slow_bytes": slow_bytes}

    def meta_values(self, s):
        return {"slow_clients": s.slow_clients, "slow_rate": s.slow_rate, "slow_bytes": s.raw["SLOW_BYTES"]}

    def meta(self, meta):
        for key in ("slow_clients", "slow_rate", "slow_bytes"):
            if key in meta:
                meta[key] = num(meta[key], int)

    def environment_rows(self, meta):
        if (meta.get("scenarios") or [DEFAULT]) == [DEFAULT]:
            return []
        return [("scenarios", " ".join(meta["scenarios"])),
                ("slow clients (slow-* scenarios)",
                 f"{meta.get('slow_clients')} clients, {meta.get('slow_rate')} bytes/s each, "
                 f"{meta.get('slow_bytes') or 'the default'} bytes each (default: slow-upload {UPLOAD.default_bytes}, "
                 f"slow-download {DOWNLOAD.default_bytes})")]


# upload: 4 KiB trickled into a POST body holds a blocking reader for seconds; download: 16 MiB is
# more than the loopback socket buffers take at once, so a slow reader holds a blocking writer.
UPLOAD = SlowUpload("slow-upload", "upload", 4096, "send a POST body of", "a blocking read of a trickled request body")
DOWNLOAD = SlowClientsScenario("slow-download", "download", 16777216, "read a response of",
                               "a blocking write to a client that reads slowly")
