"""One verdict, decided once: the precedence over every layer's facts, as a table, and the rules
that make it one function (any order of the same facts, every verdict placed)."""

from typing import get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.kinds import CheckVerdict
from ironbench.targets.boundary.protocol import Fact
from ironbench.targets.boundary.verdict import PRECEDENCE, decide

# (what each layer found, the verdict): a row per way layers meet
TABLE = [
    ([("correct", "check")], "correct"),
    ([("wrong", "check")], "wrong"),
    ([("tampered", "host"), ("correct", "check")], "tampered"),  # evidence whatever the check said
    ([("tampered", "judge"), ("wrong", "check")], "tampered"),  # an always-equal object the check then refused
    ([("tampered", "zygote"), ("timeout", "zygote")], "tampered"),  # the host server killed, then the deadline
    ([("tampered", "harness"), ("harness_fault", "harness")], "tampered"),  # planted beside a broken check
    ([("tampered", "harness")], "tampered"),  # a brick path into the answer key
    ([("no_brick", "harness"), ("harness_fault", "harness")], "no_brick"),  # no brick, and a broken check
    ([("no_brick", "judge")], "no_brick"),  # a brick named after a module the judge has
    ([("harness_fault", "harness"), ("correct", "check")], "harness_fault"),  # the trusted process lost
    ([("harness_fault", "judge"), ("correct", "check")], "harness_fault"),  # the check passed a callback, swallowed
    ([("harness_fault", "check")], "harness_fault"),  # a check that collects no tests
    ([("timeout", "judge"), ("wrong", "check")], "timeout"),  # the deadline, the check's failure after it
    ([("timeout", "harness")], "timeout"),  # the zygote did not answer in time
    ([("wrong", "host"), ("import_error", "check")], "import_error"),  # a crash while importing
    ([("wrong", "host"), ("correct", "check")], "wrong"),  # an answer that cannot cross, swallowed by the check
    ([("wrong", "host"), ("wrong", "check")], "wrong"),  # a crash: the check failed on it
    ([("no_entry_point", "check")], "no_entry_point"),
    ([("wrong", "host"), ("no_entry_point", "check")], "no_entry_point"),
    ([], "harness_fault"),  # no layer said anything: never a verdict about the brick
]


@pytest.mark.parametrize(("found", "verdict"), TABLE)
def test_the_precedence_table(found, verdict):
    facts = [Fact(v, f"{layer} found {v}", layer) for v, layer in found]
    assert decide(facts).verdict == verdict
    assert decide(reversed(facts)).verdict == verdict


def test_every_verdict_has_one_place():
    assert sorted(PRECEDENCE) == sorted(get_args(CheckVerdict))
    assert PRECEDENCE[0] == "tampered" and PRECEDENCE[-1] == "correct"


verdicts = st.sampled_from(PRECEDENCE)
layers = st.sampled_from(("check", "judge", "host", "zygote", "harness"))
facts = st.lists(st.builds(Fact, verdicts, st.text(max_size=8), layers), max_size=8)


@given(facts, st.randoms())
def test_the_verdict_is_the_first_in_precedence_whatever_the_order(found, random):
    decided = decide(found)
    expected = min((f.verdict for f in found), key=PRECEDENCE.index, default="harness_fault")
    assert decided.verdict == expected
    shuffled = list(found)
    random.shuffle(shuffled)
    assert decide(shuffled).verdict == decided.verdict


def test_the_detail_says_the_evidence_first_and_what_the_check_said():
    crash = decide([Fact("wrong", "the host was killed by SIGSEGV", "host"), Fact("wrong", "BrickGone", "check")])
    assert crash.detail == "the host was killed by SIGSEGV"
    planted = decide([Fact("tampered", "a conftest.py beside it", "harness"), Fact("correct", "", "check")])
    assert planted.detail == "a conftest.py beside it (the check said correct)"
    noted = [Fact("wrong", "AssertionError", "check")]
    assert decide(noted, ["its own __eq__ was not consulted"]).detail == (
        "AssertionError (its own __eq__ was not consulted)"
    )
    assert decide([Fact("correct", "", "check")], ["its own __eq__ was not consulted"]).detail == ""
    unknown = decide([Fact("splendid", "a verdict nobody declared", "check")])
    assert unknown.verdict == "harness_fault"
