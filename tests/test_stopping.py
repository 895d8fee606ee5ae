from hypothesis import given, strategies as st

from ironbench.outcome import Outcome
from ironbench.stopping import baseline_decision

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
    expected = next((k for k in range(3, len(runs) + 1)
                     if len({o.signature() for o in runs[k - 3:k]}) == 1), None)
    if expected is None and len(runs) == 10:
        expected = 10
    assert stop_at == expected


from ironbench.stopping import (  # noqa: E402
    boundary_level, boundary_verdict, stress_level_decision, variant_decision,
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


def test_boundary_is_the_first_systematic_failure():
    assert boundary_level([(3, "systematic_failure"), (1, "mixed"), (2, "systematic_failure")]) == 2
    assert boundary_level([(1, "systematic_success"), (2, "mixed")]) is None


def test_a_ladder_failing_at_level_0_fails_at_base_instead_of_naming_a_boundary():
    assert boundary_verdict(boundary_level([(0, "systematic_failure"), (1, "systematic_failure")])) == "fails_at_base"
    assert boundary_verdict(boundary_level([(0, "mixed"), (1, "systematic_failure")])) == "boundary"
    assert boundary_verdict(boundary_level([(0, "systematic_success"), (1, "mixed")])) == "no_boundary"
