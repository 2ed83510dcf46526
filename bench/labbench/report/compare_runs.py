"""compare's runs: a results.json (or one round of a REPEAT run) loaded as its meta and its cells by
key, and the words for a key (its app, its load) that every part of compare's text uses."""
import sys
from pathlib import Path

from .. import catalog, scenarios
from .figures import read_results  # a cell's scenario part and older flat files alike
from .fmt import pool_move, work_of

# variant: two sweep variants can meet in one cell (sync-servlet:200 and :conns at 200 connections).
KEY = ("scenario", "loadgen", "app", "container", "threads", "wrk_threads", "connections", "variant", "client",
       "db_driver",    # BACKEND=postgres: the app's database driver (None for the HTTP backend)
       "again")        # the same settings measured again in one round (figures.mark_again)

# For runs from before these fields existed: the default scenario, load generator and client.
DEFAULTS = {"scenario": scenarios.DEFAULT, "loadgen": "wrk", "client": catalog.DEFAULT_CLIENT}


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


def run_of(arg):
    """The whole run (results.json's content) an argument names: a run directory or its results.json."""
    path = Path(arg.rpartition("@")[0] if "@" in arg else arg)
    return read_results(path / "results.json" if path.is_dir() else path)


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
    if "work" not in meta:
        # a run from before meta.txt recorded WORK: its apps' lab: lines say it (" work=..." only with it)
        works = {work_of(c["lab_line"]) for c in cells if c.get("lab_line")}
        if len(works) == 1:
            meta = dict(meta, work=works.pop().replace(",", " "))
    # How the cells got their JVMs is the bench's, not a setting: said where two runs differ in it.
    grown, switched = (sum(1 for c in cells if pool_move(c) == kind) for kind in ("grown", "switched"))
    meta = dict(meta, jvms=" and ".join([f"{grown} pool{'s' * (grown != 1)} grown"] * bool(grown)
                                         + [f"{switched} switched to virtual threads"] * bool(switched)) + " on a running JVM"
                if grown or switched else "a fresh JVM per pool")
    return meta, {key_of(c): c for c in cells}


def describe(meta, cells, arg):
    repeats = meta.get("repeat") or 1
    text = (f"`{arg}` ({meta.get('date', '?')}, {meta.get('duration_s', '?')} s cells, sleep "
            f"{meta.get('sleep_ms', '?')} ms, {repeats} round{'s' if repeats != 1 else ''})")
    # (a cost run reads no steady req/s: its load is vegeta's constant rate, its figures per request)
    if cells and meta.get("mode") != "cost" and all(c.get("steady_rps") is None for c in cells.values()):
        text += " — an older run without steady req/s: its wrk req/s is used, window step and all"
    return text


def values(run, field):
    """A key field's values over a run's cells, in their order (None, a field the run lacks, left out)."""
    i = KEY.index(field)
    return [str(v) for v in dict.fromkeys(k[i] for k in run) if v is not None]
