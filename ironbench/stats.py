"""Statistics that decisions and comparisons carry as evidence; pure functions."""

import math
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def chance_agreement(p: float, k: int = 3) -> float:
    """Probability that k independent runs agree on success/failure by chance at rate p."""
    return p**k + (1 - p) ** k


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _hypergeometric_pmf(successes_total: int, n_a: int, n_b: int) -> list[float]:
    """P(X = x) for x successes in A, given the stratum's margins (Fisher's conditional law)."""
    total = n_a + n_b
    low = max(0, successes_total - n_b)
    high = min(n_a, successes_total)
    denominator = math.comb(total, successes_total)
    pmf = [0.0] * (n_a + 1)
    for x in range(low, high + 1):
        pmf[x] = math.comb(n_a, x) * math.comb(n_b, successes_total - x) / denominator
    return pmf


def _convolve(left: list[float], right: list[float]) -> list[float]:
    out = [0.0] * (len(left) + len(right) - 1)
    for i, a in enumerate(left):
        if a:
            for j, b in enumerate(right):
                out[i + j] += a * b
    return out


@dataclass(frozen=True)
class ExactTest:
    """Exact conditional test of equal success rates in A and B, stratified by case.

    `p_regression` is the one-sided p-value that B succeeds less often than A
    (A's successes at least as high as observed); `p_improvement` the opposite.
    With one stratum this is Fisher's exact test.
    """

    observed: int
    expected: float
    p_regression: float
    p_improvement: float
    informative_strata: int


def stratified_exact_test(strata: Sequence[tuple[int, int, int, int]]) -> ExactTest:
    """strata: (successes_a, n_a, successes_b, n_b) per case."""
    distribution = [1.0]
    observed = 0
    expected = 0.0
    informative = 0
    for s_a, n_a, s_b, n_b in strata:
        total = s_a + s_b
        if n_a == 0 or n_b == 0 or total in (0, n_a + n_b):
            continue  # a stratum with a fixed margin carries no information
        informative += 1
        pmf = _hypergeometric_pmf(total, n_a, n_b)
        distribution = _convolve(distribution, pmf)
        observed += s_a
        expected += n_a * total / (n_a + n_b)
    p_regression = min(1.0, sum(p for x, p in enumerate(distribution) if x >= observed))
    p_improvement = min(1.0, sum(p for x, p in enumerate(distribution) if x <= observed))
    if informative == 0:
        p_regression = p_improvement = 1.0
    return ExactTest(observed, expected, p_regression, p_improvement, informative)
