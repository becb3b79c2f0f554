"""Statistics for bench/compare_udp.sh: how far a median of per-round
ratios can be trusted on a noisy machine.

Each round of compare_udp.sh runs the raw tool and braid back to back, so a
round gives one ratio; the rounds are independent draws. The interval here
assumes nothing about their distribution (on this project's VMs it is
bimodal): it is the classic order-statistic interval for a median.
"""
from math import comb
import statistics


def median_ci(vals):
    """Median of the per-round ratios and a distribution-free confidence
    interval for it: order statistics x(k) .. x(n+1-k), with k the largest
    for which the binomial(n, 1/2) tails outside hold at most 2.5 % each.
    Returns (median, lo, hi, coverage), or None with fewer than 2 rounds.
    With 5 rounds the widest interval (the extremes) covers only 93.75 %,
    9 rounds give x(2) .. x(8) at 96.1 %."""
    v = sorted(x for x in vals if x is not None)
    n = len(v)
    if n < 2:
        return None
    def tail(k):  # P(B <= k-1): the median lies below x(k)
        return sum(comb(n, i) for i in range(k)) / 2 ** n
    k = 1
    while k + 1 <= n // 2 and tail(k + 1) <= 0.025:
        k += 1
    return statistics.median(v), v[k - 1], v[n - k], 1 - 2 * tail(k)


def judged(ci, op, target):
    """Whether the interval settles the figure either way."""
    if ci is None:
        return "n/a"
    _, lo, hi, _ = ci
    if op == ">=":
        return "met" if lo >= target else ("short" if hi < target else "undecided")
    return "met" if hi <= target else ("short" if lo > target else "undecided")
