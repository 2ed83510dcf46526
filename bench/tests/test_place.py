"""CPUSETS (labbench/place.py): every role's command goes through place.command, which pins it with
taskset; bad sets are a UsageError (exit 2 with the usage, bench.sh) before anything starts."""
import os
import time
import shutil
import signal
import unittest
from pathlib import Path

from labbench import place, procs
from labbench.checks import UsageError


class Parse(unittest.TestCase):
    def test_rest_names_every_role_not_given_its_own(self):
        self.assertEqual({"app": "1", "backend": "0", "loadgen": "0"}, place.parse("app=1 rest=0", {0, 1}))
        self.assertEqual({"app": "2-3", "backend": "0", "loadgen": "1"},
                         place.parse("loadgen=1 app=2-3 rest=0", {0, 1, 2, 3}))
        self.assertEqual({"app": "1"}, place.parse("app=1", {0, 1}))       # the others: not pinned
        self.assertEqual({}, place.parse("  ", {0, 1}))

    def test_bad_sets_say_what_is_wrong(self):
        cases = {"app=9": "CPU 9 is not one this machine lets the bench use (0-1)",
                 "cpu=1": "'cpu=1' is not ROLE=CPUS",
                 "app": "'app' is not ROLE=CPUS",
                 "app=1-0": "'1-0' (app) is not a CPU list",
                 "app=x": "'x' (app) is not a CPU list",
                 "app=1 app=0": "app is there twice",
                 "app=0-1 rest=1": "the app's CPUs (0-1) are also backend, loadgen's"}
        for text, message in cases.items():
            with self.subTest(text):
                with self.assertRaises(UsageError) as e:
                    place.parse(text, {0, 1})
                self.assertIn(message, str(e.exception))

    def test_a_jvm_on_one_cpu_keeps_g1(self):
        # measured: `taskset -c 1 java -XX:+PrintFlagsFinal` reads UseSerialGC=true, UseG1GC=false
        place.configure({"app": "1", "backend": "0-1"})
        try:
            self.assertEqual(["-XX:+UseG1GC"], place.jvm_flags("app", []))
            self.assertEqual([], place.jvm_flags("app", ["-XX:+UseParallelGC"]))     # the user's choice stands
            self.assertEqual([], place.jvm_flags("backend", []))                     # 2 CPUs: G1 anyway
            self.assertEqual([], place.jvm_flags("loadgen", []))
            self.assertIn("app JVM with -XX:+UseG1GC", place.jvm_note([]))
        finally:
            place.configure({})

    def test_cpu_lists(self):
        self.assertEqual({0, 2, 3, 5}, place.cpus_of("0,2-3,5"))
        self.assertEqual("0-2,5", place.compact({0, 1, 2, 5}))


@unittest.skipUnless(shutil.which("taskset"), "no taskset (util-linux)")
class Pinned(unittest.TestCase):
    def tearDown(self):
        place.configure({})
        procs.stop_all()

    def test_a_role_runs_on_its_cpus_and_the_others_as_before(self):
        cpu = max(os.sched_getaffinity(0))
        place.configure({"app": str(cpu)})
        self.assertEqual(["taskset", "-c", str(cpu), "sleep", "5"], place.command("app", ["sleep", "5"]))
        self.assertEqual(["sleep", "5"], place.command("loadgen", ["sleep", "5"]))
        self.assertEqual(1, place.cpu_count("app"))
        self.assertIsNone(place.cpu_count("loadgen"))
        p = procs.start(place.command("app", ["sleep", "5"]))
        try:
            allowed = ""
            for _ in range(100):        # taskset execs sleep: the same PID, pinned from its first instruction
                status = Path(f"/proc/{p.pid}/status").read_text()
                allowed = next(line.split()[1] for line in status.splitlines() if line.startswith("Cpus_allowed_list"))
                if Path(f"/proc/{p.pid}/comm").read_text().strip() == "sleep":
                    break
                time.sleep(0.01)
            self.assertEqual(str(cpu), allowed)
        finally:
            procs.stop(p, signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
