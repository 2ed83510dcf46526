#!/usr/bin/env python3
"""Compare two bench runs cell by cell and say, per cell, whether it changed beyond the noise
(what `make compare` prints, as Markdown).

Usage: bench/compare.py A B
  A, B: a run directory (results/<stamp>, results/latest) or its results.json; RUN@N is round N
  of a REPEAT run (eg, A=results/latest@1 B=results/latest@2: the run's own noise).

First, what B changed: each setting both runs recorded (meta.txt: THREADS, APPS, SLEEP_MS, APP_ARGS,
DB_POOL, ..., the JDK, the commit, the machine) and the hypervisor steal their cells saw, named
where it differs, narrowed or widened, and the rest listed as the same.

Cells are joined on (scenario, load generator, app, container, threads, wrk threads, connections,
sweep variant, client, database driver). For the
steady-state throughput and the p99 of each cell it prints A, B, the change, and a verdict:
  same    the difference is within the noise;
  better  / worse: beyond the noise, in that direction (more req/s, lower p99 is better);
  —       not judged (a failed or skipped cell, or a p99 that is noise by nature, see below).
What "the noise" is:
  * both runs have repeats (REPEAT >= 2): the runs' own spread. The cell changed only when the two
    min–max ranges do not overlap.
  * otherwise: the noise floor below, measured on this lab's reference machine and documented in
    docs/findings/comparing-runs.md: the largest change seen between runs of the same commit, rounded up.
The p99 of a queue-bound cell (a thread-per-request app with more connections than threads) is not
judged: which queued connections a container serves first changes from run to run (the p99 of one
such cell moved from 1.0 s to 10 s between runs of the same commit), so its throughput decides.
A summary line counts the cells that changed beyond the noise.

Then the cells B's change moved, paired with their A cell and each side's Little's-law bound:
  * a cell whose key is the same but whose bound moved (SLEEP_MS, DB_POOL, RATE changed);
  * a cell that matches one of A on every key field but the knobs B replaced values of (THREADS
    `1 200 v1` → `1 8`, CONTAINERS, CLIENT, WRK_THREADS, CONNECTIONS, the sweep's variants),
    one to one; where it is not one to one, the cells side by side, grouped by what did not change.
Where the ceiling moved (SLEEP_MS, CONNECTIONS) a pair is judged on % of the ceiling, not req/s.
Runs with nothing to compare (no cell in common, none paired) exit 2 with one line saying what to
run instead. Python 3 standard library only.
"""
import re
import sys
from pathlib import Path

# variant: two sweep variants can meet in one cell (sync-servlet:200 and :conns at 200 connections).
KEY = ("scenario", "loadgen", "app", "container", "threads", "wrk_threads", "connections", "variant", "client",
       "db_driver",    # BACKEND=postgres: the app's database driver (None for the HTTP backend)
       "again")        # the same settings measured again in one round (figures.mark_again)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))      # bench/, also when run as a file
from labbench import catalog, plugins, scenarios  # noqa: E402,F401  (plugins: its command line needs them registered)
from labbench.report.figures import read_results  # noqa: E402  (a cell's scenario part and older flat files alike)
from labbench.report.fmt import pool_move  # noqa: E402

# For runs from before these fields existed: the default scenario, load generator and client.
DEFAULTS = {"scenario": scenarios.DEFAULT, "loadgen": "wrk", "client": catalog.DEFAULT_CLIENT}
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


def usage_error(message):
    print(f"ERROR: {message}", file=sys.stderr)
    print("Usage: make compare A=<run dir or results.json> B=<run dir or results.json>\n"
          "   eg, make compare A=results/20261121T120000Z B=results/latest\n"
          "       make compare A=results/latest@1 B=results/latest@2   (two rounds of a REPEAT run)", file=sys.stderr)
    sys.exit(2)


def key_of(cell):
    return tuple(cell.get(k) or DEFAULTS.get(k) for k in KEY)


def app_text(key):
    """The app, and its client when it is not the default one, and its database driver if any."""
    text = key[2] if key[8] == DEFAULTS["client"] else f"{key[2]} · {key[8]} client"
    return text + (f" · {key[9]}" if key[9] else "")


def load_text(key):
    """The load column: wrk's -t/-c, or vegeta's open loop."""
    text = "vegeta (open loop)" if key[1] == "vegeta" else f"-t{key[5]} -c{key[6]}"
    return text + (" again" if key[10] else "")     # the same settings measured again (figures.mark_again)


def load(arg, name):
    """A run's meta and cells by key. RUN@N picks round N of a REPEAT run (judged as a run of its own)."""
    if not arg:
        usage_error(f"{name} is missing")
    where, _, rnd = arg.rpartition("@") if "@" in arg else (arg, "", "")
    path = Path(where)
    if path.is_dir():
        path = path / "results.json"
    try:
        run = read_results(path)
        cells = run["cells"]
    except FileNotFoundError:
        usage_error(f"{name}={arg}: no such run ({path} not found)")
    except (ValueError, KeyError, TypeError):
        usage_error(f"{name}={arg}: {path} is not a bench results.json")
    meta = run.get("meta", {})
    if rnd:
        if rnd not in run.get("rounds", {}):
            usage_error(f"{name}={arg}: no round {rnd} in {path} (it has {', '.join(run.get('rounds', {})) or 'one round'})")
        cells, meta = run["rounds"][rnd], dict(meta, repeat=1)
    # How the cells got their JVMs is the bench's, not a setting: said where two runs differ in it.
    grown, switched = (sum(1 for c in cells if pool_move(c) == kind) for kind in ("grown", "switched"))
    meta = dict(meta, jvms=" and ".join([f"{grown} pool{'s' * (grown != 1)} grown"] * bool(grown)
                                         + [f"{switched} switched to virtual threads"] * bool(switched)) + " on a running JVM"
                if grown or switched else "a fresh JVM per pool")
    return meta, {key_of(c): c for c in cells}


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


def describe(meta, cells, arg):
    repeats = meta.get("repeat") or 1
    text = (f"`{arg}` ({meta.get('date', '?')}, {meta.get('duration_s', '?')} s cells, sleep "
            f"{meta.get('sleep_ms', '?')} ms, {repeats} round{'s' if repeats != 1 else ''})")
    if cells and all(c.get("steady_rps") is None for c in cells.values()):
        text += " — an older run without steady req/s: its wrk req/s is used, window step and all"
    return text


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


def status_text(cell):
    return "FAILED" if str(cell.get("status", "")).startswith("FAILED") else "SKIPPED"


# ---- what B changed: the settings both runs recorded in meta.txt (results.json's meta)

def _words(key, derived_in_sweep=False):
    """A setting as meta.txt has it, lists as typed. A sweep derives APPS, CONTAINERS, THREADS and
    CONNECTIONS from SWEEP_VARIANTS and SWEEP: those two say it, the four would repeat them."""
    def get(m):
        v = m.get(key)
        if v is None or (derived_in_sweep and m.get("mode") == "sweep"):
            return None
        return " ".join(map(str, v)) if isinstance(v, list) else str(v)
    return get


def _where(key, used):
    """A setting that matters only where the run used it: every meta.txt records RATE, FANOUT, ...,
    their defaults too."""
    return lambda m: _words(key)(m) if used(m) else None


def _ran(prefix):
    return lambda m: any(str(s).startswith(prefix) for s in m.get("scenarios") or [])


def _jdk(m):
    found = re.search(r'version "([^"]+)"', m.get("jdk") or "")
    return found.group(1) if found else m.get("jdk")


# (name, value of a run's meta, kind): "list" is a set of values (narrowed, widened or changed),
# "value" one value, "quiet" one not named among the settings that are the same (versions that
# follow the commit, the backend of an HTTP run). CLIENT is not in meta.txt: the cells say it.
SETTINGS = (
    ("mode", lambda m: m.get("mode") or "matrix", "quiet"),
    ("SCENARIO", _words("scenarios"), "list"),
    ("LOADGEN", _words("loadgens"), "list"),
    ("APPS", _words("apps", True), "list"),
    ("CONTAINERS", _words("containers", True), "list"),
    ("THREADS", _words("threads", True), "list"),
    ("CLIENT", None, "list"),
    ("WRK_THREADS", _words("wrk_threads"), "list"),
    ("CONNECTIONS", _words("connections", True), "list"),
    ("SWEEP", _words("sweep"), "list"),
    ("SWEEP_VARIANTS", _words("sweep_variants"), "list"),
    ("FAULT", _words("fault"), "value"),
    ("MAX_IN_FLIGHT", _words("max_in_flight_values"), "list"),
    ("DEGRADE_VARIANTS", _words("degrade_variants"), "list"),
    ("FAULT_AT", _words("fault_at"), "value"),
    ("FAULT_FOR", _words("fault_for"), "value"),
    ("AFTER", _words("after"), "value"),
    ("GOODPUT_DEADLINE", _words("goodput_deadline"), "value"),
    ("RATE", _where("rate", lambda m: "vegeta" in (m.get("loadgens") or [])), "value"),
    ("SLOW_CLIENTS", _where("slow_clients", _ran("slow")), "value"),
    ("SLOW_RATE", _where("slow_rate", _ran("slow")), "value"),
    ("FANOUT", _where("fanout", _ran("fanout")), "list"),
    ("FANOUT_MS", _where("fanout_ms", _ran("fanout")), "value"),
    ("FANOUT_APPS", _where("fanout_apps", _ran("fanout")), "list"),
    ("DURATION", lambda m: None if m.get("duration_s") is None else f"{m['duration_s']} s", "value"),
    ("SLEEP_MS", _words("sleep_ms"), "value"),
    ("WARMUP", lambda m: "auto" if m.get("warmup") == "auto" else
     None if m.get("warmup_s") is None else f"{m['warmup_s']} s", "value"),
    ("REPEAT", _words("repeat"), "value"),
    ("JAVA_OPTS", _words("java_opts"), "value"),
    ("APP_ARGS", _words("app_args"), "value"),
    ("BACKEND", lambda m: m.get("backend") or "http", "quiet"),
    ("CPUSETS", lambda m: (m.get("cpusets") or "not pinned") if "cpusets" in m else None, "quiet"),
    ("HOSTS", lambda m: m.get("hosts") or "one machine", "quiet"),
    ("JVMs", lambda m: m.get("jvms"), "quiet"),
    ("DB_POOL", _words("db_pool"), "value"),
    ("DB_QUERY", _words("db_query"), "value"),
    ("DB_DRIVERS", _words("db_drivers"), "list"),
    ("DB_EXECUTOR_THREADS", _words("db_executor_threads"), "value"),
    ("DB_ACQUIRE_TIMEOUT_MS", _words("db_acquire_timeout_ms"), "value"),
    ("JDK", _jdk, "value"),
    ("commit", _words("git"), "value"),
    ("CPU", _words("cpu"), "value"),
    ("OS", _words("os"), "value"),
    ("Jetty", _words("jetty"), "quiet"),
    ("Tomcat", _words("tomcat"), "quiet"),
    ("Spring", _words("spring"), "quiet"),
    ("wrk", _words("wrk"), "quiet"),
    ("vegeta", _where("vegeta", lambda m: "vegeta" in (m.get("loadgens") or [])), "quiet"),
)
# Run-wide settings that move a cell's bound or ceiling without changing its key: a pair of the
# same key whose bound moved is shown with them (DB_POOL 10 → 50), not in the table.
RUN_WIDE = ("SLEEP_MS", "RATE", "DB_POOL", "DB_QUERY", "DB_EXECUTOR_THREADS", "APP_ARGS", "JAVA_OPTS")
STEAL_NOISY = 10.0    # % of the box: above it figures move more than the noise (summary.steal_line)


def values(run, field):
    """A key field's values over a run's cells, in their order (None, a field the run lacks, left out)."""
    i = KEY.index(field)
    return [str(v) for v in dict.fromkeys(k[i] for k in run) if v is not None]


def highest_steal(run):
    steal = [c["cpu_steal_pct"] for c in run.values() if ok(c) and c.get("cpu_steal_pct") is not None]
    return max(steal) if steal else None


def settings_diff(meta_a, meta_b, a, b):
    """[(name, A's text, B's text, how, kind)]: how is same, changed, narrowed (B ran a part of A's
    values) or widened; a setting either run did not record is left out (an older run, an HTTP run's
    DB_POOL: BACKEND says that change)."""
    out = []
    for name, get, kind in SETTINGS:
        if get is None:          # CLIENT: from the cells
            va, vb = " ".join(values(a, "client")), " ".join(values(b, "client"))
        else:
            va, vb = get(meta_a), get(meta_b)
        if va is None or vb is None:
            continue
        sa, sb = set(va.split()), set(vb.split())
        if va == vb or (kind == "list" and sa == sb):
            how = "same"
        elif kind == "list" and sb < sa:
            how = "narrowed"
        elif kind == "list" and sa < sb:
            how = "widened"
        else:
            how = "changed"
        out.append((name, va, vb, how, kind))
    ha, hb = highest_steal(a), highest_steal(b)
    if ha is not None and hb is not None:
        # steal slows every cell alike: named where one run had a busy host, not for 0.1 % → 0.3 %
        noisy = max(ha, hb) >= STEAL_NOISY and f"{ha:.1f}" != f"{hb:.1f}"
        out.append(("steal", f"{ha:.1f} %", f"{hb:.1f} %", "changed" if noisy else "same", "value"))
    return out


def code(text):
    return f"`{text}`" if text else "(none)"


def settings_text(diff):
    """One paragraph: what B changed, narrowed and widened, and what stayed the same."""
    changed = [f"{name} {code(va)} → {code(vb)}" if name != "steal" else
               f"hypervisor steal (highest of a cell) {va} → {vb} of the box: above ~{STEAL_NOISY:g} % figures "
               "move between runs more than the noise"
               for name, va, vb, how, _ in diff if how == "changed"]
    parts = ["B changed " + ", ".join(changed) if changed else "B changed no recorded setting"]
    for how in ("narrowed", "widened"):
        named = [f"{name} to {code(vb)}" for name, _, vb, h, _ in diff if h == how]
        if named:
            parts.append(f"{how} " + ", ".join(named))
    same = []
    for name, va, _, how, kind in diff:
        if how == "same" and kind != "quiet":
            # two runs of one commit with uncommitted changes may differ in those changes
            same.append(name + (" (uncommitted changes in both)" if name == "commit" and "uncommitted" in va else ""))
    if same:
        parts.append("the same: " + ", ".join(same))
    return "**Settings:** " + "; ".join(parts) + "."


# ---- pairing across what B changed

# Key fields a user tweaks between runs; a knob B replaced values of (not only narrowed or widened)
# pairs cells across it.
KNOBS = {"threads": "THREADS", "container": "CONTAINERS", "client": "CLIENT", "wrk_threads": "WRK_THREADS",
         "connections": "CONNECTIONS", "variant": "the sweep's variants"}
WORD = {"threads": "threads", "container": "container", "client": "client", "wrk_threads": "wrk threads",
        "connections": "connections", "variant": "variant"}
# Words for every key field: the error line of runs with nothing to compare names them as settings.
SETTING_OF = {"scenario": "SCENARIO", "loadgen": "LOADGEN", "app": "APPS", **KNOBS, "variant": "SWEEP_VARIANTS",
              "db_driver": "DB_DRIVERS"}


def replaced_knobs(a, b):
    """The knobs B replaced values of: A ran values B did not and B values A did not (THREADS
    `1 200 v1` → `1 8`). One only narrowed or widened pairs nothing: what it left out is not in
    the other run at all."""
    out = []
    for f in KNOBS:
        va, vb = set(values(a, f)), set(values(b, f))
        if va - vb and vb - va:
            out.append(f)
    return out


def reduced(k, knobs):
    return tuple(v for f, v in zip(KEY, k) if f not in knobs)


def virtual(k):
    return str(k[KEY.index("threads")]).startswith("v")


def predecessor(kb, keys_a, knobs):
    """The A cell a B cell replaced, in a group that is not one to one: of the same kind of threads
    (200 → 8, not v1 → 8) and differing from it in the fewest knobs; None where that is not one cell."""
    kinds = [ka for ka in keys_a if virtual(ka) == virtual(kb)]
    diffs = {ka: sum(ka[KEY.index(f)] != kb[KEY.index(f)] for f in knobs) for ka in kinds}
    fewest = [ka for ka, n in diffs.items() if n == min(diffs.values())]
    return fewest[0] if len(fewest) == 1 else None


def pair_across(a, b, knobs):
    """The cells in one run only, grouped by every key field but the knobs: (pairs of keys for the
    groups of one A and one B cell, [(A keys, B keys)] for the others with cells on both sides)."""
    groups = {}
    for side, run, other in ((0, a, b), (1, b, a)):
        for k in run:
            if k not in other:
                groups.setdefault(reduced(k, knobs), ([], []))[side].append(k)
    pairs = [(ga[0], gb[0]) for ga, gb in groups.values() if len(ga) == 1 and len(gb) == 1]
    sides = [(ga, gb) for ga, gb in groups.values() if ga and gb and (len(ga), len(gb)) != (1, 1)]
    return pairs, sides


def label(k, knobs):
    """What two paired cells share: scenario · app · container · threads · load, less the knobs."""
    f = dict(zip(KEY, k))
    app = f["app"] + (f" · {f['client']} client" if "client" not in knobs and f["client"] != DEFAULTS["client"] else "")
    parts = [f["scenario"], app + (f" · {f['db_driver']}" if f["db_driver"] else "")]
    parts += [f["container"]] if "container" not in knobs else []
    parts += [f"threads {f['threads']}"] if "threads" not in knobs else []
    if f["loadgen"] == "vegeta":
        parts.append("vegeta (open loop)")
    else:
        load = [f"-t{f['wrk_threads']}"] if "wrk_threads" not in knobs else []
        load += [f"-c{f['connections']}"] if "connections" not in knobs else []
        parts += [" ".join(load)] if load else []
    return " · ".join(parts)


def knob_fields(ka, kb, knobs):
    """The knobs two keys differ in; the sweep variant only where nothing else says it (it names
    its app, container and threads)."""
    fields = [f for f in knobs if ka[KEY.index(f)] != kb[KEY.index(f)]]
    return [f for f in fields if f != "variant" or fields == ["variant"]]


def change_text(ka, kb, ca, cb, fields):
    """'threads 200 → 8', from the keys (an older run's cell has no client: the key has the default);
    a degrade variant by its MAX_IN_FLIGHT, the one thing its id adds."""
    parts = [f"{WORD[f]} {ka[KEY.index(f)]} → {kb[KEY.index(f)]}" for f in fields]
    if ca.get("max_in_flight_limit") != cb.get("max_in_flight_limit") and "variant" in fields:
        parts = [f"max in flight {ca.get('max_in_flight_limit')} → {cb.get('max_in_flight_limit')}"]
    return ", ".join(parts)


def knob_text(k, knobs):
    """One cell's values of the knobs, in a group: 'threads 200'."""
    fields = [f for f in knobs if f != "variant"] or list(knobs)
    return ", ".join(f"{WORD[f]} {k[KEY.index(f)]}" for f in fields)


def rate_field(ca, cb, sleep_moved):
    """% of the ceiling where the ceiling moved (SLEEP_MS, CONNECTIONS) and both cells have one;
    steady req/s otherwise (and for an open-loop cell, which has no ceiling)."""
    moved = sleep_moved or ca.get("connections") != cb.get("connections")
    has = all(c.get("pct_of_ceiling") is not None for c in (ca, cb) if ok(c))
    return "pct_of_ceiling" if moved and has else "steady_rps"


def number(v):
    return "?" if v is None else f"{round(v, 1):g}"


def shown(c, field):
    return fmt(metric(c, field), field) if ok(c) else status_text(c)


P99_NOT_JUDGED = {"— (queue)": " (not judged: queue order)", "— (sleep)": " (not judged: SLEEP_MS moved it)"}


def figures(cells, rate, p99_verdict=""):
    """'99.2 → 8.0 req/s (bound 100 → 8), 99.2 → 8.0 % of the ceiling, p99 1070 → 12410 ms' for one
    or two cells; a bound both sides share is said once."""
    bounds = [number(c.get("bound_rps")) for c in cells]
    text = (f"{' → '.join(shown(c, 'steady_rps') for c in cells)} req/s "
            f"(bound {bounds[0] if len(set(bounds)) == 1 else ' → '.join(bounds)})")
    if rate == "pct_of_ceiling":
        text += f", {' → '.join(shown(c, rate) for c in cells)} % of the ceiling"
    return text + f", p99 {' → '.join(shown(c, 'p99_ms') for c in cells)} ms{P99_NOT_JUDGED.get(p99_verdict, '')}"


def bold(v):
    return f"**{v}**" if v in ("better", "worse") else v


def pair_line(ka, kb, ca, cb, knobs, what, sleep_moved, counts):
    rate = rate_field(ca, cb, sleep_moved)
    _, verdicts, cell_verdict = judge(ca, cb, rate, sleep_moved)
    counts[cell_verdict] += 1
    return (f"- {label(ka, knobs)}: {what}: {figures([ca, cb], rate, verdicts['p99_ms'])}: {bold(cell_verdict)}"
            f"{warmth_note(ca, cb)}")


def side_lines(keys_a, keys_b, a, b, knobs, sleep_moved, counts):
    """A group that is not one to one: A's cells, then B's, each B cell judged against the A cell it
    replaced where that is one cell (predecessor)."""
    shown_rate = "pct_of_ceiling" if sleep_moved or "connections" in knobs else "steady_rps"
    lines = [f"- {label(keys_a[0], knobs)}:"]
    for ka in keys_a:
        lines.append(f"  - A {knob_text(ka, knobs)}: {figures([a[ka]], shown_rate)}")
    for kb in keys_b:
        line = f"  - B {knob_text(kb, knobs)}: {figures([b[kb]], shown_rate)}"
        ka = predecessor(kb, keys_a, knobs)
        if ka is not None:
            rate = rate_field(a[ka], b[kb], sleep_moved)
            v = judge(a[ka], b[kb], rate, sleep_moved)[2]
            counts[v] += 1
            line += (f"; against A's {knob_text(ka, knobs)}"
                     f"{' (on % of the ceiling)' if rate == 'pct_of_ceiling' else ''}: {bold(v)}")
        lines.append(line)
    return lines


def bound_moved(ca, cb):
    """Both cells have a Little's-law bound and they differ (a run from before bounds has none)."""
    return None not in (ca.get("bound_rps"), cb.get("bound_rps")) and ca["bound_rps"] != cb["bound_rps"]


def nothing_shared(a, b):
    """The one line of a compare with no cell in common and none paired: what kept them apart, and
    what to run instead."""
    if not a or not b:
        return (f"{'A' if not a else 'B'} has no cell: compare two runs that measured cells "
                "(results/<stamp>/results.md lists them)")
    apart = [(SETTING_OF[f], values(a, f), values(b, f)) for f in KEY
             if values(a, f) and values(b, f) and not set(values(a, f)) & set(values(b, f))]
    said = "; ".join(f"A ran {name} {code(' '.join(va))}, B {code(' '.join(vb))}" for name, va, vb in apart)
    rerun = " ".join(f'{name}="{" ".join(va)}"' for name, va, _ in apart)
    what = (f" ({said}): run B's settings again with A's {rerun}" if apart else
            ": run B's settings again with A's in all but the one setting you meant to change")
    return ("A and B share no cell, and no cell of B differs from one of A only in a setting B changed"
            + what + ", and compare that run with A")


def counts_text(counts, what):
    return (f"**{sum(counts.values())} {what}: {counts['same']} same, {counts['better']} better, {counts['worse']} "
            "worse beyond the noise" + (f", {counts['—']} not judged (failed or skipped)" if counts["—"] else "")
            + "**")


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        usage_error("give two runs: A and B")
    meta_a, a = load(argv[1], "A")
    meta_b, b = load(argv[2], "B")
    both_repeat = (meta_a.get("repeat") or 1) >= 2 and (meta_b.get("repeat") or 1) >= 2
    print(f"A = {describe(meta_a, a, argv[1])}  \nB = {describe(meta_b, b, argv[2])}\n")
    diff = settings_diff(meta_a, meta_b, a, b)
    print(settings_text(diff) + "\n")
    # A cell of the same key whose bound or ceiling moved (B changed SLEEP_MS, DB_POOL, RATE) is
    # shown with the pairs, its bound beside it, not in the table of cells run alike.
    sleep_moved = None not in (meta_a.get("sleep_ms"), meta_b.get("sleep_ms")) and meta_a["sleep_ms"] != meta_b["sleep_ms"]
    moved = [k for k in a if k in b and (sleep_moved or bound_moved(a[k], b[k]))]
    same_keys = [k for k in a if k in b and k not in moved]
    knobs = replaced_knobs(a, b)
    pairs, sides = pair_across(a, b, knobs)
    if not same_keys and not moved and not pairs and not sides:
        # never an empty table: one line under the settings paragraph, which said what differs; exit 2
        # as a usage error does, but returned, so a caller reading stdout keeps that paragraph
        print(f"ERROR: {nothing_shared(a, b)}", file=sys.stderr)
        return 2
    if both_repeat:
        print("Noise: each run's own min–max over its rounds (ranges in brackets); a cell changed only "
              "where the ranges do not overlap.\n")
    else:
        print(f"Noise: the lab's measured floor, ±{NOISE_FLOOR['steady_rps'] * 100:g} % for steady req/s and "
              f"±{NOISE_FLOOR['p99_ms'] * 100:g} % for p99 (docs/findings/comparing-runs.md); rerun with REPEAT=3 "
              "to judge against the runs' own spread.\n")
    rows = compare(a, b, same_keys)
    if rows:
        print_table(rows)
    else:
        print("No cell ran with the same settings in both runs: the cells B's change moved are paired below.")
    counts = {"same": 0, "better": 0, "worse": 0, "—": 0}
    lines = []
    run_wide = ", ".join(f"{name} {code(va)} → {code(vb)}" for name, va, vb, how, _ in diff
                         if name in RUN_WIDE and how == "changed") or "the bound moved"
    for k in moved:
        lines.append(pair_line(k, k, a[k], b[k], (), run_wide, sleep_moved, counts))
    for ka, kb in pairs:
        lines.append(pair_line(ka, kb, a[ka], b[kb], knobs, change_text(ka, kb, a[ka], b[kb], knob_fields(ka, kb, knobs)),
                               sleep_moved, counts))
    ceiling_moved = sleep_moved or "connections" in knobs
    if lines:
        alike = "every key field" + (f" but {', '.join(KNOBS[f] for f in knobs)}" if knobs else "")
        print(f"\nPaired across B's change (alike in {alike}; each side's Little's-law bound in brackets"
              + ("; judged on % of the ceiling, which SLEEP_MS or CONNECTIONS moved" if ceiling_moved else "") + "):")
        print("\n".join(lines))
    if sides:
        print(f"\nSide by side, not one to one (alike in every key field but {', '.join(KNOBS[f] for f in knobs)}; "
              "a B cell is judged against the A cell it replaced where that is one cell of the same kind of threads):")
        for keys_a, keys_b in sides:
            print("\n".join(side_lines(keys_a, keys_b, a, b, knobs, sleep_moved, counts)))
    if lines or sides:
        print("\n" + counts_text(counts, "pairs across B's change"))
    grouped = {k for ka, kb in pairs for k in (ka, kb)} | {k for ga, gb in sides for k in ga + gb}
    only_a = [k for k in a if k not in b and k not in grouped]
    only_b = [k for k in b if k not in a and k not in grouped]
    for name, keys in (("Only in A", only_a), ("Only in B", only_b)):
        if keys:
            print(f"\n{name}:")
            print("\n".join(only_lines(keys)))
    return 0


def only_lines(keys):
    """The cells of one run only, a line per scenario and app (a narrowed APPS or CONTAINERS leaves
    dozens): its containers, threads and loads as alternatives, and how many cells that is."""
    groups = {}
    for k in keys:
        groups.setdefault((k[0], app_text(k)), []).append(k)
    lines = []
    for (scenario, app), ks in groups.items():
        def alt(texts):
            return "/".join(dict.fromkeys(texts))
        text = f"- {scenario}: {app} {alt(k[3] for k in ks)} threads={alt(str(k[4]) for k in ks)} "
        if all(k[1] == "vegeta" for k in ks):
            text += "vegeta (open loop)"
        else:
            text += " ".join(alt(part) for part in zip(*(load_text(k).split(" ", 1) for k in ks)))
        lines.append(text + (f" ({len(ks)} cells)" if len(ks) > 1 else ""))
    return lines


def print_table(rows):
    """The table of the cells run alike in both, its summary line and the pairs at a different warmth."""
    print("| scenario | app | container | threads | load | A steady req/s | B steady req/s | change "
          "| verdict | A p99 ms | B p99 ms | change | verdict | cell |")
    print("|---|---|---|---:|---" + "|---:" * 3 + "|---" + "|---:" * 3 + "|---|---|")
    counts = {"same": 0, "better": 0, "worse": 0, "—": 0}
    for k, ca, cb, metrics, verdicts, cell_verdict in rows:
        cols = [k[0], app_text(k), k[3], str(k[4]), load_text(k)]
        for field in ("steady_rps", "p99_ms"):
            ma, mb = metrics[field]
            cols += [fmt(ma, field) if ok(ca) else status_text(ca), fmt(mb, field) if ok(cb) else status_text(cb),
                     change(ma, mb), verdicts[field]]
        counts[cell_verdict] += 1
        cols.append(bold(cell_verdict))
        print("| " + " | ".join(cols) + " |")
    judged = counts["same"] + counts["better"] + counts["worse"]
    print(f"\n**{len(rows)} cells in both runs: {counts['same']} same, {counts['better']} better, "
          f"{counts['worse']} worse beyond the noise"
          + (f", {counts['—']} not judged (failed or skipped)" if counts["—"] else "")
          + (f"; {100.0 * counts['same'] / judged:.0f} % same**" if judged else "**"))
    warmth = [f"- {k[0]}: {app_text(k)} {k[3]} threads={k[4]} {load_text(k)}{warmth_note(ca, cb)}"
              for k, ca, cb, *_ in rows if warmth_note(ca, cb)]
    if warmth:
        print("\nMeasured at a different warmth (their CPU differs by the JIT compiler, docs/reading-results.md):")
        print("\n".join(warmth))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
