"""Figures across cases with the case as cluster: by hand, and their coverage by seeded simulation."""

import math

import numpy as np
import pytest

from ironbench.stats.clustered import clustered_mean, clustered_mean_t, clustered_ratio
from ironbench.stats.intervals import _wilson
from ironbench.stats.laws import regularized_beta, t_quantile
from ironbench.stats.passk import pass_at_k, pass_hat_k


def test_student_t_and_the_incomplete_beta_known_values():
    assert regularized_beta(0.5, 2, 3) == pytest.approx(0.6875)  # 11/16
    assert regularized_beta(0.3, 1, 1) == pytest.approx(0.3)
    for df, q in ((1, 12.7062), (2, 4.3027), (9, 2.2622), (29, 2.0452)):
        assert t_quantile(0.975, df) == pytest.approx(q, abs=1e-4)


def test_clustered_mean_by_hand():
    # four cases at 1, 0, 1, 1: mean 0.75; CR1 variance (4/3)·Σ(v − 0.75)²/4² = 0.0625, so the
    # effective size is 0.75·0.25/0.0625 = 3 cases, then scaled by (z/t_3)² for 3 degrees of freedom
    found = clustered_mean([1, 0, 1, 1])
    effective = 3 * (1.959963984540054 / t_quantile(0.975, 3)) ** 2
    assert found.estimate == 0.75 and found.effective_n == pytest.approx(effective)
    assert (found.low, found.high) == pytest.approx(_wilson(0.75, effective, 1.959963984540054))
    # a pooled rate: 3/4 and 1/4 variants, weights 4 and 4
    pooled = clustered_mean([0.75, 0.25], weights=[4, 4])
    assert pooled.estimate == 0.5 and pooled.n == 8 and pooled.clusters == 2
    # cases that agree are worth no more than their units: the cap holds the design effect at 1
    same = clustered_mean([0.5, 0.5, 0.5], units=[10, 10, 10])
    assert same.effective_n <= 30
    assert clustered_mean([], []) is None


def test_ratio_and_unbounded_means_by_hand():
    ratio, low, high = clustered_ratio([1, 0, 1], [1, 1, 2])
    assert ratio == pytest.approx(0.5)
    variance = 1.5 * ((1 - 0.5) ** 2 + (0 - 0.5) ** 2 + (1 - 1.0) ** 2)
    assert high - ratio == pytest.approx(t_quantile(0.975, 2) * math.sqrt(variance) / 4)
    assert clustered_ratio([1], [0]) is None
    mean, low, high = clustered_mean_t([0, 2, 1, 3], ["a", "a", "b", "b"])
    assert mean == 1.5
    # cluster sums of residuals: a: −1.5 + 0.5 = −1, b: −0.5 + 1.5 = 1 → V = 2·2/16
    assert high - mean == pytest.approx(t_quantile(0.975, 1) * math.sqrt(2 * 2 / 16))
    assert mean - low == pytest.approx(high - mean)


def _beta_moment(a: float, b: float, k: int) -> float:
    return math.exp(math.lgamma(a + k) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(a + b + k))


@pytest.mark.parametrize(
    ("a", "b", "ks"), [(2.0, 2.0, (1, 2, 3)), (0.5, 0.5, (1, 2, 3)), (5.0, 1.0, (1,)), (1.0, 3.0, (1,))]
)
def test_pass_k_across_cases_covers_within_two_points(a, b, ks):
    """Instructions drawn from a population (success rates ~ Beta(a, b)), 20 of them, 10 fixed
    runs each: the interval of the mean pass^k and pass@k holds the population's value. (Where
    the mean is near 0 or 1 for k > 1, a skewed population takes it outside ±2 points: the
    statistics page gives those figures.)"""
    rng = np.random.default_rng(17)
    reps, cases, runs = 1500, 20, 10
    covered = {(name, k): 0 for name in ("hat", "at") for k in ks}
    for _ in range(reps):
        successes = rng.binomial(runs, rng.beta(a, b, cases))
        for k in ks:
            hat = clustered_mean([pass_hat_k(runs, int(c), k) for c in successes], units=[runs] * cases)
            at = clustered_mean([pass_at_k(runs, int(c), k) for c in successes], units=[runs] * cases)
            covered[("hat", k)] += hat.low <= _beta_moment(a, b, k) <= hat.high
            # E[1 − (1 − p)^k] = 1 − E[q^k], q = 1 − p ~ Beta(b, a)
            covered[("at", k)] += at.low <= 1 - _beta_moment(b, a, k) <= at.high
    for key, hits in covered.items():
        assert abs(hits / reps - 0.95) <= 0.02, (key, hits / reps)


def test_pooled_rate_with_cases_as_clusters_covers_within_two_points():
    """Flip rates: 30 cases of 3–6 variants, each case its own rate (~ Beta(1, 4))."""
    rng = np.random.default_rng(19)
    reps, covered = 2000, 0
    for _ in range(reps):
        rates, variants = rng.beta(1, 4, 30), rng.integers(3, 7, 30)
        flips = rng.binomial(variants, rates)
        found = clustered_mean(flips / variants, weights=variants)
        covered += found.low <= 0.2 <= found.high
    assert abs(covered / reps - 0.95) <= 0.02


def test_ratio_of_case_means_covers_within_two_points():
    """The robust drop: base succeeds with p ~ Beta(4, 1), each of 5 variants with 0.9·p."""
    rng = np.random.default_rng(23)
    population = rng.beta(4, 1, 400_000)
    truth = (population.mean() - ((0.9 * population) ** 5).mean()) / population.mean()
    reps, covered = 2000, 0
    for _ in range(reps):
        p = rng.beta(4, 1, 40)
        base = (rng.random(40) < p).astype(float)
        worst = np.all(rng.random((40, 5)) < 0.9 * p[:, None], axis=1)
        found = clustered_ratio(base - worst, base)
        covered += found is not None and found[1] <= truth <= found[2]
    assert abs(covered / reps - 0.95) <= 0.02
