"""HOSTS (issue 28): what each load host sent of a cell, and each host's CPU over its window, so a
merged figure can be traced back to its parts (the merge itself: loadgens/histogram.py)."""
from .fmt import f_int, f_rps


def section(run):
    """results.md's "Load hosts" section; "" for a run on one machine."""
    rows = [("calibration", c) for c in run["meta"]["calibration"] if c.get("load_hosts")]
    rows += [(f"{c['index']} {c['app']} {c['container']} {c['threads']}", c) for c in run["cells"] if c.get("load_hosts")]
    if not rows:
        return ""
    out = ["\n## Load hosts (HOSTS)\n\n",
           "Each cell's wrk ran on every load host at once with a share of its connections and threads; their "
           "latency histograms are summed before any percentile is taken, and the steady rate is the hosts' own "
           "steady rates summed. **first answer** = when the host's first answer came after the earliest host's "
           "(how far apart ssh started them); **host CPU** = that host's /proc/stat over the cell's window (hosts "
           "that share one machine, such as network namespaces, all read that machine).\n\n",
           "| cell | wrk | host | -t | -c | requests | share | req/s | first answer | wrk CPU s | host CPU |\n",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"]
    for name, c in rows:
        total = sum(h["requests"] or 0 for h in c["load_hosts"])
        for h in c["load_hosts"]:
            busy = (c.get("host_cpu") or {}).get(h["host"], {}).get("busy_pct")
            share = f"{100 * h['requests'] / total:.1f} %" if total and h["requests"] is not None else "—"
            first = f"+{h['first_answer_s']:.3f} s" if h.get("first_answer_s") is not None else "—"
            out.append(f"| {name} | -t{c.get('wrk_threads')} -c{c.get('connections')} | {h['host']} | {h['threads']} | "
                       f"{h['connections']} | {f_int(h['requests'])} | {share} | {f_rps(h['rps'])} | {first} | "
                       f"{h['cpu_s'] if h.get('cpu_s') is not None else '—'} | {busy if busy is not None else '—'} % |\n")
    return "".join(out)
