"""SCENARIO=call, the reference experiment: every request calls the remote once and waits
SLEEP_MS. Its report: a table per pool size x wrk setting (apps as rows, containers side by side),
and, with LOADGEN=vegeta, closed- and open-loop latency side by side."""
from ..report.fmt import error_total, f_int, f_lat, f_pct, f_rps, ranged, status_text, threads_label, threads_order
from ..report.tables import each_cell, group_tables
from . import Scenario


class Call(Scenario):
    name = "call"
    # THREADS="1 200 v1": the v1 and 200-thread cells run on the 1-thread cells' JVM, switched or grown and warmed again
    # (docs/traps.md #41); the other scenarios keep a JVM per pool (their faults, fan-out pools and
    # variants are their own).
    grows_pool = True

    def sections(self, run, ctx):
        cells = [c for c in run["cells"] if c.get("scenario", self.name) == self.name]
        wrk_cells = [c for c in cells if c.get("loadgen", "wrk") == "wrk"]
        out = []
        # A planner (the sweep) has its own tables, and so has BACKEND=postgres (report/db.py).
        if wrk_cells and not any(c.get("variant") or c.get("db_driver") for c in run["cells"]):
            text = "\n## Results\n" + group_tables(
                wrk_cells, ctx.apps, ctx.containers, ctx.calibration, ctx.sleep_s,
                ["req/s", "steady req/s", "% of ceiling", "p99", "> 2 s", "errors"],
                lambda c: [f_rps(c["rps"]), ranged(c, "steady_rps", f_rps), ranged(c, "pct_of_ceiling", f_pct),
                           ranged(c, "p99_ms", f_lat), f_int(c["slow_2s"]), f_int(error_total(c))])
            out.append((10, text))
        out.append((30, open_loop_section(cells, ctx.apps, ctx.containers, ctx.calibration, run["meta"])))
        return out


def open_loop_section(cells, apps, containers, calibration, meta):
    """Closed-loop (wrk) and open-loop (vegeta) latency of the same app, pool and container side
    by side: what wrk hides of a server that falls behind."""
    ol = [c for c in cells if c.get("loadgen") == "vegeta"]
    if not ol:
        return ""
    lines = []
    w = lines.append
    rate = ol[0].get("rate")
    cal = next((c for c in calibration if c["loadgen"] == "vegeta"), None)
    w(f"\n## Open loop: vegeta at {rate} req/s beside wrk\n\n")
    w(f"vegeta sends {rate} requests per second whatever the server does and measures each one from "
      f"when it was *due* (no coordinated omission), for {meta.get('duration_s')} s, waiting up to "
      f"{meta.get('wrk_timeout_s')} s for each answer. wrk, a closed loop, sends a connection's next "
      f"request only once the previous one is answered: a server that falls behind is simply sent "
      f"less, and its latency looks like the backend's. vegeta's queue keeps growing instead, and "
      f"the latency users would see at that offered load shows: a model that keeps up has p99 ≈ the "
      f"backend's ({f_lat(cal.get('ol_p99_ms')) if cal else '?'} straight at remote-sleep), one that "
      f"cannot fails requests or answers them many seconds late. **wrk p50/p99** are the closed-loop "
      f"cell of the same app with the first wrk setting; **served** = the rate the app answered at, from its "
      f"first answer to its last (a server that queues answers a short attack late, at its own pace); **timeouts** = no answer within {meta.get('wrk_timeout_s')} s.\n")
    wrk_of = {}
    for c in cells:
        if c.get("loadgen", "wrk") == "wrk":
            wrk_of.setdefault((c["app"], c["container"], c["threads"]), c)
    for threads in sorted({c["threads"] for c in ol}, key=threads_order):
        w(f"\n### {threads_label(threads)}\n\n")
        cols = ["wrk p50", "wrk p99", "vegeta answered", "served req/s", "p50", "p99", "max", "timeouts"]
        w("| app | container |" + "".join(f" {h} |" for h in cols) + "\n|---|---|" + "---:|" * len(cols) + "\n")
        for app, ct, c in each_cell(ol, apps, containers, threads):
            k = wrk_of.get((app, ct, threads), {})
            if c["status"] != "ok":
                w(f"| {app} | {ct} | {f_lat(k.get('p50_ms'))} | {f_lat(k.get('p99_ms'))} | {status_text(c)} |"
                  + " |" * (len(cols) - 3) + "\n")
                continue
            w(f"| {app} | {ct} | {f_lat(k.get('p50_ms'))} | {f_lat(k.get('p99_ms'))} | "
              f"{ranged(c, 'ol_success_pct', f_pct)} | {ranged(c, 'ol_served_rps', f_rps)} | "
              f"{ranged(c, 'ol_p50_ms', f_lat)} | {ranged(c, 'ol_p99_ms', f_lat)} | {f_lat(c.get('ol_max_ms'))} | "
              f"{f_int(c.get('ol_timeouts'))} |\n")
    return "".join(lines)



SCENARIO = Call()
