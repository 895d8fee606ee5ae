"""When a conversation breaks: Kaplan–Meier and the stratified log-rank test by hand, the
band's coverage, and the test's false-positive rate and power, by seeded simulation."""

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.stats.survival import first_violation, flips, kaplan_meier, recovered, stratified_logrank


def test_turn_of_first_violation_flips_and_recovery():
    assert first_violation([False, False, True, False]) == (3, True)
    assert first_violation([False, False]) == (2, False)  # censored at the last turn answered
    assert flips([False, True, True, False, True]) == 3
    assert recovered([False, True, False]) and not recovered([False, True, True]) and not recovered([False])


@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_flips_and_recovery_agree(turns):
    assert flips(turns) % 2 == (turns[0] != turns[-1])
    assert recovered(turns) == (any(turns) and not all(turns[turns.index(True) :]))


def test_kaplan_meier_by_hand():
    # five conversations: violated at turns 1, 2 and 3; two held (censored at 2 and 4)
    curve = kaplan_meier([1, 2, 2, 3, 4], [True, True, False, True, False])
    assert curve.survival == pytest.approx((1.0, 0.8, 0.6, 0.3, 0.3))  # 4/5, ×3/4, ×1/2, ×1
    assert curve.at_risk == (5, 5, 4, 2, 1)
    assert curve.median == 3 and (curve.n, curve.events) == (5, 3)
    # Greenwood at turn 2: Σ d/(n(n−d)) = 1/20 + 1/12; log-log interval S^exp(±z·√G/|ln S|)
    g = 1 / 20 + 1 / 12
    spread = 1.959963984540054 * math.sqrt(g) / abs(math.log(0.6))
    assert curve.low[2] == pytest.approx(0.6 ** math.exp(spread))
    assert curve.high[2] == pytest.approx(0.6 ** math.exp(-spread))
    # before any violation the interval's lower end is the exact bound for none among n
    early = kaplan_meier([3, 3, 3], [True, False, False])
    assert early.low[1] == pytest.approx(0.025 ** (1 / 3)) and early.high[1] == 1.0


def _logrank_by_hand(a, b):
    """U = Σ_t (d_A − d·n_A/n), V = Σ_t d (n_A/n)(1 − n_A/n)(n − d)/(n − 1), one stratum."""
    u = v = 0.0
    for t in sorted({x for x, _ in a + b}):
        n_a = sum(1 for x, _ in a if x >= t)
        n = n_a + sum(1 for x, _ in b if x >= t)
        d_a = sum(1 for x, e in a if x == t and e)
        d = d_a + sum(1 for x, e in b if x == t and e)
        u += d_a - d * n_a / n
        v += d * (n_a / n) * (1 - n_a / n) * (n - d) / max(n - 1, 1)
    return u, v


def test_logrank_by_hand_and_its_exact_permutation_p_value():
    a = [(1, True), (2, True), (3, False)]
    b = [(2, False), (3, True), (4, False)]
    u, v = _logrank_by_hand(a, b)
    test = stratified_logrank([([x for x, _ in a], [e for _, e in a], [x for x, _ in b], [e for _, e in b])])
    assert test.z == pytest.approx(u / math.sqrt(v))
    assert test.expected_a == pytest.approx(test.observed_a - u) and test.permutations == 0
    # every way of labelling 3 of the 6 conversations A, each as likely under the null
    pooled = a + b
    extreme = 0
    for chosen in combinations(range(6), 3):
        u_x, v_x = _logrank_by_hand([pooled[i] for i in chosen], [pooled[i] for i in range(6) if i not in chosen])
        extreme += abs(u_x / math.sqrt(v_x)) >= abs(u / math.sqrt(v)) - 1e-9
    assert test.p_value == pytest.approx(extreme / 20)
    assert test.hazard_ratio == pytest.approx(math.exp(-u / v))


def test_a_scenario_one_side_never_ran_carries_nothing():
    assert stratified_logrank([([1, 2], [True, True], [], [])]).p_value == 1.0


def _conversation(rng, hazard: float, turns: int) -> tuple[int, bool]:
    return first_violation(list(rng.random(turns) < hazard))


def test_band_covers_the_true_curve_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    hazard, turns, n, reps = 0.15, 8, 50, 800
    hits = np.zeros(turns + 1)
    for _ in range(reps):
        times = [_conversation(rng, hazard, turns) for _ in range(n)]
        curve = kaplan_meier([t for t, _ in times], [e for _, e in times])
        for t in range(1, min(turns, len(curve.low) - 1) + 1):
            hits[t] += curve.low[t] <= (1 - hazard) ** t <= curve.high[t]
    coverage = hits[1:] / reps
    assert abs(coverage.mean() - 0.95) <= 0.02, coverage


def _stratified_data(rng, hazards_a, hazards_b, conversations: int, turns: int = 8):
    strata = []
    for h_a, h_b in zip(hazards_a, hazards_b, strict=True):
        a = [_conversation(rng, h_a, turns) for _ in range(conversations)]
        b = [_conversation(rng, h_b, turns) for _ in range(conversations)]
        strata.append(([t for t, _ in a], [e for _, e in a], [t for t, _ in b], [e for _, e in b]))
    return strata


@pytest.mark.parametrize("conversations", [1, 3])
def test_false_positive_rate_is_at_most_alpha(conversations):
    """Engines that break equally often, scenario by scenario (each scenario its own hazard)."""
    rng = np.random.default_rng(11)
    reps = 600
    rejected = 0
    for rep in range(reps):
        hazards = rng.uniform(0.05, 0.4, 7)
        test = stratified_logrank(_stratified_data(rng, hazards, hazards, conversations), permutations=199, seed=rep)
        rejected += test.p_value <= 0.05
    # at most alpha in law; the estimate may exceed it by simulation error only (2 standard errors)
    assert rejected / reps <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / reps)


def test_power_against_an_engine_that_breaks_three_times_as_often():
    rng = np.random.default_rng(13)
    reps = 300
    rejected = 0
    for rep in range(reps):
        hazards = rng.uniform(0.05, 0.3, 7)
        data = _stratified_data(rng, hazards * 3, hazards, 3)
        rejected += stratified_logrank(data, permutations=199, seed=rep).p_value <= 0.05
    assert rejected / reps >= 0.8  # 7 scenarios × 3 conversations per engine
