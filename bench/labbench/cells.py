"""One cell, start to record: its directory and record (cell.json), the app made ready for it
(app.py), the scenario's side load and measurement (its load generator's), its status.

A cell's record is cell.json in its directory (record.py), beside the raw files its load generator
and side load wrote (wrk.json, wrk.txt, stats.json, ...); the report builds every file from them.
What a cell does is its scenario's business (scenarios/), how it is loaded its load generator's
(loadgens/): nothing here names either.
"""
import time
from dataclasses import dataclass
from pathlib import Path

from . import db, foreign, loadgens, place
from .record import CellRecord


@dataclass
class Lab:
    """What every cell needs: the settings, the machine, the run directory, remote-sleep."""
    s: object
    m: object
    run_dir: Path
    remote: object = None       # remote-sleep's process
    db: object = None           # BACKEND=postgres: the PostgreSQL cluster (pg.Cluster), its URL and processes

    def url(self, port, path):
        """A URL of remote-sleep (REMOTE_PORT, on the backend's host) or of the app (its port and
        admin port, on the app's host): 127.0.0.1 unless HOSTS places them (place.py)."""
        return f"http://{place.address('backend' if port == self.s.remote_port else 'app')}:{port}{path}"


def run_cell(lab, app, cell):
    """Run one cell and write its record (cell.json) into its directory; returns its status:
    "ok", "FAILED: why" or "SKIPPED: why"."""
    t0 = time.monotonic()

    def since_start():
        return round(time.monotonic() - t0, 2)

    d = lab.run_dir / "cells" / cell.dir_name
    d.mkdir(parents=True)
    rec = _new_record(lab.s, cell)
    rec.save(d / "cell.json")
    skip = cell.skip_reason(lab.m.java_major)
    if skip:
        rec.status, rec.cell_wall_s = f"SKIPPED: {skip}", since_start()
        rec.save(d / "cell.json")
        return rec.status

    gone = sorted({name for role in place.PLACED for name in place.lost_names(role)})
    # HOSTS: a host lost earlier in the run is not asked again (place.lost): the cell fails at once
    reason = (f"host {', '.join(gone)} was lost earlier in this run" if gone
              else app.prepare(cell, d, rec, since_start))
    if reason is None:
        reason = _measure(lab, app, cell, d, rec, since_start)
    rec.status = "ok" if reason is None else f"FAILED: {reason}"
    if reason is not None:
        app.stop()                     # a broken app is never reused
    rec.cell_wall_s = since_start()
    rec.save(d / "cell.json")
    return rec.status


def _new_record(s, cell):
    """The cell's record as planned: what it will run, nothing measured yet."""
    gen = loadgens.get(cell.loadgen)
    return CellRecord(index=cell.index, round=cell.round, scenario=cell.scenario, loadgen=cell.loadgen,
                      app=cell.app, container=cell.container, threads=cell.threads, pool_mode=cell.pool_mode,
                      thread_per_request=cell.thread_per_request, wrk_threads=cell.wrk_threads,
                      connections=cell.connections, rate=s.rate if gen.open_loop else None, client=cell.client,
                      duration_s=s.duration_s, sleep_ms=s.sleep_ms, variant=cell.variant or None,
                      app_cpus=place.cpu_count("app"),
                      db_driver=cell.db_driver or None,
                      params={**cell.scene.params(s), **(db.cell_params(s) if cell.db_driver else {}), **({"app_args": " ".join(cell.app_args)} if cell.app_args else {}),
                              **({"wrk_timeout": cell.wrk_timeout} if cell.wrk_timeout else {}),
                              **(foreign.cell_params(s) if foreign.is_foreign(cell.app) else {})})


def _measure(lab, app, cell, d, rec, since_start):
    """The scenario's side load (if any) started, the load generator's measurement, the side load
    stopped and checked. Returns None, or why the cell failed."""
    s, scene = lab.s, cell.scene
    side = scene.side_load(s, lab.url(s.app_port, ""), d)
    reason = None
    if side:
        app.had_side_load = scene.side_load_resets_app
        reason = side.start()
    if reason is None:
        rec.prep_s = since_start()
        reason, rec.measured = _load(lab, app, cell, d)
    if side:
        side_exit = side.stop(now=reason is not None)     # the load did not run: no need to wait
        rec.measured["side_load_exit"] = side_exit
        if reason is None and side_exit != 0:
            reason = f"side load exited with {side_exit} (see slow.log)"
        elif reason is None and side.result() is None:
            reason = "side load wrote no result (see its log)"
    return reason


def _load(lab, app, cell, d):
    """The scenario's measurement (its load generator's by default), the app profiling itself over
    it with PROFILE=1 where the load generator's window is one to profile."""
    s, gen = lab.s, loadgens.get(cell.loadgen)
    ours = s.profile and gen.profiled and not cell.scene.profiles_itself
    if s.profile and not gen.profiled:
        print(f"  PROFILE=1: not profiled ({gen.name}: {gen.not_profiled})")
    profiling = ours and app.profile_start()
    reason, measured = cell.scene.measure(lab, cell, d, lab.url(s.app_port, cell.path), app)
    if profiling:
        measured["profile"] = app.profile_stop(d / "profile")
    elif ours:
        measured["profile"] = {"error": "POST /profile/start failed (see the app's log)"}
    return reason, measured
