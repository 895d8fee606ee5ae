"""pass@k and pass^k: the published formulas by hand and by enumeration, and each estimator's
bias (exact, by enumerating every path a stopping rule can take) and interval coverage."""

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.outcome import Outcome
from ironbench.run.stopping import baseline_decision
from ironbench.stats import binomial_pmf, confidence_thresholds, wilson_interval
from ironbench.stats.passk import (
    StoppingRule,
    anytime_interval,
    count_orders,
    estimate_pass_k,
    pass_at_k,
    pass_hat_k,
    rao_blackwell,
)
from ironbench.suite.models import ConfidenceStop, FixedStop

SEED = StoppingRule("last_3_agree", 10)
CONFIDENCE = StoppingRule("confidence", 12, confidence_thresholds(0.6, 0.8, 12))
P_GRID = [0.1, 0.3, 0.5, 0.7, 0.9]


def test_hand_computed_values():
    # 5 runs, 2 succeeded: pass@2 = 1 - C(3,2)/C(5,2) = 1 - 3/10; pass^2 = C(2,2)/C(5,2) = 1/10
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    assert pass_at_k(5, 2, 1) == pass_hat_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 4) == 1.0 and pass_hat_k(5, 2, 3) == 0.0
    # τ-bench's point: (c/n)^k is not the estimate; 8 of 10, k = 3: C(8,3)/C(10,3) = 56/120
    assert pass_hat_k(10, 8, 3) == pytest.approx(56 / 120) and 0.8**3 != pytest.approx(56 / 120)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_formulas_are_the_chance_over_every_k_subset_of_the_runs(case):
    n, c, k = case
    runs = [True] * c + [False] * (n - c)
    subsets = list(combinations(runs, k))
    assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
    assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["S", "S1", "V", "G"]), min_size=1, max_size=8))
def test_under_a_fixed_rule_counting_paths_gives_the_published_formulas(runs):
    rule = StoppingRule("fixed", len(runs))
    ok = [r.startswith("S") for r in runs]
    at, hat = rao_blackwell(runs, ok, rule, len(runs))
    c = sum(ok)
    for k in range(1, len(runs) + 1):
        assert at[k - 1] == pytest.approx(pass_at_k(len(runs), c, k))
        assert hat[k - 1] == pytest.approx(pass_hat_k(len(runs), c, k))


def _outcome(symbol: str) -> Outcome:
    return Outcome(symbol.startswith("S"), None if symbol.startswith("S") else symbol, 1, 0)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["S", "V", "G"]), min_size=1, max_size=12), st.sampled_from(["seed", "confidence"]))
def test_the_estimators_rule_stops_where_the_runs_rule_does(runs, which):
    """StoppingRule (what the estimate assumes) against run/stopping.py (what decides)."""
    outcomes = [_outcome(s) for s in runs]
    if which == "seed":
        rule, decide = SEED, lambda prefix: baseline_decision(prefix, 10)
    else:
        spec = ConfidenceStop(rule="confidence", reproduce=0.6, confidence=0.8, max_runs=12)
        rule, decide = CONFIDENCE, lambda prefix: baseline_decision(prefix, 12, spec)
    for n in range(1, min(len(runs), rule.max_runs) + 1):
        prefix = runs[:n]
        streak = next((i for i in range(1, n + 1) if len(set(prefix[-i:])) > 1), n + 1) - 1
        top = max(prefix.count(s) for s in set(prefix))
        assert rule.stops(n, top, streak) == (decide(outcomes[:n]) is not None), (prefix, n)
    assert baseline_decision([_outcome("S")] * 3, 10, FixedStop(rule="fixed", runs=4)) is None


def _stopped_paths(rule: StoppingRule, symbols: tuple[str, ...]):
    """Every sequence of outcomes the rule stops after, over the given symbols."""
    out = []

    def grow(prefix: tuple[str, ...]) -> None:
        n = len(prefix)
        if n:
            streak = next((i for i in range(1, n + 1) if len(set(prefix[-i:])) > 1), n + 1) - 1
            if rule.stops(n, max(prefix.count(s) for s in set(prefix)), streak):
                out.append(prefix)
                return
        for s in symbols:
            grow((*prefix, s))

    grow(())
    return out


def _exact_bias(rule: StoppingRule, probabilities: dict[str, float], kmax: int) -> tuple[list[float], list[float]]:
    """E[estimate] − truth for pass^k (k = 1..kmax), for ironbench's estimate and for the published
    formula applied as if n were fixed. Exact: every path the rule stops after has the chance of
    its outcome counts, so the sum runs over counts, each weighted by how many orders of those
    counts stop exactly there (`count_orders`, itself checked against path enumeration below)."""
    symbols = list(probabilities)
    p = sum(q for s, q in probabilities.items() if s.startswith("S"))
    ours, naive, mass = [0.0] * kmax, [0.0] * kmax, 0.0
    for n in range(1, rule.max_runs + 1):
        for counts in _compositions(n, len(symbols)):
            runs = [s for s, c in zip(symbols, counts, strict=True) for _ in range(c)]
            ok = [s.startswith("S") for s in runs]
            orders, _, _ = count_orders(runs, ok, rule, kmax)
            if not orders:
                continue
            weight = orders * math.prod(probabilities[s] ** c for s, c in zip(symbols, counts, strict=True))
            mass += weight
            found = estimate_pass_k(runs, ok, rule)
            for k in range(1, kmax + 1):
                ours[k - 1] += weight * found.pass_hat[k - 1]
                naive[k - 1] += weight * pass_hat_k(n, sum(ok), k)
    assert mass == pytest.approx(1.0, abs=1e-12)  # every path stops somewhere, once
    return [e - p**k for k, e in enumerate(ours, 1)], [e - p**k for k, e in enumerate(naive, 1)]


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def test_counting_orders_agrees_with_enumerating_paths():
    by_counts: dict[tuple, int] = {}
    for path in _stopped_paths(StoppingRule("last_3_agree", 6), ("S", "V", "G")):
        key = (path.count("S"), path.count("V"), path.count("G"))
        by_counts[key] = by_counts.get(key, 0) + 1
    for (s, v, g), expected in by_counts.items():
        runs = ["S"] * s + ["V"] * v + ["G"] * g
        orders, _, _ = count_orders(runs, [r == "S" for r in runs], StoppingRule("last_3_agree", 6), 1)
        assert orders == expected
    assert len(by_counts) > 20


@pytest.mark.parametrize("p", P_GRID)
def test_unbiased_under_the_seeds_rule_where_the_formula_is_not(p):
    ours, naive = _exact_bias(SEED, {"S": p, "F": 1 - p}, SEED.smallest_n)
    assert SEED.smallest_n == 3
    assert max(abs(b) for b in ours) < 1e-12
    if p in (0.5, 0.7):  # e.g. pass^2 at p = 0.7: +11 points by C(c,2)/C(n,2), exactly 0 by ironbench's
        assert max(naive) > 0.05


def test_unbiased_under_the_seeds_rule_with_several_failure_stages():
    """The rule compares signatures, not success: two failure stages change which paths stop."""
    ours, naive = _exact_bias(SEED, {"S": 0.6, "V": 0.25, "G": 0.15}, 3)
    assert max(abs(b) for b in ours) < 1e-12
    assert max(abs(b) for b in naive) > 0.01


@pytest.mark.parametrize("p", [0.3, 0.6, 0.9])
def test_unbiased_under_the_confidence_rule(p):
    ours, _ = _exact_bias(CONFIDENCE, {"S": p, "F": 1 - p}, CONFIDENCE.smallest_n)
    assert CONFIDENCE.smallest_n >= 2
    assert max(abs(b) for b in ours) < 1e-12


@pytest.mark.parametrize("n", [5, 10])
def test_fixed_runs_are_unbiased_for_every_k(n):
    for p in P_GRID:
        pmf = binomial_pmf(n, p)
        for k in range(1, n + 1):
            assert sum(pmf[c] * pass_hat_k(n, c, k) for c in range(n + 1)) == pytest.approx(p**k, abs=1e-12)
            assert sum(pmf[c] * pass_at_k(n, c, k) for c in range(n + 1)) == pytest.approx(1 - (1 - p) ** k, abs=1e-12)


def _fixed_coverage(n: int, k: int, p: float) -> float:
    """Exact: the chance that the interval of pass^k from n fixed runs holds p^k."""
    pmf = binomial_pmf(n, p)
    covered = 0.0
    for c in range(n + 1):
        found = estimate_pass_k(["S"] * c + ["F"] * (n - c), [True] * c + [False] * (n - c), StoppingRule("fixed", n))
        low, high = found.pass_hat_95[k - 1]
        covered += pmf[c] * (low <= p**k <= high)
    return covered


@pytest.mark.parametrize("n", [10, 20])
def test_fixed_interval_coverage_is_within_two_points_of_95_on_average(n):
    grid = np.arange(0.05, 0.951, 0.05)
    for k in (1, 2, 3):
        coverage = np.mean([_fixed_coverage(n, k, p) for p in grid])
        assert abs(coverage - 0.95) <= 0.02, (n, k, coverage)


@pytest.mark.parametrize("p", P_GRID)
def test_the_interval_under_a_stopping_rule_covers_at_least_95_percent(p):
    """The mixture confidence sequence holds at any stopping time: conservative, never short."""
    covered = 0.0
    for path in _stopped_paths(SEED, ("S", "F")):
        weight = p ** path.count("S") * (1 - p) ** path.count("F")
        low, high = anytime_interval(path.count("S"), len(path))
        covered += weight * (low <= p <= high)
    assert covered >= 0.95


def test_anytime_interval_is_wider_than_wilson_and_holds_the_rate():
    for s, n in ((0, 3), (3, 3), (4, 5), (11, 12)):
        low, high = anytime_interval(s, n)
        w_low, w_high = wilson_interval(s, n)
        assert low <= s / n <= high and low <= w_low + 1e-9 and high >= w_high - 1e-9


def test_the_estimate_says_which_k_it_allows():
    found = estimate_pass_k(["S", "G", "S", "S", "S"], [True, False, True, True, True], SEED)
    assert len(found.pass_hat) == 3 and "can stop after 3 runs" in found.why_k
    # S G S S S is the only order of these outcomes the rule stops after at run 5 (G S S S S
    # would have stopped at run 4): the first run succeeded in every such order
    assert found.pass_hat[0] == 1.0 and found.pass_hat[1] == 0.0
    fixed = estimate_pass_k(["S", "G", "S"], [True, False, True], StoppingRule("fixed", 3))
    assert fixed.pass_hat == pytest.approx((2 / 3, 1 / 3, 0.0)) and "Wilson" in fixed.interval
    # outcomes the rule would not have stopped after are not its runs
    assert estimate_pass_k(["S", "S", "S", "S"], [True] * 4, SEED) is None
