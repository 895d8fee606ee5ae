"""Robustness per case and generator, and across cases, by hand."""

import pytest

from ironbench.stats import wilson_interval
from ironbench.stats.robustness import CaseRobustness, GeneratorRobustness


def cell(case_id, base, variants, nominal=None):
    successes, n = nominal if nominal is not None else (int(base), 1)
    return CaseRobustness(case_id, "g", base, successes, n, tuple(variants))


def test_one_case_by_hand():
    held = cell("a", True, [True, True, True])
    assert held.robust_pass and held.worst_case == 1.0 and held.robust_drop == 0.0
    assert held.flips == (0, 3, 0, 0)
    broke = cell("b", True, [True, False, True, False], nominal=(8, 10))
    assert not broke.robust_pass and broke.worst_case == 0.0
    assert broke.robust_drop == pytest.approx((0.8 - 0.0) / 0.8)
    assert broke.flips == (2, 4, 0, 0)
    data = broke.to_dict()
    assert data["nominal_success_rate"]["n"] == 10
    assert data["flips_success_to_failure"]["ci_95"] == pytest.approx(list(wilson_interval(2, 4)), abs=1e-6)
    rescued = cell("c", False, [True, False])
    assert rescued.flips == (0, 0, 1, 2) and rescued.robust_drop is None and not rescued.robust_pass


def test_across_cases_each_case_is_one_unit():
    cells = (
        cell("a", True, [True, True]),
        cell("b", True, [True, False]),
        cell("c", False, [True, True]),
        cell("d", True, [False, False]),
    )
    data = GeneratorRobustness("g", cells).to_dict()
    assert data["cases"] == 4 and data["variants"] == 8
    # robust pass: only a; worst case (every variant succeeded): a and c — Wilson over 4 cases
    assert data["robust_pass_rate"]["estimate"] == 0.25
    assert data["robust_pass_rate"]["ci_95"] == pytest.approx(list(wilson_interval(1, 4)), abs=1e-6)
    assert data["worst_case_success_rate"]["estimate"] == 0.5
    # robust drop over case means: (Σ nominal − Σ worst) / Σ nominal = (3 − 2) / 3
    assert data["robust_drop"]["estimate"] == pytest.approx(1 / 3, abs=1e-6)
    assert data["robust_drop"]["ci_95"][1] <= 1.0
    # success → failure: b 1/2, d 2/2 (a 0/2) = 3/6 pooled, the case as cluster
    assert (data["flips_success_to_failure"]["estimate"], data["flips_success_to_failure"]["count"]) == (0.5, 3)
    assert data["flips_success_to_failure"]["cases"] == 3 and data["flips_success_to_failure"]["n"] == 6
    assert data["flips_failure_to_success"]["estimate"] == 1.0
