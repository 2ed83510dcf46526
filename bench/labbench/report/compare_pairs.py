"""compare's pairing across what B changed: the knobs B replaced values of (THREADS `1 200 v1` →
`1 8`, CONTAINERS, ...), the cells of one run only paired or grouped across them, and what to
say of two runs with nothing to compare."""
from .compare_runs import DEFAULTS, KEY, values
from .compare_settings import code

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
