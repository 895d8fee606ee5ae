"""Intervals for rates and for differences between two sides, and simple summaries.

References
- Wilson (1927) "Probable inference, the law of succession, and statistical inference", JASA 22:209.
- Clopper & Pearson (1934) "The use of confidence or fiducial limits...", Biometrika 26:404.
- Newcombe (1998) "Interval estimation for the difference between independent proportions:
  comparison of eleven methods", Statistics in Medicine 17:873 (method 10, the hybrid score interval).
- Yan & Su (2010) "Stratified Wilson and Newcombe confidence intervals for multiple binomial
  proportions", Statistics in Biopharmaceutical Research 2:329.
- Mantel & Haenszel (1959) JNCI 22:719; Greenland & Robins (1985) Biometrics 41:55 (risk difference weights).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ironbench.stats.laws import binomial_sf, bisect_root

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    low, high = _wilson(successes / n, n, z)
    return (0.0 if successes == 0 else low), (1.0 if successes == n else high)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's interval for an estimate `p` worth `n` (possibly effective, non-integer) trials."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


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


@lru_cache(maxsize=65536)
def clopper_pearson_lower(successes: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact lower bound: the smallest rate that makes `successes` or more in n
    runs at least (1 - confidence) likely. n of n gives (1 - confidence)^(1/n): 3/3 → 0.368."""
    if successes == 0 or n == 0:
        return 0.0
    alpha = 1 - confidence
    if successes == n:
        return alpha ** (1 / n)
    return bisect_root(lambda p: binomial_sf(successes, n, p) - alpha)


def clopper_pearson_upper(successes: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact upper bound on a rate: 0 of 3 still allows up to 0.632."""
    if n == 0 or successes == n:
        return 1.0
    return 1.0 - clopper_pearson_lower(n - successes, n, confidence)


@dataclass(frozen=True)
class Difference:
    """B − A in success rate, with its interval."""

    delta: float
    low: float
    high: float


def newcombe_difference(s_a: int, n_a: int, s_b: int, n_b: int, z: float = Z95) -> Difference:
    """B − A with Newcombe's hybrid score interval (method 10): never degenerate at 0% or 100%."""
    p_a, p_b = s_a / n_a, s_b / n_b
    low_a, high_a = wilson_interval(s_a, n_a, z)
    low_b, high_b = wilson_interval(s_b, n_b, z)
    delta = p_b - p_a
    return Difference(
        delta, delta - math.hypot(p_b - low_b, high_a - p_a), delta + math.hypot(high_b - p_b, p_a - low_a)
    )


def stratified_difference(strata: Sequence[tuple[int, int, int, int]], z: float = Z95) -> Difference:
    """Across cases: the Mantel-Haenszel risk difference B − A (weights n_a·n_b/(n_a+n_b)),
    with Yan & Su's stratified Newcombe interval on the same weights.

    Sato's variance of the MH difference is zero whenever every case is at 0% or 100%
    (common with a few runs per case), which gives a zero-width interval; the stratified
    score interval does not degenerate. strata: (s_a, n_a, s_b, n_b) per case.
    """
    used = [(s_a, n_a, s_b, n_b) for s_a, n_a, s_b, n_b in strata if n_a and n_b]
    if not used:
        return Difference(0.0, -1.0, 1.0)
    weights = np.array([n_a * n_b / (n_a + n_b) for _, n_a, _, n_b in used])
    weights /= weights.sum()
    sides = []
    for success_index, size_index in ((0, 1), (2, 3)):
        sizes = np.array([s[size_index] for s in used], dtype=float)
        rates = np.array([s[success_index] for s in used]) / sizes
        estimate = float(weights @ rates)
        effective_n = 1.0 / float(np.sum(weights**2 / sizes))
        sides.append((estimate, *_wilson(estimate, effective_n, z)))
    (p_a, low_a, high_a), (p_b, low_b, high_b) = sides
    delta = p_b - p_a
    return Difference(
        delta,
        max(-1.0, delta - math.hypot(p_b - low_b, high_a - p_a)),
        min(1.0, delta + math.hypot(high_b - p_b, p_a - low_a)),
    )
