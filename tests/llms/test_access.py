"""Model access, the call cache and AI generation: a scripted llm plugin for exact
behaviour, and a few short calls to the real embedded model."""

import json
import sqlite3

import pytest

from ironbench.core.events import AiOutputRejected, InvocationStarted, VariantGenerated
from ironbench.llms.access import EMBEDDED_MODEL, ModelClient, ModelError
from ironbench.run.ai_generation import MaxFailuresReached
from ironbench.run.options import Limits, RunOptions
from ironbench.run.runner import resume_run, start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET

BASE = "Write a Python function that reverses the order of words in a sentence."
GOOD = "Create a Python function that reverses the word order of a sentence."


def ai_suite(model, count=1, max_attempts=3, generator="ai_rewrite"):
    return parse_suite(
        {
            "suite_id": "ai",
            "mode": "adversarial",
            "target": SCRIPTED_TARGET,
            "cases": [
                {
                    "id": "c",
                    "instruction": BASE,
                    "generators": [
                        {
                            "generator": generator,
                            "count": count,
                            "seed": 7,
                            "model": model,
                            "max_attempts": max_attempts,
                        }
                    ],
                },
            ],
        },
        "ai.yaml",
    )


def events(paths, run_id, kind):
    with open_store(paths.store_path) as store:
        return [e for e in store.read(run_id) if isinstance(e.event, kind)]


def test_rejections_are_events_rows_and_files_then_a_good_answer_is_accepted(paths, script, scripted_model):
    script({"c": ["success"]})
    scripted_model.answers = ["", "Sure! Here is the rewrite: " + BASE, BASE + " Also add tests.", GOOD]
    run_id = start_run(ai_suite("scripted-rewriter", max_attempts=4), paths)
    rejected = [e.event for e in events(paths, run_id, AiOutputRejected)]
    assert [r.attempt for r in rejected] == [1, 2, 3]
    assert rejected[0].failure_reasons == ["empty output"]
    assert any("meta-commentary" in reason for reason in rejected[1].failure_reasons)
    assert any("forbidden token 'tests'" in reason for reason in rejected[2].failure_reasons)
    accepted = [e.event for e in events(paths, run_id, VariantGenerated)]
    assert [v.instruction for v in accepted] == [GOOD]
    metadata = accepted[0].metadata
    assert metadata["model"] == "scripted-rewriter" and metadata["options"]["seed"] == accepted[0].seed
    assert "Preserve the task exactly. Change wording only." in metadata["prompt"]
    # three distinct attempts, three distinct seeds: nothing collapsed
    assert len({c["seed"] for c in scripted_model.calls}) == 4
    failure = json.loads(
        (
            paths.out_dir / run_id / "adversarial" / "c" / "ai_rewrite" / "variant_0001" / "ai_generation_failure.json"
        ).read_text()
    )
    assert {"generator", "attempt", "base_instruction", "ai_output", "failure_reasons", "timestamp_utc"} <= set(failure)
    assert failure["attempt"] == 3 and len(failure["rejections"]) == 3
    with sqlite3.connect(paths.store_path) as conn:
        assert conn.execute("SELECT count(*) FROM rejections WHERE run_id=?", (run_id,)).fetchone()[0] == 3
    # the prompt is metadata only: the target saw the variant, never the prompt
    instructions = [e.event.instruction for e in events(paths, run_id, InvocationStarted)]
    assert GOOD in instructions and not any("Preserve the task" in i for i in instructions)


def test_wrapped_answers_are_normalised_and_both_texts_kept(paths, script, scripted_model):
    script({"c": ["success"]})
    wrapped_bad = '"' + BASE + ' Also add tests."'
    wrapped_good = 'Rewritten instruction: "' + GOOD + '"\n'
    scripted_model.answers = [wrapped_bad, wrapped_good]
    run_id = start_run(ai_suite("scripted-rewriter"), paths)
    [rejected] = [e.event for e in events(paths, run_id, AiOutputRejected)]
    assert rejected.ai_output == wrapped_bad and rejected.normalised_output == BASE + " Also add tests."
    failure = json.loads(
        (
            paths.out_dir / run_id / "adversarial" / "c" / "ai_rewrite" / "variant_0001" / "ai_generation_failure.json"
        ).read_text()
    )
    assert failure["ai_output"] == wrapped_bad and failure["normalised_output"] == BASE + " Also add tests."
    assert failure["rejections"][0]["normalised_output"] == BASE + " Also add tests."
    [accepted] = [e.event for e in events(paths, run_id, VariantGenerated)]
    assert accepted.instruction == GOOD and accepted.metadata["raw_output"] == wrapped_good
    # one plain line is asked for by grammar; this backend has no grammar option, and the record says so
    assert accepted.metadata["options"]["grammar"].startswith("root ::=")
    assert "grammar" not in accepted.metadata["options_applied"]


def test_acceptance_rules_per_generator(paths, script, scripted_model):
    script({"c": ["success"]})
    scripted_model.answers = [
        BASE.replace("Python function", "thread-safe Python function"),
        BASE.replace("reverses", "clearly reverses"),
    ]
    run_id = start_run(ai_suite("scripted-rewriter", generator="ai_rephrase_with_focus_shift"), paths)
    rejected = [e.event for e in events(paths, run_id, AiOutputRejected)]
    assert rejected[0].failure_reasons == [
        "focus shift introduces 'thread-safe'",
        "adds_requirement: thread-safe (a new constraint on concurrency)",
    ]
    assert [v.event.instruction for v in events(paths, run_id, VariantGenerated)] == [
        BASE.replace("reverses", "clearly reverses")
    ]


def test_max_failures_stops_the_run_and_resume_pays_nothing_twice(paths, script, scripted_model):
    script({"c": ["success"]})
    scripted_model.answers = ["", ""]
    with pytest.raises(MaxFailuresReached, match="2 AI outputs rejected"):
        start_run(
            ai_suite("scripted-rewriter", count=2, max_attempts=3), paths, RunOptions(limits=Limits(max_failures=2))
        )
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
    calls_before = len(scripted_model.calls)
    scripted_model.answers = [GOOD, BASE.replace("sentence", "given sentence")]
    assert resume_run(run_id, paths) == "finished"
    # the two rejected attempts came from the cache; only new attempts called the model
    assert len(scripted_model.calls) == calls_before + 2
    assert len(events(paths, run_id, AiOutputRejected)) == 2
    assert len(events(paths, run_id, VariantGenerated)) == 2


def test_unknown_model_is_a_clear_error_before_anything_is_written(paths):
    with pytest.raises(
        ModelError, match="unknown model id 'no-such-model' \\(installed llm models: .*ironbench-smollm2"
    ):
        start_run(ai_suite("no-such-model"), paths)
    assert not paths.out_dir.exists()


def test_embedded_model_answers_reproducibly_and_is_cached(tmp_path):
    with open_store(tmp_path / "s.db") as store:
        client = ModelClient(EMBEDDED_MODEL, store.conn)
        options = {"temperature": 0.7, "seed": 11, "max_tokens": 24}
        first = client.complete("Say hello in three words.", options, attempt=1)
        assert first.text.strip() and not first.cached
        assert first.options_applied == options
        again = client.complete("Say hello in three words.", options, attempt=1)
        assert again.cached and again.text == first.text
        fresh = ModelClient(EMBEDDED_MODEL)  # no cache: the model itself, same seed
        assert fresh.complete("Say hello in three words.", options, attempt=1).text == first.text
        other = client.complete("Say hello in three words.", options, attempt=2)
        assert not other.cached  # another attempt is another call
        rows = store.conn.execute("SELECT count(*) FROM model_calls").fetchone()[0]
    assert rows == 2


def test_ai_generation_on_the_embedded_model_end_to_end(paths, script):
    script({"c": ["success"]})
    run_id = start_run(ai_suite(EMBEDDED_MODEL, count=1, max_attempts=2), paths)
    accepted = [e.event for e in events(paths, run_id, VariantGenerated)]
    rejected = [e.event for e in events(paths, run_id, AiOutputRejected)]
    assert len(accepted) + len(rejected) >= 1 and len(accepted) <= 1
    for variant in accepted:
        assert variant.metadata["model"] == EMBEDDED_MODEL and variant.metadata["options_applied"]["seed"]
    for rejection in rejected:
        assert rejection.failure_reasons
        slot = paths.out_dir / run_id / "adversarial" / "c" / "ai_rewrite" / rejection.variant_id.split("/")[1]
        assert (slot / "ai_generation_failure.json").exists()


@pytest.mark.slow
def test_an_unknown_model_id_names_the_file_the_case_and_the_field(tmp_path):
    from tests.conftest import cli

    suite = tmp_path / "models.yaml"
    suite.write_text(
        json.dumps(
            {
                "suite_id": "m",
                "mode": "adversarial",
                "target": SCRIPTED_TARGET,
                "cases": [
                    {
                        "id": f"case_{i}",
                        "instruction": BASE,
                        "generators": [{"generator": "whitespace_noise", "count": 1}],
                    }
                    for i in range(2)
                ]
                + [
                    {
                        "id": "my_case",
                        "instruction": BASE,
                        "generators": [
                            {"generator": "whitespace_noise", "count": 1},
                            {"generator": "ai_rewrite", "model": "no-such-model"},
                        ],
                    }
                ],
            }
        )
    )
    result = cli("run", str(suite), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(
        f"ironbench: error: {suite}: cases[2] (my_case).generators[1].model: unknown "
        "model id 'no-such-model' (installed llm models: "
    )
    assert not (tmp_path / "out").exists()

    gauntlet = tmp_path / "gauntlet.yaml"
    gauntlet.write_text(
        json.dumps(
            {
                "suite_id": "g",
                "mode": "gauntlet",
                "engines": [
                    {"name": "plain", "type": "llm"},
                    {"name": "guarded", "type": "guarded", "model": "no-such-model"},
                ],
                "scenarios": [
                    {"name": "s", "domain": "d", "question": "q?", "forbidden_phrase": "f", "follow_ups": ["u"]}
                ],
            }
        )
    )
    result = cli("run", str(gauntlet), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"ironbench: error: {gauntlet}: engines[1] (guarded).model: unknown model id 'no-such-model' ("
    )
    assert not (tmp_path / "out").exists()


def test_a_secret_a_model_echoes_is_in_no_cached_call_nor_event(paths, script, scripted_model, monkeypatch):
    secret, plain = "sk-echoed-by-the-model-0123456789", "not-secret-looking-but-named"
    monkeypatch.setenv("SERVICE_TOKEN", secret)
    monkeypatch.setenv("MY_PLAIN", plain)
    script({"c": ["success"]})
    scripted_model.answers = [f"Sure, here is {secret} and {plain}.", GOOD]
    run_id = start_run(ai_suite("scripted-rewriter"), paths, RunOptions(redact=("MY_PLAIN",)))
    rejected = events(paths, run_id, AiOutputRejected)[0].event
    assert "[REDACTED:SERVICE_TOKEN]" in rejected.ai_output and "[REDACTED:MY_PLAIN]" in rejected.ai_output
    with sqlite3.connect(paths.store_path) as conn:
        cached = conn.execute("SELECT response FROM model_calls ORDER BY created_utc").fetchall()
    assert cached[0][0] == "Sure, here is [REDACTED:SERVICE_TOKEN] and [REDACTED:MY_PLAIN]."
    stored = paths.store_path.read_bytes() + b"".join(
        p.read_bytes() for p in paths.store_path.parent.glob(paths.store_path.name + "-wal")
    )
    assert secret.encode() not in stored and plain.encode() not in stored


def test_the_prompt_names_the_words_to_keep_and_the_answer_is_held_to_one_sentence(paths, script, scripted_model):
    script({"c": ["success"]})
    scripted_model.answers = [GOOD]
    run_id = start_run(ai_suite("scripted-rewriter"), paths)
    [accepted] = [e.event for e in events(paths, run_id, VariantGenerated)]
    prompt = accepted.metadata["prompt"]
    assert "Keep the words Python, function, reverses, order, words and sentence." in prompt
    # worked examples in the base's own language, and the base last, for the model to continue
    assert "Instruction: Write a Python function that joins two strings.\n" in prompt
    assert prompt.endswith(f"Instruction: {BASE}\nRewrite:")
    grammar = accepted.metadata["options"]["grammar"]
    assert grammar.startswith('root ::= ("Write" | "Create" | ') and grammar.endswith("[.?!]")
    assert "openings" not in accepted.metadata and accepted.metadata["style"] == "concise_directive"


def test_a_suite_extends_the_requirement_terms_of_an_ai_generator(paths, script, scripted_model):
    script({"c": ["success"]})
    utterance = BASE.replace("a sentence", "an utterance")
    suite = ai_suite("scripted-rewriter")
    entry = suite.to_dict()["cases"][0]["variants"][0]
    scripted_model.answers = [utterance] * 3
    run_id = start_run(suite, paths)
    rejected = [e.event for e in events(paths, run_id, AiOutputRejected)]
    assert len(rejected) == 3 and all(r.failure_reasons == ["removes_requirement: sentence"] for r in rejected)
    data = suite.to_dict()
    data["cases"][0]["variants"] = [{**entry, "terms": {"synonyms": [["sentence", "utterance"]]}}]
    scripted_model.answers = [utterance]
    run_id = start_run(parse_suite({**data, "suite_id": "ai2"}, "ai.yaml"), paths)
    assert [e.event.instruction for e in events(paths, run_id, VariantGenerated)] == [utterance]
