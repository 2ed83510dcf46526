"""The steady-rate estimator (labbench/steady.py): never above the physical bound it is compared
with, on synthetic series and on completion times recorded from real pool-capped cells."""
import json
import random
import unittest
from pathlib import Path

from labbench import steady
from labbench.loadgens import wrk

RECORDED = Path(__file__).parent / "fixtures" / "steady"


def burst_series(bursts, size, period=1.0, jitter=0.005, seed=1):
    """`bursts` bursts of `size` completions, `period` s apart, each spread over `jitter` s."""
    rnd = random.Random(seed)
    return [1.0 + b * period + rnd.uniform(0, jitter) for b in range(bursts) for _ in range(size)]


class SteadyRate(unittest.TestCase):
    def test_bursts_of_a_pool_read_the_pool_not_more(self):
        # 100 connections behind a pool of 10 and a 1 s query: 10 answers once a second.
        rate, how = steady.steady_rate(burst_series(10, 10), 100)
        self.assertLessEqual(rate, 10.0 * 1.02)
        self.assertGreaterEqual(rate, 10.0 * 0.98)
        self.assertEqual("first to last burst (10 bursts)", how)
        # what (n - 1) / (last - first) read: the trap this replaces
        t = burst_series(10, 10)
        self.assertGreater((len(t) - 1) / (max(t) - min(t)), 10.9)

    def test_one_after_another_is_n_minus_1_over_the_span(self):
        # a 1-thread sync app: 1 s apart, 10 answers over 9 s
        rate, how = steady.steady_rate([1.0 + i for i in range(10)], 100)
        self.assertAlmostEqual(1.0, rate)
        self.assertEqual("first to last response", how)

    def test_every_connection_answered_twice_uses_the_spans(self):
        # 4 connections, 1 s answers, phases 0.1 s apart: 4 req/s whatever the window's edges
        times = [0.1 * c + k for c in range(4) for k in range(1, 10)]
        rate, how = steady.steady_rate(times, 4)
        self.assertAlmostEqual(4.0, rate)
        self.assertEqual("per-connection spans", how)

    def test_too_few_or_all_at_once_give_no_rate(self):
        self.assertEqual((None, "fewer than 2 responses"), steady.steady_rate([1.0], 10))
        self.assertEqual((None, "every response at once"), steady.steady_rate([2.0] * 50, 100))

    def test_wrk_fields_falls_back_to_wrks_rate_when_all_came_at_once(self):
        d = {"duration_us": 10e6, "requests": 50, "errors": dict.fromkeys(("connect", "read", "write", "status", "timeout"), 0),
             "latency_us": {"mean": 1, "p50": 1, "p90": 1, "p99": 1, "max": 1}, "connections": 100, "completions_s": [0.0] * 50}
        fields = wrk.wrk_fields(d, 10)
        self.assertEqual((5.0, "answers bunched together: wrk's req/s"), (fields["steady_rps"], fields["steady_how"]))

    def test_recorded_pool_capped_cells_read_at_most_their_bound(self):
        recorded = sorted(RECORDED.glob("*.json"))
        self.assertTrue(recorded, f"no recorded cells in {RECORDED}")
        for path in recorded:
            with self.subTest(path.name):
                cell = json.loads(path.read_text())
                t = cell["completions_s"]
                rate, how = steady.steady_rate(t, cell["connections"])
                self.assertLessEqual(rate, 1.02 * cell["bound_rps"], f"{path.name}: {rate} ({how})")
                self.assertGreaterEqual(rate, 0.9 * cell["bound_rps"], f"{path.name}: {rate} ({how})")
                if how.startswith("first to last burst"):
                    # the estimator this replaced read these cells 10-11 % above their bound
                    self.assertGreater((len(t) - 1) / (t[-1] - t[0]), 1.05 * cell["bound_rps"], path.name)


if __name__ == "__main__":
    unittest.main()
