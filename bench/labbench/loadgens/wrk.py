"""wrk, the closed-loop load generator: the measured command (echoed first, JSON through
bench/tools/wrk-json.lua, CPU recorded around it), on one machine or split over the load hosts and merged,
the calibration's run straight at remote-sleep, and what wrk.json means."""
import json
import resource
import time

from .. import place, procs, warmup, web
from . import LoadGen, histogram, jvm_figures
from ..checks import seconds_of
from ..report.fmt import ms, read_json
from ..steady import steady_rate

LUA = "bench/tools/wrk-json.lua"


def command(s, url, wt, conns, timeout=None):
    return ["wrk", "-t", str(wt), "-c", str(conns), "-d", s.duration, "--timeout", timeout or s.wrk_timeout,
            "--latency", "-s", LUA, url]


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
    print(f"  $ {place.shown('loadgen', cmd)}")
    env = {"WRK_JSON": str(cell_dir / "wrk.json"), "WRK_CONNECTIONS": str(conns),
           "WRK_TIMEOUT_S": str(seconds_of(timeout) if timeout else s.wrk_timeout_s)}
    jvm0 = (web.get_json(stats_url) or {}).get("jvm") if stats_url else None   # the JIT's share of the window
    window, wrk0 = CpuWindow({place.host("app")}, remote, app), children_cpu_s()
    sampler = place.sampler(app).start() if app else None   # the app's peak RSS and threads
    rc = place.run("loadgen", cmd, cell_dir / "wrk.txt", env)
    peaks = sampler.stop() if sampler else None
    stats_ok = save(stats_url, cell_dir / "stats.json") if stats_url else True
    measured = {"wrk_command": place.shown("loadgen", cmd), "wrk_exit": rc, **window.end(),
                "cpu_wrk_s": round(children_cpu_s() - wrk0, 2)}
    if app:
        measured.update(peak_rss_kb=peaks[0], peak_os_threads=peaks[1], resource_samples=sampler.samples)
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
    # each host's wrk.json in its private directory of the run (place.run_dir_on)
    files = {i: place.remote_file("loadgen", i, f"wrk-{cell_dir.parent.name}-{cell_dir.name}.json") for i, _, _ in plan}
    if None in files.values():
        return f"load host {', '.join(place.host('loadgen', i).name for i, f in files.items() if f is None)}: no directory of the run there", {}
    cmds = [command(s, url, t, c, timeout) for _, t, c in plan]
    for (i, _, _), cmd in zip(plan, cmds):
        print(f"  $ {place.shown('loadgen', cmd, i)}")
    jvm0 = (web.get_json(stats_url) or {}).get("jvm") if stats_url else None
    # the hosts of the roles this run placed (BACKEND=postgres: the db host, not the backend's)
    window = CpuWindow({*(place.host(r) for r in place.placed_roles() if r != "loadgen"),
                        *(place.host("loadgen", i) for i, _, _ in plan)}, remote, app, per_host=True)
    gone = sorted(h.name for h in window.hosts if h in place.lost())
    if gone:                           # a host stopped answering ssh since the cell began
        return f"host {', '.join(gone)} lost (ssh: host lost or not reached) before wrk started", {}
    sampler = place.sampler(app).start() if app else None
    rcs = run_on_hosts(plan, cmds, cell_dir, files, timeout_s)
    peaks = sampler.stop() if sampler else None
    stats_ok = save(stats_url, cell_dir / "stats.json") if stats_url else True
    measured = {"wrk_command": " ; ".join(place.shown("loadgen", cmd, i) for (i, _, _), cmd in zip(plan, cmds)),
                "wrk_exit": max(rcs), **window.end()}
    hosts_out, docs, failed = host_results(plan, rcs, cell_dir, files)
    measured.update(cpu_wrk_s=round(sum(h["cpu_s"] or 0 for h in hosts_out), 2), load_hosts=hosts_out)
    if app:
        measured.update(peak_rss_kb=peaks[0], peak_os_threads=peaks[1], resource_samples=sampler.samples)
    jvm1 = (read_json(cell_dir / "stats.json") or {}).get("jvm") if stats_url else None
    measured.update(jvm_figures(jvm0, jvm1))
    if failed:
        return f"load host {'; '.join(failed)}", measured
    try:
        (cell_dir / "wrk.json").write_text(json.dumps(merged(docs, hosts_out)))
    except ValueError as e:
        return f"wrk results not merged: {e}", measured
    return (None if stats_ok else "GET /stats failed after wrk"), measured


def run_on_hosts(plan, cmds, cell_dir, files, timeout_s):
    """Every load host's wrk at once, each writing its JSON to files[its index] there: their exits.
    A host whose ssh failed (255: it did not answer its keep-alives) is lost for the rest of the run."""
    started = [place.start("loadgen", cmd, cell_dir / f"wrk-{place.host('loadgen', i).name}.txt",
                           {"WRK_JSON": files[i], "WRK_CONNECTIONS": str(c),
                            "WRK_TIMEOUT_S": str(timeout_s)}, i)
               for (i, _, c), cmd in zip(plan, cmds)]
    rcs = [place.wait(p) for p in started]
    for (i, _, _), rc in zip(plan, rcs):
        if rc == 255:
            place.lost(place.host("loadgen", i))
    return rcs


class CpuWindow:
    """The CPU of the hosts a cell used (this machine, or every HOSTS host), and of the app and
    remote-sleep on theirs, over a window: "box CPU" is the app's host's (what the app could not
    use); per_host: each host's busy and steal too. The wall time is wrk's whole run, its connection
    set-up included (5,000 connections took seconds), not just DURATION."""

    def __init__(self, hosts, remote, app, per_host=False):
        self.hosts, self.remote, self.app, self.per_host = hosts, remote, app, per_host
        self.t0, self.box0 = time.monotonic(), {h: place.box_ticks_of(h) for h in hosts}
        self.rem0, self.app0 = place.cpu_s(remote), (place.cpu_s(app) if app else 0)

    def end(self):
        t1, box1 = time.monotonic(), {h: place.box_ticks_of(h) for h in self.hosts}

        def pct(h, k):
            return round(procs.ticks_share(self.box0[h], box1[h], k) or 0, 1)
        out = {"cpu_window_s": round(t1 - self.t0, 2),
               "cpu_box_pct": pct(place.host("app"), 0), "cpu_steal_pct": pct(place.host("app"), 2),
               "cpu_remote_s": round(place.cpu_s(self.remote) - self.rem0, 2)}
        if self.per_host:
            out["host_cpu"] = {h.name: {"busy_pct": pct(h, 0), "steal_pct": pct(h, 2)} for h in self.hosts}
        if self.app:
            out["cpu_app_s"] = round(place.cpu_s(self.app) - self.app0, 2)
        return out


def host_results(plan, rcs, cell_dir, files):
    """Each load host's wrk.json fetched into the cell (wrk-HOST.json), its share and CPU, and
    wrk.txt as every host's output in turn: (load_hosts, the hosts' documents, why some failed)."""
    hosts_out, docs, failed, first = [], [], [], {}
    for (i, t, c), rc in zip(plan, rcs):
        h = place.host("loadgen", i)
        got = place.fetch("loadgen", i, files[i], cell_dir / f"wrk-{h.name}.json")
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


def save(url, path):
    """GET url into path; False when it did not answer 2xx."""
    try:
        status, body = web.http(url)
    except OSError:
        return False
    if status >= 300:
        return False
    path.write_bytes(body)
    return True


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
        # Free of the window edge (bench/tools/wrk-json.lua); older runs have none.
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
    profiled = True           # PROFILE=1: its closed-loop window is the one the app profiles
    output = "wrk.txt"

    def measure(self, lab, cell, d, url, app):
        # BACKEND=postgres: the cluster's CPU and memory over the same window (pg.Window).
        window = lab.db.window() if cell.db_driver and lab.db else None
        reason, measured = measure(lab.s, d, url, cell.wrk_threads, cell.connections, lab.remote, app.proc,
                                   app.admin + "/stats", cell.wrk_timeout or None)
        if window:
            measured.update(window.end())
        app.last_conns = cell.connections
        return reason, measured

    def calibrate(self, lab, d, url, wt, conns):
        """The same wrk command straight at remote-sleep, after an unrecorded run of fast calls
        (WARMUP=auto: the rule's floor, remote-sleep has no JIT of its own to judge)."""
        s = lab.s
        seconds = warmup.FLOOR_S if s.warmup == "auto" else s.warmup_s
        if seconds:
            place.run("loadgen", ["wrk", "-t", str(wt), "-c", str(conns), "-d", f"{seconds}s", url + "?ms=0"],
                      d / "warmup.txt")
        web.wait_drained(lab.url(s.remote_port, "/stats"), s.sleep_ms // 1000 + 5)
        return measure(s, d, url, wt, conns, lab.remote)

    def figures(self, record, d):
        return wrk_fields(read_json(d / "wrk.json"), record.duration_s)




LOADGEN = Wrk()
