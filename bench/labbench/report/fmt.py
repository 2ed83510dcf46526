"""How figures read in every report: numbers as text, REPEAT ranges, statuses, pool-size labels,
and the small file helpers the report uses. Standard library only."""
import json
import os
import re


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def work_of(lab_line):
    """The WORK an app did per request, as its lab: line says it (' work=cpu=500us,alloc=65536' only
    with some): 'cpu=500us,alloc=65536', or '' for none."""
    m = re.search(r" work=(\S+)", lab_line or "")
    return m.group(1) if m else ""


def num(text, kind=float):
    try:
        return kind(text)
    except (TypeError, ValueError):
        return None


def ms(us):
    return None if us is None else round(us / 1000.0, 1)


def threads_order(t):
    """Sort key for pool sizes: 1, 200, then v1, v2, ... (ints and "vN" do not compare)."""
    if isinstance(t, int):
        return (0, t, "")
    n = t[1:] if isinstance(t, str) and t[1:].isdigit() else ""
    return (1, int(n) if n else 0, str(t))


def threads_label(t):
    if isinstance(t, str) and t.startswith("v"):
        return f"{t}: virtual threads on {t[1:]} carrier{'s' if t[1:] != '1' else ''}"
    return f"{t} thread{'s' if t != 1 else ''}"


def pool_move(c):
    """How a cell's JVM came to its pool when the bench gave it the next one on the admin port (`app`
    = `resized`): "switched" (to virtual threads) or "grown"; None for a fresh or reused JVM."""
    if c.get("app_start") != "resized":
        return None
    return "switched" if c.get("pool_mode") == "virtual" else "grown"


def skipped(c):
    return c["status"].startswith("SKIPPED")


def throughput(rec):
    """The req/s a cell is judged by: steady-state when the run has it, else wrk's own."""
    return rec.get("steady_rps") if rec.get("steady_rps") is not None else rec.get("rps")


def f_rps(x):
    return "—" if x is None else f"{x:.1f}"


def f_pct(x):
    return "—" if x is None else f"{x:.1f} %"


def f_lat(x):
    """Milliseconds as text: 1.004 s keeps the few ms an app adds to a 1 s call visible."""
    if x is None:
        return "—"
    if x >= 10000:
        return f"{x / 1000:.1f} s"
    if x >= 1000:
        return f"{x / 1000:.3f} s"
    return f"{x:.1f} ms" if x < 10 else f"{x:.0f} ms"


def f_int(x):
    return "—" if x is None else str(x)


def f_cores(x):
    return "—" if x is None else f"{x:.2f}"


def status_text(c):
    """ok / FAILED: ... / SKIPPED: ..., and with REPEAT how many rounds failed."""
    if c.get("rounds_failed") and c["status"] == "ok":
        return f"ok ({c['rounds_failed']} of {c['repeats']} rounds FAILED, left out of the median)"
    return c["status"]


def ranged(c, field, fmt):
    """A figure as fmt(value); with REPEAT, the median followed by its min–max over the rounds."""
    text = fmt(c.get(field))
    lo_hi = (c.get("range") or {}).get(field)
    if c.get("repeats", 1) > 1 and lo_hi and lo_hi[0] != lo_hi[1]:
        text += f" ({fmt(lo_hi[0])}–{fmt(lo_hi[1])})"
    return text


def per_connection(c):
    """Responses per wrk connection: closed-loop rounds, the unit the ceiling is quantised in."""
    if c.get("requests") is None or not c.get("connections"):
        return "—"
    return f"{c['requests'] / c['connections']:.2f}"


def error_total(c):
    errs = c.get("errors")
    return None if errs is None else sum(errs.values())


def slow_error_total(c):
    errs = c.get("slow_errors")
    return None if errs is None else sum(v for v in errs.values() if isinstance(v, int))


def f_bytes_per_s(x):
    if x is None:
        return "—"
    if x >= 1e6:
        return f"{x / 1e6:.1f} MB/s"
    return f"{x / 1e3:.1f} kB/s" if x >= 1e3 else f"{x:.0f} B/s"


def f_mb(x):
    return "—" if x is None else f"{x:.0f}"


def write_atomically(path, text):
    """Write then rename, so a reader (or a Ctrl-C) never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


