"""wrk's latency histogram (bench/tools/wrk-json.lua's `histogram_us`) and the exact merge of several load
hosts' (labbench/loadgens/histogram.py), on wrk runs recorded by bench/tests/fixtures/histogram/record.sh:
two wrk processes at once against one server, as two load hosts would be."""
import json
import math
import unittest
from pathlib import Path

from labbench.loadgens import histogram

RECORDED = Path(__file__).parent / "fixtures" / "histogram"


def load(name):
    return json.loads((RECORDED / name).read_text())


def samples(hist):
    """Every recorded sample, one list entry each: the union, without the histogram's arithmetic."""
    return [value for value, count in hist for _ in range(count)]


def percentile_of_samples(values, p):
    """The r-th smallest sample, r = C's round(p / 100 * n + 0.5) as wrk ranks them."""
    ordered = sorted(values)
    rank = math.floor(p / 100 * len(ordered) + 1.0)
    return ordered[rank - 1]


class Histogram(unittest.TestCase):
    def test_the_dump_gives_back_wrks_own_figures(self):
        for name in ("host1.json", "host2.json", "alone.json"):
            with self.subTest(name):
                doc = load(name)
                self.assertFalse(doc["latency_corrected"], "a fixture wrk corrected: its histogram holds made-up samples")
                mine, wrks = histogram.summary(doc["histogram_us"]), doc["latency_us"]
                for key in ("min", "p50", "p90", "p99", "p999", "max"):
                    self.assertEqual(wrks[key], mine[key], key)
                for key in ("mean", "stdev"):      # wrk prints them as %.0f of a long double
                    self.assertLessEqual(abs(wrks[key] - mine[key]), 1, key)
                self.assertEqual(doc["requests"] - doc["errors"]["timeout"],
                                 sum(c for _, c in doc["histogram_us"]))

    def test_two_hosts_merge_to_the_union(self):
        a, b = load("host1.json"), load("host2.json")
        merged = histogram.merge([a, b])
        self.assertEqual(a["requests"] + b["requests"], merged["requests"])
        self.assertEqual(a["connections"] + b["connections"], merged["connections"])
        union = samples(a["histogram_us"]) + samples(b["histogram_us"])
        self.assertEqual(len(union), sum(c for _, c in merged["histogram_us"]))
        for p, key in ((50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p999")):
            self.assertEqual(percentile_of_samples(union, p), merged["latency_us"][key], key)
        self.assertEqual((min(union), max(union)), (merged["latency_us"]["min"], merged["latency_us"]["max"]))
        self.assertEqual(round(sum(union) / len(union)), merged["latency_us"]["mean"])

    def test_a_host_without_a_histogram_is_an_error_not_a_guess(self):
        a = load("host1.json")
        with self.assertRaises(ValueError) as e:
            histogram.merge([a, dict(a, histogram_us=None, histogram_why="wrk's stats are not laid out ...")])
        self.assertIn("load host 2: no latency histogram (wrk's stats are not laid out", str(e.exception))

    def test_percentile_ranks_as_wrk(self):
        h = [[1, 1], [2, 1], [3, 1], [4, 1]]
        self.assertEqual([1, 2, 3, 4], [histogram.percentile(h, p) for p in (0, 25, 50, 99.9)])


if __name__ == "__main__":
    unittest.main()
