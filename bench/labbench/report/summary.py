"""results.md's first screen: who ran what (one identity line), the verdict (a row per app, a column
per pool size x container: steady % of the ceiling and the handler threads seen), and whether the
box was the limit (the highest box CPU of the run). A scenario with an answer of its own (the
sweep's knees) supplies it instead (Scenario.verdict)."""
from .. import scenarios
from .fmt import f_int, f_pct, pool_move, threads_label, threads_order

BELOW = 95.0            # a verdict cell below this % of its ceiling is marked ⚠
JIT_WARM = 5.0          # the JIT compiler's share (%) of the app's CPU in a warm measured window


def identity(run):
    meta = run["meta"]
    # every round's cells (REPEAT merges them into medians)
    cells = [c for rnd in run["rounds"].values() for c in rnd] if run.get("rounds") else run["cells"]
    failed = sum(1 for c in cells if c["status"].startswith("FAILED"))
    skipped = sum(1 for c in cells if c["status"].startswith("SKIPPED"))
    planned = meta.get("cells_planned")
    ran = f"{len(cells)} of {planned} cells" if planned and planned != len(cells) else f"{len(cells)} cells"
    if planned and len(cells) < planned:
        ran += " (**run incomplete**: interrupted or still running)"
    jdk = (meta.get("jdk") or "?").split(" (")[0]
    return (f"{meta.get('date', '?')} · commit {meta.get('git', '?')} · {jdk} · {meta.get('cpu', '?')} · "
            f"{ran}: {failed} FAILED, {skipped} SKIPPED · run `{meta.get('run_dir')}`\n")


def verdict_table(run):
    """The plain verdict: closed-loop cells with a ceiling; with several wrk settings, a cell shows
    the lowest of them (the model's worst case), with several scenarios, a row per app and scenario."""
    cells = [c for c in run["cells"] if c.get("loadgen", "wrk") == "wrk" and c["status"] != "running"]
    judged = [c for c in cells if c.get("pct_of_ceiling") is not None or c["status"] != "ok"]
    if not judged:
        return ""
    several = len({c.get("scenario") for c in judged}) > 1
    clients = len({c.get("client", "jdk") for c in judged}) > 1
    cols = sorted({(c["threads"], c["container"]) for c in judged}, key=lambda k: (threads_order(k[0]), k[1]))
    rows = list(dict.fromkeys((c["app"], c.get("scenario"), c.get("client", "jdk"), c.get("db_driver"))
                              for c in judged))
    out = ["| app |" + "".join(f" {ct} · {threads_label(t)} |" for t, ct in cols),
           "|---|" + "---:|" * len(cols)]
    for app, scenario, client, driver in rows:
        texts = []
        for t, ct in cols:
            mine = [c for c in judged if (c["app"], c.get("scenario"), c.get("client", "jdk"), c.get("db_driver"),
                                          c["threads"], c["container"]) == (app, scenario, client, driver, t, ct)]
            texts.append(verdict_text(mine))
        label = (app + (f" · {scenario}" if several else "") + (f" · {client} client" if clients else "")
                 + (f" · {driver}" if driver else ""))
        out.append(f"| {label} |" + "".join(f" {x} |" for x in texts))
    return "\n".join(out) + "\n"


def verdict_text(cells):
    if not cells:
        return ""
    bad = [c for c in cells if c["status"] != "ok"]
    if bad:
        return "SKIPPED" if all(c["status"].startswith("SKIPPED") for c in bad) else "FAILED"
    worst = min(cells, key=lambda c: c["pct_of_ceiling"])
    mark = " ⚠" if worst["pct_of_ceiling"] < BELOW else ""
    bound, ceiling, steady = worst.get("bound_rps"), worst.get("ceiling_rps"), worst.get("steady_rps")
    if mark and bound and ceiling and bound < ceiling and steady is not None and steady >= 0.9 * bound:
        by = worst.get("bound_by")     # BACKEND=postgres: connections, threads, DB pool or executor threads
        mark += (f" (its {by} bound: {100 * bound / ceiling:.0f} %)" if by
                 else f" (its pool's bound: {100 * bound / ceiling:.0f} %)")   # Little's law, not a failure
    if any(c.get("warmup_outcome") == "no steady state" for c in cells):
        mark += " ⚠ no steady state"
    failed = sum(c.get("rounds_failed") or 0 for c in cells)
    if failed:
        mark += f" ({failed} round{'s' if failed > 1 else ''} FAILED)"
    handlers = max((c.get("handler_threads") or 0 for c in cells), default=0)
    return f"{f_pct(worst['pct_of_ceiling'])}{mark} · {f_int(handlers)} thr."


def ceiling_text(run):
    """What the verdict's ceiling is: pgbench for BACKEND=postgres, else wrk at remote-sleep."""
    if any(c.get("db_driver") for c in run["cells"]):
        return "pgbench: the same query straight at PostgreSQL"
    return "the same wrk load straight at remote-sleep"


def box_line(run):
    ran = [c for c in run["cells"] if c.get("cpu_box_pct") is not None and c["status"] == "ok"]
    if not ran:
        return ""
    top = max(ran, key=lambda c: c["cpu_box_pct"])
    where = f"{top['app']} {top['container']} threads={top['threads']}"
    if top.get("connections"):
        where += f" -t{top['wrk_threads']} -c{top['connections']}"
    note = ("the box was busy: figures near it say as much about this machine as about the model"
            if top["cpu_box_pct"] >= 95 else "below 95 %: the box was not the limit of any cell")
    return f"Highest box CPU: **{top['cpu_box_pct']:.1f} %** ({where}); {note}.\n" + steal_line(ran)


def steal_line(ran):
    """Hypervisor steal over the measured windows (a VM's CPUs given to someone else): on a busy
    host it slows every cell alike and inflates CPU ms/req. Said only where it was measured."""
    steal = sorted(c["cpu_steal_pct"] for c in ran if c.get("cpu_steal_pct") is not None)
    if not steal:
        return ""
    top = max((c for c in ran if c.get("cpu_steal_pct") is not None), key=lambda c: c["cpu_steal_pct"])
    return (f"Hypervisor steal (the box's CPU taken by other VMs, counted in box CPU): median **{steal[len(steal) // 2]:.1f} %** "
            f"of the box over the measured windows, highest {top['cpu_steal_pct']:.1f} % ({top['app']} {top['container']} "
            f"threads={top['threads']}); above ~10 % figures move between runs more than the noise of a quiet host.\n")


def jit_line(run):
    """How warm the measured windows were: the JIT compiler's share of the app's CPU in them, and
    WARMUP=auto's outcome per fresh app. Said only where a run recorded it."""
    ran = [c for c in run["cells"] if c["status"] == "ok" and c.get("jit_pct") is not None]
    return (share_line(ran, run) if ran else "") + warmup_line(run)


def share_line(ran, run):
    """The compiler's share over the cells that recorded one."""
    shares = sorted(c["jit_pct"] for c in ran)
    top = max(ran, key=lambda c: c["jit_pct"])
    cold = sum(1 for s in shares if s > JIT_WARM)
    # the all-cells table lists the closed-loop cells only
    where = (" (⚠ beside their JIT % in *All cells*)"
             if any(c["jit_pct"] > JIT_WARM and c.get("loadgen", "wrk") == "wrk" for c in ran) else "")
    lean = sorted(c["cpu_ms_per_request_without_jit"] for c in ran if c.get("cpu_ms_per_request_without_jit") is not None)
    line = (f"JIT compiler's share of the app's CPU in the measured windows: median **{shares[len(shares) // 2]:.1f} %**, "
            f"highest {top['jit_pct']:.1f} % ({top['app']} {top['container']} threads={top['threads']})"
            + (f"; CPU ms/req without the compiler's threads {lean[0]:.3f}–{lean[-1]:.3f}" if lean else "")
            + load_part([c for c in run["cells"] if c["status"] == "ok"]) + "; "
            + (f"{cold} of {len(ran)} cells above {JIT_WARM:g} %{where}: their CPU figures are partly the compiler's.\n"
               if cold else f"every cell at most {JIT_WARM:g} %: the CPU figures are a warm JVM's.\n"))
    return line


def warmup_line(run):
    """WARMUP=auto's outcome per warm-up, also where no cell had the CPU to price a compiler share
    (a tiny run's cells): a warm-up that never settled is said either way."""
    auto = [c for c in run["cells"] if c.get("warmup_mode") == "auto"]
    if not auto:
        return ""
    settled = sorted(c["warmup_s"] for c in auto if c.get("warmup_outcome") == "settled")
    again = sum(1 for c in auto if c.get("app_start") == "reused")     # a sweep's JVM at its next level
    grown, switched = (sum(1 for c in auto if pool_move(c) == kind) for kind in ("grown", "switched"))
    def took(kind):     # with moved JVMs, each kind's own median: a moved one settles sooner
        own = sorted(c["warmup_s"] for c in auto if c.get("warmup_outcome") == "settled" and pool_move(c) == kind)
        return f", a median {own[len(own) // 2]:.0f} s" if own else ""
    kinds = [f"{len(auto) - again - grown - switched} of fresh apps{took(None) if grown + switched else ''}"] + (
        [f"{again} of a sweep's app again at its next level"] if again else []) + (
        [f"{grown} of an app's JVM grown to its next pool size{took('grown')}"] if grown else []) + (
        [f"{switched} of an app's JVM switched to virtual threads{took('switched')}"] if switched else [])
    moved_any = grown + switched
    return (f"Warm-up (WARMUP=auto): {len(settled)} of {len(auto)} "
            + (f"warm-ups ({'; '.join(kinds) if moved_any else ', '.join(kinds)}) settled" if again or moved_any
               else "fresh apps settled")
            + (f", after a median {settled[len(settled) // 2]:.0f} s" if settled and not moved_any else "")
            + "".join(f"; {c['app']} {c['container']} threads={c['threads']}: {c['warmup_text']}"
                      for c in auto if c.get("warmup_outcome") != "settled") + ".\n")


# The bound issue 26 sets between a JVM's first and second measured window.
TWICE_WITHIN = 10


def twice_line(run):
    """A JVM measured twice the same way, back to back (eg, WRK_THREADS="10 10"; the second cell is
    marked `again` by figures.mark_again): how far its second window's CPU per request was from its
    first. With two different wrk settings the gap is partly the load generator's (docs/traps.md #38);
    with one, it is the order of the cells: warmth, or the box. Cells with too few requests to price
    one (cpu_load_note) are left out."""
    cells = run["cells"]
    pairs = [(per_request(a), per_request(b)) for a, b in zip(cells, cells[1:])
             if b.get("again") and b.get("app_start") == "reused" and not (a.get("cpu_load_note") or b.get("cpu_load_note"))]
    moves = sorted(100 * second / first - 100 for first, second in pairs if first and second)
    if not moves:
        return ""
    within = sum(1 for m in moves if abs(m) <= TWICE_WITHIN)
    return (f"Twice on one JVM (the same wrk command back to back, {len(moves)} JVMs): the second window's CPU ms/req "
            f"{moves[0]:+.0f} to {moves[-1]:+.0f} % from the first (median {moves[len(moves) // 2]:+.0f} %), "
            f"within ±{TWICE_WITHIN} % in {within} of {len(moves)}.\n")


def per_request(c):
    """The app's CPU ms per request from its CPU seconds (finer than the rounded column); None without."""
    ok = c.get("status") == "ok" and c.get("cpu_app_s") and c.get("requests")
    return 1000 * c["cpu_app_s"] / c["requests"] if ok else None


def load_part(ran):
    """The CPU the load itself added per request (less the compiler and the JVM at rest), and the
    cells where too few requests came to price one. Over every ok cell, not only those with a JIT
    share: the cells too small to price are mostly too small for a share too."""
    load = sorted(c["cpu_ms_per_request_load"] for c in ran if c.get("cpu_ms_per_request_load") is not None)
    rest = sorted(c["cpu_rest_ms_per_s"] for c in ran if c.get("cpu_rest_ms_per_s") is not None)
    few = sum(1 for c in ran if c.get("cpu_load_note"))
    if not load and not few:
        return ""
    return ((f", and less the JVM at rest ({rest[0]:.1f}–{rest[-1]:.1f} CPU ms/s) {load[0]:.3f}–{load[-1]:.3f}" if load else "")
            + (f" ({few} cell{'s' if few != 1 else ''} with too few requests to price one)" if few else ""))


def first_screen(run):
    """The title, the identity line, the verdict, the box CPU, where to read on."""
    meta = run["meta"]
    own = [text for s in scenarios.reporting(run["meta"]) for text in [s.verdict(run)] if text]
    lines = [f"# Benchmark results: {meta.get('date', '?')}\n\n", identity(run), "\n"]
    if own:
        lines += own
    else:
        table = verdict_table(run)
        if table:
            lines += ["## Verdict: steady req/s as % of the ceiling · handler threads seen\n\n", table, "\n",
                      f"⚠ below {BELOW:g} % of the ceiling ({ceiling_text(run)}); with several "
                      f"wrk settings a cell shows the lowest. FAILED / SKIPPED: see the appendix.\n"]
    lines += ["\n", box_line(run), jit_line(run), twice_line(run), "\n",
              "How to read every column: `docs/reading-results.md` in the lab's repository. The environment, "
              "the apps' `lab:` lines, this run's bounds and ceilings, every cell and the calibration are in "
              "the appendix at the end.\n"]
    return "".join(lines)
