"""Statistics shared by the bench scripts (bw_ab.sh, lat_ab.sh,
compare_udp.sh, spray_run_sweep.sh): medians that skip failed runs,
ratios, per-round ratios and how far a median of per-round ratios can be
trusted on a noisy machine.

Each round of an A/B script runs both sides back to back, so a round gives
one ratio; the rounds are independent draws. The interval here assumes
nothing about their distribution (on this project's VMs it is bimodal): it
is the classic order-statistic interval for a median.

Run as a script it prints the summaries of bw_ab.sh and lat_ab.sh:
  compare_stats.py ab "A1 A2 ..." "B1 B2 ..."        (higher is better)
  compare_stats.py vs-raw "RAW1 ..." "A1 ..." "B1 ..."
A value that is not a number ("nan", "") is a failed run.
"""
from math import comb, isnan
import statistics
import sys


def finite(vals):
    """The values that are measurements: not None and not NaN."""
    return [x for x in vals if x is not None and not isnan(x)]


def median(vals):
    """Median of the measured values (failed runs left out); None if none."""
    v = finite(vals)
    return statistics.median(v) if v else None


def ratio(a, b):
    """a / b, or None when either is missing or b is 0."""
    return None if a is None or b in (None, 0) else a / b


def per_round(num, den):
    """num/den round by round (the two runs of a round ran back to back);
    None for a round where either run failed."""
    return [ratio(a, b) for a, b in zip(num, den)]


def parse_values(text):
    """Whitespace-separated values as floats; anything else is NaN."""
    out = []
    for word in text.split():
        try:
            out.append(float(word))
        except ValueError:
            out.append(float("nan"))
    return out


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


def ab_report(a, b, what="goodput", unit="Gbit/s"):
    """bw_ab.sh's summary of A and B measured round by round (higher is
    better): per-round B/A, the medians and the interval of the median B/A.
    Returns (lines, ok); ok is False with too few complete rounds."""
    ok = [(x, y) for x, y in zip(a, b) if finite([x, y]) == [x, y]]
    lines = []
    if len(a) - len(ok):
        lines.append(f"{len(a) - len(ok)} round(s) with a failed run, left out")
    ratios = [y / x for x, y in ok if x > 0]
    lines.append("per round B/A: " + " ".join(f"{r:.3f}" for r in ratios))
    if ok:
        lines.append(f"median {what}: A {median([x for x, _ in ok]):.3f}, "
                     f"B {median([y for _, y in ok]):.3f} {unit}")
    ci = median_ci(ratios)
    if ci is None:
        lines.append("too few complete rounds for an interval")
        return lines, False
    med, lo, hi, cover = ci
    verdict = ("B faster" if lo > 1 else "B slower" if hi < 1
               else "no difference shown")
    lines.append(f"median B/A {med:.3f}, {100 * cover:.1f} % interval "
                 f"[{lo:.3f}, {hi:.3f}]: {verdict}")
    return lines, True


def vs_raw_report(raw, a, b):
    """lat_ab.sh's summary: A and B over the raw baseline of the same round,
    and the medians (failed runs left out)."""
    def fr(vals):
        return " ".join("fail" if v is None else "%.3f" % v for v in vals)
    clean = lambda vals: [None if v is None or isnan(v) else v for v in vals]
    raw, a, b = clean(raw), clean(a), clean(b)
    ra, rb = per_round(a, raw), per_round(b, raw)
    def f(v, spec):
        return "n/a" if v is None else format(v, spec)
    return ["per round A/raw: " + fr(ra), "per round B/raw: " + fr(rb),
            "median: raw %s us, A %s us (%sx raw), B %s us (%sx raw)"
            % (f(median(raw), ".2f"), f(median(a), ".2f"),
               f(median(ra), ".3f"), f(median(b), ".2f"),
               f(median(rb), ".3f"))]


def main(argv):
    if len(argv) == 4 and argv[1] == "ab":
        lines, ok = ab_report(parse_values(argv[2]), parse_values(argv[3]))
        print("\n".join(lines))
        return 0 if ok else 1
    if len(argv) == 5 and argv[1] == "vs-raw":
        print("\n".join(vs_raw_report(*(parse_values(x) for x in argv[2:5]))))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
