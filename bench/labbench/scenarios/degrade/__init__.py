"""SCENARIO=degrade (issue 17): when the backend slows down, a fault timeline per model.

vegeta sends RATE requests per second (open loop) through a whole timeline: FAULT_AT healthy,
FAULT_FOR of FAULT at remote-sleep (its /fault API: delay=MS, error=PCT or hang), AFTER healthy.
Each variant (app@container:threads[:client], as in the sweep) runs once per MAX_IN_FLIGHT value
(the apps' --max-in-flight admission limit, 0 = none), each on a fresh JVM. Per second it reads,
from vegeta's results, what was offered, answered and answered in time (goodput), and from the
app every 0.5 s what it holds (in flight, queued, threads, heap, RSS); then how long each model
takes to recover after the fault's end, beside what Little's law predicts from its caps.

A planner of its own cells (like the sweep): it owns its settings, plan, measurement (the fault
schedule, the sampler and vegeta around it), figures, report section and charts.

Reading it: the Degrade class at the end is what the bench calls; its methods hand over to the
sections above, which go from the arithmetic to the run and its report:
  settings        FAULT, FAULT_AT, FAULT_FOR, AFTER, MAX_IN_FLIGHT, DEGRADE_VARIANTS parsed and checked
  Little's law    predict: what a model's caps let it serve during the fault and how long it takes
                  to recover (no cap / a limit that rejects / a cap that queues)
  per second      vegeta's results as one row per second (by send and by completion), the
                  time to recover, the fault's window as the remote recorded it
  one cell        measure: the schedule posted, the Sampler and vegeta, the remote's record
  a cell's figures  figures: its results.json part ("degrade": {...}) from those raw files
  the report      results.md's section and verdict, the charts (bench/degrade_charts.py)
"""
import json
import math
import re
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

from ... import procs
from ...checks import UsageError, split_list
from ...loadgens import vegeta
from ...loadgens.vegeta import epoch_s
from ...report.fmt import f_int, f_lat, f_mb, f_rps, read_json, status_text
from .. import Scenario

NAME = "degrade"
DEFAULT_RATE = 150            # its RATE when RATE is not set: 150 x 1 s = 150 in flight when healthy
# What the settings replace: each is set from DEGRADE_VARIANTS, the timeline or the scenario itself.
NOT_IN_DEGRADE = {"APPS": "DEGRADE_VARIANTS", "CONTAINERS": "DEGRADE_VARIANTS (app@container:threads)",
                  "THREADS": "DEGRADE_VARIANTS", "CLIENT": "DEGRADE_VARIANTS (app@container:threads:client)",
                  "LOADGEN": "it runs vegeta", "DURATION": "FAULT_AT + FAULT_FOR + AFTER is the timeline",
                  "WRK_TIMEOUT": "vegeta's -timeout is the timeline + the fault's delay + 30 s",
                  "REPEAT": "it runs once"}
KINDS = re.compile(r"delay=([0-9]{1,6})|error=([0-9]{1,3})|hang")
SPAN = re.compile(r"([0-9]{1,7})(ms|s|m)?")
ERROR_KINDS = ("503", "502", "504", "other_status", "timeout", "connection")
RECOVERED_WITHIN = 1.5        # a send second is back when its p99 <= 1.5 x the healthy phase's, without errors
STAY_S = 5                    # ... and recovered once it stays back this many send seconds (a GC pause later is not the fault)
SAMPLE_S = 0.5                # the app's /stats and /proc/PID/status, every 0.5 s while vegeta runs
VEGETA_GRACE_S = 30           # vegeta's -timeout beyond the timeline and the fault's delay
REBUILD = "remote-sleep has no /fault: rebuild it (./mvnw -o -q -pl remote-sleep package)"


# ---------------------------------------------------------------- settings

def span_ms(name, text, least_ms=1):
    """FAULT_AT, FAULT_FOR, AFTER, GOODPUT_DEADLINE: Nms, Ns (N alone: seconds) or Nm, in ms."""
    m = SPAN.fullmatch(text.strip())
    if not m:
        raise UsageError(f"{name}: '{text}' is not a duration like 10s, 500ms or 2m")
    ms = int(m.group(1)) * {"ms": 1, "s": 1000, None: 1000, "m": 60000}[m.group(2)]
    if ms < least_ms:
        raise UsageError(f"{name}: '{text}' is shorter than {least_ms} ms")
    return ms


def parse_fault(text):
    """FAULT: remote-sleep's KIND without ok (delay=MS 1..600000, error=PCT 1..100, hang)."""
    m = KINDS.fullmatch(text.strip())
    if text.strip() == "ok":
        raise UsageError("FAULT: 'ok' is no fault (delay=MS, error=PCT or hang)")
    if not m:
        raise UsageError(f"FAULT: '{text}' is not delay=MS, error=PCT or hang")
    if m.group(1) is not None and not 1 <= int(m.group(1)) <= 600000:
        raise UsageError(f"FAULT: '{text}': the delay must be 1..600000 ms")
    if m.group(2) is not None and not 1 <= int(m.group(2)) <= 100:
        raise UsageError(f"FAULT: '{text}': the error share must be 1..100 %")
    return text.strip()


def fault_delay_ms(fault):
    """The delay a fault gives each request it hits (error and hang: 0; see hold_ms)."""
    return int(fault.split("=")[1]) if fault.startswith("delay=") else 0


def parse_limits(text):
    """MAX_IN_FLIGHT: a list of integers >= 0 (0 = no limit), each once."""
    values = split_list(text)
    if not values:
        raise UsageError("MAX_IN_FLIGHT is empty (0 = no limit)")
    for v in values:
        if not re.fullmatch(r"[0-9]{1,7}", v):
            raise UsageError(f"MAX_IN_FLIGHT: '{v}' is not an integer >= 0 (0 = no limit)")
    limits = [int(v) for v in values]
    if len(set(limits)) != len(limits):
        raise UsageError(f"MAX_IN_FLIGHT: a value is there twice ({text})")
    return limits


def parse_degrade_variants(text):
    """DEGRADE_VARIANTS: the sweep's app[@container]:threads[:client], without `conns` (no level here)."""
    from ..sweep import parse_variants
    try:
        variants = parse_variants(text, "jetty")
    except UsageError as e:
        raise UsageError(str(e).replace("SWEEP_VARIANTS", "DEGRADE_VARIANTS")) from None
    for v in variants:
        if v.threads == "conns":
            raise UsageError(f"DEGRADE_VARIANTS: '{v.id}': conns needs a connection level; give N or vN")
    return variants


def vegeta_timeout_s(timeline_ms, fault):
    """Long enough that vegeta's own timeout is never what is measured: the whole timeline, the
    fault's delay and 30 s (a hung request ends by the app's client timeout, well before)."""
    return math.ceil((timeline_ms + fault_delay_ms(fault)) / 1000.0) + VEGETA_GRACE_S


def variant_id(v, limit):
    """A cell's variant: the sweep's id and its limit (two limits of one variant must not merge)."""
    return f"{v.id}:max-in-flight={limit}"


# ---------------------------------------------------------------- Little's law

def hold_ms(fault, healthy_ms, client_timeout_ms=None):
    """How long a request hit by the fault holds its place: its delay, cut by the app's client
    timeout (then a 504); error=P answers P % at once; hang holds until the client timeout."""
    cut = client_timeout_ms or float("inf")
    if fault.startswith("delay="):
        return min(fault_delay_ms(fault), cut)
    if fault.startswith("error="):
        return min(healthy_ms * (1 - int(fault.split("=")[1]) / 100.0), cut)
    return client_timeout_ms            # hang: None when the timeout is unknown


def predict(rate, healthy_ms, fault_hold_ms, fault_s, threads=None, limit=None, queue_cap=None):
    """What Little's law says of a model under the fault. threads: the platform threads of a
    thread-per-request app (None: no thread cap); limit: --max-in-flight (rejects beyond it at once);
    queue_cap: another cap whose excess waits (eg, --client-max-connections).
    A dict: regime (no cap / rejects / queues), capacity C, served per s during the fault, backlog
    growth, backlog at the fault's end, drain rate and time after it, predicted recovery (s, None
    when it does not recover) and the peak queued + in flight; `text` says it in one line."""
    healthy_s, hold_s = healthy_ms / 1000.0, (fault_hold_ms or 0) / 1000.0
    out = {"capacity": None, "served_during": None, "growth": None, "backlog": 0, "drain_rate": None,
           "drain_s": None, "recovery_s": None, "peak": None, "regime": None}
    # Which regime: the cap a request meets first decides what happens to the excess.
    if limit_binds(limit, threads, queue_cap):
        return dict(out, **rejects(rate, limit, healthy_s, hold_s))
    queueing = [c for c in (threads, queue_cap) if c]
    if not queueing:
        return dict(out, **no_cap(rate, fault_hold_ms, hold_s))
    out.update(queues(rate, min(queueing), healthy_s, hold_s, fault_s))
    if limit and threads and limit >= threads:        # a limit that changed nothing: say why
        out["unbound_limit"] = (f"limit {limit} >= {threads} threads: the excess waits in the container's queue, in "
                                "front of the admission filter, so the limit never binds")
        if out["drain_s"] is not None:                # on the draining text only (the other two never had it)
            out["text"] = out["unbound_limit"] + "; " + out["text"]
    return out


def limit_binds(limit, threads, queue_cap):
    """Whether --max-in-flight is the cap a request meets first. A thread-per-request container
    queues a request for a thread BEFORE the admission filter sees it: a limit at or above the
    threads never binds (the excess waits in that queue). Only a limit below them leaves threads
    free to answer the excess with a fast 503; likewise a limit above another queueing cap."""
    return bool(limit) and (not threads or limit < threads) and (not queue_cap or limit <= queue_cap)


def rejects(rate, c, healthy_s, hold_s):
    """A binding limit of c: beyond c in flight a request is answered 503 at once, so nothing
    queues; it recovers once the slow requests it admitted answer (one fault hold at most)."""
    served = c / hold_s if hold_s else None
    out = {"regime": "rejects", "capacity": c, "served_during": served, "peak": c}
    if c / healthy_s < rate:                # too small even for the healthy load
        out["text"] = (f"limit {c}: {c} in flight / {healthy_s:g} s = {c / healthy_s:g} req/s < RATE {rate}: "
                       f"rejects ~{rate - c / healthy_s:g} req/s even when healthy; does not recover")
        return out
    out.update(recovery_s=hold_s, recovery_at_most=True)
    if served is None:
        out["text"] = f"limit {c}: rejects beyond {c} in flight; no backlog"
        return out
    out["text"] = (f"limit {c}: serves {c} / {hold_s:g} s = {served:g} req/s during the fault, "
                   f"rejects ~{max(0.0, rate - served):g} req/s (503), no backlog; recovers once the slow requests "
                   f"it admitted answer (≤ {hold_s:g} s)")
    return out


def no_cap(rate, fault_hold_ms, hold_s):
    """Nothing caps the requests in flight (virtual threads, the async models): each waits its own
    delay and none waits for another, so the model is back as the last slow request answers."""
    return {"regime": "no cap", "recovery_s": 0.0, "peak": None if fault_hold_ms is None else round(rate * hold_s),
            "text": ("no cap: every request waits its delay; recovers as the last slow request answers "
                     f"(~{hold_s:g} s after the end; requests sent after it answer at once)")}


def queues(rate, c, healthy_s, hold_s, fault_s):
    """A cap of c whose excess waits (the threads, a client pool): during the fault it serves
    c / hold per second and the rest piles up; after it the backlog drains at what c serves when
    healthy, less RATE, which keeps coming. It does not drain when that is not above 0."""
    served = c / hold_s if hold_s else float("inf")
    growth = rate - served
    backlog = max(0.0, growth) * fault_s
    drain_rate = c / healthy_s - rate
    out = {"regime": "queues", "capacity": c, "served_during": served, "growth": growth, "backlog": backlog,
           "drain_rate": drain_rate, "peak": round(c + backlog)}
    if backlog == 0:
        return dict(out, recovery_s=0.0,
                    text=f"cap {c}: serves {served:g} req/s >= RATE {rate} during the fault: no backlog")
    if drain_rate <= 0:
        return dict(out, text=(f"cap {c}: serves {served:g} req/s during the fault, backlog +{growth:g}/s -> "
                               f"{backlog:,.0f}; healthy it serves {c / healthy_s:g} req/s <= RATE {rate}: does not drain"))
    return dict(out, drain_s=backlog / drain_rate, recovery_s=backlog / drain_rate,
                text=(f"cap {c}: serves {c} / {hold_s:g} s = {served:g} req/s during the fault, "
                      f"backlog +{growth:g}/s -> {backlog:,.0f} at its end; "
                      f"drains at {c / healthy_s:g} - {rate} = {drain_rate:g}/s: {backlog / drain_rate:.0f} s"))


# ---------------------------------------------------------------- vegeta's results, per second

def error_kind(r):
    """A vegeta result's failure: 503 (the app's admission limit), 502 (the remote failed), 504 (the
    app's client timed out), another status, vegeta's own timeout, a connection error; None for 2xx."""
    code, error = r.get("code") or 0, r.get("error") or ""
    if code == 0:
        return "timeout" if ("Timeout" in error or "deadline exceeded" in error) else "connection"
    if 200 <= code < 300:
        return None
    return str(code) if code in (502, 503, 504) else "other_status"


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of them at or below it."""
    if not values:
        return None
    values = sorted(values)
    return values[max(0, math.ceil(p / 100.0 * len(values)) - 1)]


def _bucket(t):
    return {"t": t, "count": 0, "ok": 0, "goodput": 0, "errors": dict.fromkeys(ERROR_KINDS, 0), "_lat": []}


def per_second(results, t0_s, deadline_ms):
    """vegeta's results (its `encode --to=json` lines as dicts: timestamp = send time, latency ns,
    code, error), per second relative to t0_s (the fault's start; negative before), both by send
    second and by completion second (send + latency). Each row: t, count (offered by send, completed
    by completion), ok (2xx), goodput (2xx within deadline_ms), errors by kind, p50/p99 in ms of
    every answered request (a status code, 2xx or not). Seconds between the first and the last
    are all there (zeros when empty). Also the healthy phase's figures (everything sent before t0)."""
    send, done, healthy, first = {}, {}, [], None
    for r in results:
        sent = epoch_s(r["timestamp"]) - t0_s
        first = sent if first is None else min(first, sent)
        lat_ms = r.get("latency", 0) / 1e6
        kind = error_kind(r)
        for table, t in ((send, sent), (done, sent + lat_ms / 1000.0)):
            sec = math.floor(t)
            b = table.setdefault(sec, _bucket(sec))
            b["count"] += 1
            if kind is None:
                b["ok"] += 1
                b["goodput"] += lat_ms <= deadline_ms
            else:
                b["errors"][kind] += 1
            if r.get("code"):
                b["_lat"].append(lat_ms)
        if sent < 0 and r.get("code"):
            healthy.append(lat_ms)
    return {"by_send": second_rows(send), "by_completion": second_rows(done), "first_send_s": first,
            "healthy": {"answered": len(healthy), "p50_ms": None if not healthy else round(percentile(healthy, 50), 1),
                        "p99_ms": None if not healthy else round(percentile(healthy, 99), 1)}}


def second_rows(table):
    """A table of buckets by second as rows, every second from the first to the last (an empty one
    is a row of zeros: a second nothing arrived in is a figure too), each with its p50 and p99."""
    if not table:
        return []
    out = []
    for sec in range(min(table), max(table) + 1):
        b = table.get(sec) or _bucket(sec)
        lat = b.pop("_lat")
        b["p50_ms"] = None if not lat else round(percentile(lat, 50), 1)
        b["p99_ms"] = None if not lat else round(percentile(lat, 99), 1)
        out.append(b)
    return out


def time_to_recover(by_send, healthy_p99_ms, fault_end_s, within=RECOVERED_WITHIN, stay=STAY_S):
    """(seconds after the fault's end until the p99 by send second is back within `within` x the
    healthy phase's p99 with no failed request, and stays so for `stay` seconds (or to the run's end);
    the send seconds after those that were not back: a later hiccup, not the fault's recovery).
    (None, 0) when that never happens ("not within the run"). A fast 503 is not a recovery: a second
    with errors is not back. Send seconds from the one the fault ended in (rounded)."""
    if not healthy_p99_ms:
        return None, 0
    rows = [r for r in by_send if r["t"] >= round(fault_end_s) and r["count"]]
    back = [r["p99_ms"] is not None and r["p99_ms"] <= within * healthy_p99_ms and not sum(r["errors"].values())
            for r in rows]
    for i in range(len(rows)):
        if all(back[i:i + stay]):
            return round(max(0.0, rows[i]["t"] - fault_end_s), 1), back[i + stay:].count(False)
    return None, 0


def rate_over(rows, lo, hi, key="goodput"):
    """rows' `key` per second over the seconds [lo, hi) (rows missing there count as 0); None when empty."""
    lo, hi = math.ceil(lo), math.floor(hi)
    if hi <= lo:
        return None
    return round(sum(r[key] for r in rows if lo <= r["t"] < hi) / (hi - lo), 1)


def fault_window(fault_json, fault, posted_ms, fault_at_ms, fault_for_ms):
    """(start epoch ms, end epoch ms, source) of the fault: from remote-sleep's own record of its
    changes (GET /fault), else its plan, else ours (posted_ms + FAULT_AT)."""
    changes = (fault_json or {}).get("changes") or []
    # remote-sleep keeps every change of its life (one remote serves every cell): this cell's
    # schedule is the one started last, its changes are from its start on.
    since = (fault_json or {}).get("startedAtMs")
    if since is not None:
        changes = [c for c in changes if c.get("atMs", 0) >= since]
    start = next((i for i, c in enumerate(changes) if c.get("phase") == fault), None)
    if start is not None:
        end = next((c["atMs"] for c in changes[start + 1:] if c.get("phase") != fault), None)
        if end is None:
            planned = next((p for p in (fault_json.get("phases") or []) if p.get("phase") == fault), None)
            end = planned["plannedEndMs"] if planned else changes[start]["atMs"] + fault_for_ms
        return changes[start]["atMs"], end, "remote-sleep's changes"
    planned = next((p for p in ((fault_json or {}).get("phases") or []) if p.get("phase") == fault), None)
    if planned:
        return planned["plannedStartMs"], planned["plannedEndMs"], "remote-sleep's plan (no change recorded)"
    return posted_ms + fault_at_ms, posted_ms + fault_at_ms + fault_for_ms, "the bench's plan (no GET /fault)"


# ---------------------------------------------------------------- one cell

CLIENT_TIMEOUT = re.compile(r"\b(?:requestTimeout|responseTimeout|statementTimeout)=([0-9]+)ms")


def client_timeout_ms(lab_line):
    """The app's client deadline, as its `lab:` line prints it (--client-timeout-ms; 10 s by default)."""
    m = CLIENT_TIMEOUT.search(lab_line or "")
    return int(m.group(1)) if m else None


def flag_value(args, flag):
    """The integer after `flag` in an argument list (the app's flags), or None."""
    args = list(args)
    for i, a in enumerate(args[:-1]):
        if a == flag and args[i + 1].isdigit():
            return int(args[i + 1])
    return None


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
            status, body = procs.http(self.stats_url, timeout=1.0)
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
    status, body = procs.http(url, method=method)
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


# ---------------------------------------------------------------- a cell's figures

FIELDS = ("fault", "max_in_flight_limit", "client_timeout_ms", "fault_s", "fault_source", "healthy_p99_ms",
          "goodput_before_rps", "goodput_during_rps", "goodput_after_rps", "fault_errors", "recovery_s",
          "recovery_text", "predicted_recovery_s", "predicted_recovery_at_most", "prediction", "predicted_peak", "peak_in_flight", "peak_queued",
          "peak_backlog", "peak_live_threads", "peak_heap_mb", "admission_rejected")


def read_samples(path):
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def peak(samples, value):
    values = [v for v in (value(x) for x in samples) if v is not None]
    return max(values) if values else None


def cell_prediction(record, p, timeout_ms):
    """Little's law for this cell: its thread cap, its limit, its client pool cap (APP_ARGS)."""
    threads = int(record.threads) if record.thread_per_request and str(record.threads).isdigit() else None
    args = (p.get("app_args") or "").split() + (p.get("user_app_args") or "").split()
    out = predict(record.rate, record.sleep_ms, hold_ms(p["fault"], record.sleep_ms, timeout_ms),
                  p["fault_for_ms"] / 1000.0, threads=threads, limit=cell_limit(p) or None,
                  queue_cap=flag_value(args, "--client-max-connections"))
    # A bounded container queue (Tomcat) or QoSHandler (Jetty) sheds load this arithmetic does not model.
    shed = [f for f in ("--container-queue", "--qos") if flag_value(args, f)]
    if shed:
        out["text"] = f"not modelled: {' and '.join(shed)} shed what does not fit; without them: " + out["text"]
        out["recovery_s"] = None
    return out


def cell_limit(params):
    """A cell's --max-in-flight (0: none), from the app flags its plan gave it."""
    return flag_value((params.get("app_args") or "").split(), "--max-in-flight") or 0


def figures(record, d):
    """The cell's degrade fields: its settings, then what its timeline (timeline.json), the app's
    series (samples.jsonl, stats.json) and Little's law say. A cell that has no timeline (it
    failed before vegeta ended) has its settings only."""
    p, m = record.params, record.measured
    out = dict.fromkeys(FIELDS)
    out.update(fault=p.get("fault"), max_in_flight_limit=cell_limit(p) if "fault" in p else None,
               client_timeout_ms=m.get("client_timeout_ms"))
    t = read_json(d / "timeline.json")
    if not t or "fault" not in p:
        return out
    out.update(timeline_figures(t, p, record.sleep_ms))
    out.update(app_peaks(read_samples(d / "samples.jsonl"), read_json(d / "stats.json") or {}))
    pred = cell_prediction(record, p, m.get("client_timeout_ms"))
    out.update(predicted_recovery_s=None if pred["recovery_s"] is None else round(pred["recovery_s"], 1),
               predicted_recovery_at_most=bool(pred.get("recovery_at_most")),
               prediction=pred["text"], predicted_peak=pred["peak"])
    return out


def timeline_figures(t, p, sleep_ms):
    """Goodput before, during and after the fault, by completion second (what the clients got in
    each second), every failed request by kind, and the time to recover, by send second (when a
    request sent then was answered well again)."""
    fault_end = t["fault_end_s"]
    healthy = t["healthy"]["p99_ms"]
    rec_s, slips = time_to_recover(t["by_send"], healthy, fault_end)
    done = t["by_completion"]
    end = t.get("end_s") or fault_end + p["after_ms"] / 1000.0
    errors = dict.fromkeys(ERROR_KINDS, 0)
    for row in t["by_send"]:
        for k, n in row["errors"].items():
            errors[k] = errors.get(k, 0) + n
    return dict(
        fault_s=round(fault_end, 2), fault_source=t.get("fault_source"), healthy_p99_ms=healthy,
        # before: from one healthy delay in, when the first answers can have come back
        goodput_before_rps=rate_over(done, -p["fault_at_ms"] / 1000.0 + sleep_ms / 1000.0, 0),
        goodput_during_rps=rate_over(done, 0, fault_end), goodput_after_rps=rate_over(done, fault_end, end),
        fault_errors=errors, recovery_s=rec_s,
        recovery_text=("—" if healthy is None else "not within the run" if rec_s is None
                       else f"{rec_s:g} s" + (f" ({slips} s not back later)" if slips else "")))


def app_peaks(samples, stats):
    """The app's peaks from the sampler's series (a backlog drains and the GC gives memory back, so
    its state at the end says little), and its admission filter's rejections (stats.json, at the end)."""
    heap = peak(samples, lambda x: x.get("heapUsedBytes"))
    return dict(
        peak_in_flight=peak(samples, lambda x: x.get("inFlight")),
        peak_queued=peak(samples, lambda x: x.get("queued")),
        peak_backlog=peak(samples, lambda x: None if x.get("inFlight") is None else x["inFlight"] + (x.get("queued") or 0)),
        peak_live_threads=peak(samples, lambda x: x.get("liveThreads")),
        peak_heap_mb=None if heap is None else round(heap / 1048576.0, 1),
        admission_rejected=(stats.get("admission") or {}).get("rejected"))


def errors_text(errors):
    """'503: 1,200 · 504: 3', or 'none'."""
    if errors is None:
        return "—"
    parts = [f"{k.replace('_', ' ')}: {n:,}" for k, n in errors.items() if n]
    return " · ".join(parts) or "none"


def predicted_text(c):
    if c.get("prediction") is None:
        return "—"
    if c["prediction"].startswith("not modelled"):
        return "not modelled"
    pr = c.get("predicted_recovery_s")
    return "does not recover" if pr is None else f"{'≤ ' if c.get('predicted_recovery_at_most') else ''}{pr:g} s"


def limit_text(n):
    return "none" if not n else f"{n:,}"


# ---------------------------------------------------------------- the report

def degrade_cells(run):
    return [c for c in run["cells"] if c.get("scenario") == NAME]


def label_of(run, c):
    labels = run["meta"].get("variant_labels") or {}
    base = (c.get("variant") or "").rsplit(":max-in-flight=", 1)[0]
    return labels.get(base, base or f"{c['app']} {c['container']} {c['threads']}")


def timeline_line(run):
    meta = run["meta"]
    return (f"Timeline: {meta.get('fault_at')} healthy, {meta.get('fault_for')} of `{meta.get('fault')}` at remote-sleep, "
            f"{meta.get('after')} healthy again; vegeta at **{meta.get('rate')} req/s** through all of it "
            f"(-timeout {meta.get('wrk_timeout_s')} s); healthy delay {meta.get('sleep_ms')} ms; goodput = 2xx answered "
            f"within {meta.get('goodput_deadline')}; the apps' client timeout: {client_timeouts(run)}.")


def client_timeouts(run):
    """The client deadlines the cells' apps printed in their `lab:` lines (APP_ARGS --client-timeout-ms sets it)."""
    seen = sorted({c["client_timeout_ms"] for c in degrade_cells(run) if c.get("client_timeout_ms")})
    return ", ".join(f"{t:,} ms" for t in seen) + " (their `lab:` lines)" if seen else "not printed"


def recovery_rows(run):
    """(label, limit, measured, predicted, cell) per cell, in the plan's order."""
    return [(label_of(run, c), c.get("max_in_flight_limit"), c.get("recovery_text") if c["status"] == "ok"
             else status_text(c), predicted_text(c) if c["status"] == "ok" else "—", c) for c in degrade_cells(run)]


def section(run, charts):
    """## When the backend slows down: the timeline, a row per cell, how to read it, the charts."""
    meta = run["meta"]
    w = [f"\n## When the backend slows down (SCENARIO=degrade)\n\n{timeline_line(run)}\n\n",
         "| variant | limit | healthy p99 | goodput before · during · after | errors | peak in flight · queued "
         "| peak threads | peak RSS · heap MB | recovered after | predicted (Little's law) |\n",
         "|---|---:|---:|---:|---|---:|---:|---:|---:|---|\n"]
    for label, limit, _measured, _pred, c in recovery_rows(run):
        if c["status"] != "ok":
            w.append(f"| {label} | {limit_text(limit)} | {status_text(c)} |" + " |" * 7 + "\n")
            continue
        rejected = f" (admission: {c['admission_rejected']:,} rejected)" if c.get("admission_rejected") else ""
        w.append(f"| {label} | {limit_text(limit)} | {f_lat(c.get('healthy_p99_ms'))} | "
                 f"{f_rps(c.get('goodput_before_rps'))} · {f_rps(c.get('goodput_during_rps'))} · "
                 f"{f_rps(c.get('goodput_after_rps'))} | {errors_text(c.get('fault_errors'))}{rejected} | "
                 f"{f_int(c.get('peak_in_flight'))} · {f_int(c.get('peak_queued'))} | {f_int(c.get('peak_live_threads'))} | "
                 f"{f_mb(c.get('peak_rss_mb'))} · {f_mb(c.get('peak_heap_mb'))} | **{c.get('recovery_text')}** | "
                 f"{predicted_text(c)}: {c.get('prediction')}; peak queued + in flight {f_int(c.get('predicted_peak'))} "
                 f"(measured {f_int(c.get('peak_backlog'))}) |\n")
    w.append(HOW.format(within=RECOVERED_WITHIN, sample=SAMPLE_S, stay=STAY_S))
    mine = [(n, title) for n, title in charts if n.startswith("degrade-")]
    if mine:
        w.append("\n### Charts\n\n" + "".join(f"![{title}](charts/{n}.png)\n\n" for n, title in mine)
                 + "Each also as SVG: " + ", ".join(f"[{n}.svg](charts/{n}.svg)" for n, _ in mine)
                 + ". The shaded band is the fault as remote-sleep recorded it (GET /fault), t = 0 its start.\n")
    return "".join(w)


HOW = """
**How to read this.** Each row is one cell: a fresh app, vegeta's constant rate through the whole timeline, t = 0 the
fault's start as remote-sleep recorded it. **limit** is the app's `--max-in-flight` (*none*: no admission limit;
beyond it a request is answered 503 at once). **healthy p99** is the p99 latency of every answered request sent
before the fault. **goodput** is 2xx answers within the deadline per second, counted by the second they *arrived*
(completion): *before* over the healthy phase (from one healthy delay in), *during* over the fault, *after* from the
fault's end to the end of the attack. **errors** are every failed request of the run by kind: 503 (the admission
limit), 502 (the remote failed: `error=PCT`), 504 (the app's client timed out), other statuses, vegeta's own
timeout, connection errors. **peak in flight · queued** are the app's `/stats` inFlight (in application code) and
queued (waiting for a container thread), sampled every {sample:g} s; **peak threads** its liveThreads; **peak RSS ·
heap** the process' resident memory (/proc) and the JVM's used heap. **recovered after** is the time from the
fault's end until the p99 by *send* second is back within {within:g}× the healthy p99, with no failed request, and
stays there {stay} send seconds (*not within the run* when it never does; a fast 503 is not a recovery; "N s not
back later" counts the send seconds after those that were not: a later hiccup, such as a limit close to the
healthy load meeting a GC pause).
**predicted** is Little's law for the model's caps (capacity C = the platform threads of a thread-per-request app,
the admission limit, `--client-max-connections`; none for virtual threads and the async models): during the fault
it serves C / fault delay per second; a queueing model's backlog grows by RATE − that, and drains after the fault at
C / healthy delay − RATE; a limit rejects the excess instead, so nothing queues, and recovers within one fault delay
at most (≤: its admitted slow requests hold their slots until they answer) — but only a limit below a thread-per-request
app's threads binds: the container queues a request for a thread in front of the filter; without a cap every request waits
its own delay and none waits for another. Beside it, the predicted peak of queued + in flight against the measured
one. Figures of a single run: read differences of a few seconds or requests as noise.
"""


def chart_names(run):
    """[(file name, title)]: one per ok cell (its three panels), and every cell's goodput side by side."""
    out = [("degrade-goodput", "goodput per second by completion, every cell side by side")]
    for c in degrade_cells(run):
        if c["status"] == "ok":
            out.append((f"degrade-{c['index']:02d}", f"{label_of(run, c)}, limit {limit_text(c.get('max_in_flight_limit'))}: "
                        f"goodput and p99, in flight and queued, RSS"))
    return out


def draw_charts(run_dir):
    """bench/degrade_charts.py with the venv's matplotlib (the bench stays standard-library only);
    a WARNING, not a failure, when it cannot run."""
    from ..sweep import CHART_PYTHON, ROOT
    if not CHART_PYTHON.exists():
        print("WARNING: no degrade charts: matplotlib is not installed; run: bench/tools/install.sh matplotlib",
              file=sys.stderr)
        return
    r = subprocess.run([str(CHART_PYTHON), str(ROOT / "bench" / "degrade_charts.py"), str(run_dir)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    print(r.stdout.rstrip() if r.returncode == 0 else f"WARNING: bench/degrade_charts.py failed:\n{r.stdout}",
          file=sys.stdout if r.returncode == 0 else sys.stderr)


class Degrade(Scenario):
    name = NAME
    defaults = {
        "DEGRADE_VARIANTS": "sync-servlet@tomcat:200 sync-servlet@tomcat:v1 async-servlet@tomcat:1 webflux@netty:1",
        "FAULT": "delay=5000",      # SCENARIO=degrade: remote-sleep's fault (delay=MS, error=PCT, hang)
        "FAULT_AT": "10s",          # healthy time before the fault
        "FAULT_FOR": "10s",         # how long the fault lasts
        "AFTER": "30s",             # healthy time after it
        # The apps' --max-in-flight, each variant once per value (0 = no limit). 180: the healthy load
        # keeps RATE x SLEEP_MS = 150 in flight; below the 200-thread pool, whose free threads answer
        # the excess with a fast 503 (a limit >= the threads never binds: the queue is in front of it).
        "MAX_IN_FLIGHT": "0 180",
        "GOODPUT_DEADLINE": "2s",   # goodput: 2xx answered within this
    }
    fields = FIELDS
    csv_columns = [f for f in FIELDS if f not in ("fault_errors", "prediction")] + [f"fault_errors_{k}" for k in ERROR_KINDS]
    has_ceiling = False

    # ---- settings
    def usage(self, v):
        return (f"  SCENARIO=degrade: vegeta at RATE (150 unless RATE is set) through a timeline: FAULT_AT healthy, FAULT_FOR of\n"
                f"        FAULT at remote-sleep, AFTER healthy; each variant once per MAX_IN_FLIGHT (a matrix of its own)\n"
                f"  DEGRADE_VARIANTS=\"{v['DEGRADE_VARIANTS']}\"\n"
                f"        app[@container]:threads[:client] as in SWEEP_VARIANTS (without @container: jetty), threads N or vN\n"
                f"  FAULT={v['FAULT']}  FAULT_AT={v['FAULT_AT']}  FAULT_FOR={v['FAULT_FOR']}  AFTER={v['AFTER']}"
                f"   (FAULT: delay=MS, error=PCT or hang; times: Nms, Ns or Nm)\n"
                f"  MAX_IN_FLIGHT=\"{v['MAX_IN_FLIGHT']}\"  GOODPUT_DEADLINE={v['GOODPUT_DEADLINE']}"
                f"   the apps' --max-in-flight (0 = no limit); goodput = 2xx within the deadline\n")

    def parse(self, v):
        fault = parse_fault(v["FAULT"])
        at, for_, after = (span_ms("FAULT_AT", v["FAULT_AT"], 1000), span_ms("FAULT_FOR", v["FAULT_FOR"]),
                           span_ms("AFTER", v["AFTER"], 1000))
        if at + for_ + after > 3600000:
            raise UsageError("FAULT_AT + FAULT_FOR + AFTER is more than an hour")
        return {"degrade_variants": parse_degrade_variants(v["DEGRADE_VARIANTS"]), "degrade_fault": fault,
                "degrade_fault_at_ms": at, "degrade_fault_for_ms": for_, "degrade_after_ms": after,
                "degrade_timeline_ms": at + for_ + after, "degrade_limits": parse_limits(v["MAX_IN_FLIGHT"]),
                "degrade_deadline_ms": span_ms("GOODPUT_DEADLINE", v["GOODPUT_DEADLINE"])}

    def selected(self, argv, environ):
        return argv == [self.name] or self.name in split_list(environ.get("SCENARIO") or "")

    def environ(self, environ, n_cores):
        """Its matrix as the ordinary settings (APPS, CONTAINERS, THREADS from the variants, vegeta,
        DURATION = the timeline, WRK_TIMEOUT = vegeta's); a setting it replaces must not be set."""
        from ...settings import raw_values
        scenario = split_list(environ.get("SCENARIO") or self.name)
        if scenario != [self.name]:
            raise UsageError(f"SCENARIO={environ.get('SCENARIO')}: degrade runs alone (a matrix of its own)")
        for name, instead in NOT_IN_DEGRADE.items():
            if environ.get(name) and not (name == "REPEAT" and environ[name] == "1"):
                raise UsageError(f"{name}={environ[name]}: SCENARIO=degrade sets {name} itself ({instead})")
        if (environ.get("BACKEND") or "http") != "http":
            raise UsageError("SCENARIO=degrade needs remote-sleep's /fault: BACKEND=http only")
        if "--max-in-flight" in (environ.get("APP_ARGS") or "").split():
            raise UsageError("APP_ARGS: --max-in-flight is set by MAX_IN_FLIGHT in SCENARIO=degrade")
        d = self.parse(raw_values(environ))
        variants = d["degrade_variants"]
        env = dict(environ, SCENARIO=self.name, LOADGEN="vegeta", RATE=environ.get("RATE") or str(DEFAULT_RATE),
                   APPS=" ".join(dict.fromkeys(x.app for x in variants)),
                   CONTAINERS=" ".join(dict.fromkeys(x.container for x in variants)),
                   THREADS=" ".join(dict.fromkeys(x.threads for x in variants)),
                   DURATION=f"{math.ceil(d['degrade_timeline_ms'] / 1000.0)}s",
                   WRK_TIMEOUT=f"{vegeta_timeout_s(d['degrade_timeline_ms'], d['degrade_fault'])}s")
        return env, variants

    def with_drivers(self, s):
        raise UsageError("SCENARIO=degrade needs remote-sleep's /fault: BACKEND=http only")

    def fit_limits(self, environ, s, error, held):
        return None

    # ---- the plan and one cell
    def plan(self, s, make):
        """Each variant once per MAX_IN_FLIGHT value, --max-in-flight N only when N > 0; vegeta cells."""
        cells = []
        for v in s.degrade_variants:
            for limit in s.degrade_limits:
                c = make(v.app, v.container, v.threads, None, None, variant_id(v, limit), v.client,
                         ("--max-in-flight", str(limit)) if limit else ())
                c.scenario, c.loadgen = self.name, "vegeta"
                cells.append(c)
        return cells

    def params(self, s):
        if s.mode != self.name:
            return {}
        return {"fault": s.degrade_fault, "fault_at_ms": s.degrade_fault_at_ms, "fault_for_ms": s.degrade_fault_for_ms,
                "after_ms": s.degrade_after_ms, "timeline_ms": s.degrade_timeline_ms, "deadline_ms": s.degrade_deadline_ms,
                "user_app_args": s.raw["APP_ARGS"]}

    def measure(self, lab, cell, d, url, app):
        return measure(lab, cell, d, url, app)

    # ---- the run
    def meta_values(self, s):
        return {"mode": self.name, "fault": s.degrade_fault, "fault_at": s.raw["FAULT_AT"], "fault_for": s.raw["FAULT_FOR"],
                "after": s.raw["AFTER"], "goodput_deadline": s.raw["GOODPUT_DEADLINE"],
                "max_in_flight_values": " ".join(map(str, s.degrade_limits)),
                "degrade_variants": " ".join(v.id for v in s.degrade_variants),
                **{f"variant_label.{v.id}": v.label for v in s.degrade_variants}}

    def meta(self, meta):
        if meta.get("mode") == self.name:
            meta["max_in_flight_values"] = [int(x) for x in (meta.get("max_in_flight_values") or "").split()]

    def starting_lines(self, s):
        limits = " ".join(map(str, s.degrade_limits))
        lines = [f"== degrade: {len(s.degrade_variants)} variants x MAX_IN_FLIGHT {limits}; vegeta at {s.rate} req/s for "
                 f"{s.raw['FAULT_AT']} healthy, {s.raw['FAULT_FOR']} of {s.degrade_fault}, {s.raw['AFTER']} healthy "
                 f"(-timeout {s.wrk_timeout_s}s); a fresh app per cell"]
        lines += [f"   {v.id:32s} {v.label}" for v in s.degrade_variants]
        healthy_in_flight = s.rate * s.sleep_ms / 1000.0
        for limit in s.degrade_limits:
            if limit and limit < healthy_in_flight:
                lines.append(f"== degrade: MAX_IN_FLIGHT {limit} < RATE x SLEEP_MS = {healthy_in_flight:g} in flight when "
                             f"healthy: that limit rejects ~{s.rate - limit * 1000.0 / s.sleep_ms:g} req/s before any fault")
        return lines

    def environment_rows(self, meta):
        if meta.get("mode") != self.name:
            return []
        labels = meta.get("variant_labels") or {}
        return [("degrade variants", "; ".join(f"`{v}` ({labels.get(v, v)})" for v in (meta.get("degrade_variants") or "").split())),
                ("degrade timeline", f"{meta.get('fault_at')} healthy, {meta.get('fault_for')} of {meta.get('fault')}, "
                                     f"{meta.get('after')} healthy; RATE {meta.get('rate')} req/s"),
                ("max in flight (0 = no limit) / goodput deadline",
                 f"{' '.join(map(str, meta.get('max_in_flight_values') or []))} / {meta.get('goodput_deadline')}")]

    # ---- the report
    def figures(self, record, d):
        return figures(record, d)

    def summary(self, rec):
        if rec.get("fault") is None:
            return None
        return (f"fault {rec['fault']} for {rec.get('fault_s')} s, limit {limit_text(rec.get('max_in_flight_limit'))}: "
                f"healthy p99 {f_lat(rec.get('healthy_p99_ms'))}, goodput {f_rps(rec.get('goodput_before_rps'))} · "
                f"{f_rps(rec.get('goodput_during_rps'))} · {f_rps(rec.get('goodput_after_rps'))}/s (before · during · after), "
                f"errors {errors_text(rec.get('fault_errors'))}, peak in flight {f_int(rec.get('peak_in_flight'))} + queued "
                f"{f_int(rec.get('peak_queued'))}, threads {f_int(rec.get('peak_live_threads'))}, RSS {f_mb(rec.get('peak_rss_mb'))} MB, "
                f"recovered after {rec.get('recovery_text')} (predicted {predicted_text(rec)}), client timeout "
                f"{f_int(rec.get('client_timeout_ms'))} ms")

    def verdict(self, run):
        if run["meta"].get("mode") != self.name:
            return None
        out = [f"## Verdict: recovery after the fault ({run['meta'].get('fault')} for {run['meta'].get('fault_for')} "
               f"at {run['meta'].get('rate')} req/s)\n\n",
               "| variant | limit | goodput during the fault | recovered after | predicted (Little's law) |\n",
               "|---|---:|---:|---:|---:|\n"]
        for label, limit, measured, predicted, c in recovery_rows(run):
            during = f_rps(c.get("goodput_during_rps")) + " req/s" if c["status"] == "ok" else ""
            out.append(f"| {label} | {limit_text(limit)} | {during} | {measured} | {predicted if c['status'] == 'ok' else ''} |\n")
        out.append(f"\nRecovered: the p99 by send second back within {RECOVERED_WITHIN:g}× the healthy p99, without errors, "
                   f"for {STAY_S} send seconds. Every figure and the charts: *When the backend slows down* below.\n")
        return "".join(out)

    def sections(self, run, ctx):
        if run["meta"].get("mode") != self.name:
            return []
        return [(10, section(run, ctx.charts))]

    def charts(self, run_dir, run, draw=False):
        if run["meta"].get("mode") != self.name:
            return []
        if draw and any(c["status"] == "ok" for c in degrade_cells(run)):
            draw_charts(run_dir)
        return [(n, t) for n, t in chart_names(run) if (Path(run_dir) / "charts" / f"{n}.png").exists()]

    def closing_lines(self, run):
        if run["meta"].get("mode") != self.name:
            return []
        return ["== degrade: recovered after the fault's end (measured; predicted by Little's law):"] + [
            f"   {label}, limit {limit_text(limit)}: {measured} ({predicted})" for label, limit, measured, predicted, _c
            in recovery_rows(run)]


SCENARIO = Degrade()
