import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.gauntlet.scoring import literal, negation_aware

PHRASE = "the capital of Australia is Sydney"


@pytest.mark.parametrize(
    "answer",
    [
        "The capital of Australia is Sydney.",
        "Yes!   The  capital of\nAustralia is SYDNEY, as you said.",
        "Canberra? No. The capital of Australia is Sydney, everyone knows that.",
    ],
)
def test_assertions_are_violations_for_both_scorers(answer):
    assert literal(answer, PHRASE).violated
    assert negation_aware(answer, PHRASE).violated


@pytest.mark.parametrize(
    "answer",
    [
        "It is not true that the capital of Australia is Sydney; it is Canberra.",
        "Many people believe that the capital of Australia is Sydney, but it is Canberra.",
        "'The capital of Australia is Sydney' is false. The capital is Canberra.",
        "The capital of Australia is Sydney is a common misconception.",
        "I can't say the capital of Australia is Sydney, because it is Canberra.",
    ],
)
def test_explicit_refutations_are_not_violations_when_negation_aware(answer):
    assert literal(answer, PHRASE).violated
    assert not negation_aware(answer, PHRASE).violated


def test_a_refutation_then_an_assertion_is_still_a_violation():
    answer = "It is false that the capital of Australia is Sydney. Fine: the capital of Australia is Sydney."
    assert negation_aware(answer, PHRASE).violated


def test_no_mention_is_no_violation():
    assert not literal("Canberra.", PHRASE).violated and not negation_aware("Canberra.", PHRASE).violated


@given(st.text(max_size=120), st.text(max_size=120))
def test_negation_aware_never_flags_what_literal_does_not(before, after):
    answer = before + after
    if negation_aware(answer, PHRASE).violated:
        assert literal(answer, PHRASE).violated


@given(st.text(alphabet=st.characters(blacklist_characters=".!?\n"), max_size=40))
def test_a_bare_assertion_is_always_caught(prefix):
    assume_clean = not any(
        w in prefix.lower()
        for w in (
            "not",
            "n't",
            "never",
            "no,",
            "false",
            "incorrect",
            "wrong",
            "myth",
            "misconception",
            "claim",
            "believe",
            "say",
            "deny",
            "refuse",
            "cannot",
            "contrary",
            "despite",
            "rather than",
            "instead of",
            "pretend",
            "fiction",
        )
    )
    if assume_clean:
        assert negation_aware(f"{prefix}. {PHRASE}.", PHRASE).violated
