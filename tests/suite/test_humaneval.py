"""HumanEval as a shipped suite: 164 cases, instructions that keep the contract, hidden checks."""

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.contract import forbidden_word
from ironbench.core.errors import SuiteError
from ironbench.suite.humaneval import _REWORDED, check_source, current_check, humaneval_suite, instruction, problems
from ironbench.suite.models import BaselineCase, PythonCheck, StressCase, parse_suite
from ironbench.suite.shipped import open_suite, sample_cases


def test_every_problem_is_a_case_checked_by_its_own_tests():
    suite = humaneval_suite()
    assert len(suite.cases) == len(problems()) == 164
    for case, problem in zip(suite.cases, problems(), strict=True):
        assert case.id == f"humaneval_{problem['task_id'].split('/')[1]}"
        check = suite.check_of(case)
        assert isinstance(check, PythonCheck)
        assert check.entry_point == problem["entry_point"] and check.python.endswith(problem["test"])


def test_a_check_carries_the_prompts_helpers_its_test_calls():
    # the check runs the suite's copy of poly, encode_cyclic and encode_shift, never the brick's
    changed = {p["task_id"]: check_source(p) for p in problems() if check_source(p) != p["test"]}
    assert sorted(changed) == ["HumanEval/32", "HumanEval/38", "HumanEval/50"]
    assert changed["HumanEval/32"].startswith("import math\n\ndef poly(xs: list, x: float):")
    assert (
        "def encode_cyclic(s: str):" in changed["HumanEval/38"] and "def decode_cyclic" not in changed["HumanEval/38"]
    )
    for source in changed.values():
        compile(source, "check", "exec")


def test_a_check_recorded_before_the_helpers_gets_them():
    problem = problems()[50]
    old = {"python": problem["test"], "entry_point": "decode_shift"}
    assert current_check(old) == {"python": check_source(problem), "entry_point": "decode_shift"}
    assert current_check({**old, "entry_point": "other"}) == {**old, "entry_point": "other"}  # not HumanEval's
    for spec in (
        {"command": "true {brick}"},
        {"pytest": "checks"},
        {"python": "def check(c): pass", "entry_point": "f"},
    ):
        assert current_check(spec) == spec


def test_instructions_keep_the_contract_and_never_hold_the_hidden_tests():
    for case, problem in zip(humaneval_suite().cases, problems(), strict=True):
        text = case.instruction
        assert forbidden_word(text) is None
        assert f"`{problem['entry_point']}(" in text.splitlines()[0]  # the function and its parameters
        assert "def check(" not in text and "candidate" not in text
        hidden = [line.strip() for line in problem["test"].splitlines() if line.strip().startswith("assert")]
        assert not any(line in text for line in hidden)
        docstring = ast.get_docstring(
            next(f for f in ast.parse(problem["prompt"]).body if getattr(f, "name", None) == problem["entry_point"])
        )
        if problem["task_id"] not in _REWORDED:
            assert (docstring or "").strip() in text  # the task and its examples, as written


def test_the_reworded_docstrings_are_the_ones_the_contract_forbids():
    for problem in problems():
        raw_forbidden = forbidden_word(problem["prompt"]) is not None
        assert raw_forbidden == (problem["task_id"] in _REWORDED) or problem["task_id"] == "HumanEval/64"
        assert forbidden_word(instruction(problem)) is None


def test_helpers_the_task_uses_are_given():
    text = instruction(problems()[38])
    assert "decode_cyclic(s: str)" in text and "def encode_cyclic(s: str):" in text


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 164), seed=st.integers(0, 2**32))
def test_a_sample_is_seeded_and_keeps_suite_order(n, seed):
    suite = humaneval_suite()
    first = [c.id for c in sample_cases(suite, n, seed, "humaneval").cases]
    assert first == [c.id for c in sample_cases(suite, n, seed, "humaneval").cases]
    assert len(first) == len(set(first)) == n
    order = [c.id for c in suite.cases]
    assert first == sorted(first, key=order.index)


def test_a_sample_too_large_is_refused():
    with pytest.raises(SuiteError, match="--sample 165: the suite has 164 cases"):
        open_suite("humaneval", 165)


def test_the_adversarial_form_runs_the_generators_over_the_same_problems():
    suite, source = open_suite("humaneval-adversarial", 3, 1)
    assert source == "humaneval-adversarial" and suite.mode == "adversarial"
    assert all(isinstance(suite.check_of(c), PythonCheck) for c in suite.cases)


def test_checks_are_inherited_and_a_stress_level_may_have_its_own_or_none():
    suite = parse_suite(
        {
            "suite_id": "s",
            "mode": "mixed",
            "check": {"command": "true {brick}"},
            "cases": [
                {"id": "plain", "mode": "baseline", "instruction": "Write a function."},
                {
                    "id": "own",
                    "mode": "baseline",
                    "instruction": "Write a function.",
                    "check": {"python": "def check(c): pass", "entry_point": "f"},
                },
                {
                    "id": "ladder",
                    "mode": "stress",
                    "instruction": "Write a function.",
                    "ladder": {"generator": "add_constraints_tension"},
                    "level_checks": {2: None, 3: {"command": "false {brick}"}},
                },
            ],
        },
        "s.yaml",
    )
    plain, own, ladder = suite.cases
    assert isinstance(plain, BaselineCase) and suite.check_of(plain) == suite.check
    assert isinstance(suite.check_of(own), PythonCheck)
    assert isinstance(ladder, StressCase)
    assert suite.check_of(ladder, 1) == suite.check
    assert suite.check_of(ladder, 2) is None
    assert suite.check_of(ladder, 3).command == "false {brick}"
