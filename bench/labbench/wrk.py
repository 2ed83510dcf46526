"""wrk, the load generator: the measured command (echoed first, JSON through bench/wrk-json.lua,
CPU recorded around it) and the unrecorded warm-up."""
import os
import resource

from . import procs
from .rundir import put

LUA = "bench/wrk-json.lua"


def command(s, url, wt, conns):
    return ["wrk", "-t", str(wt), "-c", str(conns), "-d", s.duration, "--timeout", s.wrk_timeout,
            "--latency", "-s", LUA, url]


def children_cpu_s():
    """CPU seconds used by our reaped children. Read around the wrk command, the difference is
    wrk's own CPU: no other child is reaped meanwhile (a side load is reaped after wrk)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(s, cell_dir, url, wt, conns, remote, app=None, stats_url=None):
    """Run the measured wrk command into cell_dir (wrk.txt, wrk.json, cell.txt), and read the
    app's /stats the moment wrk ends (its inFlight is then what wrk left unanswered) into
    stats.json. None when it worked, else the reason."""
    cmd = command(s, url, wt, conns)
    print(f"  $ {' '.join(cmd)}")
    env = dict(os.environ, WRK_JSON=str(cell_dir / "wrk.json"), WRK_CONNECTIONS=str(conns),
               WRK_TIMEOUT_S=str(s.wrk_timeout_s))
    box0, rem0, wrk0 = procs.box_ticks(), procs.proc_ticks(remote), children_cpu_s()
    app0 = procs.proc_ticks(app) if app else 0
    sampler = procs.Sampler(app.pid).start() if app else None   # the app's peak RSS and threads
    rc = procs.run(cmd, out=cell_dir / "wrk.txt", env=env)
    peaks = sampler.stop() if sampler else None
    stats_ok = save(stats_url, cell_dir / "stats.json") if stats_url else True
    box1 = procs.box_ticks()
    app1 = procs.proc_ticks(app) if app else 0
    busy, total = box1[0] - box0[0], box1[1] - box0[1]
    put(cell_dir / "cell.txt", wrk_command=" ".join(cmd), wrk_exit=rc,
        cpu_box_pct=f"{100 * busy / total if total else 0:.1f}",
        cpu_remote_s=f"{(procs.proc_ticks(remote) - rem0) / procs.CLK_TCK:.2f}",
        cpu_wrk_s=f"{children_cpu_s() - wrk0:.2f}")
    if app:
        put(cell_dir / "cell.txt", cpu_app_s=f"{(app1 - app0) / procs.CLK_TCK:.2f}",
            peak_rss_kb=peaks[0], peak_os_threads=peaks[1], resource_samples=sampler.samples)
    wrk_json = cell_dir / "wrk.json"
    if not wrk_json.exists() or wrk_json.stat().st_size == 0:
        return f"wrk gave no result (exit {rc}, see wrk.txt)"
    if not stats_ok:
        return "GET /stats failed after wrk"
    return None


def save(url, path):
    """GET url into path; False when it did not answer 2xx."""
    try:
        status, body = procs.http(url)
    except OSError:
        return False
    if status >= 300:
        return False
    path.write_bytes(body)
    return True


def warm_up(s, url, wt, conns, out, pool=None):
    """A short unrecorded wrk run of fast calls (?ms=0): loads classes, JIT-compiles the request
    path and opens connections, and leaves nothing queued behind it (1 s calls would leave C
    requests). A thread-per-request app gets at most one connection per pool thread (`pool`),
    so no queue forms at all."""
    if s.warmup_s == 0:
        return
    if pool is not None and pool < conns:
        conns = pool
        wt = min(wt, conns)
    procs.run(["wrk", "-t", str(wt), "-c", str(conns), "-d", s.warmup, url], out=out)
