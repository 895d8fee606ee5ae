"""What `show` and a finished run tell their reader: each adversarial case's most sensitive
generator, the closing summary, and AI acceptance per generator (also queries/ai_acceptance.sql)."""

import json

import pytest
from typer.testing import CliRunner

from ironbench.analysis.query import QueryResult, run_query
from ironbench.analysis.show import format_show, run_summary, sensitivity_verdicts, show_run, summary_lines
from ironbench.cli.main import app
from ironbench.run.runner import start_run
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET, cli, write_suite
from tests.run.test_adversarial_stress import adversarial_suite

BASE = "Write a Python function that reverses the order of words in a sentence."
GOOD = "Create a Python function that reverses the word order of a sentence."


def test_the_highest_material_change_rate_wins_with_its_evidence():
    rows = [
        ("a", "whitespace_noise", 5, 1),
        ("a", "punctuation_noise", 4, 3),
        ("a", "lexical_shuffle", 2, 1),
        ("b", "whitespace_noise", 3, 0),
        ("b", "synonym_substitution", 3, 0),
    ]
    a, b = sensitivity_verdicts(rows)
    assert (a["case_id"], a["generator"], a["material"], a["variants"]) == ("a", "punctuation_noise", 3, 4)
    assert a["text"] == (
        "most sensitive generator: punctuation_noise, 3/4 variants changed the outcome materially "
        "(75%, Wilson 95% 30%–95%); next: lexical_shuffle 1/2"
    )
    assert b["generator"] is None
    assert b["text"] == "no generator changed the outcome materially (0 of 6 variants of 2 generator(s))"


def test_ties_are_named_and_the_larger_sample_leads():
    (verdict,) = sensitivity_verdicts([("c", "lexical_shuffle", 2, 1), ("c", "whitespace_noise", 4, 2)])
    assert verdict["generator"] == "whitespace_noise" and verdict["text"].endswith("; tied with lexical_shuffle")


def test_show_names_the_most_sensitive_generator(paths, script):
    script({"c/baseline": ["success"], "c/punctuation_noise": ["generation"], "c/whitespace_noise": ["success"]})
    run_id = start_run(
        adversarial_suite(
            [
                {"generator": "whitespace_noise", "count": 3, "seed": 1},
                {"generator": "punctuation_noise", "count": 3, "seed": 2},
            ]
        ),
        paths,
    )
    header, cases, verdicts = show_run(paths.store_path, run_id)
    (sensitivity,) = [v for v in verdicts if v["kind"] == "sensitivity"]
    assert (sensitivity["generator"], sensitivity["material"], sensitivity["variants"]) == ("punctuation_noise", 3, 3)
    text = format_show(header, cases, verdicts)
    assert (
        "sensitivity c: most sensitive generator: punctuation_noise, 3/3 variants changed the outcome "
        "materially (100%, Wilson 95% 44%–100%); next: whitespace_noise 0/3"
    ) in text


def mixed_suite():
    return parse_suite(
        {
            "suite_id": "mix",
            "mode": "mixed",
            "target": SCRIPTED_TARGET,
            "cases": [
                {"id": "b", "mode": "baseline", "instruction": BASE, "runs": 5},
                {
                    "id": "a",
                    "mode": "adversarial",
                    "instruction": BASE,
                    "generators": [
                        {
                            "generator": "ai_rewrite",
                            "count": 2,
                            "seed": 7,
                            "model": "scripted-rewriter",
                            "max_attempts": 2,
                        },
                        {
                            "generator": "ai_semantic_restatement",
                            "count": 1,
                            "seed": 8,
                            "model": "scripted-rewriter",
                            "max_attempts": 1,
                        },
                    ],
                },
                {
                    "id": "s",
                    "mode": "stress",
                    "instruction": BASE,
                    "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 5, "runs_per_level": 2},
                },
            ],
        },
        "mix.yaml",
    )


@pytest.mark.slow
def test_acceptance_per_generator_in_the_query_the_summary_and_show(paths, script, scripted_model):
    script(
        {
            "b": ["success", "validation", "success", "success", "success"],
            "a": ["success"],
            "s/level_1": ["success"],
            "s/level_2": ["validation"],
        }
    )
    # ai_rewrite: slot 1 rejected then accepted, slot 2 accepted; restatement: rejected once, no retry left
    scripted_model.answers = ["Sure! " + BASE, GOOD, BASE.replace("sentence", "given sentence"), "Revisit it."]
    run_id = start_run(mixed_suite(), paths)
    rows = run_query(paths.store_path, "ai_acceptance.sql", run_id)
    table = {r[2]: dict(zip(rows.columns, r, strict=True)) for r in rows.rows}
    assert (
        table["ai_rewrite"]["attempts"],
        table["ai_rewrite"]["accepted"],
        table["ai_rewrite"]["rejected"],
        table["ai_rewrite"]["acceptance_rate"],
        table["ai_rewrite"]["accepted_and_run"],
    ) == (3, 2, 1, 0.667, 2)
    assert (table["ai_semantic_restatement"]["attempts"], table["ai_semantic_restatement"]["accepted"]) == (1, 0)

    lines = run_summary(paths.store_path, run_id)
    assert lines[0].startswith(f"{run_id}: ") and "failures by stage: validation" in lines[0]
    assert lines[1:] == [
        "AI rewrites: ai_rewrite 2 of 3 accepted, ai_semantic_restatement 0 of 1 accepted; 2 accepted variants run",
        "cost: unpriced (4 model calls, no price for their models: give one with --price MODEL=IN/OUT)",
    ]

    out = ["--out", str(paths.out_dir), "--store", str(paths.store_path)]
    shown = CliRunner().invoke(app, ["show", run_id, *out])
    assert shown.exit_code == 0 and "AI rewrites, acceptance per case and generator:" in shown.output
    assert "ai_semantic_restatement" in shown.output
    as_json = json.loads(CliRunner().invoke(app, ["show", run_id, "--format", "json", *out]).output)
    assert {r["generator"]: r["accepted"] for r in as_json["ai_acceptance"]} == {
        "ai_rewrite": 2,
        "ai_semantic_restatement": 0,
    }


@pytest.mark.slow
def test_a_finished_run_ends_with_its_summary_on_the_console(tmp_path):
    suite = parse_suite(
        {
            "suite_id": "one",
            "mode": "baseline",
            "target": SCRIPTED_TARGET,
            "cases": [{"id": "c", "instruction": BASE, "runs": 3}],
        },
        "one.yaml",
    )
    result = cli("run", str(write_suite(tmp_path / "one.yaml", suite)), "--out", str(tmp_path / "out"), check=True)
    run_id = result.stdout.strip()
    lines = result.stderr.strip().splitlines()
    # what it did, then its verdicts, then where the report is
    summary = lines.index(f"{run_id}: 3 invocations, 3 succeeded")
    assert lines[summary + 1].startswith("• ") and "c" in lines[summary + 1]
    assert lines[-1] == f"report: {tmp_path / 'out' / run_id / 'report.html'}"
    quiet = cli("run", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "out"), "-q", check=True)
    # quiet: only where the report is
    assert quiet.stderr.splitlines() == [f"report: {tmp_path / 'out' / quiet.stdout.strip() / 'report.html'}"]
    silent = cli("run", str(tmp_path / "one.yaml"), "--out", str(tmp_path / "out"), "-q", "--no-report", check=True)
    assert silent.stderr == "" and not (tmp_path / "out" / silent.stdout.strip() / "report.html").exists()


def test_the_summary_counts_backend_failures_apart_and_timeouts_as_such():
    none = QueryResult(["generator", "accepted", "attempts", "accepted_and_run"], [])
    (line,) = summary_lines("r", (6, 3, ["timeout", "validation", "timeout"], 2), none)
    assert line == (
        "r: 6 invocations, 3 succeeded; failures by stage: timeout 2, validation 1; "
        "2 infrastructure errors (in no rate)"
    )
    assert summary_lines("r", (1, 1, None, 0), none) == ["r: 1 invocation, 1 succeeded"]
