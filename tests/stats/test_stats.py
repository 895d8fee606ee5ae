import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.stats import chance_agreement, percentile, stratified_exact_test, wilson_interval


def test_wilson_known_values():
    low, high = wilson_interval(5, 10)
    assert math.isclose(low, 0.2366, abs_tol=1e-4) and math.isclose(high, 0.7634, abs_tol=1e-4)
    low, high = wilson_interval(3, 3)
    assert math.isclose(low, 0.4385, abs_tol=1e-4) and high == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_estimate(pair):
    successes, n = pair
    low, high = wilson_interval(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0


def test_chance_agreement_for_a_fair_coin_is_a_quarter():
    assert chance_agreement(0.5) == 0.25
    assert chance_agreement(1.0) == 1.0


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert math.isclose(percentile(list(range(1, 101)), 95), 95.05)
    assert percentile([], 95) == 0.0


def _fisher_one_sided_by_enumeration(s_a, n_a, s_b, n_b):
    total = s_a + s_b

    def pmf(x):
        return math.comb(n_a, x) * math.comb(n_b, total - x) / math.comb(n_a + n_b, total)

    return sum(pmf(x) for x in range(s_a, min(n_a, total) + 1) if total - x <= n_b)


def test_single_stratum_is_fishers_exact_test():
    result = stratified_exact_test([(10, 10, 3, 10)])
    assert math.isclose(result.p_regression, 120 / 77520, rel_tol=1e-12)
    assert result.p_improvement == 1.0


@given(st.integers(1, 12), st.integers(1, 12), st.data())
def test_single_stratum_matches_enumeration(n_a, n_b, data):
    s_a = data.draw(st.integers(0, n_a))
    s_b = data.draw(st.integers(0, n_b))
    result = stratified_exact_test([(s_a, n_a, s_b, n_b)])
    if s_a + s_b in (0, n_a + n_b):
        assert result.p_regression == 1.0 and result.informative_strata == 0
    else:
        assert math.isclose(result.p_regression, _fisher_one_sided_by_enumeration(s_a, n_a, s_b, n_b), rel_tol=1e-9)
        assert result.p_regression + result.p_improvement >= 1.0 - 1e-9


def test_stratification_pools_evidence_no_single_case_shows():
    # Each case alone: 3/3 vs 1/3 is not significant; five such cases together are.
    strata = [(3, 3, 1, 3)] * 5
    assert stratified_exact_test(strata[:1]).p_regression > 0.05
    assert stratified_exact_test(strata).p_regression < 0.01


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=6))
def test_swapping_runs_swaps_the_tails(pairs):
    strata = [(a, 5, b, 5) for a, b in pairs]
    swapped = [(b, 5, a, 5) for a, b in pairs]
    forward, backward = stratified_exact_test(strata), stratified_exact_test(swapped)
    assert math.isclose(forward.p_regression, backward.p_improvement, rel_tol=1e-9, abs_tol=1e-12)


# -- exact bounds, intervals, multiplicity, power --------------------------------------------

import numpy as np

from ironbench.stats import (
    binomial_pmf,
    clopper_pearson_lower,
    clopper_pearson_upper,
    exact_distribution_test,
    fisher_null_law,
    fisher_power,
    holm_adjust,
    min_detectable_drop,
    min_p_adjust,
    newcombe_difference,
    runs_needed,
    stratified_difference,
    stratified_p_regression_batch,
    stratified_permutation_test,
)


def test_clopper_pearson_one_sided_known_values():
    assert math.isclose(clopper_pearson_lower(3, 3), 0.05 ** (1 / 3)) and round(clopper_pearson_lower(3, 3), 2) == 0.37
    assert round(clopper_pearson_lower(10, 10), 2) == 0.74
    assert math.isclose(clopper_pearson_lower(7, 10), 0.3933758, abs_tol=1e-6)  # R: binom.test(7, 10, alt="g")
    assert math.isclose(clopper_pearson_upper(0, 3), 1 - 0.05 ** (1 / 3)) and clopper_pearson_upper(3, 3) == 1.0


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_clopper_pearson_bound_is_where_the_exact_tail_is_five_percent(pair):
    k, n = pair
    low = clopper_pearson_lower(k, n)
    if 0 < k:
        assert math.isclose(binomial_pmf(n, low)[k:].sum(), 0.05, abs_tol=1e-9)
    assert low <= k / n <= clopper_pearson_upper(k, n)


def test_newcombe_matches_the_published_example():
    # Newcombe (1998), Table II example (h): 56/70 vs 48/80, A − B = 0.2 with 95% CI 0.0524 to 0.3339
    d = newcombe_difference(56, 70, 48, 80)
    assert math.isclose(d.delta, -0.2) and math.isclose(d.low, -0.3339, abs_tol=1e-4)
    assert math.isclose(d.high, -0.0524, abs_tol=1e-4)
    assert stratified_difference([(56, 70, 48, 80)]) == d  # one case: the same interval


def test_stratified_interval_does_not_collapse_at_0_and_100_percent():
    d = stratified_difference([(3, 3, 3, 3)] * 4)
    assert d.delta == 0 and d.low < -0.2 and d.high > 0.2


def test_stratified_interval_covers_the_true_difference():
    rng = np.random.default_rng(3)
    rates_a, rates_b = np.array([0.9, 0.6, 0.3, 0.95]), np.array([0.7, 0.5, 0.3, 0.8])
    weights = np.full(4, 0.25)  # equal sizes: the Mantel-Haenszel weights are equal
    truth = float(weights @ (rates_b - rates_a))
    covered = 0
    for _ in range(2000):
        strata = [
            (int(rng.binomial(10, a)), 10, int(rng.binomial(10, b)), 10) for a, b in zip(rates_a, rates_b, strict=True)
        ]
        d = stratified_difference(strata)
        covered += d.low <= truth <= d.high
    assert covered / 2000 >= 0.93


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=6))
def test_batched_stratified_test_is_the_scalar_test(pairs):
    strata = [(a, 6, b, 6) for a, b in pairs]
    batch = stratified_p_regression_batch(
        np.array([[a for a, _ in pairs]]), np.array([[b for _, b in pairs]]), [6] * len(pairs), [6] * len(pairs)
    )
    assert math.isclose(batch[0], stratified_exact_test(strata).p_regression, rel_tol=1e-9, abs_tol=1e-12)


def test_fisher_null_law_is_the_p_value_distribution():
    law = fisher_null_law(3, 3, 0, 3)  # total 3 of 6: p-values 1/20, 1/2, 19/20, 1
    assert [round(p, 4) for p in law.p_values] == [0.05, 0.5, 0.95, 1.0]
    assert math.isclose(law.cdf(0.05), 0.05) and law.cdf(0.049) == 0.0 and math.isclose(law.cdf(1.0), 1.0)


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=8))
def test_min_p_adjustment_lies_between_raw_and_bonferroni(pairs):
    strata = [(a, 5, b, 5) for a, b in pairs]
    raw = [stratified_exact_test([s]).p_regression for s in strata]
    adjusted = min_p_adjust(raw, [fisher_null_law(*s) for s in strata])
    for p, q in zip(raw, adjusted, strict=True):
        assert p - 1e-12 <= q <= min(1.0, len(raw) * p) + 1e-12
    order = sorted(range(len(raw)), key=lambda i: raw[i])
    assert all(adjusted[order[i]] <= adjusted[order[i + 1]] + 1e-12 for i in range(len(order) - 1))


def test_min_p_costs_nothing_for_cases_that_cannot_reach_small_p_values():
    # a strong case (10/10 vs 0/10) among cases that never reach p <= 0.05 (1/1 vs 0/1 ...)
    strata = [(10, 10, 0, 10)] + [(1, 1, 0, 1)] * 10
    raw = [stratified_exact_test([s]).p_regression for s in strata]
    adjusted = min_p_adjust(raw, [fisher_null_law(*s) for s in strata])
    assert math.isclose(adjusted[0], raw[0], rel_tol=1e-6)  # Bonferroni would multiply by 11
    assert holm_adjust(raw)[0] == pytest.approx(11 * raw[0])


def test_fisher_power_is_exact():
    rng = np.random.default_rng(5)
    level, hits = 0.05, 0
    for _ in range(4000):
        a, b = int(rng.binomial(8, 0.9)), int(rng.binomial(8, 0.4))
        hits += stratified_exact_test([(a, 8, b, 8)]).p_regression <= level
    assert abs(hits / 4000 - fisher_power(8, 8, 0.9, 0.4, level)) < 0.025


def test_min_detectable_drop_and_runs_needed_agree():
    drop = min_detectable_drop(20, 20, 0.9, 0.05)
    assert math.isclose(fisher_power(20, 20, 0.9, 0.9 - drop, 0.05), 0.8, abs_tol=1e-6)
    assert min_detectable_drop(3, 3, 1.0, 0.01) is None  # 1/20 can never reach 0.01
    runs, power = runs_needed(0.9, 0.2)
    assert power >= 0.8 and fisher_power(runs - 1, runs - 1, 0.9, 0.7, 0.05) < 0.8


def test_permutation_tests_hold_their_level_under_the_null():
    rng = np.random.default_rng(11)
    rejected = {"categories": 0, "mean": 0}
    for trial in range(300):
        strata = []
        for _ in range(4):
            draw = lambda n: list(rng.choice(["success", "generation", "validation"], n, p=[0.5, 0.3, 0.2]))
            strata.append((draw(5), draw(5)))
        rejected["categories"] += stratified_permutation_test(strata, "categories", 199, trial)[1] <= 0.05
        numbers = [(list(rng.integers(0, 4, 5)), list(rng.integers(0, 4, 5))) for _ in range(4)]
        rejected["mean"] += stratified_permutation_test(numbers, "mean", 199, trial)[1] <= 0.05
    assert all(count / 300 <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / 300) for count in rejected.values())


def test_exact_distribution_test_enumerates_the_sample_counts():
    # 4 failures drawn against 7 successes / 3 failures: P(0 or 4 successes in 4 of 14) = 70/1001
    assert math.isclose(exact_distribution_test(["s"] * 7 + ["f"] * 3, ["f"] * 4), 70 / 1001)
    assert exact_distribution_test(["s"] * 7 + ["f"] * 3, ["s", "f", "s", "s"]) == pytest.approx(1.0)
