"""compare's settings paragraph: what B changed, narrowed or widened of the settings both runs
recorded in meta.txt (results.json's meta), and what stayed the same."""
import re

from .. import scenarios, settings
from .compare_judge import ok
from .compare_runs import values


def _words(key, derived_in_sweep=False):
    """A setting as meta.txt has it, lists as typed. A sweep derives APPS, CONTAINERS, THREADS and
    CONNECTIONS from SWEEP_VARIANTS and SWEEP: those two say it, the four would repeat them."""
    def get(m):
        v = m.get(key)
        if v is None or (derived_in_sweep and m.get("mode") == "sweep"):
            return None
        return " ".join(map(str, v)) if isinstance(v, list) else str(v)
    return get


def _jdk(m):
    found = re.search(r'version "([^"]+)"', m.get("jdk") or "")
    return found.group(1) if found else m.get("jdk")


def _vegeta_ran(m):
    return "vegeta" in (m.get("loadgens") or [])


# How a run's meta shows a common setting where it is not its meta key's words (the bench's table,
# settings.groups(), says which settings compare names and how: knobs.Setting.compare).
SHOWN = {
    "APPS": _words("apps", True), "CONTAINERS": _words("containers", True), "THREADS": _words("threads", True),
    "CONNECTIONS": _words("connections", True),
    "CLIENT": None,          # not in meta.txt: the cells say it
    "RATE": lambda m: _words("rate")(m) if _vegeta_ran(m) else None,
    "DURATION": lambda m: None if m.get("duration_s") is None else f"{m['duration_s']} s",
    "WARMUP": lambda m: "auto" if m.get("warmup") == "auto" else None if m.get("warmup_s") is None else f"{m['warmup_s']} s",
    "BACKEND": lambda m: m.get("backend") or "http",
    "CPUSETS": lambda m: (m.get("cpusets") or "not pinned") if "cpusets" in m else None,
    "HOSTS": lambda m: m.get("hosts") or "one machine",
}
# What a run recorded of its machine and build: (name, value of a run's meta, kind).
FACTS = (
    ("JVMs", lambda m: m.get("jvms"), "quiet"),
    ("JDK", _jdk, "value"),
    ("commit", _words("git"), "value"),
    ("CPU", _words("cpu"), "value"),
    ("OS", _words("os"), "value"),
    ("Jetty", _words("jetty"), "quiet"),
    ("Tomcat", _words("tomcat"), "quiet"),
    ("Spring", _words("spring"), "quiet"),
    ("wrk", _words("wrk"), "quiet"),
    ("vegeta", lambda m: _words("vegeta")(m) if _vegeta_ran(m) else None, "quiet"),
)


def _ran(names):
    """A scenario's own setting matters only where the run ran it (every meta.txt records FANOUT, SLOW_*
    ..., their defaults too): one of its scenarios, or its planner (mode)."""
    return lambda m: bool(names & {*(m.get("scenarios") or []), m.get("mode")})


def compared():
    """(name, value of a run's meta, kind) for every setting compare names, in the table's order: the
    run's mode, each setting of the table with a kind (knobs.Setting.compare), the machine's facts."""
    owners = {}
    for sc in scenarios.ALL:
        for s in sc.settings:
            owners.setdefault(s.name, set()).add(sc.name)
    out = [("mode", lambda m: m.get("mode") or "matrix", "quiet")]
    for _heading, rows in settings.groups():
        for s in rows:
            if not s.compare:
                continue
            get = SHOWN[s.name] if s.name in SHOWN else _words(s.meta or s.name.lower())
            if s.name in owners and get is not None:
                get = (lambda used, g: lambda m: g(m) if used(m) else None)(_ran(owners[s.name]), get)
            out.append((s.name, get, s.compare))
    return out + list(FACTS)


# Run-wide settings that move a cell's bound or ceiling without changing its key: a pair of the
# same key whose bound moved is shown with them (DB_POOL 10 → 50), not in the table.
RUN_WIDE = ("SLEEP_MS", "RATE", "DB_POOL", "DB_QUERY", "DB_EXECUTOR_THREADS", "APP_ARGS", "JAVA_OPTS")
STEAL_NOISY = 10.0    # % of the box: above it figures move more than the noise (summary.steal_line)


def highest_steal(run):
    steal = [c["cpu_steal_pct"] for c in run.values() if ok(c) and c.get("cpu_steal_pct") is not None]
    return max(steal) if steal else None


def settings_diff(meta_a, meta_b, a, b):
    """[(name, A's text, B's text, how, kind)]: how is same, changed, narrowed (B ran a part of A's
    values) or widened; a setting either run did not record is left out (an older run, an HTTP run's
    DB_POOL: BACKEND says that change)."""
    out = []
    for name, get, kind in compared():
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


def run_wide_text(diff):
    """What B changed run-wide ('SLEEP_MS `200` → `100`'): what moved the bound of a cell whose key
    stayed the same; else just that its bound moved."""
    return ", ".join(f"{name} {code(va)} → {code(vb)}" for name, va, vb, how, _ in diff
                     if name in RUN_WIDE and how == "changed") or "the bound moved"
