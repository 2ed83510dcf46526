"""A cost cell, live (one fresh JVM of one variant: a fork). The app's memory idle, then vegeta's
constant rate, the measured load itself, started once and left running: the JVM warmed up on it until
its JIT settles (the warm-up rule of warmup.py, on this load rather than on wrk's fast calls: nothing
the measured windows run is new to the JIT), then COST_WINDOWS windows of COST_WINDOW, each counted
by perf on the app's host and read around in /stats and /proc; vegeta stopped, and the JVM's CPU at
rest read, warm, with nothing in flight. cost.json holds every reading; the card is made from it."""
import json
import time

from ... import paths, place, procs, warmup, web
from ...loadgens import vegeta
from . import counters

# After vegeta starts, before a fixed warm-up or the windows: the backend's delay fills the in-flight
# requests first, then a margin.
LEAD_S = 1.0
# WARMUP=auto's warm-up starts with the load, and does not settle before 42 s of it: not before the
# servers' first idle timeouts are over. Jetty and Reactor Netty close a connection
# idle for 30 s (idleTimeout=30000ms in each lab line), and at a constant rate vegeta leaves some of its
# connections idle: the first closes come 30-40 s into the load, run code the warm-up had not, and make
# the hot path's compiled code invalid (-XX:+PrintCompilation, 2026-11-27, in seconds of the JVM's life,
# the load starting at ~2.5 s: Jetty's IdleTimeout fired at
# 33.9 s, then uncommon traps in its selector and connection code at 35.1 s; Reactor Netty's idle handler
# closed channels at 41.6 s after uncommon traps in its event loop at 39.3 s; ~5 s of recompiles each).
# A warm-up that settled before them left them to the measured windows: in the default run of
# 2026-11-27 every one of the 8 forks that settled under 40 s had windows above 5 % compiler (16), 2
# of the 15 that settled later had one each; with this floor, 7 windows in 7 of 24 forks.
IDLE_TIMEOUT_S = 30
FLOOR_S = IDLE_TIMEOUT_S + 4 * warmup.WINDOW_S
# 2 s, not the other scenarios' 3: 24 s of a default run's 24 forks, which ran 29m19s-30m38s with 3 s
# (its limit is 30 min); perf counts task-clock in ns, so a shorter reading loses no resolution
REST_S = 2
# PROFILE=1: each measured window profiled every 1 ms of the process's CPU, as often as the app's
# profiler can (its itimer is held to the kernel's tick: every 4 ms here, ~900 samples in a default
# fork's 12 s of windows at 1,000 req/s; the app's default of 10 ms would give ~360)
PROFILE_INTERVAL_MS = 1
SPEED_PROBE = paths.ROOT / "bench" / "tools" / "speed-probe.py"


def measure(lab, cell, d, url, app):
    """(None, or why the cell failed; what was measured). Writes cost.json."""
    s, stats_url = lab.s, app.admin + "/stats"
    record = {"rate": s.rate, "in_flight": round(s.rate * s.sleep_ms / 1000), "idle": memory(app.proc)}
    load, cmd = start_load(lab, d, url)
    reason = None
    try:
        if s.warmup == "auto":    # from the load's start: its floor counts from there
            record["warmup"] = warm_on_load(stats_url)
        else:
            time.sleep(s.sleep_ms / 1000 + LEAD_S)
            record["warmup"] = fixed_warm_up(s.warmup_s)
        record["windows"], record["still_warming"] = warm_windows(app.proc, stats_url, s.cost_windows, s.cost_window_s, d,
                                                                  app if s.profile else None, s.remote_port)
    finally:
        procs.stop(load, grace_s=5.0)
    if not web.wait_drained(stats_url, s.sleep_ms // 1000 + 5):
        reason = "still busy after the load stopped"
    record["rest"] = at_rest(app.proc)
    (d / "cost.json").write_text(json.dumps(record, indent=1) + "\n")
    app.last_conns = record["in_flight"]
    return reason, {"cost_command": place.shown("loadgen", cmd)}


def start_load(lab, d, url):
    """vegeta at RATE, long enough for the longest warm-up and every window; stopped by measure()."""
    s = lab.s
    seconds = int(warmup.CAP_S + 2 * s.cost_windows * (s.cost_window_s + 1) + s.sleep_ms / 1000 + LEAD_S + 30)
    targets = d / "targets.txt"
    targets.write_text(f"GET {url}\n")
    cmd = vegeta.command(lab.m.vegeta if not place.placed() else ".tools/bin/vegeta", targets, s.rate, seconds,
                         s.wrk_timeout_s, s.sleep_ms, d / "vegeta.bin")
    if place.placed():            # the first load host: one vegeta holds 1,000 req/s
        remote_targets = place.remote_file("loadgen", 0, f"vegeta-{d.name}.targets")     # deleted with the run's directory
        place.put_text("loadgen", 0, remote_targets, f"GET {url}\n")
        cmd = vegeta.command(".tools/bin/vegeta", remote_targets, s.rate, seconds, s.wrk_timeout_s, s.sleep_ms, "/dev/null")
    cmd = [str(c) for c in cmd]
    print(f"  $ {place.shown('loadgen', cmd)}   (stopped after the windows)")
    return place.start("loadgen", cmd, d / "vegeta.txt"), cmd


def warm_on_load(stats_url):
    """WARMUP=auto's rule on the measured load: /stats read every WINDOW_S until the JIT has settled
    (warmup.verdict): the warm-up's record, as the other scenarios' cells keep it."""
    t = time.monotonic()
    readings = warmup.Readings(web.get_json(stats_url), t)
    print(f"  warming up on the measured load in {warmup.WINDOW_S} s windows until the JIT settles "
          f"({FLOOR_S}-{warmup.CAP_S} s: past the servers' first idle timeouts) …", flush=True)
    while True:
        time.sleep(warmup.WINDOW_S)
        t = time.monotonic()                  # a missed reading is skipped (warmup.Readings says why)
        outcome, text = readings.add(web.get_json(stats_url), t, floor_s=FLOOR_S)
        if outcome == "unknown":
            return {"mode": "auto", "outcome": outcome, "text": text}
        if outcome != "warming":
            record = readings.record()
            late = (f"; /stats answered late {readings.missed} time(s), each window running on to the next reading"
                    if readings.missed else "")
            print(f"  warm-up: {text} ({record['requests']:,} requests on the measured load{late})", flush=True)
            return {"mode": "auto", "outcome": outcome, "text": text, "how": "the measured load itself (vegeta at RATE)",
                    **record}


def fixed_warm_up(seconds):
    """WARMUP=Ns: N seconds of the measured load before the windows; 0: none."""
    time.sleep(seconds)
    return {"mode": "fixed", "seconds": seconds, "text": f"{seconds} s of the measured load"}


def warm_windows(p, stats_url, n, seconds, d, profiled=None, backend_port=None):
    """(n windows, those taken as the warm-up's): a window whose compiler share is above the warm-up's
    limit (warmup.JIT_SHARE_MAX) was not yet warm, whatever the warm-up read: a late compile at 1,000
    req/s took 18 % of a window right after warm-ups that had settled. Such a window is kept apart
    (cost.json's still_warming) and measured again, at most n times; past that the windows are kept
    as they are and the card's JIT max shows it. `profiled`: the app, with PROFILE=1 (each window
    profiled); `backend_port`: its client's connections to the backend are counted at each window's end."""
    kept, again = [], []
    while len(kept) < n:
        w = window(p, stats_url, seconds, d / f"speed-{len(kept) + len(again) + 1}.txt", profiled, backend_port)
        jit = counters.jit_share(w["stats0"], w["stats1"])
        # a window without its two /stats readings (one did not answer in time) has no request count to
        # divide by, and read as a load not carried (cost-pool-b, Reactor Netty's client, round 1): again
        unread = counters.unread(w)
        if (unread or (jit is not None and jit > warmup.JIT_SHARE_MAX)) and len(again) < n:
            print(f"  {'window without its /stats readings' if unread else f'window at {100 * jit:.1f} % compiler: still warming'}"
                  f", measured again", flush=True)
            again.append(w)
        else:
            kept.append(w)
    return kept, again


def window(p, stats_url, seconds, speed_out, profiled=None, backend_port=None):
    """One measured window: perf over `seconds` on the app's host, /stats read just before and after,
    the app host's CPU ticks (busy, total, steal) around it, the box's speed on the app's CPUs over it
    (bench/tools/speed-probe.py), Pss and threads at its end: the raw readings (the card divides them,
    the JVM at rest subtracted), and its client's connections to the backend then. `profiled`
    (PROFILE=1): the app profiles itself over it, into profile-N beside speed-N.txt (tiers.py reads it)."""
    started = profiled.profile_start(PROFILE_INTERVAL_MS) if profiled else None
    stats0, t0 = web.get_json(stats_url) or {}, time.monotonic()
    box0 = place.box_ticks("app")             # the hypervisor's steal over the window: the box's noise, recorded
    probe = place.start("app", speed_probe(seconds), speed_out)
    rc, out = place.beside(p, counters.perf_command(place.pid(p), seconds), timeout=seconds + 30)
    box1 = place.box_ticks("app")
    t1, stats1 = time.monotonic(), web.get_json(stats_url) or {}
    place.wait(probe)                          # it ends by itself, a few ms after perf
    perf, error = counters.parse_perf(out)
    raw = {"perf": perf, "perf_s": seconds, "stats_s": round(t1 - t0, 3), "stats0": counters.kept(stats0),
           "stats1": counters.kept(stats1), "box0": list(box0), "box1": list(box1),
           "speed": counters.parse_speed(procs.read_lines(speed_out)), **memory(p),
           **({"client_conns": client_connections(p, backend_port)} if backend_port else {})}
    if profiled:
        name = speed_out.stem.replace("speed-", "profile-")
        raw["profile"] = dict(profiled.profile_stop(speed_out.parent / name) if started
                              else {"error": "POST /profile/start failed (see the app's log)"}, dir=name,
                              **({"event": started.get("event")} if started else {}))
    if rc != 0 or error:          # the kernel's counters unavailable: the JVM's still count
        raw["perf_error"] = f"perf stat: {error or f'exit {rc}'}"
    return raw


def speed_probe(seconds):
    """bench/tools/speed-probe.py for `seconds`, as it runs where the app does (on a host, from its lab directory)."""
    script = SPEED_PROBE if not place.placed() else SPEED_PROBE.relative_to(paths.ROOT)
    return ["python3", str(script), str(seconds)]


def at_rest(p, seconds=REST_S):
    """The JVM's CPU at rest, warm, after its load: task-clock ns per second (a window subtracts it
    without the compiler's: counters.rest_ns_per_s), and its busiest threads."""
    rc, out = place.beside(p, counters.perf_command(place.pid(p), seconds), timeout=seconds + 30)
    perf, error = counters.parse_perf(out)
    ns = perf.get("task-clock")
    # the collector's and the compiler's part kept apart: forks read 0.8-31 ms/s at rest (2026-11-27),
    # and a load's end runs code its windows did not (closes), which the JIT may compile right then
    return {"seconds": seconds, "task_ns": ns, "ns_per_s": None if ns is None else round(ns / seconds),
            "gc_ns": perf.get("task-clock:gc"), "jit_ns": perf.get("task-clock:jit"), "busiest": counters.busiest(out),
            "syscalls": perf.get("raw_syscalls:sys_enter"), "context_switches": perf.get("context-switches"),
            **({"perf_error": f"perf stat: {error or f'exit {rc}'}"} if error or rc else {})}


def client_connections(p, backend_port):
    """The app's client's connections to the backend now, busy and idle (counters.client_connections),
    from its host's TCP tables: the JDK client walks a list of its idle ones on every request
    (docs/traps.md #42), so a fork that keeps more of them costs more."""
    pid = place.pid(p)
    _, tables = place.beside(p, ["cat", f"/proc/{pid}/net/tcp", f"/proc/{pid}/net/tcp6"])
    return counters.client_connections(tables, backend_port)


def memory(p):
    """{"pss_kb", "threads"} of the app's process now, on its host."""
    pid = place.pid(p)
    _, smaps = place.beside(p, ["cat", f"/proc/{pid}/smaps_rollup"])
    _, status = place.beside(p, ["cat", f"/proc/{pid}/status"])
    pss, threads = counters.proc_figures(smaps, status)
    return {"pss_kb": pss, "threads": threads}
