"""The fan-out scenario's Little's-law bound per model (scenarios/fanout.py SHAPES): a request's
calls in rounds, a pool-wide K / (N x M) where calls block K threads, K and C read from the app's
lab: line, nothing for fire-and-forget. Python 3 standard library only."""
import os
import sys
import unittest
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # bench/
from labbench.scenarios.fanout import SCENARIO  # noqa: E402

LINES = {   # the fan-out part of each app's lab: line, as the apps print it
    "fanout-pool": "[fanout: pool=10 platform threads (fanout-N), unbounded queue; the request thread waits for all]",
    "fanout-coroutines-blocking": "[fanout: coroutines on a dispatcher of K=10 threads (fanout-N); async/awaitAll, blocking calls]",
    "fanout-flow-blocking": "[fanout: coroutines on a dispatcher of K=4 threads (fanout-N); flatMapMerge concurrency=16, blocking calls]",
    "fanout-webflux": "[fanout: Flux.flatMap concurrency=4 (Reactor's own default: 256)]",
}


def bound(app, in_flight, n=10, ms=300, line=None):
    record = SimpleNamespace(app=app, params={"fanout_n": n}, lab_line=line if line is not None else LINES.get(app, ""))
    value, how = SCENARIO.bound(record, in_flight, ms / 1000.0)
    return (None if value is None else round(value, 2)), how


class FanoutBoundTest(unittest.TestCase):

    def test_sequential_holds_its_thread_for_all_n_calls(self):
        self.assertEqual((0.33, "1 in flight / (10 x 300 ms)"), bound("fanout-sequential", 1))

    def test_calls_that_overlap_take_one_round(self):
        self.assertEqual(333.33, bound("fanout-async", 100)[0])
        self.assertEqual(3.33, bound("fanout-virtual", 1)[0])         # the request thread waits: 1 in flight

    def test_blocking_calls_on_k_threads_bound_the_whole_app(self):
        self.assertEqual((3.33, "K=10 threads / (10 x 300 ms)"), bound("fanout-coroutines-blocking", 100))
        self.assertEqual((1.33, "K=4 threads / (10 x 300 ms)"), bound("fanout-flow-blocking", 100))
        # a pool of 10 behind 1 container thread: the thread is the tighter limit (a tie keeps it)
        self.assertEqual((3.33, "1 in flight / (1 x 300 ms)"), bound("fanout-pool", 1))

    def test_concurrency_c_makes_rounds(self):
        self.assertEqual((111.11, "100 in flight / (3 x 300 ms)"), bound("fanout-webflux", 100))

    def test_a_lab_line_without_k_or_c_keeps_the_general_bound(self):
        self.assertEqual((333.33, None), bound("fanout-coroutines-blocking", 100, line="lab: app=x"))

    def test_fire_and_forget_answers_are_not_bounded(self):
        self.assertEqual((None, "nothing: it answers before its calls run"), bound("fanout-fire-and-forget", 100))

    def test_a_probe_cell_has_nothing_in_flight(self):
        self.assertEqual(0.0, bound("fanout-pool", 0)[0])


if __name__ == "__main__":
    unittest.main()
