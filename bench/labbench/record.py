"""One typed record per cell: what ran and how it went, written as cell.json in the cell's directory.

The runner fills it as the cell goes (configuration first, status last) and saves it; the report,
compare and the charts read it back, together with the raw files beside it (wrk.json, vegeta.json,
stats.json, slow.json, probe.json), which stay as the tools wrote them. Runs from before this
record (cell.txt, key=value lines) still load: from_kv() reads them.
"""
import json
from dataclasses import asdict, dataclass, field, fields
from typing import Optional

SCHEMA_VERSION = 1


@dataclass
class CellRecord:
    kind: str = "cell"                   # "cell", or "calibration" (the same load straight at the remote)
    index: Optional[int] = None
    round: int = 1
    scenario: str = ""
    loadgen: str = "wrk"
    app: Optional[str] = None
    container: Optional[str] = None
    threads: Optional[str] = None        # "1", "200", "v1": as --threads takes it
    client: str = "jdk"                  # the app's outbound HTTP client (--client)
    db_driver: Optional[str] = None      # BACKEND=postgres: the app's database driver (--db-driver)
    pool_mode: str = "platform"          # platform, virtual, event-loop
    thread_per_request: bool = False
    wrk_threads: Optional[int] = None
    connections: Optional[int] = None
    rate: Optional[int] = None           # vegeta's req/s
    duration_s: Optional[int] = None
    sleep_ms: Optional[int] = None
    variant: Optional[str] = None        # the sweep's variant id
    app_cpus: Optional[int] = None       # CPUSETS: how many CPUs the app was pinned to (None: not pinned)
    params: dict = field(default_factory=dict)     # the scenario's own settings for this cell
    app_start: Optional[str] = None      # fresh / reused
    stop_s: Optional[float] = None       # seconds into the cell: old app stopped, new one answering, load started
    start_s: Optional[float] = None
    prep_s: Optional[float] = None
    app_log: Optional[str] = None
    lab_line: Optional[str] = None       # the app's `lab: ...` line: its effective limits
    warmup: dict = field(default_factory=dict)     # a fresh app's warm-up: WARMUP=auto's windows and outcome (loadgens/wrk.py)
    rest: dict = field(default_factory=dict)       # the app's CPU at rest after its warm-up (its fresh cell read it; reused cells carry it)
    measured: dict = field(default_factory=dict)   # what the load generator and samplers recorded (CPU, peaks, command)
    series: list = field(default_factory=list)     # per-second samples, for scenarios with a timeline
    cell_wall_s: Optional[float] = None
    status: str = "running"              # ok, FAILED: why, SKIPPED: why
    schema_version: int = SCHEMA_VERSION

    def save(self, path):
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=1) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, cell_dir):
        """The record of a cell directory: cell.json, else a legacy cell.txt; None when neither."""
        path = cell_dir / "cell.json"
        if path.exists():
            data = json.loads(path.read_text())
            known = {f.name for f in fields(cls)}
            return cls(**{k: v for k, v in data.items() if k in known})
        legacy = cell_dir / "cell.txt"
        return cls.from_kv(read_kv(legacy)) if legacy.exists() else None

    @classmethod
    def from_kv(cls, kv):
        """A cell.txt of a run from before cell.json (key=value; a later line wins)."""
        def num(key, kind=int):
            try:
                return kind(kv[key])
            except (KeyError, ValueError):
                return None
        rec = cls(kind=kv.get("kind", "cell"), index=num("index"), round=num("round") or 1,
                  scenario=kv.get("scenario", "call"), loadgen=kv.get("loadgen", "wrk"), app=kv.get("app"),
                  container=kv.get("container"), threads=kv.get("threads"),
                  pool_mode=kv.get("pool_mode", "platform"), thread_per_request=kv.get("thread_per_request") == "1",
                  wrk_threads=num("wrk_threads"), connections=num("connections"), rate=num("rate"),
                  duration_s=num("duration_s"), sleep_ms=num("sleep_ms"), variant=kv.get("variant") or None,
                  app_start=kv.get("app_start"), stop_s=num("stop_s", float), start_s=num("start_s", float),
                  prep_s=num("prep_s", float), app_log=kv.get("app_log"), lab_line=kv.get("lab_line") or None,
                  cell_wall_s=num("cell_wall_s", float), status=kv.get("status", "running"))
        for key in ("slow_clients", "slow_bytes", "slow_rate", "fanout_n", "fanout_ms"):
            if num(key) is not None:
                rec.params[key] = num(key)
        if kv.get("path"):
            rec.params["path"] = kv["path"]
        for key in ("cpu_box_pct", "cpu_app_s", "cpu_remote_s", "cpu_wrk_s"):
            if num(key, float) is not None:
                rec.measured[key] = num(key, float)
        for key in ("peak_rss_kb", "peak_os_threads", "resource_samples", "wrk_exit", "vegeta_exit",
                    "side_load_exit"):
            if num(key) is not None:
                rec.measured[key] = num(key)
        for key in ("wrk_command", "vegeta_command"):
            if kv.get(key):
                rec.measured[key] = kv[key]
        return rec


def read_kv(path):
    """key=value lines; a later line wins (the status was appended last)."""
    kv = {}
    if path.exists():
        for line in path.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                kv[key.strip()] = value
    return kv
