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
