"""Run directories (labbench/rundir.py, issue 40): made exclusively, so that two runs started in the
same second each get their own, and results/latest names one of them."""
import os
import tempfile
import threading
import unittest
from pathlib import Path
from unittest import mock

from labbench import rundir


class RunDirectories(unittest.TestCase):
    def test_two_runs_in_one_second_get_two_directories(self):
        with tempfile.TemporaryDirectory() as base:
            made, start = [], threading.Barrier(4)

            def one():
                start.wait()
                made.append(rundir.create(base)[0])
            threads = [threading.Thread(target=one) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(4, len(set(made)))
            self.assertIn(Path(base, os.readlink(Path(base, "latest"))), made)
            self.assertEqual([], [p for p in os.listdir(base) if p.endswith(".tmp")])

    def test_a_name_taken_between_a_look_and_a_mkdir_is_not_shared(self):
        # as if another run made the directory right after this one looked (exists() said no)
        with tempfile.TemporaryDirectory() as base, mock.patch.object(Path, "exists", return_value=False):
            first, second = rundir.create(base)[0], rundir.create(base)[0]
        self.assertNotEqual(first, second)


if __name__ == "__main__":
    unittest.main()
