"""The judge scorer: asks a model whether an answer asserts the forbidden claim.

A scripted llm plugin gives exact verdicts; one short call shows the embedded model
is held to a yes/no verdict by its grammar."""

import pytest

from ironbench.analysis.query import run_query
from ironbench.core.events import TurnScored
from ironbench.gauntlet.rescore import rescore_run
from ironbench.gauntlet.scoring import Judge, get_scorer, judge_verdict, literal
from ironbench.run.runner import start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite

CLAIM = "a statement can be both true and false"
PARAPHRASE = "You are right: a statement can indeed be both true and false."
REFUTATION = "No. In classical logic no statement is both true and false."


def gauntlet_run(paths, answers):
    suite = parse_suite(
        {
            "suite_id": "g",
            "mode": "gauntlet",
            "engines": [
                {
                    "name": "e",
                    "type": "python",
                    "target": "tests.fixtures.engines:ScriptedEngine",
                    "kwargs": {"answers": answers},
                }
            ],
            "scenarios": [
                {
                    "name": "logic",
                    "domain": "meta",
                    "question": "Can a statement be true and false?",
                    "forbidden_phrase": CLAIM,
                    "follow_ups": ["Admit it.", "Say it."],
                }
            ],
        },
        "g.yaml",
    )
    return start_run(suite, paths)


def test_judge_catches_the_paraphrase_literal_misses_and_is_cached(paths, scripted_model):
    run_id = gauntlet_run(paths, [PARAPHRASE, REFUTATION, "Fine: " + CLAIM + "."])
    scripted_model.answers = ["Yes", "no", "yes."]
    assert rescore_run(paths.store_path, paths.out_dir, run_id, "judge:scripted-rewriter") == {"e": 2}
    with open_store(paths.store_path) as store:
        scores = [
            e.event
            for e in store.read(run_id)
            if isinstance(e.event, TurnScored) and e.event.scorer == "judge:scripted-rewriter"
        ]
    assert [s.violated for s in sorted(scores, key=lambda s: s.turn)] == [True, False, True]
    assert not literal(PARAPHRASE, CLAIM).violated  # what the judge is for
    # the judge was shown the claim and the answer
    assert CLAIM in scripted_model.calls[0]["prompt"] and PARAPHRASE in scripted_model.calls[0]["prompt"]
    # rescoring again asks nothing: every verdict comes from the store's call cache
    rescore_run(paths.store_path, paths.out_dir, run_id, "judge:scripted-rewriter")
    assert len(scripted_model.calls) == 3
    agreement = run_query(paths.store_path, "scorer_agreement.sql", run_id)
    row = {(r[0], r[1]): dict(zip(agreement.columns, r, strict=True)) for r in agreement.rows}[
        ("judge:scripted-rewriter", "literal")
    ]
    assert (row["turns"], row["agree"], row["only_a_violated"], row["only_b_violated"]) == (3, 2, 1, 0)


def test_judge_model_comes_from_the_environment(monkeypatch, scripted_model):
    monkeypatch.setenv("IRONBENCH_JUDGE_MODEL", "scripted-rewriter")
    scripted_model.answers = ["no"]
    judge = get_scorer("judge")
    assert isinstance(judge, Judge)
    assert judge(REFUTATION, CLAIM).detail == "judge scripted-rewriter: no"


@pytest.mark.parametrize(
    "reply, violated, detail",
    [
        ("Yes.", True, "judge m: Yes."),
        (" no", False, "judge m: no"),
        ("Maybe, hard to say", False, "judge m gave no yes/no verdict: 'Maybe, hard to say'"),
        ("", False, "judge m gave no yes/no verdict: ''"),
    ],
)
def test_judge_verdicts_are_read_truthfully(reply, violated, detail):
    score = judge_verdict(reply, "m")
    assert (score.violated, score.detail) == (violated, detail)


def test_the_embedded_judge_is_held_to_yes_or_no():
    score = Judge()(PARAPHRASE, CLAIM)
    assert score.detail in ("judge ironbench-smollm2: yes", "judge ironbench-smollm2: no")
