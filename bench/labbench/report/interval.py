"""Figures with their error, from forks (issue 39): a mean with its 95 % confidence interval over
fresh JVMs, as JMH prints "score ± error", and the ratio of two such figures with its interval, so
that a ranking calls a difference only where the intervals say there is one. Standard library only:
Student's t quantiles from a table (two-sided 95 %), Welch's degrees of freedom for a ratio."""
import math
import statistics
from dataclasses import dataclass
from typing import Optional

# Student's t, two-sided 95 % (0.975 quantile), by degrees of freedom; past 30 the normal's 1.96
# is within 2 %, and the table's last rows are used.
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        12: 2.179, 15: 2.131, 20: 2.086, 25: 2.060, 30: 2.042, 60: 2.000, 120: 1.980}


def t975(df):
    """The 0.975 quantile of Student's t with df degrees of freedom (df may be fractional: Welch)."""
    if df < 1:
        return math.inf
    keys = sorted(T975)
    if df >= keys[-1]:
        return 1.960
    lo = max(k for k in keys if k <= df)
    hi = min(k for k in keys if k >= df)
    if lo == hi:
        return T975[lo]
    # between two rows: linear in 1/df, as t's quantiles are nearly
    f = (1 / lo - 1 / df) / (1 / lo - 1 / hi)
    return T975[lo] + f * (T975[hi] - T975[lo])


@dataclass(frozen=True)
class Interval:
    """A figure over n forks: its mean, median, sample standard deviation and 95 % interval."""
    n: int
    mean: float
    median: float
    sd: float
    low: float
    high: float

    @property
    def half_width(self):
        return (self.high - self.low) / 2

    @property
    def half_width_pct(self):
        """The interval's half-width as % of the median (issue 39's ≤ 5 %, ≤ 2 % targets)."""
        return 100 * self.half_width / abs(self.median) if self.median else None

    def holds(self, value):
        return self.low <= value <= self.high

    def disjoint(self, other):
        return self.high < other.low or other.high < self.low

    def text(self, fmt="{:.1f}"):
        """eg, "123.4 ± 2.1" (n = 3 is said once per table, not per figure)."""
        return f"{fmt.format(self.mean)} ± {fmt.format(self.half_width)}"


def interval(values) -> Optional[Interval]:
    """The mean of values (one per fork) and its 95 % interval, t-based; None for no value. One
    value has no spread: its interval is the value itself, and says so by n = 1."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return None
    m = statistics.fmean(xs)
    if len(xs) == 1:
        return Interval(1, m, m, 0.0, m, m)
    sd = statistics.stdev(xs)
    e = t975(len(xs) - 1) * sd / math.sqrt(len(xs))
    return Interval(len(xs), m, statistics.median(xs), sd, m - e, m + e)


@dataclass(frozen=True)
class Ratio:
    """X / Y of two means over forks, with its 95 % interval (the delta method on log(X / Y), Welch's
    degrees of freedom): "X costs 0.62× Y's CPU, 95 % CI 0.58–0.66"."""
    value: float
    low: float
    high: float

    @property
    def separable(self):
        """The interval excludes 1: X and Y differ, by the intervals."""
        return self.high < 1 or self.low > 1


def ratio(x: Interval, y: Interval) -> Optional[Ratio]:
    if not (x and y) or x.mean <= 0 or y.mean <= 0:
        return None
    if x.n < 2 or y.n < 2:
        return Ratio(x.mean / y.mean, math.nan, math.nan)
    vx, vy = (x.sd / x.mean) ** 2 / x.n, (y.sd / y.mean) ** 2 / y.n     # variances of log(mean), delta method
    se = math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / ((vx ** 2 / (x.n - 1) if vx else 0) + (vy ** 2 / (y.n - 1) if vy else 0)) if se else math.inf
    r = x.mean / y.mean
    e = t975(df) * se
    return Ratio(r, r * math.exp(-e), r * math.exp(e))


@dataclass(frozen=True)
class Difference:
    """B − A of two means over forks, with its 95 % interval (Welch): what a control added."""
    value: float
    low: float
    high: float


def difference(b: Interval, a: Interval) -> Optional[Difference]:
    if not (a and b):
        return None
    d = b.mean - a.mean
    if a.n < 2 or b.n < 2:
        return Difference(d, math.nan, math.nan)
    va, vb = a.sd ** 2 / a.n, b.sd ** 2 / b.n
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / ((va ** 2 / (a.n - 1) if va else 0) + (vb ** 2 / (b.n - 1) if vb else 0)) if se else math.inf
    e = t975(df) * se
    return Difference(d, d - e, d + e)
