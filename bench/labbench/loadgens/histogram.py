"""wrk's latency histogram (bench/tools/wrk-json.lua writes it as `histogram_us`: [[µs, count], ...]) and
the exact merge of several (issue 28: several load hosts, one cell). wrk keeps a count per
microsecond, so the sum of the hosts' histograms is the histogram one wrk would have had, and every
figure is taken from it the way wrk takes its own (src/stats.c): percentiles are never averaged.
"""
import math
from collections import Counter


def percentile(hist, p):
    """wrk's stats_percentile: the smallest value whose cumulative count reaches
    round(p / 100 * n + 0.5); hist is [[value, count], ...] ascending."""
    n = sum(c for _, c in hist)
    rank = math.floor(p / 100.0 * n + 0.5 + 0.5)     # C's round() of x + 0.5: half away from zero
    total = 0
    for value, count in hist:
        total += count
        if total >= rank:
            return value
    return 0


def summary(hist):
    """min, mean, stdev, p50, p90, p99, p999, max as wrk-json.lua writes them (wrk's own formulas:
    stats_mean, and stats_stdev with n - 1)."""
    n = sum(c for _, c in hist)
    if n == 0:
        return dict.fromkeys(("min", "mean", "stdev", "p50", "p90", "p99", "p999", "max"), 0)
    mean = sum(v * c for v, c in hist) / n
    var = sum((v - mean) ** 2 * c for v, c in hist) / (n - 1) if n > 1 else 0.0
    return {"min": hist[0][0], "mean": round(mean), "stdev": round(math.sqrt(var)),
            "p50": percentile(hist, 50), "p90": percentile(hist, 90), "p99": percentile(hist, 99),
            "p999": percentile(hist, 99.9), "max": hist[-1][0]}


def merge(docs):
    """One wrk.json-like document from several hosts' (each with `histogram_us`): counts, bytes and
    errors summed, the histograms summed and every latency figure taken from the sum, the duration
    the longest. ValueError when a host has no histogram (it says why)."""
    hist = Counter()
    for i, d in enumerate(docs):
        if d.get("histogram_us") is None:
            raise ValueError(f"load host {i + 1}: no latency histogram ({d.get('histogram_why', 'an older wrk-json.lua')})")
        for value, count in d["histogram_us"]:
            hist[value] += count
    merged = sorted(hist.items())
    keys = ("connect", "read", "write", "status", "timeout")
    slow = [d.get("slow_2s") for d in docs]
    return {"slow_2s": None if None in slow else sum(slow),
            "slow_2s_how": next((d["slow_2s_how"] for d in docs if d.get("slow_2s") is None), docs[0].get("slow_2s_how")),
            "duration_us": max(d["duration_us"] for d in docs),
            "requests": sum(d["requests"] for d in docs),
            "bytes": sum(d["bytes"] for d in docs),
            "errors": {k: sum(d["errors"][k] for d in docs) for k in keys},
            "latency_us": summary(merged),
            "latency_corrected": any(d.get("latency_corrected") for d in docs),
            "connections": sum(d.get("connections") or 0 for d in docs),
            "histogram_us": [list(p) for p in merged]}


def completions(docs):
    """Every host's completion times on one axis (wrk-json.lua: seconds after each host's first, and
    that first as Unix time), sorted, in seconds after the earliest, as one wrk would have written them;
    {} when a host has none or no wall-clock start."""
    if not all(d.get("completions_s") and d.get("completions_t0_unix") for d in docs):
        return {}
    t0 = min(d["completions_t0_unix"] for d in docs)
    times = sorted(d["completions_t0_unix"] - t0 + t for d in docs for t in d["completions_s"])
    return {"completions_s": [round(t, 4) for t in times], "completions_t0_unix": t0, "steady_responses": len(times)}
