"""The comparison table every scenario's section uses: one table per pool size x wrk setting,
apps as rows, containers side by side."""
from .fmt import f_rps, ranged, skipped, threads_label, threads_order


def each_cell(cells, apps, containers, threads):
    """(app, container, cell) for every app x container that has a cell with that pool, in order."""
    for app in apps:
        for ct in containers:
            c = next((x for x in cells if x["app"] == app and x["container"] == ct and x["threads"] == threads), None)
            if c is not None:
                yield app, ct, c


def _ceiling_and_bound(calibration, threads, wt, cn, sleep_s):
    """The line above a group's table: its measured ceiling and its Little's-law bounds."""
    cal = next((c for c in calibration if c["loadgen"] == "wrk" and c["wrk_threads"] == wt
                and c["connections"] == cn), None)
    ceiling = "not measured"
    if cal and cal.get("rps"):
        ceiling = f"{ranged(cal, 'rps', f_rps)} req/s"
        if cal.get("steady_rps") is not None:
            ceiling += f", steady {ranged(cal, 'steady_rps', f_rps)} req/s"
    if isinstance(threads, int):
        tpr = f"thread-per-request apps {min(cn, threads) / sleep_s:g} req/s"
    else:
        tpr = "thread-per-request apps too (a blocked virtual thread holds no carrier)"
    return f"Ceiling (wrk straight at remote-sleep): {ceiling}. Bound: {cn / sleep_s:g} req/s, {tpr}."


def group_tables(cells, apps, containers, calibration, sleep_s, columns, values, heading=None, annotate=None):
    """One table per pool size x wrk setting: apps as rows, `columns` per container side by side
    (`values(cell)` gives their texts); a FAILED or SKIPPED cell gets a note under its table."""
    lines = []
    w = lines.append
    by_key = {(c["app"], c.get("client", "jdk"), c["container"], c["threads"], c["wrk_threads"], c["connections"],
               c.get("again")): c for c in cells}
    clients = list(dict.fromkeys(c.get("client", "jdk") for c in cells)) or ["jdk"]
    rows = [(app, client) for app in apps for client in clients
            if any(k[0] == app and k[1] == client for k in by_key)] if len(clients) > 1 else [(a, clients[0]) for a in apps]
    groups = []
    for c in cells:
        g = (c["threads"], c["wrk_threads"], c["connections"], c.get("again"))   # again: figures.mark_again
        if g not in groups:
            groups.append(g)
    groups.sort(key=lambda g: (threads_order(g[0]), g[2], g[1], g[3] or 0))
    for threads, wt, cn, again in groups:
        w(f"\n### {threads_label(threads)} · wrk -t{wt} -c{cn}{' · again, on the same JVMs' if again else ''}\n\n")
        w((heading(threads, wt, cn) if heading else _ceiling_and_bound(calibration, threads, wt, cn, sleep_s)) + "\n\n")
        n = len(columns)
        head = "| app |" + "".join(f" {ct} {columns[0]} |" + "".join(f" {h} |" for h in columns[1:])
                                   for ct in containers)
        w(head + "\n|---|" + "---:|" * (n * len(containers)) + "\n")
        notes = []
        for app, client in rows:
            name = app if len(clients) == 1 else f"{app} · {client} client"
            row = f"| {name} |"
            for ct in containers:
                c = by_key.get((app, client, ct, threads, wt, cn, again))
                if c is None:
                    row += " |" * n
                elif c["status"] != "ok":
                    row += f" {'SKIPPED' if skipped(c) else 'FAILED'} |" + " |" * (n - 1)
                    notes.append(f"{name} on {ct}: {c['status']}")
                else:
                    row += "".join(f" {v} |" for v in values(c))
                    if annotate and annotate(c):
                        notes.append(f"{name} on {ct}: {annotate(c)}")
            w(row + "\n")
        for note in notes:
            w(f"\n- {note}")
        if notes:
            w("\n")
    return "".join(lines)
