"""wrk, the closed-loop load generator: the measured command (echoed first, JSON through
bench/wrk-json.lua, CPU recorded around it), the unrecorded warm-up, and what wrk.json means."""
import json
import os
import resource
import time

from .. import place, procs, warmup
from . import LoadGen, histogram, jvm_figures
from ..checks import seconds_of
from ..report.fmt import ms, read_json
from ..steady import steady_rate

LUA = "bench/wrk-json.lua"


def command(s, url, wt, conns, timeout=None):
    return place.command("loadgen", ["wrk", "-t", str(wt), "-c", str(conns), "-d", s.duration, "--timeout",
                                     timeout or s.wrk_timeout, "--latency", "-s", LUA, url])


def children_cpu_s():
    """CPU seconds used by our reaped children. Read around the wrk command, the difference is
    wrk's own CPU: no other child is reaped meanwhile (a side load is reaped after wrk)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def measure(s, cell_dir, url, wt, conns, remote, app=None, stats_url=None, timeout=None):
    """Run the measured wrk command into cell_dir (wrk.txt, wrk.json), and read the app's /stats
    the moment wrk ends (its inFlight is then what wrk left unanswered) into stats.json.
    (None when it worked, else the reason; what was measured, for the cell's record)."""
    if place.placed():
        return measure_on_hosts(s, cell_dir, url, wt, conns, remote, app, stats_url, timeout)
    cmd = command(s, url, wt, conns, timeout)
    print(f"  $ {' '.join(cmd)}")
    env = dict(os.environ, WRK_JSON=str(cell_dir / "wrk.json"), WRK_CONNECTIONS=str(conns),
               WRK_TIMEOUT_S=str(seconds_of(timeout) if timeout else s.wrk_timeout_s))
    jvm0 = (procs.get_json(stats_url) or {}).get("jvm") if stats_url else None   # the JIT's share of the window
    t0, box0, rem0, wrk0 = time.monotonic(), procs.box_ticks(), procs.proc_ticks(remote), children_cpu_s()
    app0 = procs.proc_ticks(app) if app else 0
    sampler = procs.Sampler(app.pid).start() if app else None   # the app's peak RSS and threads
    rc = procs.run(cmd, out=cell_dir / "wrk.txt", env=env)
    peaks = sampler.stop() if sampler else None
    stats_ok = save(stats_url, cell_dir / "stats.json") if stats_url else True
    box1, t1 = procs.box_ticks(), time.monotonic()
    app1 = procs.proc_ticks(app) if app else 0
    busy, total = box1[0] - box0[0], box1[1] - box0[1]
    measured = {"wrk_command": " ".join(cmd), "wrk_exit": rc,
                # The wall time the CPU figures were read over: wrk's whole run, its connection
                # set-up included (5,000 connections took seconds), not just DURATION.
                "cpu_window_s": round(t1 - t0, 2),
                "cpu_box_pct": round(100 * busy / total if total else 0, 1),
                "cpu_steal_pct": round(100 * (box1[2] - box0[2]) / total if total else 0, 1),
                "cpu_remote_s": round((procs.proc_ticks(remote) - rem0) / procs.CLK_TCK, 2),
                "cpu_wrk_s": round(children_cpu_s() - wrk0, 2)}
    if app:
        measured.update(cpu_app_s=round((app1 - app0) / procs.CLK_TCK, 2), peak_rss_kb=peaks[0],
                        peak_os_threads=peaks[1], resource_samples=sampler.samples)
    jvm1 = (read_json(cell_dir / "stats.json") or {}).get("jvm") if stats_url else None
    measured.update(jvm_figures(jvm0, jvm1))
    wrk_json = cell_dir / "wrk.json"
    if not wrk_json.exists() or wrk_json.stat().st_size == 0:
        return f"wrk gave no result (exit {rc}, see wrk.txt)", measured
    if not stats_ok:
        return "GET /stats failed after wrk", measured
    return None, measured


def shares(wt, conns, n):
    """wrk -t and -c split evenly over n load hosts: [(host index, threads, connections)], the
    remainders to the first hosts, a host with no connection left out, every host >= 1 thread."""
    out = []
    for i in range(n):
        c = conns // n + (i < conns % n)
        if c:
            out.append((i, max(1, min(c, wt // n + (i < wt % n))), c))
    return out


def measure_on_hosts(s, cell_dir, url, wt, conns, remote, app, stats_url, timeout):
    """HOSTS: wrk on every load host at once, each with its share of the connections and threads,
    each host's wrk.json fetched (wrk-HOST.json) and merged exactly into wrk.json (merged()); every
    role's CPU read on its own host. The same result as measure(), plus each host's share
    (load_hosts) and each host's CPU (host_cpu)."""
    timeout_s = seconds_of(timeout) if timeout else s.wrk_timeout_s
    plan = shares(wt, conns, len(place.hosts("loadgen")))
    gone = place.lost_names("loadgen", [i for i, _, _ in plan])
    if gone:
        return f"load host {', '.join(gone)} was lost earlier in this run", {}
    tmp = f"/tmp/lab-wrk-{os.getpid()}-{cell_dir.name}"
    cmds = [["wrk", "-t", str(t), "-c", str(c), "-d", s.duration, "--timeout", timeout or s.wrk_timeout,
             "--latency", "-s", LUA, url] for _, t, c in plan]
    for (i, _, _), cmd in zip(plan, cmds):
        print(f"  $ {place.shown('loadgen', cmd, i)}")
    jvm0 = (procs.get_json(stats_url) or {}).get("jvm") if stats_url else None
    # the hosts of the roles this run placed (BACKEND=postgres: the db host, not the backend's)
    used = {*(place.host(r) for r in place.placed_roles() if r != "loadgen"), *(place.host("loadgen", i) for i, _, _ in plan)}
    t0, box0 = time.monotonic(), {h: place.box_ticks_of(h) for h in used}
    rem0, app0 = place.ticks(remote), (place.ticks(app) if app else 0)
    gone = sorted(h.name for h in used if h in place.lost())
    if gone:                           # a host stopped answering ssh since the cell began
        return f"host {', '.join(gone)} lost (ssh: host lost or not reached) before wrk started", {}
    sampler = place.sampler(app).start() if app else None
    started = [place.start("loadgen", cmd, cell_dir / f"wrk-{place.host('loadgen', i).name}.txt",
                           {"WRK_JSON": f"{tmp}-{place.host('loadgen', i).name}.json", "WRK_CONNECTIONS": str(c),
                            "WRK_TIMEOUT_S": str(timeout_s)}, i)
               for (i, _, c), cmd in zip(plan, cmds)]
    rcs = [procs.wait(p) for p in started]
    for (i, _, _), rc in zip(plan, rcs):
        if rc == 255:                  # ssh's own failure: the host did not answer its keep-alives
            place.lost(place.host("loadgen", i))
    peaks = sampler.stop() if sampler else None
    stats_ok = save(stats_url, cell_dir / "stats.json") if stats_url else True
    t1, box1 = time.monotonic(), {h: place.box_ticks_of(h) for h in used}
    app1 = place.ticks(app) if app else 0

    def pct(h, k):
        total = box1[h][1] - box0[h][1]
        return round(100 * (box1[h][k] - box0[h][k]) / total, 1) if total else 0
    hosts_out, docs, failed = host_results(plan, rcs, cell_dir, tmp)
    measured = {"wrk_command": " ; ".join(place.shown("loadgen", cmd, i) for (i, _, _), cmd in zip(plan, cmds)),
                "wrk_exit": max(rcs),
                "cpu_window_s": round(t1 - t0, 2),
                # "box CPU" is the app's host's: what the app could not use
                "cpu_box_pct": pct(place.host("app"), 0), "cpu_steal_pct": pct(place.host("app"), 2),
                "cpu_remote_s": round((place.ticks(remote) - rem0) / procs.CLK_TCK, 2),
                "cpu_wrk_s": round(sum(h["cpu_s"] or 0 for h in hosts_out), 2),
                "load_hosts": hosts_out,
                "host_cpu": {h.name: {"busy_pct": pct(h, 0), "steal_pct": pct(h, 2)} for h in used}}
    if app:
        measured.update(cpu_app_s=round((app1 - app0) / procs.CLK_TCK, 2), peak_rss_kb=peaks[0],
                        peak_os_threads=peaks[1], resource_samples=sampler.samples)
    jvm1 = (read_json(cell_dir / "stats.json") or {}).get("jvm") if stats_url else None
    measured.update(jvm_figures(jvm0, jvm1))
    if failed:
        return f"load host {'; '.join(failed)}", measured
    try:
        (cell_dir / "wrk.json").write_text(json.dumps(merged(docs, hosts_out)))
    except ValueError as e:
        return f"wrk results not merged: {e}", measured
    if not stats_ok:
        return "GET /stats failed after wrk", measured
    return None, measured


def host_results(plan, rcs, cell_dir, tmp):
    """Each load host's wrk.json fetched into the cell (wrk-HOST.json), its share and CPU, and
    wrk.txt as every host's output in turn: (load_hosts, the hosts' documents, why some failed)."""
    hosts_out, docs, failed, first = [], [], [], {}
    for (i, t, c), rc in zip(plan, rcs):
        h = place.host("loadgen", i)
        got = place.fetch("loadgen", i, f"{tmp}-{h.name}.json", cell_dir / f"wrk-{h.name}.json")
        doc = read_json(cell_dir / f"wrk-{h.name}.json") if got else None
        if rc != 0 or not doc:
            failed.append(f"{h.name}: wrk exit {rc}{' (ssh: host lost or not reached)' if rc == 255 else ''}"
                          f"{'' if doc else ', no wrk.json'}")
        else:
            docs.append(doc)
        if doc and doc.get("completions_t0_unix"):
            first[h.name] = doc["completions_t0_unix"]
        hosts_out.append({"host": h.name, "threads": t, "connections": c, "exit": rc,
                          "requests": doc["requests"] if doc else None,
                          "rps": round(doc["requests"] / (doc["duration_us"] / 1e6), 2) if doc and doc["duration_us"] else None,
                          "cpu_s": place.ran_cpu_s(cell_dir / f"wrk-{h.name}.txt")})
    for h in hosts_out:      # when each host's first answer came, after the earliest: how far apart they started
        h["first_answer_s"] = round(first[h["host"]] - min(first.values()), 3) if h["host"] in first else None
    (cell_dir / "wrk.txt").write_text("".join(
        f"== {h['host']}: wrk -t{h['threads']} -c{h['connections']} (exit {h['exit']})\n"
        + "\n".join(procs.read_lines(cell_dir / f"wrk-{h['host']}.txt")) + "\n" for h in hosts_out))
    return hosts_out, docs, failed


def merged(docs, hosts_out):
    """One wrk.json from every host's (histogram.merge: counts summed, latency from the summed
    histogram), with its steady rate. Where every host's connections each answered twice or more
    (per-connection spans), each host's rate is exact on its own and they add up, however far apart
    ssh started them (first_answer_s: 0.1-0.6 s in the sample). Otherwise (a starved model, answers
    in bursts) the hosts' completions go on one wall-clock axis and are read as one wrk's would be
    (wrk_fields): two 3 s halves of a queued 200-thread pool read 178 + 79 = 256 req/s by bursts
    against a bound of 200; their union, 222, which wrk_fields checks against req/s like any other.
    ValueError when a host has no histogram."""
    out = histogram.merge(docs)
    rates = [steady_rate(d["completions_s"], h["connections"]) if d.get("completions_s") else (None, "")
             for d, h in zip(docs, hosts_out)]          # (every host answered: a failed one returned before)
    if all(how == "per-connection spans" for _, how in rates):
        out["steady_rps"] = round(sum(r for r, _ in rates), 3)
        out["steady_how"] = "per-connection spans, each load host's, summed"
    else:
        out.update(histogram.completions(docs))
    return out


def profile_start(admin):
    """PROFILE=1: the app starts profiling itself (its admin endpoint; nothing attaches from outside)."""
    try:
        status, _ = procs.http(admin + "/profile/start", method="POST")
    except OSError:
        return False
    return status == 200


def profile_stop(admin, out_dir):
    """Stop the app's profile: it writes flame.html and collapsed.txt into out_dir; its JSON answer."""
    import json
    import urllib.parse
    try:
        status, body = procs.http(admin + "/profile/stop?dir=" + urllib.parse.quote(str(out_dir.resolve())),
                                  method="POST", timeout=60)
        return json.loads(body) if status == 200 else {"error": f"HTTP {status}: {body[:200]!r}"}
    except (OSError, ValueError) as e:
        return {"error": str(e)}


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


def warm_up(s, url, wt, conns, out, pool=None, stats_url=None, measured_url=None, fault_url=None):
    """An unrecorded wrk run of fast calls before a fresh app's cell: loads classes, JIT-compiles
    the request path and opens connections, and leaves nothing queued behind it (1 s calls would
    leave C requests). A thread-per-request app gets at most one connection per pool thread
    (`pool`), so no queue forms at all. WARMUP=Ns: N seconds of `url` (?ms=0). WARMUP=auto (with
    the app's /stats): windows of fast calls until the JIT has settled (labbench/warmup.py).
    Returns what it did, for the cell's record ({} for none)."""
    pool_limited = pool is not None and pool < conns
    if pool_limited:
        conns = pool
        wt = min(wt, conns)
    seconds = s.warmup_s
    if s.warmup == "auto":
        if stats_url:
            # A pool-limited app's threads each wait the backend's whole answer time (one connection
            # per thread): at 1 ms a 1-thread sync app served ~650 req/s and its JIT took 61 s to settle
            # (6 of the 8 in the default matrix hit the cap); answered at once, 4,800 req/s and 21 s.
            # The others are CPU-bound at 1 ms already (14,000-20,000 req/s on 2 cores) and keep it: their
            # client then always waits on its answer, as in the measured window.
            return auto_warm_up(url, wt, conns, out, stats_url, measured_url, fault_url,
                                fast_ms=0 if pool_limited else 1)
        seconds = warmup.FLOOR_S      # remote-sleep (the calibration) has no jvm object to judge: the rule's floor
    if seconds == 0:
        return {}
    place.run("loadgen", ["wrk", "-t", str(wt), "-c", str(conns), "-d", f"{seconds}s", url], out)
    return {"mode": "fixed", "seconds": seconds}


# remote-sleep's /fault schedule for one warm-up window, posted as the window starts: every call
# answered after 1 ms (0 for a pool-limited app, warm_up), whatever it asked for; then, for the window's last TAIL_MS, after TAIL_DELAY_MS,
# so that wrk ends the window with a request in flight on every connection, as it ends every
# measured window (a 1 s call cannot finish by then). The app then closes connections whose
# request is still waiting, and writes answers to closed ones, in the warm-up too, so that this
# end of a window is in the profile HotSpot compiles from. Put in while hunting the uncommon traps of
# docs/traps.md #37, whose cause turned out to be the verify call; what the tail alone is worth was
# not measured: every sample since ran with it.
TAIL_MS, TAIL_DELAY_MS = 300, 200


def fast_schedule(delay_ms):
    return f"{warmup.WINDOW_S * 1000 - TAIL_MS}ms:delay={delay_ms},{TAIL_MS + 1000}ms:delay={TAIL_DELAY_MS}"


def auto_warm_up(url, wt, conns, out, stats_url, measured_url=None, fault_url=None, fast_ms=1):
    """WARMUP=auto: wrk windows of WINDOW_S of fast calls, /stats read around each, until
    warmup.verdict() is not "warming".

    The calls are the measured request itself (measured_url) with remote-sleep told to answer
    every call after 1 ms (its /fault, fault_url): the app then runs exactly the measured code, its
    branches and its query string included. Warming on `?ms=1` instead sent the app down another
    branch (the `ms` parameter present); the first measured request hit an uncommon trap, HotSpot
    threw away the compiled request path and recompiled it inside the measured window, where the
    compiler then took 52-57 % of the app's CPU (docs/traps.md #37). Without fault_url (BACKEND=postgres:
    no remote-sleep in the path) it warms on `url` with ?ms=1 and says so."""
    schedule = fast_schedule(fast_ms)
    fast = bool(measured_url and fault_url and fast_remote(fault_url, schedule))
    if fast:
        url = measured_url
        how = (f"the measured request, remote-sleep answering after {fast_ms} ms ({TAIL_DELAY_MS} ms in each window's "
               f"last {TAIL_MS} ms: wrk ends it with calls in flight)")
    else:
        url, how = url.replace("ms=0", "ms=1"), "the warm-up path with ?ms=1 (another branch than the measured request)"
    path = "/" + url.split("/", 3)[3]      # http://host:port/path?query
    print(f"  warming up: {path} in {warmup.WINDOW_S} s windows "
          f"until the JIT settles ({warmup.FLOOR_S}-{warmup.CAP_S} s) …", flush=True)
    try:
        done = _windows(url, wt, conns, out, stats_url, how, fault_url if fast else None, schedule)
        last = (done.get("windows") or [{}])[-1]
        print(f"  warm-up: {done['text']} ({done.get('requests', 0):,} requests; the compiler "
              f"{last.get('jit_pct')} % of the app's CPU in the last window)", flush=True)
        return done
    finally:
        if fast:
            end_fault(fault_url)


def fast_remote(fault_url, schedule):
    """Start a fault schedule at remote-sleep now; False when it does not take it."""
    try:
        return procs.http(f"{fault_url}?schedule={schedule}", method="POST")[0] == 200
    except OSError:
        return False


def end_fault(fault_url):
    """End remote-sleep's fault schedule: every call waits its own delay again."""
    try:
        procs.http(fault_url, method="DELETE")
    except OSError:
        pass    # remote-sleep gone: the cell fails on its own


def _windows(url, wt, conns, out, stats_url, how, fault_url, schedule):
    windows, reads = [], [{"t": time.monotonic(), "stats": procs.get_json(stats_url)}]
    while True:
        if windows and fault_url:
            fast_remote(fault_url, schedule)      # the window's own schedule, from its start
        # from the first load host: a warm-up needs the app's code paths, not the split
        cmd = ["wrk", "-t", str(wt), "-c", str(conns), "-d", f"{warmup.WINDOW_S}s", url]
        place.run("loadgen", cmd, out.with_name(f"{out.stem}-{len(windows) + 1:02d}{out.suffix}"))
        reads.append({"t": time.monotonic(), "stats": procs.get_json(stats_url)})
        if reads[-2]["stats"] is None or reads[-1]["stats"] is None or "jvm" not in reads[-1]["stats"]:
            return {"mode": "auto", "outcome": "unknown", "text": "no /stats jvm object to judge the JIT by",
                    "command": place.shown("loadgen", cmd), "how": how, "windows": [w.to_json() for w in windows]}
        windows.append(warmup.window(reads[-2], reads[-1]))
        outcome, text = warmup.verdict(windows)
        if outcome != "warming":
            return {"mode": "auto", "outcome": outcome, "text": text, "command": place.shown("loadgen", cmd), "how": how,
                    "seconds": round(sum(w.seconds for w in windows), 1),
                    "requests": sum(w.requests for w in windows), "windows": [w.to_json() for w in windows]}


REST_S = 3


def at_rest(stats_url, seconds=REST_S):
    """The app's CPU with no load at all for `seconds`, after its warm-up (issue 26): what the JVM
    spends on its own (GC threads, timers, selectors, the compiler's leftovers), so that a cell can
    say what the load added per request. {} when /stats has no jvm object."""
    before = {"t": time.monotonic(), "stats": procs.get_json(stats_url)}
    time.sleep(seconds)
    after = {"t": time.monotonic(), "stats": procs.get_json(stats_url)}
    if not all(r["stats"] and "jvm" in r["stats"] for r in (before, after)):
        return {}
    w = warmup.window(before, after)
    return {"seconds": round(w.seconds, 2), "cpu_ms": w.cpu_ms, "compiler_cpu_ms": w.compiler_cpu_ms}


def wrk_fields(wrk, duration_s):
    """The wrk.json numbers as cell fields (rates over wrk's measured duration, like wrk)."""
    if not wrk:
        return {}
    # No latency sample at all (eg, every request stuck behind slow clients): wrk-json.lua then
    # writes zeros, which would read as "0 ms".
    lat = wrk["latency_us"] if wrk["latency_us"].get("max") else dict.fromkeys(wrk["latency_us"])
    secs = wrk["duration_us"] / 1e6 or duration_s
    errors = wrk["errors"]
    rps = round(wrk["requests"] / secs, 2)
    if "completions_s" in wrk:
        steady, how = steady_rate(wrk["completions_s"], wrk.get("connections"))
    else:   # a run before wrk.json had the completion times: the rate wrk-json.lua worked out then
        steady, how = wrk.get("steady_rps"), wrk.get("steady_how")
    # From first to last assumes the answers were spread over the window; a model that let them
    # all out in one or two bursts (eg, 100 requests freed at once when a slow upload finished)
    # would read thousands of req/s. Then its answers per second of the window is all there is to say.
    if (steady is None and how == "every response at once") or (
            steady is not None and how.startswith("first to last") and steady > 1.5 * rps):
        steady, how = rps, "answers bunched together: wrk's req/s"
    return {
        "requests": wrk["requests"],
        "rps": rps,
        # Free of the window edge (bench/wrk-json.lua); older runs have none.
        "steady_rps": None if steady is None else round(steady, 2),
        "steady_how": how,
        "latency_avg_ms": ms(lat["mean"]),
        "p50_ms": ms(lat["p50"]),
        "p90_ms": ms(lat["p90"]),
        "p99_ms": ms(lat["p99"]),
        "max_ms": ms(lat["max"]),
        "timeouts": errors["timeout"],
        "slow_2s": wrk.get("slow_2s"),
        "slow_2s_how": wrk.get("slow_2s_how"),
        "latency_corrected": wrk.get("latency_corrected"),
        "errors": {k: errors[k] for k in ("connect", "read", "write", "status")},
    }


class Wrk(LoadGen):
    name = "wrk"
    has_ceiling = True
    output = "wrk.txt"

    def measure(self, lab, cell, d, url, app):
        s = lab.s
        profiling = s.profile and profile_start(app.admin)
        # BACKEND=postgres: the cluster's CPU and memory over the same window (pg.Window).
        window = lab.db.window() if cell.db_driver and lab.db else None
        reason, measured = measure(s, d, url, cell.wrk_threads, cell.connections, lab.remote, app.proc,
                                   app.admin + "/stats", cell.wrk_timeout or None)
        if window:
            measured.update(window.end())
        if profiling:
            measured["profile"] = profile_stop(app.admin, d / "profile")
        elif s.profile:
            measured["profile"] = {"error": "POST /profile/start failed (see the app's log)"}
        app.last_conns = cell.connections
        return reason, measured

    def figures(self, record, d):
        return wrk_fields(read_json(d / "wrk.json"), record.duration_s)




LOADGEN = Wrk()
