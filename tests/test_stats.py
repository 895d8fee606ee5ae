import math

from hypothesis import given, strategies as st

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
