"""The bench's side of bench/tools/host-run.sh (labbench/hostrun.py, issue 40), run for real on this
machine: a "host" whose ssh is `bash -c` runs host-run.sh here exactly as sshd would run it there. A
role's environment arrives without any command line holding it; a role whose bench goes silent ends
after the silence; the run's private directory is 0700 and goes when its holder is stopped or its
bench dies; a fetched file is deleted there only once written here. Run directories are made
exclusively. End to end over ssh and a cut network: bench/tests/hosts-test.sh."""
import os
import stat
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from labbench import hostrun, place, procs

ROOT = str(Path(__file__).resolve().parents[2])
HERE = place.Host(name="here", address="127.0.0.1", ssh=("bash", "-c"), lab_dir=ROOT)


def cmdlines():
    """Every process's command line on this machine, as `ps` shows them."""
    out = []
    for d in Path("/proc").glob("[0-9]*"):
        try:
            out.append((d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return out


class HostRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        place.configure({}, {"app": [HERE], "loadgen": [HERE]})
        self.addCleanup(place.configure, {})
        self.addCleanup(hostrun.close_dirs)
        self.addCleanup(procs.stop_all)

    def log(self, name):
        return Path(self.tmp.name, name)

    def test_the_environment_reaches_the_role_in_no_command_line(self):
        secret = "s3cr3t-" + os.urandom(6).hex()
        p = place.start("app", ["bash", "-c", 'echo "token=$LAB_TOKEN"; sleep 5'], self.log("app.log"),
                        env={"LAB_TOKEN": secret})
        for _ in range(50):
            if "token=" in self.log("app.log").read_text():
                break
            time.sleep(0.1)
        self.assertFalse([c for c in cmdlines() if secret in c])          # not in any process's arguments
        role = place.pid(p)
        self.assertIn(f"LAB_TOKEN={secret}".encode(), Path(f"/proc/{role}/environ").read_bytes())
        procs.stop(p)
        self.assertIn(f"token={secret}", self.log("app.log").read_text())

    def test_a_value_a_line_cannot_carry_is_refused_before_anything_starts(self):
        with self.assertRaises(ValueError):
            place.start("app", ["true"], self.log("app.log"), env={"X": "a\nTERM"})
        self.assertFalse(procs.CHILDREN)

    def test_a_role_ends_when_its_bench_goes_silent_and_not_before(self):
        with mock.patch.object(hostrun, "SILENCE_S", 1), mock.patch.object(hostrun, "BEAT_S", 0.2):
            beaten = place.start("app", ["sleep", "2"], self.log("a.log"))
            silent = place.start("loadgen", ["sleep", "30"], self.log("b.log"))
            hostrun._beating.discard(silent)          # as a bench cut off: its stdin open, no line arrives
            t0 = time.monotonic()
            self.assertEqual(143, place.wait(silent))             # TERM from host-run.sh
            self.assertLess(time.monotonic() - t0, 3)
            self.assertEqual(0, place.wait(beaten))               # outlived the silence: the heartbeat

    def test_the_runs_directory_is_private_and_goes_with_its_holder(self):
        d, why = hostrun.run_dir(HERE)
        self.assertIsNone(why)
        self.assertEqual(d, place.run_dir_on(HERE))                       # one per host per run
        self.assertEqual(0o700, stat.S_IMODE(os.stat(d).st_mode))
        Path(d, "wrk.json").write_text("{}")
        hostrun.close_dirs()
        self.assertFalse(os.path.exists(d))

    def test_the_runs_directory_goes_when_its_bench_dies(self):
        d, _ = hostrun.run_dir(HERE)
        holder = hostrun._dirs[HERE][0]
        holder.stdin.close()                        # what the bench's death does to it: end of input
        holder.wait(10)
        self.assertFalse(os.path.exists(d))

    def test_a_fetched_file_is_deleted_there_only_once_written_here(self):
        remote = place.remote_file("loadgen", 0, "wrk.json")
        Path(remote).write_text('{"requests": 3}')
        local = self.log("wrk-here.json")
        self.assertTrue(place.fetch("loadgen", 0, remote, local))
        self.assertEqual('{"requests": 3}', local.read_text())
        self.assertFalse(os.path.exists(remote))
        # not written here (no such directory): left there
        Path(remote).write_text("x")
        self.assertRaises(OSError, place.fetch, "loadgen", 0, remote, self.log("missing/wrk-here.json"))
        self.assertTrue(os.path.exists(remote))


if __name__ == "__main__":
    unittest.main()
