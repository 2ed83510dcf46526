"""vegeta, the open-loop load generator: requests at a constant arrival rate, whatever the server
does, with latency measured from when each request was due (docs/traps.md #3 and #21).

wrk is a closed loop: a stalled server is sent fewer requests, so its latency looks better than
what users would see (coordinated omission). vegeta keeps sending RATE requests per second; a
server that cannot keep up builds a queue, and the queue shows in the latency and success rate.

Every limit is explicit: workers start at the number of requests the rate keeps in flight and may
grow to one per request that can be outstanding (rate x timeout), with as many connections, so
vegeta itself never caps the test; -timeout is the cell's wrk --timeout, above the backend delay.
"""
import json
import math
import shlex
import subprocess
import time
from datetime import datetime, timezone

from .. import place, procs, web
from . import LoadGen, jvm_figures
from ..report.fmt import f_int, f_lat, f_pct, f_rps, read_json


def limits(rate, sleep_ms, timeout_s):
    """(workers, max_workers / max connections) for a rate: nothing vegeta does may cap the test."""
    workers = max(1, math.ceil(rate * sleep_ms / 1000.0 * 1.2))
    outstanding = max(workers, math.ceil(rate * timeout_s))
    return workers, outstanding


def command(vegeta, targets, rate, duration_s, timeout_s, sleep_ms, out):
    workers, outstanding = limits(rate, sleep_ms, timeout_s)
    return [vegeta, "attack", f"-targets={targets}", f"-rate={rate}/s", f"-duration={duration_s}s",
            f"-timeout={timeout_s}s", f"-workers={workers}", f"-max-workers={outstanding}",
            f"-connections={outstanding}", f"-max-connections={outstanding}", "-keepalive=true", f"-output={out}"]


def measure(vegeta, cell_dir, url, rate, duration_s, timeout_s, sleep_ms, stats_url=None):
    """Attack url at `rate` req/s for duration_s; write vegeta.bin, vegeta.json (vegeta's own
    report) and vegeta-summary.json (our counts of timeouts and other errors), and the app's
    /stats at the end (stats.json). (None when it worked, else the reason; what was measured)."""
    if place.placed():
        return measure_on_hosts(vegeta, cell_dir, url, rate, duration_s, timeout_s, sleep_ms, stats_url)
    binary = cell_dir / "vegeta.bin"
    targets = cell_dir / "targets.txt"
    targets.write_text(f"GET {url}\n")
    cmd = command(vegeta, targets, rate, duration_s, timeout_s, sleep_ms, binary)
    print(f"  $ {' '.join(map(str, cmd))}")
    jvm0 = (web.get_json(stats_url) or {}).get("jvm") if stats_url else None   # the JIT's share of the window
    box0, t0 = place.box_ticks("app"), time.monotonic()
    rc = place.run("loadgen", [str(c) for c in cmd], cell_dir / "vegeta.txt")
    stats = None
    if stats_url:
        stats = web.get_json(stats_url)
        if stats is None:
            return "GET /stats failed after vegeta", {}
        (cell_dir / "stats.json").write_text(json.dumps(stats))
    box1, t1 = place.box_ticks("app"), time.monotonic()
    busy, total = box1[0] - box0[0], box1[1] - box0[1]
    measured = {"vegeta_command": " ".join(map(str, cmd)), "vegeta_exit": rc,
                "cpu_box_pct": round(100 * busy / total if total else 0, 1), "cpu_window_s": round(t1 - t0, 2)}
    measured.update(jvm_figures(jvm0, (stats or {}).get("jvm")))
    if rc != 0 or not binary.exists():
        return f"vegeta attack failed (exit {rc}, see vegeta.txt)", measured
    return summarise(vegeta, cell_dir, [binary]), measured


def summarise(vegeta, cell_dir, binaries):
    """vegeta.json (vegeta's own report over every result file: several load hosts' are merged by
    vegeta itself) and vegeta-summary.json (our counts of its results); None, or why not."""
    files = [str(b) for b in binaries]
    report = subprocess.run([vegeta, "report", "-type=json", *files], capture_output=True, text=True)
    if report.returncode != 0:
        return f"vegeta report failed: {report.stderr.strip()[:200]}"
    (cell_dir / "vegeta.json").write_text(report.stdout)
    encoded = subprocess.run([vegeta, "encode", "--to=json", *files], capture_output=True, text=True)
    timeouts = other = 0
    answered = []                # when each successful answer arrived, s since the epoch
    for line in encoded.stdout.splitlines():
        r = json.loads(line)
        error = r.get("error") or ""
        # vegeta's own timeout has no status; a 504's error text is "504 Gateway Timeout": a status error
        if not r.get("code") and ("Timeout" in error or "deadline exceeded" in error):
            timeouts += 1
        elif error or not 200 <= r.get("code", 0) < 300:
            other += 1
        else:
            answered.append(epoch_s(r["timestamp"]) + r["latency"] / 1e9)
    # The rate the server answered at, from its first to its last answer: a server that queues
    # still answers every request of a short attack, only later (vegeta's "throughput" divides by
    # the attack plus the wait for the last answer, which counts one backend delay against a
    # perfect server too).
    answered.sort()
    served = (len(answered) - 1) / (answered[-1] - answered[0]) if len(answered) > 1 and answered[-1] > answered[0] else None
    (cell_dir / "vegeta-summary.json").write_text(json.dumps(
        {"timeouts": timeouts, "other_errors": other, "served_rps": served}) + "\n")
    return None


def rates(rate, n):
    """RATE split evenly over n load hosts: [(host index, req/s)], the remainder to the first hosts."""
    return [(i, rate // n + (i < rate % n)) for i in range(n) if rate // n + (i < rate % n)]


def measure_on_hosts(vegeta, cell_dir, url, rate, duration_s, timeout_s, sleep_ms, stats_url):
    """HOSTS: vegeta on every load host at once, each at its share of RATE (vegeta's documented
    distributed attack), each host's result file fetched (vegeta-HOST.bin) and reported by vegeta
    itself over all of them (summarise). The same result as measure(), plus each host's share."""
    plan = rates(rate, len(place.hosts("loadgen")))
    gone = place.lost_names("loadgen", [i for i, _ in plan])
    if gone:
        return f"load host {', '.join(gone)} was lost earlier in this run", {}
    # each host's files in its private directory of the run (place.run_dir_on)
    files = {i: place.remote_file("loadgen", i, f"vegeta-{cell_dir.parent.name}-{cell_dir.name}") for i, _ in plan}
    started, cmds = [], []
    for i, r in plan:
        h = place.host("loadgen", i)
        if not files[i] or not place.put_text("loadgen", i, f"{files[i]}.targets", f"GET {url}\n"):
            return f"load host {h.name}: could not write vegeta's targets there", {}
        # the pinned vegeta of `make hosts`, in the repository there (host-run runs from it)
        cmds.append(command(".tools/bin/vegeta", f"{files[i]}.targets", r, duration_s, timeout_s, sleep_ms,
                            f"{files[i]}.bin"))
        print(f"  $ {place.shown('loadgen', [str(c) for c in cmds[-1]], i)}")
    jvm0 = (web.get_json(stats_url) or {}).get("jvm") if stats_url else None
    box0, t0 = place.box_ticks("app"), time.monotonic()
    for (i, _), cmd in zip(plan, cmds):
        started.append(place.start("loadgen", [str(c) for c in cmd], cell_dir / f"vegeta-{place.host('loadgen', i).name}.txt", i=i))
    rcs = [place.wait(p) for p in started]
    stats = web.get_json(stats_url) if stats_url else None
    if stats_url and stats is None:
        return "GET /stats failed after vegeta", {}
    if stats:
        (cell_dir / "stats.json").write_text(json.dumps(stats))
    box1, t1 = place.box_ticks("app"), time.monotonic()
    busy, total = box1[0] - box0[0], box1[1] - box0[1]
    hosts_out, binaries, failed = host_results(vegeta, plan, rcs, cell_dir, files, duration_s)
    measured = {"vegeta_command": " ; ".join(place.shown("loadgen", [str(c) for c in cmd], i) for (i, _), cmd in zip(plan, cmds)),
                "vegeta_exit": max(rcs), "cpu_box_pct": round(100 * busy / total if total else 0, 1),
                "cpu_window_s": round(t1 - t0, 2), "load_hosts": hosts_out}
    measured.update(jvm_figures(jvm0, (stats or {}).get("jvm")))
    if failed:
        return f"load host {'; '.join(failed)}", measured
    return summarise(vegeta, cell_dir, binaries), measured


def host_results(vegeta, plan, rcs, cell_dir, files, duration_s):
    """Each load host's result file fetched into the cell (vegeta-HOST.bin), its share, requests and
    CPU, and vegeta.txt as every host's output in turn: (load_hosts, the files, why some failed)."""
    hosts_out, binaries, failed = [], [], []
    for (i, r), rc in zip(plan, rcs):
        h = place.host("loadgen", i)
        if rc == 255:
            place.lost(h)
        local = cell_dir / f"vegeta-{h.name}.bin"
        got = rc == 0 and place.fetch("loadgen", i, f"{files[i]}.bin", local)
        place.remote_run(h, f"rm -f -- {shlex.quote(files[i])}.targets")
        if got:
            binaries.append(local)
            own = subprocess.run([vegeta, "report", "-type=json", str(local)], capture_output=True, text=True)
            requests = json.loads(own.stdout).get("requests") if own.returncode == 0 else None
        else:
            requests = None
            failed.append(f"{h.name}: vegeta exit {rc}{' (ssh: host lost or not reached)' if rc == 255 else ''}")
        hosts_out.append({"host": h.name, "rate": r, "exit": rc, "requests": requests,
                          "rps": None if requests is None else round(requests / duration_s, 2),
                          "cpu_s": place.ran_cpu_s(cell_dir / f"vegeta-{h.name}.txt")})
    (cell_dir / "vegeta.txt").write_text("".join(
        f"== {h['host']}: vegeta at {h['rate']} req/s (exit {h['exit']})\n"
        + "\n".join(procs.read_lines(cell_dir / f"vegeta-{h['host']}.txt")) + "\n" for h in hosts_out))
    return hosts_out, binaries, failed


def epoch_s(stamp):
    """vegeta's RFC 3339 timestamp with nanoseconds -> seconds (datetime keeps only microseconds)."""
    day, _, rest = stamp.partition("T")
    clock = rest.rstrip("Z")
    for sign in "+-":
        if sign in clock:
            raise ValueError(f"vegeta timestamp not in UTC: {stamp}")
    hms, _, frac = clock.partition(".")
    whole = datetime.strptime(f"{day}T{hms}", "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp()
    return whole + (float(f"0.{frac}") if frac else 0.0)


OL_KEYS = ("rate", "ol_requests", "ol_rate", "ol_served_rps", "ol_success_pct", "ol_p50_ms", "ol_p90_ms",
           "ol_p99_ms", "ol_max_ms", "ol_timeouts", "ol_other_errors")


def vegeta_fields(rate, d):
    """An open-loop cell's figures (measure() wrote vegeta.json, vegeta's own report, and
    vegeta-summary.json, our counts of its results)."""
    report = read_json(d / "vegeta.json") or {}
    summary = read_json(d / "vegeta-summary.json") or {}
    lat = report.get("latencies") or {}

    def lat_ms(key):
        return None if lat.get(key) is None else round(lat[key] / 1e6, 1)
    return {
        "rate": rate,
        "ol_requests": report.get("requests"),
        "ol_rate": None if "rate" not in report else round(report["rate"], 2),   # offered: sent per second
        # The rate the server answered at, first to last answer (vegeta-summary.json).
        "ol_served_rps": None if summary.get("served_rps") is None else round(summary["served_rps"], 2),
        "ol_success_pct": None if "success" not in report else round(100.0 * report["success"], 1),
        "ol_p50_ms": lat_ms("50th"), "ol_p90_ms": lat_ms("90th"), "ol_p99_ms": lat_ms("99th"),
        "ol_max_ms": lat_ms("max"),
        "ol_timeouts": summary.get("timeouts"), "ol_other_errors": summary.get("other_errors"),
    }


class Vegeta(LoadGen):
    name = "vegeta"
    open_loop = True
    profiled = True           # PROFILE=1: its window at RATE (the whole fault timeline in a degrade cell)
    output = "vegeta.txt"
    fields = OL_KEYS

    def measure(self, lab, cell, d, url, app):
        s = lab.s
        reason, measured = measure(lab.m.vegeta, d, url, s.rate, s.duration_s, s.wrk_timeout_s, s.sleep_ms,
                                   stats_url=app.admin + "/stats")
        # Every request vegeta could have had outstanding may still sit in a small pool's queue.
        app.last_conns = limits(s.rate, s.sleep_ms, s.wrk_timeout_s)[1]
        return reason, measured

    def calibrate(self, lab, d, url):
        s = lab.s
        return measure(lab.m.vegeta, d, url, s.rate, s.duration_s, s.wrk_timeout_s, s.sleep_ms)

    def figures(self, record, d):
        return vegeta_fields(record.rate, d)

    def summary(self, rec):
        text = (f"open loop at {rec['rate']} req/s: {f_pct(rec['ol_success_pct'])} answered, "
                f"{f_rps(rec['ol_served_rps'])} req/s served, p50 {f_lat(rec['ol_p50_ms'])}, "
                f"p99 {f_lat(rec['ol_p99_ms'])}, max {f_lat(rec['ol_max_ms'])}, {f_int(rec['ol_timeouts'])} timeouts")
        if "ceiling_rps" in rec:
            text += f", handler threads {f_int(rec.get('handler_threads'))}"
        return text + f", CPU {rec.get('cpu_box_pct')} %"


LOADGEN = Vegeta()
