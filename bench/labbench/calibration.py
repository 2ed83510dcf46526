"""The calibration cells: the same load straight at the backend, once per load setting (and round).
Their figures are the ceiling each cell is read against (docs/traps.md #14): what this box and this
window can reach with a server that only waits."""
from . import db, loadgens, web
from .record import CellRecord


def calibrate(lab, summary, rnd=1):
    """One calibration cell per wrk setting (and one for the open loop): the same load straight at
    remote-sleep. Its req/s is the ceiling this box and this closed-loop window can reach
    (docs/traps.md #14); vegeta's is the latency a perfect server shows at RATE. With REPEAT,
    every round measures its own. `summary(dir)` returns the cell's one-line summary. Returns how
    many ran."""
    s = lab.s
    if s.backend == "postgres":
        return calibrate_db(lab, summary, rnd)
    done = []
    remote_stats = lab.url(s.remote_port, "/stats")
    prefix = "" if rnd == 1 else f"r{rnd}-"
    again = f" (round {rnd})" if rnd > 1 else ""
    if "wrk" in s.loadgens:
        for conns in s.connections:
            for wt in s.wrk_threads:
                if (wt, conns) in done:
                    continue
                done.append((wt, conns))
                d = lab.run_dir / "calibration" / f"{prefix}w{wt}-c{conns}"
                d.mkdir(parents=True)
                rec = CellRecord(kind="calibration", round=rnd, wrk_threads=wt, connections=conns,
                                 duration_s=s.duration_s, sleep_ms=s.sleep_ms)
                rec.save(d / "cell.json")
                print(f"== calibration{again}: wrk -t{wt} -c{conns} straight at remote-sleep /sleep")
                reason, rec.measured = loadgens.get("wrk").calibrate(lab, d, lab.url(s.remote_port, "/sleep"), wt, conns)
                rec.status = "ok" if reason is None else f"FAILED: {reason}"
                rec.save(d / "cell.json")
                print(f"   ceiling: {summary(d)}")
    for gen in (loadgens.get(name) for name in s.loadgens if name != "wrk"):
        done.append(gen.name)
        d = lab.run_dir / "calibration" / f"{prefix}{gen.name}"
        d.mkdir(parents=True)
        rec = CellRecord(kind="calibration", round=rnd, loadgen=gen.name, rate=s.rate, duration_s=s.duration_s,
                         sleep_ms=s.sleep_ms)
        rec.save(d / "cell.json")
        print(f"== calibration{again}: {gen.name} at {s.rate} req/s straight at remote-sleep /sleep")
        web.wait_drained(remote_stats, s.sleep_ms // 1000 + 5)
        reason, rec.measured = gen.calibrate(lab, d, lab.url(s.remote_port, "/sleep"))
        rec.status = "ok" if reason is None else f"FAILED: {reason}"
        rec.save(d / "cell.json")
        print(f"   open-loop ceiling: {summary(d)}")
    return len(done)


def calibrate_db(lab, summary, rnd=1):
    """BACKEND=postgres: pgbench with the app's query straight at PostgreSQL, once per load level
    with min(connections, DB pool) clients: what the database serves through as many connections
    as a cell can keep busy (a closed loop of C connections never has more than C queries out, and
    the pool never more than its size). Its tps is the DB cells' ceiling at that level. Returns how many ran."""
    s = lab.s
    levels = db.pgbench_clients(s)
    for clients in levels:
        name = f"pgbench-c{clients}"
        d = lab.run_dir / "calibration" / (f"r{rnd}-{name}" if rnd > 1 else name)
        d.mkdir(parents=True)
        rec = CellRecord(kind="calibration", round=rnd, loadgen="pgbench", connections=clients,
                         duration_s=s.duration_s, sleep_ms=s.sleep_ms, params=db.cell_params(s))
        rec.save(d / "cell.json")
        print(f"== calibration{f' (round {rnd})' if rnd > 1 else ''}: pgbench -c {clients} "
              f"({s.db_query} query) straight at PostgreSQL")
        reason, rec.measured = loadgens.get("pgbench").calibrate(lab, d, clients)
        rec.status = "ok" if reason is None else f"FAILED: {reason}"
        rec.save(d / "cell.json")
        print(f"   ceiling: {summary(d)}")
    return len(levels)
