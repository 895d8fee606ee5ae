"""Exact tests: the conditional test of two success rates stratified by case, and
permutation tests for shifts beyond the success rate.

References
- Agresti (2013) "Categorical Data Analysis", 3rd ed., §7.3.5: the exact conditional test of
  conditional independence in 2×2×K tables (Fisher's exact test when K = 1).
- Phipson & Smyth (2010) "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9:39.
"""

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ironbench.stats.laws import TIE, hypergeometric_pmf


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

    @property
    def p_two_sided(self) -> float:
        """Twice the smaller tail (capped at 1): a change in either direction."""
        return min(1.0, 2 * min(self.p_regression, self.p_improvement))


def stratified_exact_test(strata: Sequence[tuple[int, int, int, int]]) -> ExactTest:
    """strata: (successes_a, n_a, successes_b, n_b) per case."""
    distribution = np.ones(1)
    observed = 0
    expected = 0.0
    informative = 0
    for s_a, n_a, s_b, n_b in strata:
        total = s_a + s_b
        if n_a == 0 or n_b == 0 or total in (0, n_a + n_b):
            continue  # a stratum with a fixed margin carries no information
        informative += 1
        distribution = np.convolve(distribution, hypergeometric_pmf(total, n_a, n_b))
        observed += s_a
        expected += n_a * total / (n_a + n_b)
    if informative == 0:
        return ExactTest(observed, expected, 1.0, 1.0, 0)
    p_regression = min(1.0, float(distribution[observed:].sum()))
    p_improvement = min(1.0, float(distribution[: observed + 1].sum()))
    return ExactTest(observed, expected, p_regression, p_improvement, informative)


def stratified_p_regression_batch(
    s_a: np.ndarray, s_b: np.ndarray, n_a: Sequence[int], n_b: Sequence[int]
) -> np.ndarray:
    """`stratified_exact_test(...).p_regression` for R data sets at once (rows of s_a, s_b),
    all with the same per-case sizes: what power and calibration simulations need."""
    s_a, s_b = np.atleast_2d(s_a), np.atleast_2d(s_b)
    rows = s_a.shape[0]
    distribution = np.ones((rows, 1))
    for k, (size_a, size_b) in enumerate(zip(n_a, n_b, strict=True)):
        table = np.array([hypergeometric_pmf(t, size_a, size_b) for t in range(size_a + size_b + 1)])
        pmf = table[s_a[:, k] + s_b[:, k]]
        grown = np.zeros((rows, distribution.shape[1] + size_a))
        for x in range(size_a + 1):
            grown[:, x : x + distribution.shape[1]] += distribution * pmf[:, x : x + 1]
        distribution = grown
    tails = np.cumsum(distribution[:, ::-1], axis=1)[:, ::-1]
    observed = s_a.sum(axis=1)
    return np.minimum(1.0, tails[np.arange(rows), observed])


def stratified_permutation_test(
    strata: Sequence[tuple[Sequence, Sequence]], kind: str, permutations: int = 1999, seed: int = 0
) -> tuple[float, float]:
    """Does B's distribution differ from A's, within cases? Returns (effect, p-value).

    kind "categories": values are labels (failure stage); per label, A's excess over its
    expected count is summed across cases and squared over its variance (a Cochran-Mantel-
    Haenszel-type statistic: a shift repeated in every case adds up); the effect is the
    total variation distance between the case-weighted A and B distributions. kind "mean":
    values are numbers (attempts); statistic and effect are the stratified mean difference
    B − A, tested two-sided. Labels are permuted within each case, so the test is exact in
    law whatever the counts: by full enumeration for one small case, else by seeded Monte
    Carlo with the +1 correction, which keeps it valid (P(p <= alpha) <= alpha).
    """
    cases = [(list(a), list(b)) for a, b in strata if len(a) and len(b)]
    if not cases:
        return 0.0, 1.0
    if kind == "mean":
        features = [np.array([float(v) for v in a + b])[:, None] for a, b in cases]
    else:
        labels = sorted({v for a, b in cases for v in a + b}, key=str)  # one label set for every case
        features = [np.array([[v == label for label in labels] for v in a + b], dtype=float) for a, b in cases]
    sizes = [(len(a), len(b)) for a, b in cases]
    totals = [f.sum(axis=0) for f in features]
    weights = np.array([n_a * n_b / (n_a + n_b) for n_a, n_b in sizes])
    weights /= weights.sum()

    def statistic(a_sums: list[np.ndarray]) -> np.ndarray:
        """One value per row of A-side sums (one row per permutation)."""
        if kind == "mean":
            return np.abs(
                sum(
                    w * ((t[0] - s[:, 0]) / n_b - s[:, 0] / n_a)
                    for w, s, t, (n_a, n_b) in zip(weights, a_sums, totals, sizes, strict=True)
                )
            )
        excess = sum(s - n_a * t / (n_a + n_b) for s, t, (n_a, n_b) in zip(a_sums, totals, sizes, strict=True))
        variance = sum(
            n_a * n_b * t * (n_a + n_b - t) / ((n_a + n_b) ** 2 * max(1, n_a + n_b - 1))
            for t, (n_a, n_b) in zip(totals, sizes, strict=True)
        )
        safe = np.where(variance > 0, variance, 1.0)
        return np.sum(np.where(variance > 0, excess**2 / safe, 0.0), axis=1)

    pooled_a = sum(w * f[:n_a].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes, strict=True))
    pooled_b = sum(w * f[n_a:].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes, strict=True))
    effect = float(pooled_b[0] - pooled_a[0]) if kind == "mean" else float(np.abs(pooled_a - pooled_b).sum() / 2)
    observed = statistic([f[:n_a].sum(axis=0)[None, :] for f, (n_a, _) in zip(features, sizes, strict=True)])[0]
    tie = observed - TIE * max(1.0, abs(observed))
    if len(cases) == 1 and math.comb(sum(sizes[0]), sizes[0][0]) <= 5000:
        draws = np.array(list(combinations(range(sum(sizes[0])), sizes[0][0])))
        return effect, float(np.mean(statistic([features[0][draws].sum(axis=1)]) >= tie))
    rng = np.random.default_rng(seed)
    null = statistic(
        [
            f[np.argsort(rng.random((permutations, n_a + n_b)), axis=1)[:, :n_a]].sum(axis=1)
            for f, (n_a, n_b) in zip(features, sizes, strict=True)
        ]
    )
    return effect, (1 + int(np.sum(null >= tie))) / (1 + permutations)


def exact_distribution_test(reference: Sequence, sample: Sequence) -> float:
    """Could `sample` (a few runs) come from the same outcome distribution as `reference`?
    The exact permutation p-value of Pearson's X² over outcome labels, enumerated by the
    sample's label counts (a multivariate hypergeometric law): exact for any reference size."""
    labels = sorted(set(reference) | set(sample), key=str)
    totals = [list(reference).count(v) + list(sample).count(v) for v in labels]
    n_s, n = len(sample), len(reference) + len(sample)
    if n_s == 0 or not reference:
        return 1.0
    observed_counts = [list(sample).count(v) for v in labels]

    def x2(counts: Sequence[int]) -> float:
        return sum((c - n_s * t / n) ** 2 * n * n / (t * n_s * (n - n_s)) for c, t in zip(counts, totals, strict=True))

    observed = x2(observed_counts)
    p = 0.0
    log_all = math.lgamma(n + 1) - math.lgamma(n_s + 1) - math.lgamma(n - n_s + 1)
    for counts in _compositions(n_s, totals):
        if x2(counts) >= observed - TIE * max(1.0, observed):
            p += math.exp(
                sum(
                    math.lgamma(t + 1) - math.lgamma(c + 1) - math.lgamma(t - c + 1)
                    for c, t in zip(counts, totals, strict=True)
                )
                - log_all
            )
    return min(1.0, p)


def _compositions(total: int, bounds: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to split `total` runs over labels, at most bounds[i] in label i."""
    if len(bounds) == 1:
        if total <= bounds[0]:
            yield (total,)
        return
    for first in range(min(total, bounds[0]) + 1):
        for rest in _compositions(total - first, bounds[1:]):
            yield (first, *rest)
