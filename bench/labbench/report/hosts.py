"""HOSTS (issue 28): what each load host sent of a cell, and each host's CPU over its window, so a
merged figure can be traced back to its parts (the merges: loadgens/histogram.py for wrk, vegeta's
own report for vegeta)."""
from .fmt import f_int, f_rps


def section(run):
    """results.md's "Load hosts" section; "" for a run on one machine."""
    rows = [("calibration", c) for c in run["meta"]["calibration"] if c.get("load_hosts")]
    rows += [(f"{c['index']} {c['app']} {c['container']} {c['threads']}", c) for c in run["cells"] if c.get("load_hosts")]
    if not rows:
        return ""
    out = ["\n## Load hosts (HOSTS)\n\n",
           "Each cell's load ran on every load host at once, each with its share: of wrk's connections and "
           "threads (their latency histograms summed before any percentile is taken; the steady rate the hosts' "
           "own summed), or of vegeta's rate (vegeta's own report over every host's results). **first answer** = "
           "when the host's first wrk answer came after the earliest host's (how far apart ssh started them); "
           "**host CPU** = that host's /proc/stat over the window (hosts that share one machine, such as network "
           "namespaces, all read that machine).\n\n",
           "| cell | load | host | its share | requests | of the cell's | req/s | first answer | load CPU s | host CPU |\n",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|\n"]
    for name, c in rows:
        total = sum(h.get("requests") or 0 for h in c["load_hosts"])
        load = f"{c['rate']} req/s" if c.get("loadgen") == "vegeta" else f"-t{c.get('wrk_threads')} -c{c.get('connections')}"
        for h in c["load_hosts"]:
            busy = (c.get("host_cpu") or {}).get(h["host"], {}).get("busy_pct")
            mine = f"{h['rate']} req/s" if "rate" in h else f"-t{h['threads']} -c{h['connections']}"
            share = f"{100 * h['requests'] / total:.1f} %" if total and h.get("requests") is not None else "—"
            first = f"+{h['first_answer_s']:.3f} s" if h.get("first_answer_s") is not None else "—"
            out.append(f"| {name} | {load} | {h['host']} | {mine} | {f_int(h.get('requests'))} | {share} | "
                       f"{f_rps(h.get('rps'))} | {first} | {h['cpu_s'] if h.get('cpu_s') is not None else '—'} | "
                       f"{f'{busy} %' if busy is not None else '—'} |\n")
    return "".join(out)
