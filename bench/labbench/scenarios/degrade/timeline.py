"""degrade's timeline: vegeta's results as one row per second (by send and by completion second),
the time to recover after the fault's end, goodput over a phase, and the fault's window as
remote-sleep recorded it."""
import math

from ...loadgens.vegeta import epoch_s

ERROR_KINDS = ("503", "502", "504", "other_status", "timeout", "connection")
RECOVERED_WITHIN = 1.5        # a send second is back when its p99 <= 1.5 x the healthy phase's, without errors
STAY_S = 5                    # ... and recovered once it stays back this many send seconds (a GC pause later is not the fault)


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
