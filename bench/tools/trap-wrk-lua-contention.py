#!/usr/bin/env python3
"""trap-wrk-lua-contention.py: the app's CPU per request under wrk -t10 and -t100, with and without
the bench's Lua script, on one warm JVM (docs/traps.md #38).

Why: in the default run the second wrk setting of a JVM (-t100) read 20-60 % more CPU per request
than the first (-t10), less the compiler too, so it was not the JIT. This runs both settings in the
order A B A B B A on one app warmed by WARMUP=auto's rule, once with plain wrk and once with the
bench's wrk command (--latency -s bench/tools/wrk-json.lua), and prints per window: requests, the app's CPU
per request (every thread's schedstat, ns) and its threads' context switches per request.

It starts remote-sleep and the app on free ports of 127.0.0.1, runs 12 wrk windows of 10 s plus two
warm-ups (~3 min in all), and stops both (by PID) however it ends. With CPUSETS set (as the bench
takes it, eg, "app=1 rest=0") every process runs pinned: does a CPU of the app's own remove the gap?
USAGE: [CPUSETS=...] bench/tools/trap-wrk-lua-contention.py [APP CONTAINER THREADS]   (default: async-servlet jetty 1)
"""
import glob
import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from labbench import catalog, place, procs, web         # noqa: E402
from labbench.pg import free_port                       # noqa: E402
from labbench.checks import UsageError                  # noqa: E402
from labbench.loadgens import wrk                       # noqa: E402

ORDER = [10, 100, 10, 100, 100, 10]
CONNS, SECONDS = 100, 10


def threads_of(pid):
    """(CPU ns, context switches) summed over the process's live threads."""
    ns = switches = 0
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            ns += int(Path(task, "schedstat").read_text().split()[0])
            switches += sum(int(line.split()[1]) for line in Path(task, "status").read_text().splitlines()
                            if "ctxt_switches" in line)
        except (OSError, ValueError, IndexError):
            pass        # a thread that ended between the listing and the read
    return ns, switches


def window(app, url, admin, wt, lua, out):
    cmd = ["wrk", "-t", str(wt), "-c", str(CONNS), "-d", f"{SECONDS}s"]
    env = dict(os.environ)
    if lua:
        cmd += ["--timeout", "30s", "--latency", "-s", str(ROOT / "bench" / "tools" / "wrk-json.lua")]
        env.update(WRK_JSON=str(out / "wrk.json"), WRK_CONNECTIONS=str(CONNS), WRK_TIMEOUT_S="30")
    s0, (ns0, cs0) = web.get_json(admin), threads_of(app.pid)
    procs.run(place.command("loadgen", cmd + [url]), out=out / f"wrk-t{wt}.txt", env=env)
    s1, (ns1, cs1) = web.get_json(admin), threads_of(app.pid)
    n = s1["completed"] - s0["completed"]
    print(f"  -t{wt:<4} {n:5d} requests  {(ns1 - ns0) / 1e6 / n:.3f} CPU ms/req  "
          f"{(cs1 - cs0) / n:5.2f} context switches/req", flush=True)
    web.wait_drained(admin, 5)


def main():
    app_name, container, threads = (sys.argv[1:4] + ["async-servlet", "jetty", "1"][len(sys.argv[1:4]):])
    java = subprocess.run([str(ROOT / "bench" / "tools" / "java-home.sh")], capture_output=True, text=True,
                          check=True).stdout.strip() + "/bin/java"
    module = catalog.MODULE_OF[app_name]
    try:
        place.configure(place.parse(os.environ.get("CPUSETS", "")))
    except UsageError as e:
        print(f"ERROR: {e}\n{__doc__.strip().splitlines()[-1]}", file=sys.stderr)
        sys.exit(2)
    out = Path(os.environ.get("OUT", "/tmp/trap-wrk-lua"))
    out.mkdir(parents=True, exist_ok=True)
    rp, ap, adp = free_port(), free_port(), free_port()
    web.new_token()        # the warm-up's POST /fault needs it; the JVMs get it in their environment (issue 40)
    env = dict(os.environ, **web.admin_env())
    try:
        # pinned to 1 CPU a JVM would pick Serial GC: the bench's own flags keep G1 (place.jvm_flags)
        procs.start(place.command("backend", [java, *place.jvm_flags("backend", []), "-jar",
                                              str(ROOT / "remote-sleep/target/remote-sleep.jar"),
                                              "--host", "127.0.0.1", "--port", str(rp)]), out=out / "remote.log", env=env)
        app = procs.start(place.command("app", [java, *place.jvm_flags("app", []), "-jar",
                                                str(ROOT / module / "target" / f"{module}.jar"),
                                                "--app", app_name, "--container", container, "--threads", threads,
                                                "--host", "127.0.0.1", "--port", str(ap), "--admin-port", str(adp),
                                                "--remote", f"http://127.0.0.1:{rp}"]), out=out / "app.log", env=env)
        admin, url = f"http://127.0.0.1:{adp}/stats", f"http://127.0.0.1:{ap}/call"
        why = web.wait_ready(app, admin, out / "app.log", [ap, adp], 60)
        if why:
            sys.exit(f"ERROR: {app_name} did not start: {why}")
        for lua in (False, True):
            # the rule's warm-up before each half: its windows and outcome as the bench prints them
            wrk.auto_warm_up(url + "?ms=0", 10, CONNS, out / "warmup.txt", admin, measured_url=url,
                             fault_url=f"http://127.0.0.1:{rp}/fault")
            web.wait_drained(admin, 5)
            print(f"{app_name} {container} threads={threads}, -c{CONNS}, {SECONDS} s windows, "
                  + (f"{place.describe()}, " if place.describe() else "")
                  + ("the bench's wrk command (--latency -s bench/tools/wrk-json.lua):" if lua else "plain wrk:"), flush=True)
            for wt in ORDER:
                window(app, url, admin, wt, lua, out)
    finally:
        procs.stop_all()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    main()
