"""Unit test of bench/compare_stats.py: the statistics the bench scripts
share (medians without failed runs, ratios, the interval compare_udp.sh and
bw_ab.sh print for the median of their per-round ratios, the summaries of
bw_ab.sh and lat_ab.sh)."""
import contextlib
import io
import math
import os
import sys
import unittest
from math import comb

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from compare_stats import (ab_report, finite, judged, main, median,  # noqa: E402
                           median_ci, parse_values, per_round, ratio,
                           vs_raw_report)

NAN = float("nan")


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


class MedianAndRatioTest(unittest.TestCase):
    def test_median_leaves_out_failed_runs(self):
        self.assertEqual(finite([1.0, None, NAN, 2.0]), [1.0, 2.0])
        self.assertEqual(median([3.0, None, 1.0, NAN, 2.0]), 2.0)
        self.assertEqual(median([1, 2, 3, 4]), 2.5)
        self.assertIsNone(median([None, NAN]))
        self.assertIsNone(median([]))

    def test_ratio_is_none_when_a_side_is_missing_or_zero(self):
        self.assertEqual(ratio(3.0, 2.0), 1.5)
        self.assertIsNone(ratio(None, 2.0))
        self.assertIsNone(ratio(1.0, None))
        self.assertIsNone(ratio(1.0, 0))

    def test_per_round_pairs_the_runs_of_each_round(self):
        self.assertEqual(per_round([2.0, None, 3.0], [1.0, 1.0, 0]),
                         [2.0, None, None])

    def test_parse_values_turns_anything_else_into_nan(self):
        v = parse_values("1.5 nan x 2")
        self.assertEqual((v[0], v[3]), (1.5, 2.0))
        self.assertTrue(math.isnan(v[1]) and math.isnan(v[2]))
        self.assertEqual(parse_values(""), [])


class ReportTest(unittest.TestCase):
    def test_ab_report_prints_ratios_medians_and_a_verdict(self):
        lines, ok = ab_report([1.0, 2.0, NAN, 3.0, 4.0, 5.0],
                              [1.1, 2.1, 3.0, 3.3, 4.2, 5.5])
        self.assertTrue(ok)
        self.assertEqual(lines, [
            "1 round(s) with a failed run, left out",
            "per round B/A: 1.100 1.050 1.100 1.050 1.100",
            "median goodput: A 3.000, B 3.300 Gbit/s",
            "median B/A 1.100, 93.8 % interval [1.050, 1.100]: B faster"])

    def test_ab_report_says_when_no_difference_is_shown(self):
        lines, ok = ab_report([1.0, 1.0, 1.0], [0.9, 1.0, 1.1])
        self.assertTrue(ok)
        self.assertTrue(lines[-1].endswith(": no difference shown"))
        lines, _ = ab_report([1.0, 1.0], [0.5, 0.6])
        self.assertTrue(lines[-1].endswith(": B slower"))

    def test_ab_report_fails_with_too_few_complete_rounds(self):
        lines, ok = ab_report([1.0, NAN], [1.0, 2.0])
        self.assertFalse(ok)
        self.assertEqual(lines[-1], "too few complete rounds for an interval")

    def test_vs_raw_report_divides_each_round_by_its_raw_run(self):
        self.assertEqual(vs_raw_report([10.0, 20.0, NAN], [12.0, 22.0, 30.0],
                                       [11.0, 30.0, 31.0]), [
            "per round A/raw: 1.200 1.100 fail",
            "per round B/raw: 1.100 1.500 fail",
            "median: raw 15.00 us, A 22.00 us (1.150x raw), "
            "B 30.00 us (1.300x raw)"])

    def test_command_line_runs_the_reports(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["compare_stats.py", "ab", "1 1 1", "1.2 1.3 1.2"])
        self.assertEqual(rc, 0)
        self.assertIn("B faster", out.getvalue())
        with contextlib.redirect_stdout(io.StringIO()):
            self.assertEqual(main(["compare_stats.py", "ab", "1", "1"]), 1)
            self.assertEqual(
                main(["compare_stats.py", "vs-raw", "1", "2", "3"]), 0)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(main(["compare_stats.py", "what"]), 2)


if __name__ == "__main__":
    unittest.main()
