"""report/interval.py: a mean over forks with its 95 % interval, and a ratio's (issue 39)."""
import math
import unittest

from labbench.report.interval import interval, ratio, t975


class IntervalTest(unittest.TestCase):
    def test_students_t_and_a_textbook_interval(self):
        self.assertEqual(4.303, t975(2))
        self.assertAlmostEqual(2.0, t975(60), places=3)
        self.assertEqual(1.96, t975(1000))
        self.assertTrue(t975(2) > t975(2.5) > t975(3))     # Welch's fractional df between rows
        i = interval([10, 12, 14])
        self.assertEqual((3, 12.0, 12.0, 2.0), (i.n, i.mean, i.median, i.sd))
        self.assertAlmostEqual(4.303 * 2 / math.sqrt(3), i.half_width)
        self.assertAlmostEqual(100 * i.half_width / 12, i.half_width_pct)
        self.assertTrue(i.holds(8) and not i.holds(17.1))
        self.assertEqual("12.0 ± 5.0", i.text())

    def test_one_fork_has_no_spread_and_none_is_nothing(self):
        self.assertEqual((1, 5.0, 5.0), (interval([5]).n, interval([5]).low, interval([5]).high))
        self.assertIsNone(interval([]))
        self.assertIsNone(interval([None]))

    def test_a_ratio_is_called_only_where_its_interval_excludes_one(self):
        cheap, dear = interval([62, 63, 61, 62]), interval([100, 101, 99, 100])
        r = ratio(cheap, dear)
        self.assertAlmostEqual(0.62, r.value, places=3)
        self.assertTrue(r.low < 0.62 < r.high and r.separable)
        self.assertLess(r.high - r.low, 0.05)
        close = ratio(interval([98, 103, 101]), interval([100, 97, 104]))
        self.assertFalse(close.separable)
        self.assertTrue(interval([1, 2, 3]).disjoint(interval([10, 11, 12])))
        self.assertFalse(interval([1, 5, 9]).disjoint(interval([4, 5, 6])))


if __name__ == "__main__":
    unittest.main()
