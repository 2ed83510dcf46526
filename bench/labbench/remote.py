"""remote-sleep, the slow backend: started once per run, and told through its /fault endpoint to
answer every call at once for a while (a warm-up on the measured request, a drain), then to let
every call wait its own delay again. The degrade scenario drives the same endpoint with its fault
timeline (scenarios/degrade)."""
from . import place, procs, web
from .checks import Fatal


def start(lab):
    """remote-sleep, once for the whole run; its "listening" line printed."""
    s, m = lab.s, lab.m
    log = lab.run_dir / "logs" / "remote-sleep.log"
    lab.remote = place.start("backend", [place.java("backend", m.java), *place.jvm_flags("backend", s.java_opts),
                                         *s.java_opts, "-jar", "remote-sleep/target/remote-sleep.jar",
                                         "--host", place.address("backend"), "--port", str(s.remote_port),
                                         "--delay-ms", str(s.sleep_ms)], out=log, env=web.admin_env())
    reason = web.wait_ready(lab.remote, lab.url(s.remote_port, "/stats"), log, [s.remote_port], s.start_timeout,
                              host=place.address("backend"))
    if reason:
        raise Fatal(f"remote-sleep: {reason}")
    listening = next((line for line in procs.read_lines(log) if "listening" in line),
                     f"remote-sleep: pid {lab.remote.pid}")
    print(f"== {listening}")


def fault_url(lab, cell):
    """remote-sleep's /fault where the cell's backend is remote-sleep; None for a database cell."""
    return lab.url(lab.s.remote_port, "/fault") if lab.s.backend == "http" and not cell.db_driver else None


def fast(fault_url, schedule):
    """Start a fault schedule at remote-sleep now (eg, "3000ms:delay=0"); False when it does not take it."""
    try:
        return web.http(f"{fault_url}?schedule={schedule}", method="POST")[0] == 200
    except OSError:
        return False


def end_fault(fault_url):
    """End remote-sleep's fault schedule: every call waits its own delay again."""
    try:
        web.http(fault_url, method="DELETE")
    except OSError:
        pass    # remote-sleep gone: the cell fails on its own
