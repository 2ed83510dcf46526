"""compare's settings paragraph: what B changed, narrowed or widened of the settings both runs
recorded in meta.txt (results.json's meta), and what stayed the same."""
import re

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


def run_wide_text(diff):
    """What B changed run-wide ('SLEEP_MS `200` → `100`'): what moved the bound of a cell whose key
    stayed the same; else just that its bound moved."""
    return ", ".join(f"{name} {code(va)} → {code(vb)}" for name, va, vb, how, _ in diff
                     if name in RUN_WIDE and how == "changed") or "the bound moved"
