"""degrade's live part, while a cell runs: remote-sleep's fault schedule posted (POST /fault) and its
record read back (GET /fault), the app sampled every 0.5 s on a thread of ours (Sampler) while
vegeta runs, and the per-second timeline written from vegeta's results (timeline.json)."""
import json
import re
import subprocess
import threading
import time
import urllib.parse

from ... import procs, web
from ...loadgens import vegeta
from .model import hold_ms
from .options import fault_delay_ms
from .timeline import fault_window, per_second

SAMPLE_S = 0.5                # the app's /stats and /proc/PID/status, every 0.5 s while vegeta runs
REBUILD = "remote-sleep has no /fault: rebuild it (./mvnw -o -q -pl remote-sleep package)"
CLIENT_TIMEOUT = re.compile(r"\b(?:requestTimeout|responseTimeout|statementTimeout)=([0-9]+)ms")


def client_timeout_ms(lab_line):
    """The app's client deadline, as its `lab:` line prints it (--client-timeout-ms; 10 s by default)."""
    m = CLIENT_TIMEOUT.search(lab_line or "")
    return int(m.group(1)) if m else None


class Sampler:
    """The app every 0.5 s on a thread of ours while vegeta runs: /stats (inFlight, queued,
    liveThreads, heapUsedBytes, admission) and /proc/PID/status (RSS, OS threads), a JSON line
    each into samples.jsonl. A peak needs the series: a backlog drains and the GC gives memory back."""

    def __init__(self, stats_url, pid, out, interval_s=SAMPLE_S):
        self.stats_url, self.pid, self.out, self.interval_s = stats_url, pid, out, interval_s
        self.peak_rss_kb = self.peak_threads = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="degrade-sampler", daemon=True)

    def sample(self):
        row = {"t": round(time.time(), 3)}
        try:
            status, body = web.http(self.stats_url, timeout=1.0)
            stats = json.loads(body) if status < 300 else {}
        except (OSError, ValueError):
            stats = {}                       # a busy admin port: a gap in the series, not a failure
        for key in ("inFlight", "queued", "liveThreads", "heapUsedBytes", "admission"):
            row[key] = stats.get(key)
        try:
            with open(f"/proc/{self.pid}/status") as f:
                row["rssKb"], row["osThreads"] = procs.status_fields(f.read())
        except OSError:
            row["rssKb"] = row["osThreads"] = None
        if row["rssKb"] is not None:
            self.peak_rss_kb = max(row["rssKb"], self.peak_rss_kb or 0)
        if row["osThreads"] is not None:
            self.peak_threads = max(row["osThreads"], self.peak_threads or 0)
        return row

    def _run(self):
        due = time.monotonic()
        with open(self.out, "w") as f:
            while True:
                f.write(json.dumps(self.sample()) + "\n")
                f.flush()
                due += self.interval_s
                if self._stop.wait(max(0.0, due - time.monotonic())):
                    return

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()


def fault_call(url, method):
    """remote-sleep's /fault: (status, JSON or None); raises OSError when it does not answer."""
    status, body = web.http(url, method=method)
    try:
        return status, json.loads(body) if body else None
    except ValueError:
        return status, None


def measure(lab, cell, d, url, app):
    """One degrade cell: the remote healthy, its schedule posted, the sampler and vegeta for the
    whole timeline, the remote's record of what it did (fault.json), healthy again; then the
    per-second timeline (timeline.json). (None or why it failed, measured)."""
    s = lab.s
    p = cell.scene.params(s)
    fault_url = lab.url(s.remote_port, "/fault")
    reason, schedule, posted_ms = post_schedule(fault_url, p)
    if reason is not None:
        return reason, {}
    timeout_ms = client_timeout_ms(app.lab_line())
    # vegeta's workers are sized for what one request holds (vegeta.limits): during the fault, the
    # fault's hold, so that vegeta itself never caps the rate it offers.
    hold = hold_ms(p["fault"], s.sleep_ms, timeout_ms) or fault_delay_ms(p["fault"]) or s.sleep_ms
    print(f"  remote-sleep: {schedule} (then ok); the app's client timeout: "
          f"{'unknown (no lab: line)' if timeout_ms is None else f'{timeout_ms} ms'}")
    sampler = Sampler(app.admin + "/stats", app.proc.pid, d / "samples.jsonl").start()
    ticks0 = procs.proc_ticks(app.proc)
    try:
        reason, measured = vegeta.measure(lab.m.vegeta, d, url, s.rate, p["timeline_ms"] / 1000.0,
                                          s.wrk_timeout_s, hold, stats_url=app.admin + "/stats")
    finally:                  # also on Ctrl-C: the sampler stopped, the remote healthy for the next cell
        sampler.stop()
        ticks1 = procs.proc_ticks(app.proc)
        record = end_schedule(fault_url, d)
    measured.update(cpu_app_s=round((ticks1 - ticks0) / procs.CLK_TCK, 2), peak_rss_kb=sampler.peak_rss_kb,
                    peak_os_threads=sampler.peak_threads, client_timeout_ms=timeout_ms, fault_posted_ms=posted_ms)
    if reason is None:
        reason = write_timeline(lab.m.vegeta, d, p, record, posted_ms)
    return reason, measured


def post_schedule(fault_url, p):
    """The remote healthy (DELETE /fault), then this cell's timeline posted: FAULT_AT of ok, then
    FAULT_FOR of FAULT, after which it is ok again by itself. (None or why it failed, the schedule,
    when it was posted in epoch ms: what fault_window falls back on when the remote kept no record)."""
    schedule = f"{p['fault_at_ms']}ms:ok,{p['fault_for_ms']}ms:{p['fault']}"
    try:
        status, _ = fault_call(fault_url, "DELETE")
        if status == 404:
            return REBUILD, schedule, None
        if status >= 300:
            return f"DELETE /fault at remote-sleep answered {status}", schedule, None
        posted_ms = int(time.time() * 1000)
        status, _ = fault_call(f"{fault_url}?schedule={urllib.parse.quote(schedule, safe='')}", "POST")
        if status >= 300:
            return f"POST /fault?schedule={schedule} answered {status}", schedule, None
    except OSError as e:
        return f"remote-sleep's /fault did not answer: {e}", schedule, None
    return None, schedule, posted_ms


def end_schedule(fault_url, d):
    """The remote's record of what it did (GET /fault, into fault.json: null when it answered an
    error), then healthy again, its hung requests aborted. The record, or None when it did not answer."""
    try:
        status, record = fault_call(fault_url, "GET")
        (d / "fault.json").write_text(json.dumps(record if status < 300 else None) + "\n")
        fault_call(fault_url, "DELETE")
    except OSError:
        return None
    return record


def write_timeline(vegeta_bin, d, p, record, posted_ms):
    """timeline.json from vegeta.bin and the remote's record: None, or why it could not be written."""
    start_ms, end_ms, source = fault_window(record, p["fault"], posted_ms, p["fault_at_ms"], p["fault_for_ms"])
    encoded = subprocess.run([vegeta_bin, "encode", "--to=json", str(d / "vegeta.bin")], capture_output=True, text=True)
    if encoded.returncode != 0:
        return f"vegeta encode failed: {encoded.stderr.strip()[:200]}"
    results = (json.loads(line) for line in encoded.stdout.splitlines() if line.strip())
    t = per_second(results, start_ms / 1000.0, p["deadline_ms"])
    t.update(fault_start_ms=start_ms, fault_end_ms=end_ms, fault_end_s=(end_ms - start_ms) / 1000.0,
             fault_source=source, deadline_ms=p["deadline_ms"],
             end_s=None if t["first_send_s"] is None else t["first_send_s"] + p["timeline_ms"] / 1000.0)
    (d / "timeline.json").write_text(json.dumps(t) + "\n")
    return None
