"""The optional semantic judge of AI rewrites (ai_judge), through a real run: the scripted
rewriter writes, the scripted judge (which takes a grammar) answers."""

import json

import pytest

from ironbench.core.errors import SuiteError
from ironbench.core.events import AiOutputRejected, VariantGenerated
from ironbench.generators.ai_judge import JUDGE_SYSTEM
from ironbench.llms.access import ModelError
from ironbench.llms.yes_no import YES_NO_GRAMMAR
from ironbench.run.ai_generation import MaxFailuresReached
from ironbench.run.options import Limits, RunOptions
from ironbench.run.runner import resume_run, start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET

BASE = "Write a Python function that reverses the order of words in a sentence."
GOOD = "Create a Python function that reverses the word order of a sentence."
ALSO_GOOD = "Write a Python function that flips the order of the words in a sentence."


def judged_suite(suite_judge="scripted-judge", entry=None, max_attempts=3, mode="adversarial"):
    generator = {"generator": "ai_rewrite", "count": 1, "seed": 7, "model": "scripted-rewriter"}
    generator |= {"max_attempts": max_attempts, **(entry or {})}
    data = {
        "suite_id": "judged",
        "mode": mode,
        "target": SCRIPTED_TARGET,
        "cases": [{"id": "c", "instruction": BASE, "generators": [generator]}],
    }
    if suite_judge is not None:
        data["ai_judge"] = suite_judge
    return parse_suite(data, "judged.yaml")


def events(paths, run_id, kind):
    with open_store(paths.store_path) as store:
        return [e.event for e in store.read(run_id) if isinstance(e.event, kind)]


def failure_file(paths, run_id):
    slot = paths.out_dir / run_id / "adversarial" / "c" / "ai_rewrite" / "variant_0001"
    return json.loads((slot / "ai_generation_failure.json").read_text())


def test_the_judge_is_asked_both_ways_and_its_no_rejects_with_its_answers(
    paths, script, scripted_model, scripted_judge
):
    script({"c": ["success"]})
    scripted_model.answers = [GOOD, ALSO_GOOD]
    scripted_judge.answers = ["yes", "no", "yes", "yes"]
    run_id = start_run(judged_suite(), paths)
    [rejected] = events(paths, run_id, AiOutputRejected)
    assert rejected.failure_reasons == [
        (
            "judge_rejects: scripted-judge says the rewrite asks for another task "
            "(base to rewrite: 'yes', rewrite to base: 'no')"
        )
    ]
    verdict = {
        "model": "scripted-judge",
        "same_task": False,
        "answers": {"base_to_rewrite": "yes", "rewrite_to_base": "no"},
    }
    assert rejected.judge == verdict
    failure = failure_file(paths, run_id)
    assert failure["judge"] == verdict and failure["rejections"][0]["judge"] == verdict
    [accepted] = events(paths, run_id, VariantGenerated)
    assert accepted.instruction == ALSO_GOOD and accepted.metadata["judge"]["same_task"] is True
    # both directions, under the yes/no grammar the backend takes, at temperature 0
    first, second = scripted_judge.calls[:2]
    assert first["prompt"].startswith(f"Instruction A: {BASE}\nInstruction B: {GOOD}\n")
    assert second["prompt"].startswith(f"Instruction A: {GOOD}\nInstruction B: {BASE}\n")
    assert all(
        c["grammar"] == YES_NO_GRAMMAR and c["system"] == JUDGE_SYSTEM and c["temperature"] == 0.0
        for c in scripted_judge.calls
    )


def test_the_rules_come_first_and_an_answer_that_is_no_verdict_rejects(paths, script, scripted_model, scripted_judge):
    script({"c": ["success"]})
    scripted_model.answers = [BASE + " Also add tests.", GOOD, ALSO_GOOD]
    scripted_judge.answers = ["yes", "perhaps", "yes", "yes"]
    run_id = start_run(judged_suite(), paths)
    rules, unsure = events(paths, run_id, AiOutputRejected)
    assert rules.judge is None and any("forbidden token 'tests'" in r for r in rules.failure_reasons)
    assert unsure.judge["same_task"] is None
    assert unsure.failure_reasons == [
        "judge_no_verdict: scripted-judge gave no yes/no answer (base to rewrite: 'yes', rewrite to base: 'perhaps')"
    ]
    assert len(scripted_judge.calls) == 4  # the rewrite the rules rejected was never judged
    assert "judge" not in failure_file(paths, run_id)["rejections"][0]


def test_an_entry_turns_the_suites_judge_off_or_names_its_own(paths, script, scripted_model, scripted_judge):
    script({"c": ["success"]})
    scripted_model.answers = [GOOD]
    run_id = start_run(judged_suite(entry={"ai_judge": None}), paths)
    assert scripted_judge.calls == [] and "judge" not in events(paths, run_id, VariantGenerated)[0].metadata
    suite = judged_suite(suite_judge=None, entry={"ai_judge": "scripted-judge"})
    assert suite.ai_judge_of(suite.cases[0].variants[0]) == "scripted-judge"
    assert judged_suite(suite_judge=None).ai_judge_of(judged_suite(suite_judge=None).cases[0].variants[0]) is None


def test_the_judges_answers_are_cached_so_resume_never_asks_twice(paths, script, scripted_model, scripted_judge):
    script({"c": ["success"]})
    scripted_model.answers = [GOOD]
    scripted_judge.answers = ["no", "no"]
    with pytest.raises(MaxFailuresReached):
        start_run(judged_suite(), paths, RunOptions(limits=Limits(max_failures=1)))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
    scripted_model.answers = [ALSO_GOOD]
    scripted_judge.answers = ["yes", "yes"]
    assert resume_run(run_id, paths) == "finished"
    # attempt 1 came back from the cache with its verdict: only attempt 2 was put to the judge
    assert len(scripted_judge.calls) == 4
    assert [v.instruction for v in events(paths, run_id, VariantGenerated)] == [ALSO_GOOD]


def test_an_unknown_judge_is_named_before_anything_is_written(paths, scripted_model):
    with pytest.raises(ModelError, match=r"^suite: ai_judge: unknown model id 'no-such-judge'"):
        start_run(judged_suite(suite_judge="no-such-judge"), paths)
    with pytest.raises(ModelError, match=r"cases\[0\] \(c\)\.generators\[0\]\.ai_judge: unknown model id 'nope'"):
        start_run(judged_suite(entry={"ai_judge": "nope"}), paths)
    assert not paths.out_dir.exists()


def test_a_gauntlet_suite_has_no_rewrites_to_judge():
    with pytest.raises(SuiteError, match="ai_judge: a gauntlet suite has no AI generators to judge"):
        parse_suite(
            {
                "suite_id": "g",
                "mode": "gauntlet",
                "ai_judge": "scripted-judge",
                "engines": [{"name": "e", "type": "llm"}],
                "scenarios": [
                    {"name": "s", "domain": "d", "question": "q", "forbidden_phrase": "f", "follow_ups": ["x"]}
                ],
            },
            "g.yaml",
        )
