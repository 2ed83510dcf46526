"""The box's speed in each measured window, and how much of the windows' CPU it explains (issue 39).

bench/tools/speed-probe.py runs on the app's CPUs during every window and times two fixed loops in its
own CPU time: one that computes in the core's caches (ns an iteration), one that walks a 64 MiB
buffer 4 MiB + 15 bytes at a time (ns a step; mostly the cache the core shares). Neither depends on the model; both move on this shared box from one spell to the
next. The card fits, over every kept window of the run, how the app's CPU per request moves with them:

    log(CPU / its variant's mean) = a · log(compute / median) + b · log(memory / median)

(least squares, each variant's own level taken out first, so only the run's windows' differences are
fitted). R² says how much of the windows' spread the box's speed explains; CPU "at median speed" is
each window's CPU × (median / compute)^a × (median / memory)^b, then the fork's mean, as the card's
other figures. Two free numbers over a run's ~72 windows: a fit to noise alone would explain ~3 %;
below MIN_WINDOWS there is no fit.
"""
import math
import statistics
from dataclasses import dataclass

# Fewer windows than this over the run: no fit, no figure at median speed. Two numbers fitted to n
# windows explain ~2/n of pure noise; a 2-fork HOSTS run's 6 windows fitted compute^5.25 (2026-11-27).
MIN_WINDOWS = 18


@dataclass
class Model:
    a: float                 # CPU ∝ compute^a ...
    b: float                 # ... × memory^b (0 where the walk was not timed)
    compute_ns: float        # the medians the figures are taken at
    memory_ns: float | None
    r2: float                # the share of the windows' CPU variance (log) the fit explains
    windows: int

    def at_speed(self, cpu_us, compute, memory):
        if cpu_us is None or not compute or (self.b and not memory):
            return None
        return cpu_us * (self.compute_ns / compute) ** self.a * ((self.memory_ns / memory) ** self.b if self.b else 1.0)


def window_readings(windows, raws):
    """[[CPU µs/req, compute ns/it, memory ns/step]] per kept window (None where a reading is missing)."""
    out = []
    for w, raw in zip(windows, raws):
        speed = raw.get("speed") or {}
        out.append([w.get("cpu_us"), speed.get("ns_per_iteration"), speed.get("ns_per_step")])
    return out


def fit(rows):
    """rows: [(label, [fork figures])]. The Model fitted over every window with its readings, or None."""
    groups = [[w for f in forks for w in f.get("speed_windows") or () if w[0] and w[0] > 0 and w[1]]
              for _, forks in rows]
    windows = [w for g in groups for w in g]
    if len(windows) < MIN_WINDOWS:
        return None
    with_memory = all(w[2] for w in windows)
    compute_ref = statistics.median(w[1] for w in windows)
    memory_ref = statistics.median(w[2] for w in windows) if with_memory else None
    ys, x1s, x2s = [], [], []
    for g in groups:
        if not g:
            continue
        y = [math.log(w[0]) for w in g]
        x1 = [math.log(w[1] / compute_ref) for w in g]
        x2 = [math.log(w[2] / memory_ref) if with_memory else 0.0 for w in g]
        for col, out in ((y, ys), (x1, x1s), (x2, x2s)):
            m = statistics.fmean(col)
            out += [v - m for v in col]
    a, b = least_squares(ys, x1s, x2s if with_memory else None)
    total = sum(v * v for v in ys)
    resid = sum((y - a * p - b * q) ** 2 for y, p, q in zip(ys, x1s, x2s))
    return Model(a, b, compute_ref, memory_ref, 1 - resid / total if total else 0.0, len(windows))


def least_squares(y, x1, x2=None):
    """(a, b) minimising Σ(y − a·x1 − b·x2)² (no intercept: every column is centred); b = 0 without x2."""
    s11, s1y = sum(p * p for p in x1), sum(p * v for p, v in zip(x1, y))
    if x2 is None:
        return (s1y / s11 if s11 else 0.0), 0.0
    s22, s12, s2y = sum(q * q for q in x2), sum(p * q for p, q in zip(x1, x2)), sum(q * v for q, v in zip(x2, y))
    det = s11 * s22 - s12 * s12
    if not det:
        return (s1y / s11 if s11 else 0.0), 0.0
    return (s1y * s22 - s2y * s12) / det, (s2y * s11 - s1y * s12) / det


def at_speed(fork, model):
    """The fork's CPU µs/req at the model's median speeds: the mean over its windows, each divided."""
    if model is None or not fork.get("speed_windows"):
        return None
    each = [model.at_speed(*w) for w in fork["speed_windows"]]
    return statistics.fmean(each) if each and None not in each else None
