"""Outcome rules for plain programs and other agents: `--rules exit-code`, a rules file, a
suite's `rules:`; recorded with the run, so resume and references read outcomes alike."""

import json
import sys

import pytest
import yaml

from ironbench.core.errors import RunInterrupted, SuiteError
from ironbench.core.events import RunStarted
from ironbench.core.outcome import parse_outcome
from ironbench.run.options import RunOptions
from ironbench.run.runner import resume_run, start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import REPO, cli
from tests.run.test_adversarial_stress import _InterruptAfter

EXAMPLES = REPO / "examples"
TOY_AGENT = [sys.executable, str(EXAMPLES / "toy_agent.py"), "{instruction}"]
# A plain program: exits with the code its run index picks, printing nothing ironbench knows.
PLAIN = [
    sys.executable,
    "-c",
    "import os, sys; print('working on', sys.argv[1]); "
    "sys.exit(json.loads(os.environ['PLAIN_CODES'])[int(os.environ['IRONBENCH_RUN_INDEX']) - 1])".replace(
        "import os", "import json, os"
    ),
    "{instruction}",
]


def suite_data(target, runs=5, **fields):
    return {
        "suite_id": "plain",
        "mode": "baseline",
        "timeout_seconds": 30,
        "target": target,
        "cases": [{"id": "a", "instruction": "Write a function named a.", "runs": runs}],
        **fields,
    }


def outcomes(store_path, run_id):
    rows = cli(
        "query",
        "SELECT run_index, success, failure_stage, attempts, repairs_triggered, infra_error "
        "FROM invocations ORDER BY run_index, seq",
        "--run",
        run_id,
        "--store",
        str(store_path),
        "-f",
        "json",
        check=True,
    ).stdout
    return [
        (r["success"], r["failure_stage"], r["attempts"], r["repairs_triggered"], r["infra_error"])
        for r in json.loads(rows)
    ]


@pytest.mark.slow
def test_exit_code_rules_read_a_plain_program(tmp_path):
    assert parse_outcome(0, "", "exit-code").signature() == (True, None, 1, 0)
    assert parse_outcome(2, "anything", "exit-code").signature() == (False, "exit_2", 1, 0)
    assert parse_outcome(None, "", "exit-code", timed_out=True).failure_stage == "timeout"
    # the same program under Ironclad's rules is `unknown`: it prints none of Ironclad's markers
    assert parse_outcome(0, "working on it", "ironclad").failure_stage == "unknown"

    suite = tmp_path / "plain.yaml"
    suite.write_text(yaml.safe_dump(suite_data(PLAIN, runs=4)))
    out = tmp_path / "out"
    run_id = cli(
        "run",
        str(suite),
        "--rules",
        "exit-code",
        "--out",
        str(out),
        "-q",
        "--no-report",
        env={"PLAIN_CODES": "[0, 1, 0, 3]"},
        check=True,
    ).stdout.strip()
    assert outcomes(out / "ironbench.db", run_id) == [
        (True, None, 1, 0, None),
        (False, "exit_1", 1, 0, None),
        (True, None, 1, 0, None),
        (False, "exit_3", 1, 0, None),
    ]
    metadata = json.loads((out / run_id / "metadata.json").read_text())
    assert metadata["outcome_rules"]["name"] == "exit-code" and len(metadata["outcome_rules"]["sha256"]) == 64


def test_a_resumed_run_reads_outcomes_with_the_rules_it_started_with(paths, monkeypatch):
    monkeypatch.setenv("PLAIN_CODES", "[0, 1, 0, 0, 2]")
    suite = parse_suite(suite_data(PLAIN), "plain.yaml")
    with pytest.raises(RunInterrupted):
        start_run(suite, paths, RunOptions(rules="exit-code"), reporter=_InterruptAfter(2))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
        started = next(store.read(run_id, types=("run_started",))).event
    assert isinstance(started, RunStarted) and started.rules["definition"]["name"] == "exit-code"
    assert resume_run(run_id, paths) == "finished"  # no --rules: the recorded ones
    stages = [o[1] for o in outcomes(paths.store_path, run_id)]
    assert stages == [None, "exit_1", None, None, "exit_2"]


@pytest.mark.slow
def test_the_example_rules_read_the_toy_agent_end_to_end(tmp_path):
    suite = tmp_path / "agent.yaml"
    suite.write_text(yaml.safe_dump(suite_data(TOY_AGENT, runs=6, rules=str(EXAMPLES / "agent_rules.yaml"))))
    plan = ["pass", "fixed", "gave_up", "no_parse", "rate_limit", "crash"]
    run_id = cli(
        "run",
        str(suite),
        "--out",
        str(tmp_path / "out"),
        "-q",
        "--no-report",
        env={"TOY_AGENT_OUTCOMES": json.dumps(plan)},
        check=True,
    ).stdout.strip()
    assert outcomes(tmp_path / "out" / "ironbench.db", run_id) == [
        (True, None, 1, 0, None),
        (True, None, 2, 1, None),
        (False, "validation", 4, 3, None),
        (False, "generation", 0, 0, None),
        (True, None, 1, 0, None),  # its first attempt hit the rate limit: run again
        (False, "unknown", 0, 0, None),
    ]
    superseded = json.loads(
        cli(
            "query",
            "SELECT run_index, failure_stage, infra_error FROM superseded_invocations",
            "--run",
            run_id,
            "--out",
            str(tmp_path / "out"),
            "-f",
            "json",
            check=True,
        ).stdout
    )
    assert superseded == [
        {
            "run_index": 5,
            "failure_stage": "infra_error",
            "infra_error": "[agent] tool call failed: 429 Too Many Requests",
        }
    ]
    bricks = json.loads(
        cli(
            "query",
            "SELECT json_extract_string(payload, '$.brick_path') AS brick FROM events "
            "WHERE type = 'invocation_completed' AND json_extract_string(payload, '$.success') = "
            "'true'",
            "--run",
            run_id,
            "--out",
            str(tmp_path / "out"),
            "-f",
            "json",
            check=True,
        ).stdout
    )
    assert [b["brick"] for b in bricks] == ["solution.py"] * 3


@pytest.mark.slow
def test_a_suites_rules_path_is_read_from_the_suites_folder(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "mine.yaml").write_text((EXAMPLES / "agent_rules.yaml").read_text())
    suite = tmp_path / "agent.yaml"
    suite.write_text(yaml.safe_dump(suite_data(TOY_AGENT, runs=3, rules="rules/mine.yaml")))
    run_id = cli(
        "run",
        str(suite),
        "--out",
        str(tmp_path / "out"),
        "-q",
        "--no-report",
        cwd=REPO,
        env={"TOY_AGENT_OUTCOMES": '["fixed"]'},
        check=True,
    ).stdout.strip()
    assert outcomes(tmp_path / "out" / "ironbench.db", run_id)[0] == (True, None, 2, 1, None)


def test_unknown_rules_and_rules_in_a_gauntlet_are_refused_before_anything_is_written(tmp_path):
    suite = tmp_path / "plain.yaml"
    suite.write_text(yaml.safe_dump(suite_data(PLAIN)))
    for rules, message in (
        ("exit_code", "outcome rules 'exit_code': not shipped (exit-code, ironclad) and not a .yaml file"),
        (str(tmp_path / "none.yaml"), f"{tmp_path / 'none.yaml'}: no such outcome rules file"),
    ):
        result = cli("run", str(suite), "--rules", rules, "--out", str(tmp_path / "out"))
        assert result.returncode == 2 and result.stderr.strip() == f"ironbench: error: {message}"
    assert not (tmp_path / "out").exists()
    with pytest.raises(SuiteError, match="rules: a gauntlet suite scores answers"):
        parse_suite(
            {
                "suite_id": "g",
                "mode": "gauntlet",
                "rules": "exit-code",
                "engines": [{"name": "e", "type": "command", "command": ["x"]}],
                "scenarios": [
                    {"name": "s", "domain": "d", "question": "q", "forbidden_phrase": "f", "follow_ups": ["u"]}
                ],
            },
            "g.yaml",
        )


def test_a_baseline_read_by_other_rules_is_never_the_reference(paths, monkeypatch):
    from tests.run.test_adversarial_stress import INSTRUCTION, decisions

    monkeypatch.setenv("PLAIN_CODES", "[0, 0, 0, 0, 0]")
    baseline = parse_suite(
        {**suite_data(PLAIN, runs=3), "cases": [{"id": "c", "instruction": INSTRUCTION, "runs": 3}]}, "b.yaml"
    )
    ironclad_baseline = start_run(baseline, paths)  # every run `unknown` under Ironclad's rules
    exit_code_baseline = start_run(baseline, paths, RunOptions(rules="exit-code"))
    adversarial = parse_suite(
        {
            "suite_id": "adv",
            "mode": "adversarial",
            "target": PLAIN,
            "timeout_seconds": 30,
            "cases": [
                {"id": "c", "instruction": INSTRUCTION, "generators": [{"generator": "whitespace_noise", "count": 1}]}
            ],
        },
        "adv.yaml",
    )
    judged = start_run(adversarial, paths, RunOptions(rules="exit-code"))
    assert decisions(paths, judged)["adversarial/c/baseline"].reference_source == exit_code_baseline
    start_run(baseline, paths, RunOptions(rules="exit-code"))  # newer, but the next run reads Ironclad's rules
    again = start_run(adversarial, paths)
    assert decisions(paths, again)["adversarial/c/baseline"].reference_source == ironclad_baseline
