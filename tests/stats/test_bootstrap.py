"""The cost difference's bootstrap interval, simulated: how often it covers a known difference
(and none), and how often `compare`'s "B costs more/less" (the interval excluding 0) is said
with no difference (its error rate) and with one (its power)."""

import numpy as np
import pytest

from ironbench.stats.bootstrap import ratio_difference

TRIALS = 400


def _runs(rng: np.random.Generator, cases: int, per_call: float, shift: float):
    """Two runs of the same cases: each case has its own size (calls per invocation), each run
    a few invocations per case; B's calls cost `shift` more each (a known difference)."""
    size = rng.gamma(2.0, 1.5, size=cases) + 0.5  # cases differ: some take many calls
    sides = []
    for extra in (0.0, shift):
        invocations = rng.integers(2, 6, size=cases)
        calls = rng.poisson(size * invocations) + invocations
        cost = calls * (per_call + extra) * rng.lognormal(0.0, 0.2, size=cases)
        sides.append(list(zip(cost.tolist(), invocations.astype(float).tolist(), strict=True)))
    return sides


def _truth(per_call: float, shift: float) -> float:
    """The difference in expected cost per invocation: E[calls per invocation] × shift."""
    mean_size = 2.0 * 1.5 + 0.5
    lognormal_mean = np.exp(0.2**2 / 2)
    return (mean_size + 1) * shift * lognormal_mean


def _simulate(cases: int, shift: float, seed: int) -> tuple[float, float]:
    """(coverage of the true difference, share of intervals that exclude 0)."""
    rng = np.random.default_rng(seed)
    truth = _truth(0.001, shift)
    covered = excluded = 0
    for trial in range(TRIALS):
        a, b = _runs(rng, cases, 0.001, shift)
        found = ratio_difference(a, b, paired=True, resamples=500, seed=trial)
        assert found.low is not None and found.high is not None
        covered += found.low <= truth <= found.high
        excluded += found.low > 0 or found.high < 0
    return covered / TRIALS, excluded / TRIALS


# Measured (400 trials, 500 resamples): coverage of a known difference 91.5% with 5 cases,
# 92% with 10, 94% with 20, 93% with 60; with none, "costs more/less" said 7.5%, 7.5%, 6.8%,
# 7.5% of the time; power to say it when B's calls cost 50% more: 43%, 70%, 92%, 100%; 30%
# more: 26%, 40%, 64%, 98%. (The plain percentile interval covered 82% with 5 cases.)


@pytest.mark.parametrize("cases", [5, 20])
def test_the_interval_covers_a_known_difference_about_95_percent(cases):
    coverage, power = _simulate(cases, 0.0005, seed=cases)  # B's calls cost 50% more
    # 400 trials: a 95% interval's coverage lands within about ±2.2 points of its nominal value
    assert 0.90 <= coverage <= 0.99, coverage
    if cases == 20:
        assert power >= 0.85, power


@pytest.mark.parametrize("cases", [5, 20])
def test_with_no_difference_it_says_cheaper_or_dearer_about_5_percent_of_the_time(cases):
    coverage, excluded = _simulate(cases, 0.0, seed=100 + cases)
    assert 0.90 <= coverage <= 0.99 and excluded <= 0.10, (coverage, excluded)


@pytest.mark.slow
def test_a_30_percent_dearer_call_is_found_with_60_cases():
    _, power = _simulate(60, 0.0003, seed=7)
    assert power >= 0.9, power


def test_the_same_runs_give_the_same_interval():
    rng = np.random.default_rng(1)
    a, b = _runs(rng, 10, 0.001, 0.0)
    assert ratio_difference(a, b) == ratio_difference(a, b)


def test_nothing_to_divide_by_gives_no_difference():
    found = ratio_difference([(0.0, 0.0)], [(1.0, 2.0)])
    assert found.a is None and found.difference is None and found.b == 0.5
