"""Would the test suite catch a miscalibrated rule? Operating characteristics of every
decision rule, against the rules themselves and against the figures in docs/concepts/statistics.md."""

import importlib.util
import math
import re

import numpy as np
import pytest

from ironbench.run.operating import (
    FAILURE,
    SUCCESS,
    boundary_power,
    confidence_rule_oc,
    false_boundary_rate,
    gate_rates,
    ladder_law,
    material_variant_law,
    seed_rule_oc,
    variant_verdict_rates,
    worst_false_boundary_rate,
)
from ironbench.run.stopping import baseline_decision, capability_boundary, stress_level_decision
from ironbench.stats import runs_needed
from tests.conftest import REPO

STATISTICS = REPO / "docs" / "concepts" / "statistics.md"

ALPHA = 0.05


def within(rate: float, sims: int, alpha: float = ALPHA) -> bool:
    """At most alpha, up to three standard errors of simulation."""
    return rate <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / sims)


# -- stopping rules --------------------------------------------------------------------------


def _replay_seed_rule(p: float, max_runs: int) -> tuple[float, float]:
    """P(stable), P(stable on success) by replaying baseline_decision on every sequence."""
    stable = on_success = 0.0

    def walk(outcomes, mass):
        nonlocal stable, on_success
        decision = baseline_decision(outcomes, max_runs) if outcomes else None
        if decision is not None:
            if decision.decision == "stable":
                stable += mass
                on_success += mass if outcomes[-1].success else 0.0
            return
        walk(outcomes + [SUCCESS], mass * p)
        walk(outcomes + [FAILURE], mass * (1 - p))

    walk([], 1.0)
    return stable, on_success


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_seed_rule_characteristic_is_the_rule_itself(p):
    oc = seed_rule_oc(p, 10)
    stable, on_success = _replay_seed_rule(p, 10)
    assert math.isclose(oc.stable, stable) and math.isclose(oc.stable_on_success, on_success)


def test_the_seed_rule_overclaims_as_the_audit_said():
    assert round(seed_rule_oc(0.5).stable, 2) == 0.83  # a fair coin is "stable" 83% of the time


@pytest.mark.parametrize("reproduce,confidence,cap", [(0.8, 0.95, 30), (0.9, 0.95, 60), (0.7, 0.9, 20)])
def test_confidence_rule_errs_at_most_one_minus_confidence(reproduce, confidence, cap):
    # The worst case is a true recurrence rate exactly at `reproduce`.
    assert confidence_rule_oc(reproduce, reproduce, confidence, cap).stable <= 1 - confidence + 1e-12
    assert confidence_rule_oc(reproduce - 0.1, reproduce, confidence, cap).stable < 1 - confidence
    assert confidence_rule_oc(0.99, reproduce, confidence, cap).stable > 0.9  # and it does say stable


# -- stress boundaries -----------------------------------------------------------------------

# Thresholds alpha/j shrink, and no outcome of 5 runs against 5 beats p = 1/252 = 0.00397 > 0.05/13:
# no level above 12 can ever be a boundary, so ladders of 12 levels are the worst case of any length.
LONGEST_THAT_MATTERS = 12


def test_no_level_above_12_can_be_a_boundary():
    from ironbench.run.stopping import level_alpha, worse_than_base

    best = worse_than_base([SUCCESS] * 5, [FAILURE] * 5)
    assert (
        math.isclose(best, 1 / 252)
        and best > level_alpha(LONGEST_THAT_MATTERS + 1)
        and best <= level_alpha(LONGEST_THAT_MATTERS)
    )
    for runs in (2, 3, 4, 5):
        for p in (0.3, 0.6, 0.9):
            assert false_boundary_rate(p, LONGEST_THAT_MATTERS + 1, runs) == false_boundary_rate(
                p, LONGEST_THAT_MATTERS, runs
            )


@pytest.mark.parametrize("runs", [2, 3, 4, 5])
def test_false_boundaries_stay_below_alpha_for_every_ladder(runs):
    for levels in (1, 2, 3, 5, LONGEST_THAT_MATTERS):
        for stop in (True, False):
            worst, _ = worst_false_boundary_rate(levels, runs, stop, grid=40)
            assert worst <= ALPHA, (levels, stop, worst)
    # the seed's rule, for contrast: a 50% ladder of 3 levels "has a boundary" half the time
    assert false_boundary_rate(0.5, 3, 5, rule="seed") > 0.5


def test_alpha_at_every_level_is_no_family_wise_control():
    """The fixed-sequence reading (every level at alpha) fails: the ladder tests the first level
    that fails systematically after climbing past levels that did not, so its false boundaries
    grow with the ladder. Computed exactly, not assumed."""
    every = lambda level, alpha: alpha
    assert worst_false_boundary_rate(3, 5, threshold=every)[0] <= ALPHA
    assert worst_false_boundary_rate(10, 5, threshold=every)[0] > 0.09
    assert worst_false_boundary_rate(10, 3, threshold=every)[0] > 0.09
    assert worst_false_boundary_rate(10, 5)[0] < 0.036  # alpha / j


def test_a_real_boundary_is_found_where_the_old_stopping_could_not():
    # base 90%, level k (and above) 10%, 5 runs per level
    assert boundary_power(0.9, 0.1, 1, 10, 5).found > 0.75
    assert boundary_power(0.9, 0.1, 2, 10, 5).found > 0.7  # before: 0 (3/3 vs 0/3 is p = 0.05 > 0.05/2)
    assert boundary_power(0.9, 0.1, 10, 10, 5).found > 0.3
    # with 3 runs per level no level above 1 can be shown worse than level 0: it says tentative
    three = boundary_power(0.9, 0.1, 2, 10, 3)
    assert three.found == 0 and three.tentative > 0.7


def _simulated_ladder(rng, rates, runs, stop=True):
    """One ladder run as the runner runs it: level 0 first, then each level against it."""
    ladder, base = [], None
    for level, p in enumerate(rates):
        outcomes = []
        while (decision := stress_level_decision(outcomes, runs, level, base)) is None:
            outcomes.append(SUCCESS if rng.random() < p else FAILURE)
        ladder.append((level, outcomes))
        base = base or outcomes
        if stop and decision.decision == "systematic_failure":
            break  # the runner stops climbing at the first systematic failure
    return capability_boundary(ladder)


@pytest.mark.parametrize(
    "rates,runs,stop",
    [([0.6] * 5, 5, True), ([0.5] * 4, 4, False), ([0.9, 0.9, 0.2, 0.1], 5, True), ([0.8, 0.8, 0.1, 0.1], 3, False)],
)
def test_the_exact_ladder_law_matches_a_simulated_ladder(rates, runs, stop):
    rng = np.random.default_rng(4)
    sims = 3000
    seen: dict = {}
    for _ in range(sims):
        verdict = _simulated_ladder(rng, rates, runs, stop)
        key = (verdict.decision.decision, verdict.level)
        seen[key] = seen.get(key, 0) + 1
    exact = ladder_law(rates, runs, stop)
    assert math.isclose(sum(exact.values()), 1.0)
    for key in set(exact) | set(seen):
        q = exact.get(key, 0.0)
        assert abs(seen.get(key, 0) / sims - q) <= 4 * math.sqrt(q * (1 - q) / sims) + 2e-3, key


# -- the compare gate -------------------------------------------------------------------------


@pytest.mark.parametrize("cases,runs,p", [(5, 3, 0.5), (20, 10, 0.5), (20, 10, 0.9)])
def test_the_gate_holds_alpha_between_identical_systems(cases, runs, p):
    sims = 1500
    rates = gate_rates(cases, runs, [p] * cases, [p] * cases, ALPHA, sims, seed=17)
    assert within(rates["overall"], sims) and within(rates["cases"], sims)
    if cases == 20 and p == 0.5:
        assert not within(rates["seed"], sims)  # this suite would have caught the seed's gate


def test_the_gate_has_the_power_it_claims():
    rates = gate_rates(20, 10, [0.9] * 20, [0.7] * 20, ALPHA, 400, seed=3)
    assert rates["overall"] > 0.99
    rates = gate_rates(20, 10, [0.9] * 20, [0.2] + [0.9] * 19, ALPHA, 400, seed=3)
    assert rates["cases"] > 0.8 and rates["overall"] < 0.5  # one broken case: the cases gate sees it


def test_plan_figures_on_the_statistics_page_are_computed():
    assert runs_needed(0.9, 0.2)[0] == 56
    assert runs_needed(0.9, 0.2, cases=10)[0] == 6
    assert runs_needed(0.9, 0.2, cases=10, gate="cases")[0] == 98
    page = STATISTICS.read_text()
    assert "6 runs per case on each side for the overall gate" in page
    assert "(56 for a single case, 98 per case for `--gate cases`)" in page


def test_variant_verdicts_against_unstable_baselines_hold_alpha():
    sims = 1500
    for baseline in (0.5, 0.7):
        assert within(variant_verdict_rates(baseline, baseline, sims=sims, seed=9)["ironbench"], sims)


# -- the figures in docs/concepts/statistics.md ----------------------------------------------------------------------


def _figures():
    spec = importlib.util.spec_from_file_location("stats_figures", REPO / "tests" / "perf" / "stats_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page_tables() -> list[list[list[str]]]:
    block = STATISTICS.read_text().split("<!-- stats-figures:begin -->")[1].split("<!-- stats-figures:end -->")[0]
    tables, current = [], None
    for line in block.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if current is None:
                current = []  # the header
            elif not set("".join(cells)) <= set("- "):
                current.append(cells)
        elif current is not None:
            tables.append(current)
            current = None
    return tables


def test_exact_figures_on_the_statistics_page_are_regenerated_verbatim():
    figures = _figures()
    _, _, stopping, boundaries, power, _ = _page_tables()
    assert stopping == figures.stopping_rows()
    assert boundaries == figures.boundary_rows()
    assert power == figures.power_rows()
    assert f"up to {figures.pct(figures.every_level_at_alpha())} of the time" in STATISTICS.read_text()


@pytest.mark.slow
def test_simulated_figures_on_the_statistics_page_match_a_quick_rerun():
    figures = _figures()
    null, power, _, _, _, variants = _page_tables()
    page_sims = int(re.search(r"(\d+) simulated pairs", STATISTICS.read_text()).group(1))
    sims = 1000
    for page_rows, quick_rows in (
        (null, figures.gate_null_rows(sims)),
        (power, figures.gate_power_rows(sims)),
        (variants, figures.variant_rows(sims)),
    ):
        for page_row, quick_row in zip(page_rows, quick_rows, strict=True):
            for stated, quick in zip(page_row, quick_row, strict=True):
                if stated == quick:
                    continue
                assert stated.endswith("%") and quick.endswith("%"), (page_row, quick_row)
                a, b = float(stated[:-1]) / 100, float(quick[:-1]) / 100
                p = max(min((a + b) / 2, 0.99), 0.01)
                assert abs(a - b) <= 3.5 * math.sqrt(p * (1 - p) * (1 / sims + 1 / page_sims)), (
                    page_row,
                    quick_row,
                )


def test_the_simulated_gates_are_the_decision_compare_takes():
    from ironbench.analysis.compare import Evidence, Gating, Runs, decide
    from ironbench.core.kinds import Gate
    from ironbench.run.operating import cases_gate

    rng = np.random.default_rng(8)
    disagreements = 0
    for _trial in range(150):
        cases, runs = int(rng.integers(1, 8)), int(rng.integers(2, 8))
        p_a = rng.uniform(0.2, 1.0, cases)
        p_b = np.clip(p_a - rng.choice([0.0, 0.4], cases), 0, 1)
        s_a, s_b = rng.binomial(runs, p_a), rng.binomial(runs, p_b)
        strata = [(int(a), runs, int(b), runs) for a, b in zip(s_a, s_b, strict=True)]
        sides = [
            {
                (f"c{k}", "base"): Runs(("success",) * s[i] + ("generation",) * (runs - s[i]))
                for k, s in enumerate(strata)
            }
            for i in (0, 2)
        ]
        overall = decide(Evidence(*sides), power=False, secondary=False)
        by_case = decide(Evidence(*sides), Gating(gate=Gate.cases), power=False, secondary=False)
        disagreements += overall.failed != (stratified_p(strata) <= ALPHA)
        disagreements += by_case.failed != cases_gate(strata, ALPHA)
    assert disagreements == 0


def stratified_p(strata):
    from ironbench.stats import stratified_exact_test

    return stratified_exact_test(strata).p_regression


def _runs(rng, cases: int, n: int, stages: list[str], p: list[float]) -> dict:
    from ironbench.analysis.compare import Runs

    attempts = {"success": 1, "generation": 0, "validation": 4, "timeout": 0}
    out = {}
    for k in range(cases):
        labels = [str(x) for x in rng.choice(stages, n, p=p)]
        out[(f"c{k}", "base")] = Runs(tuple(labels), tuple(attempts[x] for x in labels))
    return out


def test_fail_on_change_holds_alpha_and_sees_a_new_way_to_fail():
    from ironbench.analysis.compare import Evidence, Gating, decide
    from ironbench.core.kinds import FailOn

    change = Gating(fail_on=FailOn.change)

    rng = np.random.default_rng(21)
    stages, mix = ["success", "generation", "validation", "timeout"], [0.5, 0.25, 0.15, 0.1]
    sims = 400
    false_alarms = sum(
        decide(Evidence(_runs(rng, 4, 6, stages, mix), _runs(rng, 4, 6, stages, mix)), change, power=False).failed
        for _ in range(sims)
    )
    assert within(false_alarms / sims, sims)
    # same success rate, but B fails at generation where A failed at validation
    found = sum(
        decide(
            Evidence(
                _runs(rng, 4, 6, ["success", "validation"], [0.5, 0.5]),
                _runs(rng, 4, 6, ["success", "generation"], [0.5, 0.5]),
            ),
            change,
            power=False,
        ).failed
        for _ in range(100)
    )
    assert found / 100 > 0.9


# -- a material variant's repeats (runs_per_variant) -------------------------------------------------------------------


def _variant_verdicts(differ: float, repeats: int, sims: int, seed: int) -> dict[str, float]:
    """The rule itself on simulated variants whose runs differ from a settled baseline with
    probability `differ`."""
    from ironbench.run.stopping import Reference, variant_decision

    rng = np.random.default_rng(seed)
    reference = Reference.of([SUCCESS] * 3, True)
    found = {"not_material": 0, "stochastic": 0, "structural": 0}
    for _ in range(sims):
        runs = [FAILURE if u < differ else SUCCESS for u in rng.random(1 + repeats)]
        decision = next(d for k in range(1, 2 + repeats) if (d := variant_decision(runs[:k], reference, repeats)))
        found[decision.decision] += 1
    return {kind: count / sims for kind, count in found.items()}


@pytest.mark.parametrize("repeats", [1, 2, 3, 5])
def test_a_variant_s_repeats_decide_as_their_law_says(repeats):
    sims = 4000
    for differ in (0.1, 0.3, 0.9):
        law = material_variant_law(differ, repeats)
        found = _variant_verdicts(differ, repeats, sims, seed=repeats)
        for kind, rate in law.items():
            assert abs(found[kind] - rate) <= 4 * math.sqrt(max(rate * (1 - rate), 1e-4) / sims), (kind, differ)


def test_fewer_repeats_call_noise_structural_more_often_and_find_a_change_more_often():
    # noise: a baseline-like variant whose runs differ 30% of the time; a change: 90% of the time
    noise = [material_variant_law(0.3, k)["structural"] for k in (1, 2, 3, 5)]
    change = [material_variant_law(0.9, k)["structural"] for k in (1, 2, 3, 5)]
    assert noise == sorted(noise, reverse=True) and change == sorted(change, reverse=True)
    assert round(noise[0], 4) == 0.09 and round(noise[2], 4) == 0.0081  # runs_per_variant 1 vs the spec's 3
    assert round(change[0], 4) == 0.81 and round(change[2], 4) == 0.6561


@pytest.mark.parametrize("repeats", [1, 2, 5])
def test_variant_verdicts_against_unstable_baselines_hold_alpha_at_any_cap(repeats):
    sims = 1500
    for baseline in (0.5, 0.7):
        null = variant_verdict_rates(baseline, baseline, sims=sims, seed=9, repeats=repeats)["ironbench"]
        assert within(null, sims)
    # and the test finds a collapse more often the more runs it has
    few = variant_verdict_rates(0.7, 0.0, sims=sims, seed=4, repeats=1)["ironbench"]
    many = variant_verdict_rates(0.7, 0.0, sims=sims, seed=4, repeats=5)["ironbench"]
    assert many > few


# -- equivalence with `correct` ------------------------------------------------------------------------------------


@pytest.mark.parametrize("correct", [1.0, 0.8, 0.5])
def test_correct_in_equivalence_calls_stable_as_the_seed_rule_s_law_on_correctness(correct):
    """Every run verified; its brick correct with probability `correct`. The spec's four fields
    call every such baseline stable at 3 runs, however often its bricks are wrong; with
    `correct` compared, the rule is the seed's on correctness (exact law: `seed_rule_oc`)."""
    from ironbench.core.outcome import Outcome
    from ironbench.run.stopping import baseline_decision

    rng = np.random.default_rng(41)
    sims, stable, spec_stable = 3000, 0, 0
    for _ in range(sims):
        flips = rng.random(10) < correct
        runs = [Outcome(True, None, 1, 0, correctness=(bool(f),)) for f in flips]
        decided = next(d for k in range(1, 11) if (d := baseline_decision(runs[:k], 10)))
        stable += decided.decision == "stable"
        plain = next(d for k in range(1, 11) if (d := baseline_decision([Outcome(True, None, 1, 0)] * k, 10)))
        spec_stable += (plain.decision, plain.n) == ("stable", 3)
    law = seed_rule_oc(correct).stable
    assert abs(stable / sims - law) <= 4 * math.sqrt(max(law * (1 - law), 1e-4) / sims)
    assert spec_stable == sims  # the spec's equivalence sees nothing
