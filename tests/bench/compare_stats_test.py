"""Unit test of bench/compare_stats.py (the interval compare_udp.sh prints
for the median of its per-round ratios)."""
import os
import sys
import unittest
from math import comb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from compare_stats import judged, median_ci  # noqa: E402


def exact_coverage(n, k):
    """P(x(k) <= median <= x(n+1-k)) for a continuous distribution."""
    below = sum(comb(n, i) for i in range(k)) / 2 ** n
    return 1 - 2 * below


class MedianCiTest(unittest.TestCase):
    def test_nine_rounds_use_the_second_and_eighth(self):
        vals = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6, 0.4, 0.5]
        m, lo, hi, cov = median_ci(vals)
        self.assertEqual(m, 0.5)
        self.assertEqual((lo, hi), (0.2, 0.8))
        self.assertAlmostEqual(cov, exact_coverage(9, 2))
        self.assertAlmostEqual(cov, 1 - 2 * 10 / 512)  # 96.1 %

    def test_five_rounds_cannot_reach_95_percent(self):
        m, lo, hi, cov = median_ci([5, 1, 4, 2, 3])
        self.assertEqual((m, lo, hi), (3, 1, 5))
        self.assertAlmostEqual(cov, 0.9375)

    def test_interval_is_the_narrowest_with_at_least_95_percent(self):
        for n in range(6, 40):
            _, lo, hi, cov = median_ci(list(range(n)))
            k = lo + 1  # values 0..n-1: x(k) == k - 1
            self.assertEqual(hi, n - k)
            self.assertGreaterEqual(cov, 0.95, n)
            if k + 1 <= n // 2:
                self.assertLess(exact_coverage(n, k + 1), 0.95, n)

    def test_failed_rounds_are_left_out(self):
        self.assertEqual(median_ci([None, 1.0, None, 2.0, 3.0])[:3],
                         (2.0, 1.0, 3.0))
        self.assertIsNone(median_ci([None, 1.0]))
        self.assertIsNone(median_ci([]))

    def test_judged(self):
        self.assertEqual(judged((1.0, 0.95, 1.1, 0.96), ">=", 0.9), "met")
        self.assertEqual(judged((0.8, 0.7, 0.89, 0.96), ">=", 0.9), "short")
        self.assertEqual(judged((0.9, 0.8, 1.0, 0.96), ">=", 0.9), "undecided")
        self.assertEqual(judged((1.1, 1.0, 1.2, 0.96), "<=", 1.3), "met")
        self.assertEqual(judged((1.4, 1.31, 1.5, 0.96), "<=", 1.3), "short")
        self.assertEqual(judged((1.3, 1.2, 1.4, 0.96), "<=", 1.3), "undecided")
        self.assertEqual(judged(None, "<=", 1.3), "n/a")


if __name__ == "__main__":
    unittest.main()
