"""The statistics made to scale give what they gave before, to the last bit: p-values,
min-p adjustments, smallest reachable adjusted p, and the shift tests' permutation p-values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.stats import (
    fisher_null_law,
    min_p_adjust,
    smallest_adjusted_ps,
    stratified_exact_test,
    stratified_permutation_test,
    stratified_permutation_tests,
)
from tests.stats import reference


def _strata(max_runs: int, max_cases: int):
    stratum = st.tuples(st.integers(1, max_runs), st.integers(1, max_runs), st.floats(0, 1), st.floats(0, 1))
    return st.lists(stratum, min_size=1, max_size=max_cases).flatmap(
        lambda rows: st.tuples(
            *[
                st.tuples(st.integers(0, n_a), st.just(n_a), st.integers(0, n_b), st.just(n_b))
                for n_a, n_b, _, _ in rows
            ]
        )
    )


def _drawn(seed: int, cases: int, runs: tuple[int, int], drop: float = 0.05) -> list[tuple[int, int, int, int]]:
    """Cases as a run produces them: each case's own rate, B a little worse."""
    rng = np.random.default_rng(seed)
    strata = []
    for _ in range(cases):
        n_a, n_b = (int(rng.integers(*runs)) for _ in range(2))
        rate = float(rng.choice([0.05, 0.3, 0.5, 0.8, 0.95, 1.0]))
        strata.append((int(rng.binomial(n_a, rate)), n_a, int(rng.binomial(n_b, max(0.0, rate - drop))), n_b))
    return strata


@settings(max_examples=200, deadline=None)
@given(_strata(max_runs=60, max_cases=40))
def test_the_stratified_exact_test_is_the_one_it_was(strata):
    assert stratified_exact_test(strata) == _as_today(reference.stratified_exact_test(strata))


def _as_today(test):
    from ironbench.stats import ExactTest

    return ExactTest(*test.__dict__.values())


def test_the_stratified_exact_test_over_thousands_of_cases_is_the_one_it_was():
    # wide enough that most of the sum's law underflows to zero and is left out
    for seed, cases, runs in ((1, 3000, (8, 12)), (2, 2000, (1, 31)), (3, 1000, (20, 90))):
        strata = _drawn(seed, cases, runs)
        assert stratified_exact_test(strata) == _as_today(reference.stratified_exact_test(strata))


@settings(max_examples=200, deadline=None)
@given(_strata(max_runs=12, max_cases=60))
def test_min_p_adjustment_and_reachable_p_are_the_ones_they_were(strata):
    laws = [fisher_null_law(*s) for s in strata]
    raw = [stratified_exact_test([s]).p_regression for s in strata]
    sizes = [(s[1], s[3]) for s in strata]
    assert min_p_adjust(raw, laws) == reference.min_p_adjust(raw, laws)
    assert smallest_adjusted_ps(sizes, laws) == [
        reference.smallest_adjusted_p(i, sizes, laws) for i in range(len(sizes))
    ]


@pytest.mark.slow
def test_min_p_adjustment_over_thousands_of_cases_is_the_one_it_was():
    for seed, cases, runs, drop in ((4, 2000, (10, 11), 0.1), (5, 1500, (1, 6), 0.4), (6, 1000, (3, 15), 0.0)):
        strata = _drawn(seed, cases, runs, drop)
        laws = [fisher_null_law(*s) for s in strata]
        raw = [stratified_exact_test([s]).p_regression for s in strata]
        sizes = [(s[1], s[3]) for s in strata]
        assert min_p_adjust(raw, laws) == reference.min_p_adjust(raw, laws)
        assert smallest_adjusted_ps(sizes, laws) == [
            reference.smallest_adjusted_p(i, sizes, laws) for i in range(cases)
        ]


LABELS = ["success", "generation", "validation", "repair", "timeout"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(1, 5)), min_size=1, max_size=25),
    st.integers(0, 2**31),
    st.sampled_from([99, 1999]),
)
def test_shift_tests_drawn_together_are_the_ones_drawn_apart_before(shape, seed, permutations):
    rng = np.random.default_rng(seed)
    outcomes, attempts = [], []
    for n_a, n_b, labels in shape:
        outcomes.append((list(rng.choice(LABELS[:labels], n_a)), list(rng.choice(LABELS, n_b))))
        attempts.append((list(rng.integers(0, 5, n_a)), list(rng.integers(0, 5, n_b))))
    together = stratified_permutation_tests([(outcomes, "categories"), (attempts, "mean")], permutations, seed)
    assert together == [
        reference.stratified_permutation_test(outcomes, "categories", permutations, seed),
        reference.stratified_permutation_test(attempts, "mean", permutations, seed),
    ]
    assert stratified_permutation_test(attempts, "mean", permutations, seed) == together[1]
