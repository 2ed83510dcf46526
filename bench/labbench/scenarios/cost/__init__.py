"""SCENARIO=cost (`make cost`, issue 39): what a request and a connection cost each model, in figures
that repeat from run to run and machine to machine.

Every variant (app[@container]:threads[:client], as in the sweep) serves the same open-loop load,
vegeta at RATE (1,000 req/s unless set: with the 1 s backend, 1,000 in flight), on COST_FORKS fresh
JVMs (forks, as JMH runs them; the forks of all variants interleaved, so the box's drift spreads over
all of them), the app on a CPU of its own (CPUSETS="app=1 rest=0" unless set). Each fork is warmed on
that load until its JIT settles, then measured over COST_WINDOWS windows by perf's software counters
on the app's process (CPU in ns, syscalls, context switches) and the JVM's own (heap bytes allocated,
GC), and /proc (Pss, threads). The card gives each figure per request with its 95 % interval over
the forks, and a ranking that calls a difference only where the intervals do.

  live.py      one fork: the load started once, the warm-up on it, the windows, the JVM at rest after
  counters.py  perf's and the JVM's counters of one window, and what they make per request
  card.py      the card, the ranking, the forks' spread
  compare.py   two cost runs against each other (make compare): run twice, two placements, the controls
"""
import math

from ... import catalog, settings
from ...checks import DURATION, UsageError, count, seconds_of, split_list
from ...knobs import setting
from ...report import charts
from ...report.fmt import f_int
from ...variants import parse_variants
from .. import Scenario
from . import card, compare, live, tiers

NAME = "cost"
DEFAULT_RATE = 1000
SETTINGS = (
    setting("COST_VARIANTS", catalog.default_variants("cost"),
            "`SCENARIO=cost`: its variants, `app[@container]:threads[:client]` as in `SWEEP_VARIANTS`; `conns` = a "
            "pool of 1.25 × the requests in flight; a pool that cannot hold them (RATE × SLEEP_MS) is left out, with why; "
            "`+agent`: the same with the lab's agent beside it (`-javaagent`, as under `APP_JAR`), and the card prices it",
            "list", meta="cost_variants"),
    setting("COST_FORKS", "3", "`SCENARIO=cost`: fresh JVMs per variant; each figure's interval is over them", "value"),
    setting("COST_WINDOWS", "3", "`SCENARIO=cost`: measured windows per fork, after its warm-up", "value"),
    # 4 s: the warm-up past the servers' first idle timeouts (live.FLOOR_S) made the default run 30m31s with 5 s
    setting("COST_WINDOW", "4s", "`SCENARIO=cost`: each window's length", "value"),
)
# Settings a cost run sets itself.
NOT_IN_COST = {"APPS": "COST_VARIANTS", "CONTAINERS": "COST_VARIANTS (app@container)", "THREADS": "COST_VARIANTS",
               "CONNECTIONS": "", "LOADGEN": "", "REPEAT": "COST_FORKS", "WRK_THREADS": "",
               "DURATION": "COST_WINDOWS x COST_WINDOW: its measured time per cell, and the calibration's"}


def parse(v):
    variants = parse_variants(v["COST_VARIANTS"], "jetty", "COST_VARIANTS")
    forks, windows = count("COST_FORKS", v["COST_FORKS"]), count("COST_WINDOWS", v["COST_WINDOWS"])
    if forks > 20 or windows > 20:
        raise UsageError("COST_FORKS and COST_WINDOWS: at most 20 each")
    if not DURATION.fullmatch(v["COST_WINDOW"]):
        raise UsageError(f"COST_WINDOW: '{v['COST_WINDOW']}' is not a duration like 5s")
    return {"cost_variants": variants, "cost_forks": forks, "cost_windows": windows,
            "cost_window_s": seconds_of(v["COST_WINDOW"])}


def pool_for(v, in_flight):
    """The --threads of a variant at this load: `conns` is 1.25 × the requests in flight."""
    return str(math.ceil(1.25 * in_flight)) if v.threads == "conns" else v.threads


def too_small(v, in_flight):
    """Why a platform pool cannot carry the load (its Little's-law bound below RATE), or None."""
    threads = pool_for(v, in_flight)
    if threads.isdigit() and v.container != "netty" and int(threads) < in_flight and v.app.startswith("sync"):
        return f"{v.id}: its {threads} threads hold at most {threads} of the {in_flight} requests in flight"
    return None


class Cost(Scenario):
    name = NAME
    settings = SETTINGS
    heading = ("SCENARIO=cost (make cost): every variant under the same open-loop load (vegeta at RATE, 1000 unless "
               "set), COST_FORKS fresh JVMs each, COST_WINDOWS windows each counted by perf and the JVM; the card gives "
               "each figure with its 95 % interval over the forks")
    fields = ("label", "fork", "warmup")
    own_csv = True
    own_summary = True
    csv_columns = ["label"] + [f"fork_{k}" for k in ("cpu_us", "cpu_us_with_rest", "speed_ns", "memory_ns", "gc_cpu_us", "jit_cpu_us",
                                                      "syscalls_per_req", "csw_per_req", "alloc_kib", "gc_per_1000",
                                                      "gc_ms_per_1000", "pss_mb_per_1000", "threads_per_1000", "rps",
                                                      "jit_pct_max", "errors", "carried", "client_conns")]
    has_ceiling = False
    calibrates_each_round = False     # its rounds are forks: 17 s a fork round for a ceiling the card does not use
    profiles_itself = True            # PROFILE=1: each measured window, not the warm-up (live.window)
    warms_on_its_load = True          # warmed on the measured load itself (live.warm_on_load), not wrk's fast calls

    def parse(self, v):
        return parse(v)

    def selected(self, argv, environ):
        return argv == [self.name] or self.name in split_list(environ.get("SCENARIO") or "")

    def environ(self, environ, n_cores):
        """Its matrix as the ordinary settings: APPS, CONTAINERS, THREADS from the variants, vegeta at RATE
        (1000 unless set), the app on CPU 1 and the rest on CPU 0 where the box has two and no HOSTS."""
        if split_list(environ.get("SCENARIO") or NAME) != [NAME]:
            raise UsageError(f"SCENARIO={environ.get('SCENARIO')}: cost runs alone (a matrix of its own)")
        for name, instead in NOT_IN_COST.items():
            if environ.get(name) and not (name == "REPEAT" and environ[name] == "1"):
                raise UsageError(f"{name}={environ[name]}: SCENARIO=cost sets {name} itself"
                                 + (f" ({instead})" if instead else ""))
        d = parse(settings.raw_values(environ))
        rate = environ.get("RATE") or str(DEFAULT_RATE)
        in_flight = round(int(rate) * int(environ.get("SLEEP_MS") or 1000) / 1000)
        fit = [v for v in d["cost_variants"] if not too_small(v, in_flight)] or d["cost_variants"]
        pinned = {} if environ.get("HOSTS") or environ.get("CPUSETS") or n_cores < 2 else {"CPUSETS": "app=1 rest=0"}
        env = dict(environ, SCENARIO=NAME, LOADGEN="vegeta", RATE=rate, **pinned,
                   DURATION=f"{d['cost_windows'] * d['cost_window_s']}s",
                   APPS=" ".join(dict.fromkeys(v.app for v in fit)),
                   CONTAINERS=" ".join(dict.fromkeys(v.container for v in fit)),
                   THREADS=" ".join(dict.fromkeys(pool_for(v, in_flight) for v in fit)))
        return env, d["cost_variants"]

    def with_drivers(self, s):
        raise UsageError("SCENARIO=cost: BACKEND=http only (the card prices the models around one remote call)")

    def fit_limits(self, environ, s, error, held):
        return None

    def in_flight(self, s):
        return round(s.rate * s.sleep_ms / 1000)

    def plan(self, s, make):
        """Fork-major: every variant's first JVM, then every variant's second...; one vegeta cell each."""
        cells = []
        for fork in range(1, s.cost_forks + 1):
            for v in s.variants:
                if too_small(v, self.in_flight(s)):
                    continue
                c = make(v.app, v.container, pool_for(v, self.in_flight(s)), None, None, v.id, v.client)
                c.scenario, c.loadgen, c.round, c.agent = self.name, "vegeta", fork, v.agent
                cells.append(c)
        return cells

    def left_out(self, s):
        return [why for v in s.variants if (why := too_small(v, self.in_flight(s)))]

    def params(self, s):
        if s.mode != self.name:
            return {}
        return {"rate": s.rate, "in_flight": self.in_flight(s), "cost_windows": s.cost_windows,
                "cost_window_s": s.cost_window_s, "work": s.raw.get("WORK") or ""}

    def measure(self, lab, cell, d, url, app):
        return live.measure(lab, cell, d, url, app)

    def meta_values(self, s):
        return {"mode": self.name, "cost_variants": " ".join(v.id for v in s.variants), "cost_forks": s.cost_forks,
                "cost_windows": s.cost_windows, "cost_window": s.raw["COST_WINDOW"],
                **{f"variant_label.{v.id}": v.label for v in s.variants}}

    def starting_lines(self, s):
        return [f"== cost: {len(s.variants)} variants x {s.cost_forks} fresh JVMs, vegeta at {s.rate} req/s "
                f"({self.in_flight(s)} in flight), {s.cost_windows} windows of {s.raw['COST_WINDOW']} each after a "
                f"warm-up on that load"] + [f"   {v.id:28s} {v.label}" for v in s.variants]

    # ---- the report
    def figures(self, record, d):
        return card.cell_figures(record, d)

    def summary(self, rec):
        f = (rec.get("cost") or {}).get("fork")
        if not f:
            return None
        return (f"fork {rec.get('round')}: CPU {f['cpu_us'] or 0:.1f} µs/req, {f['syscalls_per_req'] or 0:.2f} syscalls/req, "
                f"{f['alloc_kib'] or 0:.2f} KiB/req, {f_int(round(f['rps'] or 0))} req/s, JIT ≤ {f['jit_pct_max'] or 0:.1f} %"
                + (f", box {f['speed_ns']:.1f} ns/it" if f.get("speed_ns") else ""))

    def verdict(self, run):
        return ("## Verdict: what a request costs each model, mean ± 95 % interval over its fresh JVMs\n\n"
                + card.card_table(run) + "\n" + card.still_warming_line(run) + card.unwhole_line(run) + card.steal_line(run) + card.speed_line(run)
                + "\n".join(card.ranking(run) + card.agent_lines(run)) + "\n")

    def compare(self, run_a, run_b):
        return compare.compare(run_a, run_b)

    def charts(self, run_dir, run, draw=False):
        if draw and card.variants(run):
            charts.draw("cost_charts.py", run_dir, "cost chart")
        return [("cost-card", "CPU, allocation, syscalls and context switches per request, 95 % intervals")] \
            if (run_dir / "charts" / "cost-card.png").exists() else []

    def sections(self, run, ctx):
        spread = card.spread_lines(run)
        chart = "".join(f"\n![{title}](charts/{name}.png)\n\n(also as [{name}.svg](charts/{name}.svg); a bar is a "
                        f"mean over the forks, its whisker the 95 % interval)\n" for name, title in ctx.charts
                        if name == "cost-card")
        return [(10, "\n## The cost card: the forks that spread\n\n"
                 + ("\n".join(spread) if spread else "Every variant's CPU interval is within "
                    f"± {card.SPREAD_PCT:g} % of its median, its syscalls' within ± {card.PORTABLE_PCT:g} %.") + "\n" + chart),
                (11, tiers.section(card.variants(run)))]


SCENARIO = Cost()
