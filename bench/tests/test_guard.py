"""Issue 40, the bench's part: every request of the bench carries the run's admin token, which the
JVMs get in their environment; every child dies with the bench, even on SIGKILL; a run ends what a
killed run of its own left running (recorded PIDs, checked by start time), and nothing else; the
apps' temp files live in the run's own private directory."""
import http.server
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from labbench import leftovers, place, procs, web

BENCH = Path(__file__).resolve().parents[1]


def gone(pid, timeout_s=5.0):
    """True once pid has exited (a zombie of ours counts as exited: reaped by the caller)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.02)
    return False


class Headers(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_POST(self):
        Headers.seen.append(self.headers.get("Authorization"))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Token(unittest.TestCase):
    def tearDown(self):
        web._TOKEN.clear()

    def test_every_request_carries_the_runs_token_and_every_jvm_gets_it(self):
        server = http.server.HTTPServer(("127.0.0.1", 0), Headers)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_port}/stats/reset"
            self.assertEqual({}, web.admin_env())
            web.http(url, method="POST")
            web.new_token()
            token = web.admin_env()["LAB_ADMIN_TOKEN"]
            self.assertGreaterEqual(len(token), 40)
            web.http(url, method="POST")
            web.new_token()
            self.assertNotEqual(token, web.admin_env()["LAB_ADMIN_TOKEN"], "one token per run")
        finally:
            server.shutdown()
            server.server_close()
        self.assertEqual([None, f"Bearer {token}"], Headers.seen)


class DiesWithTheBench(unittest.TestCase):
    def test_a_child_dies_when_the_bench_is_killed(self):
        # A stand-in bench: starts `sleep 60` through procs.start, says its pid, waits; SIGKILLed.
        code = ("import sys, time; from labbench import procs; p = procs.start(['sleep', '60']); "
                "print(p.pid, flush=True); time.sleep(60)")
        bench = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                                 env=dict(os.environ, PYTHONPATH=str(BENCH)))
        try:
            child = int(bench.stdout.readline())
            self.assertFalse(gone(child, 0.2), "the child must run while the bench does")
        finally:
            bench.kill()
            bench.wait()
            bench.stdout.close()
        self.assertTrue(gone(child), f"pid {child} outlived its SIGKILLed bench")


class Leftovers(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.results = Path(self.dir.name)
        self.started = []

    def tearDown(self):
        procs.record_to(None)
        for p in self.started:        # only what this test started, by its PID
            if p.poll() is None:
                p.kill()
            p.wait()
        self.dir.cleanup()

    def sleeper(self):
        p = subprocess.Popen(["sleep", "60"], start_new_session=True)
        self.started.append(p)
        return p

    def run_record(self, name, bench, children):
        d = self.results / name
        d.mkdir(exist_ok=True)
        lines = [f"bench\t{bench[0]}\t{bench[1]}"] + [f"{pid}\t{st}\t{what}" for pid, st, what in children]
        (d / leftovers.RECORD).write_text("\n".join(lines) + "\n")
        return d / leftovers.RECORD

    def test_a_killed_runs_children_are_named_and_ended_and_nothing_else(self):
        left, reused, others = self.sleeper(), self.sleeper(), self.sleeper()
        dead_bench = (2 ** 22 + 11, 12345)                   # no such process: the run was killed
        killed = self.run_record("20260101T000000Z", dead_bench, [
            (left.pid, procs.start_time(left.pid), "java -jar sync-servlet/target/sync-servlet.jar"),
            (reused.pid, procs.start_time(reused.pid) - 1, "wrk (its PID since reused: another start time)")])
        mine = (os.getpid(), procs.start_time(os.getpid()))    # a bench still running: another run's
        running = self.run_record("20260101T000001Z", mine, [(others.pid, procs.start_time(others.pid), "remote-sleep")])
        said = leftovers.end_earlier(self.results)
        self.assertEqual(1, len(said), said)
        self.assertIn(f"pid {left.pid}", said[0])
        self.assertIn("20260101T000000Z", said[0])
        self.assertIn("sync-servlet.jar", said[0])
        self.assertEqual(-signal.SIGKILL, left.wait(5))
        self.assertIsNone(reused.poll(), "a reused PID (another start time) was killed")
        self.assertIsNone(others.poll(), "a running bench's child was killed")
        self.assertFalse(killed.exists(), "the killed run's record is done with")
        self.assertTrue(running.exists())

    def test_the_apps_temp_files_are_the_runs_private_directory_and_go_with_a_killed_run(self):
        run = self.results / "20260101T000000Z"
        run.mkdir()
        tmp = Path(place.private_tmp("app", run))         # no HOSTS: the app is local
        self.assertEqual(run.resolve() / place.TMP, tmp)
        self.assertEqual(0o700, tmp.stat().st_mode & 0o777)
        (tmp / "lab-tomcat-123").mkdir()                  # what a KILLed app leaves
        self.run_record(run.name, (2 ** 22 + 11, 12345), [])
        leftovers.end_earlier(self.results)
        self.assertFalse(tmp.exists(), "a killed run's apps' temp directory was left")

    def test_on_a_host_the_private_tmp_is_made_once_a_run(self):
        h = place.Host("app1", "10.0.0.2", ssh=("ssh", "app1"))
        calls, real = [], (place.run_dir_on, place.remote_run)
        place.run_dir_on = lambda host: "/tmp/lab-run.XYZ"
        place.remote_run = lambda host, command: calls.append(command) or (0, "")
        try:
            place.configure({}, {"app": [h]})
            self.assertEqual(["/tmp/lab-run.XYZ/tmp"] * 3, [place.private_tmp("app", "unused") for _ in range(3)])
            self.assertEqual(["mkdir -m 700 -p /tmp/lab-run.XYZ/tmp"], calls)
            place.configure({}, {"app": [h]})                       # the next run makes its own
            place.private_tmp("app", "unused")
            self.assertEqual(2, len(calls))
        finally:
            place.run_dir_on, place.remote_run = real
            place.configure({}, None)

    def test_a_run_records_its_children_and_forgets_them_once_stopped(self):
        run = self.results / "run"
        run.mkdir()
        leftovers.record(run)
        p = procs.start(["sleep", "60"])
        bench, children = leftovers.read(run / leftovers.RECORD)
        self.assertEqual((os.getpid(), procs.start_time(os.getpid())), bench)
        self.assertEqual([(p.pid, procs.start_time(p.pid), "sleep 60")], children)
        procs.stop(p)
        leftovers.forget(run)
        self.assertFalse((run / leftovers.RECORD).exists())
        self.assertEqual([], leftovers.end_earlier(self.results))


if __name__ == "__main__":
    unittest.main()
