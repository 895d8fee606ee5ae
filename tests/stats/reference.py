"""The statistics compare used before they were made to scale, kept verbatim as references:
the tests hold today's p-values, adjustments and decisions to them, and the stratified MDE's
normal approximation to the simulated exact figure. Slow by design: quadratic in cases."""

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from ironbench.stats.exact import ExactTest, stratified_p_regression_batch
from ironbench.stats.laws import TIE, hypergeometric_pmf
from ironbench.stats.multiplicity import NullLaw


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


def min_p_adjust(p_values: Sequence[float], laws: Sequence[NullLaw]) -> list[float]:
    """Westfall-Young step-down min-p adjusted p-values, computed exactly.

    Cases are independent given their margins, so P(min p <= c) over any subset of
    true nulls is 1 − Π(1 − F_k(c)), with F_k each case's discrete null law: no
    resampling needed. Unlike Bonferroni or Holm, a case whose smallest attainable
    p-value is large (few runs) costs the others almost nothing; it strongly controls
    the family-wise error rate (subset pivotality holds for independent cases).
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        c = p_values[index]
        survive = 1.0
        for other in order[rank:]:
            survive *= 1.0 - laws[other].cdf(c)
        running = max(running, min(1.0, 1.0 - survive))
        adjusted[index] = running
    return adjusted


def smallest_adjusted_p(case: int, sizes: Sequence[tuple[int, int]], laws: Sequence[NullLaw]) -> float:
    """The best adjusted p-value case `case` could reach at its run counts (its most extreme
    result: every A run succeeds, every B run fails), given the other cases' null laws."""
    n_a, n_b = sizes[case]
    p_min = 1.0 / math.comb(n_a + n_b, n_a) if n_a and n_b else 1.0
    survive = 1.0 - p_min
    for other, law in enumerate(laws):
        if other != case:
            survive *= 1.0 - law.cdf(p_min)
    return 1.0 - survive


def _uniforms(sizes: Sequence[tuple[int, int]], sims: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return ([rng.random((sims, n_a)) for n_a, _ in sizes], [rng.random((sims, n_b)) for _, n_b in sizes])


def _stratified_power(
    sizes: Sequence[tuple[int, int]],
    uniforms_a: Sequence[np.ndarray],
    uniforms_b: Sequence[np.ndarray],
    p_a: Sequence[float],
    p_b: Sequence[float],
    alpha: float,
) -> float:
    # Common random numbers: the same uniforms for every drop, so power is monotone in it.
    s_a = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_a, p_a, strict=True)], axis=1)
    s_b = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_b, p_b, strict=True)], axis=1)
    p = stratified_p_regression_batch(s_a, s_b, [n for n, _ in sizes], [n for _, n in sizes])
    return float(np.mean(p <= alpha * (1 + TIE)))


def stratified_min_detectable_drop(
    sizes: Sequence[tuple[int, int]],
    p_a: Sequence[float],
    alpha: float,
    power: float = 0.8,
    sims: int = 1000,
    seed: int = 0,
) -> float | None:
    """The smallest uniform drop (every case from its rate in A, floored at 0%) that the
    stratified exact test at `alpha` finds with `power`, by seeded simulation; None when
    even every case dropping to 0% is found less often."""
    if not sizes:
        return None
    uniforms_a, uniforms_b = _uniforms(sizes, sims, seed)

    def power_at(drop: float) -> float:
        return _stratified_power(sizes, uniforms_a, uniforms_b, p_a, [max(0.0, p - drop) for p in p_a], alpha)

    top = max(p_a)
    if top <= 0 or power_at(top) < power:
        return None
    low, high = 0.0, top
    for _ in range(10):  # to 0.1% of the range: the figure is read in percentage points
        middle = (low + high) / 2
        low, high = (middle, high) if power_at(middle) < power else (low, middle)
    return high
