"""The stratified test's power and minimum detectable drop at any number of cases: simulated
with the exact test for a few cases, by the normal approximation beyond, within 1 percentage
point of the simulated exact figure wherever that one can be computed."""

import numpy as np
import pytest

from ironbench.stats import (
    normal_power,
    plan_runs,
    stratified_min_detectable_drop,
    stratified_power,
    stratified_power_method,
)
from ironbench.stats.power import NORMAL, SIMULATED
from tests.stats import reference

RATES = [0.05, 0.3, 0.5, 0.8, 0.9, 0.95, 1.0]


def _design(seed: int, cases: int, runs: tuple[int, int]) -> tuple[list[tuple[int, int]], list[float]]:
    """Cases of varied run counts, each at the rate A's runs showed."""
    rng = np.random.default_rng(seed)
    sizes = [(int(rng.integers(*runs)), int(rng.integers(*runs))) for _ in range(cases)]
    return sizes, [int(rng.binomial(n, rng.choice(RATES))) / n for n, _ in sizes]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("seed", "cases", "runs"),
    [
        # just past what is simulated exactly: the approximation's hardest designs
        (1, 10, (9, 12)),
        (2, 11, (8, 13)),
        (3, 12, (10, 11)),
        (4, 20, (5, 6)),
        (5, 40, (2, 4)),
        (6, 30, (3, 8)),
        # a few hundred cases of few runs each (adversarial variants), still simulable
        (7, 200, (2, 3)),
    ],
)
def test_the_approximate_mde_is_within_one_point_of_the_simulated_exact_one(seed, cases, runs):
    sizes, rates = _design(seed, cases, runs)
    assert stratified_power_method(sizes) == NORMAL
    exact = reference.stratified_min_detectable_drop(sizes, rates, 0.05)
    found = stratified_min_detectable_drop(sizes, rates, 0.05)
    assert exact is not None and found is not None
    assert abs(found - exact) <= 0.01, (found, exact)


def test_a_few_cases_are_still_simulated_with_the_exact_test():
    sizes, rates = _design(8, 6, (8, 12))
    assert stratified_power_method(sizes) == SIMULATED
    assert stratified_min_detectable_drop(sizes, rates, 0.05) == reference.stratified_min_detectable_drop(
        sizes, rates, 0.05
    )
    assert stratified_power_method([(10, 10)] * 40) == NORMAL


def test_approximate_power_is_the_simulated_power_of_the_exact_test():
    sizes, rates = _design(9, 60, (3, 9))
    for drop in (0.05, 0.1, 0.2):
        worse = [max(0.0, r - drop) for r in rates]
        simulated = reference._stratified_power(sizes, *reference._uniforms(sizes, 2000, 0), rates, worse, 0.05)
        assert abs(normal_power(sizes, rates, worse, 0.05) - simulated) <= 0.03  # 2000 draws: sd 0.011
    assert normal_power(sizes, rates, rates, 0.05) <= 0.05  # no drop: at most the level


def test_power_and_mde_at_ten_thousand_cases_shrink_with_cases():
    # how long they take is measured by tests/perf/bench_scale.py, not here
    mdes = [stratified_min_detectable_drop(*_design(10, cases, (10, 11)), 0.05) for cases in (100, 1000, 10_000)]
    assert mdes[0] > mdes[1] > mdes[2] > 0  # more cases, smaller drops found: about 1/sqrt(cases)
    assert 2 < mdes[0] / mdes[1] < 4.5 and 2 < mdes[1] / mdes[2] < 4.5
    sizes = [(10, 10)] * 5000
    assert stratified_power(sizes, [0.8] * 5000, [0.78] * 5000, 0.05) > 0.8


def test_plan_over_many_cases_answers_from_the_approximation():
    answer = plan_runs(0.9, 0.01, cases=2000)
    assert "normal approximation" in answer["test"] and answer["power_reached"] >= 0.8
    n = answer["runs_per_case"]
    below = normal_power([(n - 1, n - 1)] * 2000, [0.9] * 2000, [0.89] * 2000, 0.05)
    assert below < 0.8 <= normal_power([(n, n)] * 2000, [0.9] * 2000, [0.89] * 2000, 0.05)
