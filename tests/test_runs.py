"""What a finished run tells its reader: the closing summary, and AI acceptance per
generator in `show` and in queries/ai_acceptance.sql."""

import json

import llm
import pytest
from typer.testing import CliRunner

from ironbench.cli.main import app
from ironbench.query import run_query
from ironbench.runner import start_run
from ironbench.runs import run_summary
from ironbench.suite import parse_suite
from tests.conftest import SCRIPTED_TARGET, cli, write_suite
from tests.fixtures import llm_scripted

BASE = "Write a Python function that reverses the order of words in a sentence."
GOOD = "Create a Python function that reverses the word order of a sentence."


@pytest.fixture
def scripted_model():
    if not llm.plugins.pm.is_registered(llm_scripted):
        llm.plugins.pm.register(llm_scripted, name="ironbench-tests-scripted")
    llm_scripted.ScriptedRewriter.answers = []
    llm_scripted.ScriptedRewriter.calls = []
    yield llm_scripted.ScriptedRewriter


def mixed_suite():
    return parse_suite({"suite_id": "mix", "mode": "mixed", "target": SCRIPTED_TARGET, "cases": [
        {"id": "b", "mode": "baseline", "instruction": BASE, "runs": 5},
        {"id": "a", "mode": "adversarial", "instruction": BASE, "generators": [
            {"generator": "ai_rewrite", "count": 2, "seed": 7, "model": "scripted-rewriter", "max_attempts": 2},
            {"generator": "ai_semantic_restatement", "count": 1, "seed": 8, "model": "scripted-rewriter",
             "max_attempts": 1}]},
        {"id": "s", "mode": "stress", "instruction": BASE,
         "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 5, "runs_per_level": 2}},
    ]}, "mix.yaml")


def test_acceptance_per_generator_in_the_query_the_summary_and_show(paths, script, scripted_model):
    script({"b": ["success", "validation", "success", "success", "success"], "a": ["success"],
            "s/level_1": ["success"], "s/level_2": ["validation"]})
    # ai_rewrite: slot 1 rejected then accepted, slot 2 accepted; restatement: rejected once, no retry left
    scripted_model.answers = ["Sure! " + BASE, GOOD, BASE.replace("sentence", "given sentence"), "Revisit it."]
    run_id = start_run(mixed_suite(), paths)
    rows = run_query(paths.store_path, "ai_acceptance.sql", run_id)
    table = {r[2]: dict(zip(rows.columns, r)) for r in rows.rows}
    assert (table["ai_rewrite"]["attempts"], table["ai_rewrite"]["accepted"], table["ai_rewrite"]["rejected"],
            table["ai_rewrite"]["acceptance_rate"], table["ai_rewrite"]["accepted_and_run"]) == (3, 2, 1, 0.667, 2)
    assert (table["ai_semantic_restatement"]["attempts"], table["ai_semantic_restatement"]["accepted"]) == (1, 0)

    lines = run_summary(paths.store_path, run_id)
    assert lines[0].startswith(f"{run_id}: ") and "failures by stage: validation" in lines[0]
    assert "  baseline b: stable after 5 runs, 4 of 5 succeeded (Wilson 95% 0.38-0.96)" in "\n".join(lines)
    assert "  stress s: capability boundary at level 2" in lines
    assert "  adversarial a: 2 variants: 2 not_material" in lines
    assert lines[-1] == ("  AI rewrites: ai_rewrite 2 of 3 accepted, ai_semantic_restatement 0 of 1 accepted; "
                         "2 accepted variants run")

    out = ["--out", str(paths.out_dir), "--store", str(paths.store_path)]
    shown = CliRunner().invoke(app, ["show", run_id, *out])
    assert shown.exit_code == 0 and "AI rewrites, acceptance per generator:" in shown.output
    assert "ai_semantic_restatement" in shown.output
    as_json = json.loads(CliRunner().invoke(app, ["show", run_id, "--format", "json", *out]).output)
    assert {r["generator"]: r["accepted"] for r in as_json["ai_acceptance"]} == {"ai_rewrite": 2,
                                                                                 "ai_semantic_restatement": 0}


def test_a_finished_run_ends_with_its_summary_on_the_console(tmp_path):
    suite = parse_suite({"suite_id": "one", "mode": "baseline", "target": SCRIPTED_TARGET,
                         "cases": [{"id": "c", "instruction": BASE, "runs": 3}]}, "one.yaml")
    result = cli("run", str(write_suite(tmp_path / "one.yaml", suite)), "--out", str(tmp_path / "out"), check=True)
    run_id = result.stdout.strip()
    tail = result.stderr.strip().splitlines()[-2:]
    assert tail == [f"{run_id}: 3 invocations, 3 succeeded",
                    "  baseline c: stable after 3 runs, 3 of 3 succeeded (Wilson 95% 0.44-1.00)"]
    quiet = cli("run", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "out"), "-q", check=True)
    assert quiet.stderr == ""
