"""Tests of bench/tools/slowclients.py (run by the smoke test): bad flags exit 2 with the usage; it stops
by itself at its deadline; it leaves no connection open behind it; it counts what it moved.
Against a local socket that never answers, on loopback only. Python 3 standard library only.

  python3 -m unittest discover -s bench/tests -t bench
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

TOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "slowclients.py")


class SilentServer:
    """Accepts connections and reads whatever arrives, never answers: a stalled server."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.conns, self.received, self.closed = [], 0, 0
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self.drain, args=(conn,), daemon=True).start()

    def drain(self, conn):
        while True:
            try:
                got = conn.recv(4096)
            except OSError:
                got = b""
            if not got:
                with self.lock:
                    self.closed += 1
                return
            with self.lock:
                self.received += len(got)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def run(*args, timeout=20):
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, timeout=timeout)


class SlowClientsTest(unittest.TestCase):

    def test_bad_flags_exit_2_with_usage(self):
        good = ["--mode", "upload", "--url", "http://127.0.0.1:9/call", "--clients", "1", "--bytes", "10",
                "--rate", "10", "--duration", "1"]
        bad = [
            [],
            good[:-2],                                              # no --duration
            ["--mode", "sideways"] + good[2:],
            good[:5] + ["0"] + good[6:],                            # --clients 0
            good[:9] + ["abc"] + good[10:],                         # --rate abc
            good[:7] + ["99999999999"] + good[8:],                  # --bytes too big
            good[:3] + ["http://10.1.2.3:80/call"] + good[4:],      # not loopback
            good + ["--bogus", "1"],
        ]
        for args in bad:
            with self.subTest(args=args):
                r = run(*args)
                self.assertEqual(2, r.returncode, r.stderr)
                self.assertTrue(r.stderr.startswith("ERROR: "), r.stderr)
                self.assertIn("Usage: slowclients.py", r.stderr)

    def test_upload_stops_at_its_deadline_and_closes_every_connection(self):
        server = SilentServer()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "slow.json")
                start = time.monotonic()
                r = run("--mode", "upload", "--url", f"http://127.0.0.1:{server.port}/call", "--clients", "3",
                        "--bytes", "100000", "--rate", "500", "--duration", "1.5", "--json", out)
                took = time.monotonic() - start
                self.assertEqual(0, r.returncode, r.stderr)
                self.assertIn("slowclients: 3 connected of 3", r.stdout)
                self.assertLess(took, 1.5 + 2.0, "it must stop by itself at its deadline")
                with open(out) as f:
                    report = json.load(f)
            self.assertEqual(3, report["connected"])
            self.assertEqual(0, report["completed"], "a silent server completes nothing")
            self.assertEqual(3, report["unfinished_at_end"])
            # ~3 clients x 500 B/s x 1.5 s (plus headers): paced, neither stalled nor flooding.
            self.assertGreater(report["bytes_moved"], 1000)
            self.assertLess(report["bytes_moved"], 6000)
            deadline = time.monotonic() + 2
            while server.closed < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
            self.assertEqual(3, server.closed, "every connection is closed once it exits")
        finally:
            server.close()

    def test_refused_connections_are_counted_not_fatal(self):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()                    # nothing listens there now
        r = run("--mode", "download", "--url", f"http://127.0.0.1:{port}/call", "--clients", "2",
                "--bytes", "1000", "--rate", "1000", "--duration", "0.5")
        self.assertEqual(0, r.returncode, r.stderr)
        report = json.loads(r.stdout[r.stdout.index("{"):])
        self.assertEqual(0, report["connected"])
        self.assertGreater(report["errors"]["refused"], 0)


if __name__ == "__main__":
    unittest.main()
