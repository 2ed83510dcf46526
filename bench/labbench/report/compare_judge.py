"""compare's verdicts: two cells' throughput and p99 judged against the noise (the runs' own
spread with repeats, else the lab's measured floor): same, better or worse."""

# An open-loop (vegeta) cell is judged by what it served and its p99 from the intended send time.
OPEN_LOOP = {"steady_rps": "ol_served_rps", "p99_ms": "ol_p99_ms"}

# Relative noise floors for runs without repeats. Measured: see docs/findings/comparing-runs.md.
# % of the ceiling (a pair across SLEEP_MS or CONNECTIONS) borrows steady req/s's floor: it is a
# steady req/s over the ceiling the run measured the same way; no floor of its own was measured.
NOISE_FLOOR = {"steady_rps": 0.03, "p99_ms": 0.15, "pct_of_ceiling": 0.03}
# Below these absolute differences nothing is a change, whatever the ratio (a p99 of 1.004 s vs
# 1.010 s is the same; 0.9 vs 1.0 req/s of a 1-thread sync app is one response; 0.9 % vs 1.0 % of
# a ceiling of 100 req/s is that same response).
NOISE_ABS = {"steady_rps": 0.5, "p99_ms": 20.0, "pct_of_ceiling": 0.5}
HIGHER_IS_BETTER = {"steady_rps": True, "p99_ms": False, "pct_of_ceiling": True}
JIT_WARM = 5.0     # % of the app's CPU: above it a window was still partly the compiler's (summary.JIT_WARM)


def ok(cell):
    return cell.get("status", "ok") == "ok"


def metric(cell, field):
    """(median, low, high, repeats) of a metric; steady req/s falls back to wrk's req/s in old runs."""
    if not ok(cell):
        return None
    if cell.get("loadgen") == "vegeta":
        field = OPEN_LOOP.get(field, field)
    elif field == "steady_rps" and cell.get("steady_rps") is None:
        field = "rps"
    value = cell.get(field)
    if value is None:
        return None
    low, high = (cell.get("range") or {}).get(field) or (value, value)
    return value, low, high, cell.get("repeats") or 1


def queue_bound(cell):
    """A thread-per-request app with more connections than threads: its p99 is queue order."""
    threads = cell.get("threads")
    conns = cell.get("connections")      # None for an open-loop cell: its queue grows at a steady pace
    return bool(cell.get("thread_per_request")) and isinstance(threads, int) and conns is not None and conns > threads


def verdict(a, b, field):
    """'same', 'better' or 'worse' for metric tuples a and b (see metric()), judged against noise."""
    va, lo_a, hi_a, n_a = a
    vb, lo_b, hi_b, n_b = b
    if abs(vb - va) <= NOISE_ABS[field]:
        return "same"
    if n_a >= 2 and n_b >= 2:
        if lo_b <= hi_a and lo_a <= hi_b:       # the runs' own ranges overlap
            return "same"
    elif abs(vb - va) <= NOISE_FLOOR[field] * max(abs(va), abs(vb)):
        return "same"
    return "better" if (vb > va) == HIGHER_IS_BETTER[field] else "worse"


def overall(verdicts):
    judged = [v for v in verdicts if v in ("same", "better", "worse")]
    if not judged:
        return "—"
    if "worse" in judged:
        return "worse"
    return "better" if "better" in judged else "same"


def fmt(m, field):
    if m is None:
        return "—"
    value, low, high, n = m
    digits = 1 if field in ("steady_rps", "pct_of_ceiling") else 0
    text = f"{value:.{digits}f}"
    if n >= 2:
        text += f" ({low:.{digits}f}–{high:.{digits}f})"
    return text


def change(a, b):
    if a is None or b is None:
        return "—"
    if a[0] == b[0]:
        return "="
    if a[0] == 0:
        return "new"
    return f"{100.0 * (b[0] - a[0]) / a[0]:+.1f} %"


def judge(ca, cb, rate="steady_rps", sleep_moved=False):
    """(metrics, verdicts, overall) of two cells: their throughput (steady req/s, or % of the
    ceiling where it moved) and their p99, each judged against the noise."""
    metrics, verdicts = {}, {}
    for field in (rate, "p99_ms"):
        ma, mb = metric(ca, field), metric(cb, field)
        metrics[field] = (ma, mb)
        if ma is None or mb is None:
            verdicts[field] = "—"
        elif field == "p99_ms" and (queue_bound(ca) or queue_bound(cb)):
            verdicts[field] = "— (queue)"
        elif field == "p99_ms" and sleep_moved:      # every response waits SLEEP_MS: its p99 moved with it
            verdicts[field] = "— (sleep)"
        else:
            verdicts[field] = verdict(ma, mb, field)
    return metrics, verdicts, overall(verdicts.values())


def compare(a, b, keys=None):
    """Rows (key, cells, metrics, verdicts, overall) for the cells in both runs (or those keys)."""
    rows = []
    for k in a if keys is None else keys:
        if k in b:
            rows.append((k, a[k], b[k], *judge(a[k], b[k])))
    return rows


def warmth_note(ca, cb):
    """Where the two cells were measured at a different warmth (issue 26): the JIT compiler's share
    of the app's CPU in the window on opposite sides of 5 %, or a warm-up that settled against one
    that did not. Their CPU differs by the compiler; their throughput rarely does. Empty where a
    run did not record it."""
    ja, jb = ca.get("jit_pct"), cb.get("jit_pct")
    notes = []
    if ja is not None and jb is not None and (ja > JIT_WARM) != (jb > JIT_WARM):
        notes.append(f"JIT {ja:.0f} % → {jb:.0f} % of the app's CPU")
    oa, ob = ca.get("warmup_outcome"), cb.get("warmup_outcome")
    if oa != ob and "no steady state" in (oa, ob):
        notes.append(f"warm-up {oa or ca.get('warmup_mode') or 'fixed'} → {ob or cb.get('warmup_mode') or 'fixed'}")
    return f" (warmth differs: {'; '.join(notes)})" if notes else ""


def rate_field(ca, cb, sleep_moved):
    """% of the ceiling where the ceiling moved (SLEEP_MS, CONNECTIONS) and both cells have one;
    steady req/s otherwise (and for an open-loop cell, which has no ceiling)."""
    moved = sleep_moved or ca.get("connections") != cb.get("connections")
    has = all(c.get("pct_of_ceiling") is not None for c in (ca, cb) if ok(c))
    return "pct_of_ceiling" if moved and has else "steady_rps"
