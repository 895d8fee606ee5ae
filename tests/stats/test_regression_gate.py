"""The sequential regression gate holds its error rates and saves invocations (stats/regression_gate.py).

The full grid (A's rate 0.5/0.7/0.9, drops 0 to twice the margin, 3 to 50 cases, >= 2,000
gates per point) is tests/perf/bench_gate.py; here a smaller grid, through the same code.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.stats.gate_simulation import simulate_gate
from ironbench.stats.group_sequential import boundaries, normal_quantile, operating
from ironbench.stats.regression_gate import GateError, decisions, design_gate, look, statistics

ALPHA, POWER, MARGIN = 0.05, 0.8, 0.2


def _band(rate: float, n: int) -> float:
    """Three standard errors of a rate estimated from n simulated gates."""
    return 3 * math.sqrt(rate * (1 - rate) / n)


def test_one_look_is_the_fixed_one_sided_test():
    upper, _ = boundaries([1.0], [1.0], 2.5, 0.05, 0.2, -4.0, -4.0)
    assert upper[0] == pytest.approx(normal_quantile(0.95), abs=1e-6)


def test_boundaries_hold_alpha_and_power_for_the_normal_statistic():
    """Against a Monte Carlo of the canonical joint law itself: the recursion is exact."""
    info = [1.0, 2.0, 3.5, 5.0]
    drift = 2.6 / math.sqrt(5.0)
    upper, lower = boundaries(info, info, drift, ALPHA, 1 - POWER, -4.0, -4.0)
    rng = np.random.default_rng(3)
    steps = np.diff([0.0, *info])
    for theta, expected in ((0.0, operating(info, 0.0, upper, lower)), (drift, operating(info, drift, upper, lower))):
        s = np.cumsum(rng.normal(theta * steps, np.sqrt(steps), size=(200_000, len(info))), axis=1)
        z = s / np.sqrt(info)
        alive, up = np.ones(len(z), dtype=bool), np.zeros(len(z), dtype=bool)
        for j in range(len(info)):
            up |= alive & (z[:, j] >= upper[j])
            alive &= (z[:, j] < upper[j]) & (z[:, j] > lower[j])
        assert up.mean() == pytest.approx(expected.crossing_up, abs=0.003)
    assert operating(info, 0.0, upper, lower).crossing_up <= ALPHA + 1e-6


@pytest.mark.parametrize(("rate", "cases"), [(0.5, 10), (0.9, 10), (0.7, 50)])
def test_false_alarms_power_and_invocations_on_a_small_grid(rate, cases):
    """A's runs drawn with their own noise, B's round by round, decided by the gate's own code."""
    gates = 1500
    null = simulate_gate(rate, 0.0, cases, MARGIN, gates, seed=11)
    at_margin = simulate_gate(rate, MARGIN, cases, MARGIN, gates, seed=12)
    twice = simulate_gate(rate, 2 * MARGIN, cases, MARGIN, gates, seed=13)
    half = simulate_gate(rate, MARGIN / 2, cases, MARGIN, gates, seed=14)
    assert null.regressed <= ALPHA + _band(ALPHA, gates)
    assert at_margin.regressed >= POWER - _band(POWER, gates)
    assert null.ratio <= 0.6 + 0.02  # within a round of simulation noise
    assert twice.ratio <= 0.5 + 0.02
    assert max(r.ratio for r in (null, half, at_margin, twice)) <= 1.05


def test_a_design_whose_reference_holds_too_little_can_end_undecided_and_says_so():
    """A with 2 runs per case cannot anchor 80% power at a 20-point drop: the boundaries do not
    meet by the cap, and a gate still open there is decided by compare's fixed test."""
    design = design_gate([(2, 2), (1, 2), (2, 2)], MARGIN)
    assert not design.met and design.end == design.cap
    rates = simulate_gate(0.8, MARGIN, 3, MARGIN, 400, a_runs=2, seed=5)
    assert rates.undecided > 0


def test_the_look_reports_a_repeated_interval_around_the_difference():
    a = [(16, 20)] * 10
    design = design_gate(a, MARGIN)
    first = design.looks[0]
    seen = look(design, a, [0] * 10, first)
    assert seen.decision == "regressed"
    assert seen.low < -seen.drop < seen.high
    assert seen.high < 0  # regressed: the repeated interval of B − A lies below 0


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([(12, 9, 11), (6, 6, 7, 8, 5, 6), (12, 12, 12, 11)]), st.integers(0, 5), st.data())
def test_more_successes_in_b_never_make_the_verdict_worse(a_successes, look_index, data):
    a = [(s, 12) for s in a_successes]
    design = design_gate(a, MARGIN)
    index = min(look_index, len(design.looks) - 1)
    rounds = design.looks[index]
    b = np.array(data.draw(st.lists(st.integers(0, rounds), min_size=len(a), max_size=len(a))), dtype=float)
    better = b.copy()
    better[int(np.argmin(better))] = min(rounds, better.min() + 1)
    a_s, a_n = np.array(a_successes, dtype=float), np.full(len(a), 12.0)

    def verdict(successes):
        drop, se = statistics(design, a_s, a_n, successes, rounds)
        return int(decisions(design, np.array(drop / se), index))

    assert verdict(better) <= verdict(b)


def test_bad_margins_and_empty_references_are_one_error():
    with pytest.raises(GateError, match="--drop"):
        design_gate([(5, 10)], 0.0)
    with pytest.raises(GateError, match="without runs"):
        design_gate([(0, 0)], 0.1)
