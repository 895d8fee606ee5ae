"""compare's decisions are the ones they were before it was made to scale: every verdict,
p-value, adjusted p-value, flag, warning and shift equal to the last bit, against compare
run on the previous statistics (tests/stats/reference.py), on this suite's fixtures and on
random ones."""

import importlib
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.analysis.compare import Evidence, Gating, Runs, compare_runs, decide
from ironbench.core.kinds import FailOn, Gate
from ironbench.stats import fisher_null_law, stratified_power_method
from ironbench.stats.power import SIMULATED
from tests.analysis.test_compare import run_with, sides
from tests.stats import reference

decide_module = importlib.import_module("ironbench.analysis.compare.decide")  # the package exports decide()


def _success_change_p_before(strata, laws, tests, gate):
    if gate == "overall":
        return reference.stratified_exact_test(strata).p_two_sided
    two_sided = [fisher_null_law(*s, two_sided=True) for s in strata]
    return min(reference.min_p_adjust([t.p_two_sided for t in tests], two_sided))


def before(function, *args, **kwargs):
    """`function(*args, **kwargs)` with compare on the statistics it used before."""
    with mock.patch.multiple(
        decide_module,
        stratified_exact_test=reference.stratified_exact_test,
        min_p_adjust=reference.min_p_adjust,
        smallest_adjusted_ps=lambda sizes, laws: [
            reference.smallest_adjusted_p(i, sizes, laws) for i in range(len(sizes))
        ],
        stratified_permutation_tests=lambda tests: [
            reference.stratified_permutation_test(strata, kind) for strata, kind in tests
        ],
        stratified_min_detectable_drop=reference.stratified_min_detectable_drop,
        _success_change_p=lambda strata, tests, overall, gate: _success_change_p_before(
            strata, [fisher_null_law(*s) for s in strata], tests, gate
        ),
    ):
        return function(*args, **kwargs)


FIXTURES = {
    "one noisy case": {"c0": ((10, 10), (5, 10)), **{f"c{i}": ((5, 10), (6, 10)) for i in range(1, 5)}},
    "one drop, others improve": {"c00": ((10, 10), (0, 10)), **{f"c{i:02d}": ((5, 10), (7, 10)) for i in range(1, 20)}},
    "broad small drop": {f"c{i:02d}": ((10, 10), (9, 10)) for i in range(20)},
    "too small to flag": {f"c{i}": ((3, 3), (0, 3)) for i in range(4)},
    "unchanged": {"x": ((3, 3), (3, 3)), "y": ((3, 3), (3, 3))},
}


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("gate", list(Gate))
@pytest.mark.parametrize("fail_on", list(FailOn))
def test_the_fixtures_decide_as_before(name, gate, fail_on):
    a, b = sides(FIXTURES[name])
    sizes = [(n_a, n_b) for (_, n_a), (_, n_b) in FIXTURES[name].values()]
    power = stratified_power_method(sizes) == SIMULATED  # beyond, the MDE is approximated (tests/stats)
    for margin in (None, 0.05):
        gating = Gating(gate=gate, fail_on=fail_on, margin=margin)
        now = decide(Evidence(a, b), gating, power=power)
        assert now.to_dict() == before(decide, Evidence(a, b), gating, power=power).to_dict()


LABELS = ["success", "success", "generation", "validation", "repair", "timeout"]


@st.composite
def _runs(draw, n: int) -> Runs:
    outcomes = tuple(draw(st.lists(st.sampled_from(LABELS), min_size=n, max_size=n)))
    attempts = tuple(0 if o == "generation" else draw(st.integers(1, 4)) for o in outcomes)
    return Runs(outcomes, attempts, harness_errors=draw(st.integers(0, 1)), infra_errors=draw(st.integers(0, 1)))


@st.composite
def _sides(draw):
    cases = draw(st.integers(1, 25))
    a, b = {}, {}
    for k in range(cases):
        key = (f"case_{k:02d}", draw(st.sampled_from(["base", "whitespace_noise/variant_0001"])))
        where = draw(st.sampled_from(["both"] * 6 + ["a", "b"]))
        if where != "b":
            a[key] = draw(_runs(draw(st.integers(0, 12))))
        if where != "a":
            b[key] = draw(_runs(draw(st.integers(0, 12))))
    return a, b


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    _sides(),
    st.sampled_from(list(Gate)),
    st.sampled_from(list(FailOn)),
    st.sampled_from([None, 0.0, 0.1]),
    st.sampled_from([0.01, 0.05, 0.2]),
)
def test_random_comparisons_decide_as_before(pair, gate, fail_on, margin, alpha):
    a, b = pair
    common = [k for k in a if k in b and a[k].n and b[k].n]
    if not common:
        return  # cannot be compared, before or now (tests/analysis/test_compare.py)
    sizes = [(a[k].n, b[k].n) for k in sorted(common)]
    power = stratified_power_method(sizes) == SIMULATED
    gating = Gating(alpha, gate, fail_on, margin)
    now = decide(Evidence(a, b), gating, power=power)
    assert now.to_dict() == before(decide, Evidence(a, b), gating, power=power).to_dict()


@pytest.mark.slow
def test_runs_in_the_store_compare_as_before(paths, script):
    rng = np.random.default_rng(3)
    stages = ["success", "success", "success_r1", "generation", "validation", "repair"]
    cases = {f"c{i}": 6 for i in range(4)}
    first = run_with(paths, script, {k: list(rng.choice(stages, 6)) for k in cases}, cases)
    second = run_with(paths, script, {k: list(rng.choice(stages[2:], 6)) for k in cases}, cases)
    for gate in Gate:
        for fail_on in FailOn:
            now = compare_runs(paths.store_path, first, second, gate=gate, fail_on=fail_on)
            then = before(compare_runs, paths.store_path, first, second, gate=gate, fail_on=fail_on)
            assert now.to_dict() == then.to_dict()
