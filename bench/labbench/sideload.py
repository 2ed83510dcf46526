"""Side loads: what else runs during a cell beside wrk's normal traffic.

A side load has start() (None when it runs, else the reason), stop() (waits for its own end,
then stops it; its exit code) and result() (its JSON). Today there is one, SlowClients; a second
load generator or a resource sampler fits the same three calls.
"""
import json
import re
import time

from . import procs

# slowclients.py prints this once all its clients are connected, or after 2 s at most.
CONNECTED = re.compile(r"^slowclients: (\d+) connected")


class SlowClients:
    """K clients that upload or download slowly (bench/slowclients.py), each holding a
    connection, for `duration_s`; writes slow.json and slow.log into the cell directory."""

    def __init__(self, mode, url, clients, nbytes, rate, duration_s, cell_dir):
        self.cmd = ["python3", "bench/slowclients.py", "--mode", mode, "--url", url,
                    "--clients", str(clients), "--bytes", str(nbytes), "--rate", str(rate),
                    "--duration", str(duration_s), "--json", str(cell_dir / "slow.json")]
        self.duration_s = duration_s
        self.json = cell_dir / "slow.json"
        self.log = cell_dir / "slow.log"
        self.proc = None
        self.started = 0.0

    def start(self, connect_timeout_s=3.0):
        print(f"  $ {' '.join(self.cmd)} &")
        self.started = time.monotonic()
        self.proc = procs.start(self.cmd, out=self.log)
        deadline = self.started + connect_timeout_s
        while time.monotonic() < deadline:
            if any(CONNECTED.match(line) for line in procs.read_lines(self.log)):
                return None
            if not procs.alive(self.proc):
                lines = procs.read_lines(self.log)
                return f"side load exited at start (exit {self.proc.returncode}): {lines[-1] if lines else ''}"
            time.sleep(0.05)
        return f"side load did not report its clients connected within {connect_timeout_s:g}s (see slow.log)"

    def stop(self, grace_s=5.0, now=False):
        """Wait until its --duration is over plus grace_s (or not at all: `now`), then stop it;
        its exit code (128 + signal when it had to be stopped, shell style)."""
        if self.proc is None:
            return None
        left = 0 if now else self.started + self.duration_s + grace_s - time.monotonic()
        if procs.wait(self.proc, max(left, 0)) is None:
            procs.stop(self.proc)
        rc = self.proc.returncode
        return 128 - rc if rc < 0 else rc

    def result(self):
        try:
            return json.loads(self.json.read_text())
        except (OSError, ValueError):
            return None
