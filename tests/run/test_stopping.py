from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.outcome import Outcome
from ironbench.run.stopping import baseline_decision

OUTCOMES = [
    Outcome(True, None, 1, 0),
    Outcome(True, None, 2, 1),
    Outcome(False, "generation", 0, 0),
    Outcome(False, "validation", 4, 3),
]
outcome_lists = st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=10)


def test_three_equivalent_runs_stop_with_evidence():
    runs = [OUTCOMES[2], OUTCOMES[0], OUTCOMES[0], OUTCOMES[0]]
    decision = baseline_decision(runs, 10)
    assert decision.decision == "stable"
    assert (decision.n, decision.successes) == (4, 3)
    assert decision.chance_agreement == 0.75**3 + 0.25**3
    assert decision.wilson_low < 0.75 < decision.wilson_high


def test_same_success_but_different_repairs_is_not_equivalent():
    runs = [OUTCOMES[0], OUTCOMES[1], OUTCOMES[0]]
    assert baseline_decision(runs, 10) is None


def test_exhausted_at_max_runs():
    runs = [OUTCOMES[i % 2] for i in range(10)]
    decision = baseline_decision(runs, 10)
    assert decision.decision == "exhausted" and decision.n == 10


@given(outcome_lists, st.integers(1, 10))
def test_decision_is_exactly_the_spec_rule(runs, max_runs):
    runs = runs[:max_runs]
    decision = baseline_decision(runs, max_runs)
    last3_agree = len(runs) >= 3 and len({o.signature() for o in runs[-3:]}) == 1
    if last3_agree:
        assert decision.decision == "stable"
    elif len(runs) >= max_runs:
        assert decision.decision == "exhausted"
    else:
        assert decision is None


@given(outcome_lists)
def test_replaying_outcomes_one_by_one_stops_at_the_first_agreeing_triple(runs):
    stop_at = None
    for k in range(1, len(runs) + 1):
        if baseline_decision(runs[:k], 10) is not None:
            stop_at = k
            break
    expected = next((k for k in range(3, len(runs) + 1) if len({o.signature() for o in runs[k - 3 : k]}) == 1), None)
    if expected is None and len(runs) == 10:
        expected = 10
    assert stop_at == expected


from ironbench.run.stopping import (
    stress_level_decision,
    variant_decision,
)

REFERENCE = OUTCOMES[0].signature()


def test_variant_equivalent_to_baseline_runs_once():
    assert variant_decision([OUTCOMES[0]], REFERENCE).decision == "not_material"


def test_material_variant_is_repeated_until_it_agrees_or_three_repeats_differ():
    assert variant_decision([OUTCOMES[2]], REFERENCE) is None
    assert variant_decision([OUTCOMES[2], OUTCOMES[0]], REFERENCE).decision == "stochastic"
    assert variant_decision([OUTCOMES[2], OUTCOMES[3], OUTCOMES[2]], REFERENCE) is None
    structural = variant_decision([OUTCOMES[2], OUTCOMES[3], OUTCOMES[2], OUTCOMES[1]], REFERENCE)
    assert structural.decision == "structural" and structural.n == 4


@given(st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=4))
def test_variant_never_exceeds_one_run_plus_three_repeats(runs):
    first_stop = next((k for k in range(1, len(runs) + 1) if variant_decision(runs[:k], REFERENCE)), None)
    if len(runs) == 4:
        assert first_stop is not None
    if first_stop is not None:
        decision = variant_decision(runs[:first_stop], REFERENCE).decision
        material_first = runs[0].signature() != REFERENCE
        assert (decision == "not_material") == (not material_first)


@given(st.lists(st.booleans(), min_size=1, max_size=5), st.integers(2, 5))
def test_stress_level_rule(successes, max_runs):
    runs = [OUTCOMES[0] if s else OUTCOMES[2] for s in successes][:max_runs]
    stop = next((k for k in range(1, len(runs) + 1) if stress_level_decision(runs[:k], max_runs)), None)
    if stop is None:
        assert len(runs) < max_runs
        return
    assert 2 <= stop <= max_runs
    decision = stress_level_decision(runs[:stop], max_runs)
    failures = sum(1 for o in runs[:stop] if not o.success)
    if stop < max_runs:  # an early stop happens only after 3 runs, on a clear signal
        assert stop >= 3
        assert failures / stop >= 0.8 or failures == 0
    assert (decision.decision == "systematic_failure") == (failures / stop >= 0.8)


# -- what a stable decision supports (item 5) -----------------------------------------------

import math

from ironbench.run.stopping import (
    Reference,
    capability_boundary,
    confidence_decision,
    confidence_thresholds,
    direction,
)
from ironbench.stats import clopper_pearson_lower

S, F, V = OUTCOMES[0], OUTCOMES[2], OUTCOMES[3]


def test_stable_carries_the_exact_lower_bound_on_reproducing_its_outcome():
    three = baseline_decision([S] * 3, 10)
    assert three.decision == "stable" and math.isclose(three.reproduce_lower_95, 0.05 ** (1 / 3))
    assert round(three.reproduce_lower_95, 2) == 0.37 and "recurs with probability >= 0.37" in three.reason
    ten = baseline_decision([S] * 10, 10)  # the runner would stop at 3; a cap-10 replay of 10 agreeing runs
    assert round(ten.reproduce_lower_95, 2) == 0.74
    # 3 agreeing failures after 2 successes: the bound counts the runs that gave *that* outcome (3/5)
    mixed = baseline_decision([S, S, F, F, F], 10)
    assert mixed.decision == "stable" and "3/5 runs gave this outcome" in mixed.reason
    assert round(mixed.reproduce_lower_95, 2) == 0.19  # as docs/concepts/modes.md says
    assert math.isclose(mixed.success_upper_95, 1 - clopper_pearson_lower(3, 5))


@given(outcome_lists)
def test_every_decision_carries_one_sided_bounds_around_the_rate(runs):
    decision = baseline_decision(runs, len(runs))
    assert 0.0 <= decision.success_lower_95 <= decision.success_rate <= decision.success_upper_95 <= 1.0
    assert (decision.reproduce_lower_95 is not None) == (decision.decision == "stable")


def test_confidence_rule_stops_when_recurrence_is_shown_and_gives_up_early():
    limits = confidence_thresholds(0.8, 0.95, 30)
    first = next(n for n, k in enumerate(limits, start=1) if k <= n)
    assert all(confidence_decision([S] * n, 0.8, 0.95, 30) is None for n in range(1, first))
    stable = confidence_decision([S] * first, 0.8, 0.95, 30)
    assert stable.decision == "stable" and stable.reproduce_lower_95 > 0.8
    # naive per-look bounds would stop at 14/14 (0.05^(1/14) = 0.807); looking after every
    # run costs a few runs more
    assert first == 16  # as docs/concepts/modes.md says
    hopeless = [S, F, S, F, S, F]
    decision = confidence_decision(hopeless, 0.8, 0.95, 30)
    assert decision.decision == "exhausted" and decision.n == 6 and "within 30 runs" in decision.reason


def test_confidence_rule_through_a_suite(paths, script):
    from tests.conftest import make_suite

    script({"a": ["success"], "b": ["success", "generation"] * 10})
    suite = make_suite({"a": 10, "b": 10}, stop={"rule": "confidence", "reproduce": 0.7, "max_runs": 20})
    # make_suite sets runs: the suite-level rule applies to cases without their own
    run_id = _run_without_runs(suite, paths)
    from ironbench.core.events import DecisionTaken
    from ironbench.store import open_store

    with open_store(paths.store_path) as store:
        found = {e.event.case_id: e.event for e in store.read(run_id) if isinstance(e.event, DecisionTaken)}
    first = next(n for n, k in enumerate(confidence_thresholds(0.7, 0.95, 20), start=1) if k <= n)
    assert (found["a"].decision, found["a"].n) == ("stable", first)
    assert found["b"].decision == "exhausted" and found["b"].n < 20


def _run_without_runs(suite, paths):
    from ironbench.run.runner import start_run
    from ironbench.suite.models import Suite

    data = suite.to_dict()
    for case in data["cases"]:
        case.pop("runs")
    return start_run(Suite.from_dict(data), paths)


# -- stress boundaries (item 6) -------------------------------------------------------------


def test_boundary_needs_level_0_and_a_significant_drop():
    found = capability_boundary([(0, [S] * 5), (1, [S, F, S]), (2, [F] * 5)])
    assert (found.decision.decision, found.level) == ("boundary", 2)
    assert math.isclose(found.decision.p_value, 1 / 252) and found.decision.p_value <= 0.05 / 2
    assert round(found.decision.success_upper_95, 2) == 0.45


def test_a_systematic_failure_not_shown_worse_than_level_0_is_tentative():
    found = capability_boundary([(0, [S] * 3), (1, [S] * 3), (2, [F] * 3)])
    assert (found.decision.decision, found.level) == ("tentative", 2)
    assert math.isclose(found.decision.p_value, 0.05) and "p = 0.05 > 0.05/2" in found.decision.reason
    # without level 0 nothing can be shown
    alone = capability_boundary([(1, [S] * 3), (2, [F] * 3)])
    assert (alone.decision.decision, alone.level) == ("tentative", 2) and "no level 0" in alone.decision.reason


def test_a_ladder_failing_at_its_base_names_no_boundary():
    found = capability_boundary([(0, [F] * 3), (1, [F] * 3)])
    assert (found.decision.decision, found.level) == ("fails_at_base", 0)


def test_no_systematic_failure_is_no_boundary():
    found = capability_boundary([(0, [S] * 3), (1, [S, F, S, F, S]), (2, [S] * 3)])
    assert (found.decision.decision, found.level) == ("no_boundary", None)
    assert "no systematic failure in 2 levels" in found.decision.reason


def test_a_later_level_can_be_the_boundary_when_an_earlier_systematic_one_is_not_significant():
    # level 0 at 4/5: level 1 at 1/5 gives p = 0.103 > 0.05/1; level 2 at 0/5 gives
    # p = 5/210 = 0.0238 <= 0.05/2, so level 2 is the boundary
    found = capability_boundary([(0, [S, S, S, S, F]), (1, [S, F, F, F, F]), (2, [F] * 5)])
    assert (found.decision.decision, found.level) == ("boundary", 2)
    assert math.isclose(found.decision.p_value, 5 / 210)


def _first_stop(runs, max_runs, level=None, base=None):
    return next((k for k in range(1, len(runs) + 1) if stress_level_decision(runs[:k], max_runs, level, base)), None)


@given(st.lists(st.booleans(), min_size=5, max_size=5), st.integers(2, 5))
def test_level_0_runs_all_its_runs(successes, max_runs):
    runs = [OUTCOMES[0] if s else OUTCOMES[2] for s in successes][:max_runs]
    assert _first_stop(runs, max_runs, level=0) == max_runs


@given(
    st.lists(st.booleans(), min_size=5, max_size=5),
    st.lists(st.booleans(), min_size=5, max_size=5),
    st.integers(2, 5),
    st.integers(1, 14),
)
def test_a_level_stops_early_only_when_more_runs_cannot_change_the_verdict(base_bits, bits, max_runs, level):
    """Against level 0, a level stops before its cap only at 100% success (it can no longer
    fail systematically) or at a systematic failure already significantly worse than level 0."""
    from ironbench.run.stopping import level_alpha, worse_than_base

    base = [OUTCOMES[0] if s else OUTCOMES[2] for s in base_bits][:max_runs]
    runs = [OUTCOMES[0] if s else OUTCOMES[2] for s in bits][:max_runs]
    stop = _first_stop(runs, max_runs, level, base)
    assert stop is not None and 2 <= stop <= max_runs
    decision = stress_level_decision(runs[:stop], max_runs, level, base)
    failures = stop - decision.successes
    assert (decision.decision == "systematic_failure") == (failures / stop >= 0.8)
    base_failing = sum(not o.success for o in base) / len(base) >= 0.8
    if decision.decision == "systematic_failure" and not base_failing:
        assert math.isclose(decision.p_value, worse_than_base(base, runs[:stop]))
    if stop < max_runs:
        assert stop >= 3
        shown_worse = decision.decision == "systematic_failure" and (
            base_failing or decision.p_value <= level_alpha(level) * (1 + 1e-9)
        )
        assert failures == 0 or shown_worse


def test_a_systematic_level_not_yet_shown_worse_runs_on():
    base = [S] * 5
    # level 3: 0/3 against 5/5 is p = 1/56 = 0.018 > 0.05/3: run on; 0/4 is p = 1/126: stop
    assert stress_level_decision([F] * 3, 5, 3, base) is None
    four = stress_level_decision([F] * 4, 5, 3, base)
    assert (four.decision, four.n) == ("systematic_failure", 4) and math.isclose(four.p_value, 1 / 126)
    # level 2: 0/3 is already worse at 0.05/2, so level 2 stops at 3 (the old stopping made this a
    # 3/3-vs-0/3 table, p = 0.05, and no level above 1 could ever be a boundary)
    two = stress_level_decision([F] * 3, 5, 2, base)
    assert (two.decision, two.n) == ("systematic_failure", 3) and "<= 0.05/2" in two.reason
    # level 13: nothing 5 runs can show beats 0.05/13; it runs to its cap and says so
    assert stress_level_decision([F] * 4, 5, 13, base) is None
    cap = stress_level_decision([F] * 5, 5, 13, base)
    assert cap.n == 5 and "not shown worse than level 0" in cap.reason
    verdict = capability_boundary([(0, base), (13, [F] * 5)])
    assert verdict.decision.decision == "tentative" and "with 5 runs no outcome could be" in verdict.decision.reason
    # a level 0 that already fails: the verdict is fails_at_base whatever the level does
    assert stress_level_decision([F] * 3, 5, 1, [F] * 5).decision == "systematic_failure"


# -- adversarial directions and unstable references (item 7) ---------------------------------


def test_differences_say_which_way_they_went():
    lost = variant_decision([F, F, V, F], REFERENCE)
    assert (lost.decision, lost.direction) == ("structural", "success lost")
    gained = variant_decision([S, S, S, S], F.signature())
    assert (gained.decision, gained.direction) == ("structural", "success gained")
    more = variant_decision([OUTCOMES[1], S], REFERENCE)
    assert (more.decision, more.direction) == ("stochastic", "more attempts")
    assert direction([F.signature()], [V.signature()]) == "fewer attempts"


def test_against_an_unstable_baseline_noise_is_called_noise():
    baseline = [S] * 7 + [F] * 3  # exhausted, 7/10
    reference = Reference.of(baseline, stable=False)
    assert reference.unstable and reference.signature == S.signature()
    assert variant_decision([S], reference).decision == "not_material"
    # a failing first run is not judged on one run: all 4 run, then the exact test
    assert all(variant_decision([F] * k, reference) is None for k in (1, 2, 3))
    noise = variant_decision([F, S, F, S], reference)
    assert (noise.decision, noise.direction) == ("within_noise", "success lost") and noise.p_value > 0.05
    # 0/4 against 7/10: P = 2 x C(7,4)/C(14,4) = 0.07, still explained by the baseline's noise
    also = variant_decision([F] * 4, reference)
    assert also.decision == "within_noise" and math.isclose(also.p_value, 70 / 1001)
    # a failure the baseline never showed is beyond its noise
    new = variant_decision([V] * 4, reference)
    assert (new.decision, new.direction) == ("structural", "success lost") and new.p_value <= 0.05


def test_a_stable_reference_keeps_the_seed_rule():
    reference = Reference.of([F, S, S, S], stable=True)
    assert not reference.unstable
    assert variant_decision([F, F, F, F], reference).decision == "structural"
