import json
import shlex
import sqlite3

import pytest

from ironbench.store.migrate import SCHEMA_HEAD
from tests.conftest import cli, make_suite, write_suite


def test_help_lists_every_command():
    result = cli("--help", check=True)
    for command in ("run", "resume", "runs", "show", "log", "project", "query", "compare", "db"):
        assert command in result.stdout


def test_bad_suite_is_one_line_exit_2_and_writes_nothing(tmp_path):
    suite = tmp_path / "bad.yaml"
    suite.write_text("suite_id: s\nmode: baseline\ncases:\n  - id: a\n    instruction: Write tests for a parser.\n")
    out = tmp_path / "out"
    result = cli("run", str(suite), "--out", str(out))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        (
            f"ironbench: error: {suite}: cases[0] (a): instruction breaks the single-string contract "
            "with forbidden word 'tests'"
        )
    ]
    assert "Traceback" not in result.stderr
    assert not out.exists()


def test_unknown_target_is_one_line_exit_2(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}))
    result = cli("run", str(suite), "--target", "nope-agent {instruction}", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "target executable not found: 'nope-agent'" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_run_query_show_compare_end_to_end(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10, "b": 10}))
    out = str(tmp_path / "out")
    good = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success"], "b": ["success"]})}
    bad = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["generation"], "b": ["validation"]})}
    first = cli("run", str(suite), "--out", out, env=good, check=True).stdout.strip()
    second = cli("run", str(suite), "--out", out, env=bad, check=True).stdout.strip()
    assert first.startswith("run_") and second.startswith("run_") and first != second

    rows = json.loads(cli("query", "failure_breakdown.sql", "--out", out, "--format", "json", check=True).stdout)
    assert {(r["case_id"], r["failure_stage"], r["failures"]) for r in rows} == {
        ("a", "generation", 3),
        ("b", "validation", 3),
    }
    assert (
        json.loads(cli("query", "failure_breakdown.sql", "--run", first, "--out", out, "-f", "json", check=True).stdout)
        == []
    )

    shown = json.loads(cli("show", first, "--out", out, "--format", "json", check=True).stdout)
    assert shown["invocations"] == 6 and {c["decision"] for c in shown["cases"]} == {"stable"}
    assert first in cli("runs", "--out", out, check=True).stdout

    gate = cli("compare", first, second, "--out", out)
    assert gate.returncode == 1 and "verdict: REGRESSION" in gate.stdout
    as_json = json.loads(cli("compare", first, second, "--out", out, "--format", "json").stdout)
    assert as_json["verdict"] == "regression" and len(as_json["cases"]) == 2
    assert cli("compare", first, first, "--out", out).returncode == 0

    rebuilt = cli("project", first, "--rebuild", "--out", out, check=True).stdout.strip()
    assert rebuilt.endswith(first)


@pytest.mark.slow
def test_bad_query_and_unknown_run_are_exit_2(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}))
    out = str(tmp_path / "out")
    cli("run", str(suite), "--out", out, "-q", check=True)
    bad_sql = tmp_path / "bad.sql"
    bad_sql.write_text("SELEC 1")
    for args in (
        ("query", str(bad_sql)),
        ("query", "no_such.sql"),
        ("show", "run_nope"),
        ("compare", "run_a", "run_b"),
        ("resume", "run_nope"),
        ("project", "run_nope"),
    ):
        result = cli(*args, "--out", out)
        assert result.returncode == 2, args
        assert result.stderr.startswith("ironbench: error: ") and "Traceback" not in result.stderr


def test_db_upgrade_creates_a_migrated_store(tmp_path):
    store = tmp_path / "x" / "events.db"
    result = cli("db", "upgrade", "--store", str(store), check=True)
    assert SCHEMA_HEAD in result.stdout
    with sqlite3.connect(store) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == SCHEMA_HEAD


@pytest.mark.slow
def test_store_option_and_environment(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}))
    store = tmp_path / "elsewhere.db"
    run_id = cli(
        "run", str(suite), "--store", str(store), "-q", env={"IRONBENCH_OUT": str(tmp_path / "o")}, check=True
    ).stdout.strip()
    assert store.exists() and (tmp_path / "o" / run_id / "metadata.json").exists()


def test_variants_previews_with_a_diff_and_invokes_nothing(tmp_path):
    result = cli("variants", "suites/adversarial.yaml", check=True)
    assert "adversarial/simple_cache:" in result.stdout
    assert "lexical_shuffle/variant_0001:" in result.stdout and "[-" in result.stdout and "{+" in result.stdout
    stress = cli("variants", "suites/stress.yaml", check=True)
    # each level against the one below it: the ladder is cumulative
    assert "level_4 (add_multi_objective): " in stress.stdout and "{+" in stress.stdout
    assert "level_0 (unchanged):" in stress.stdout and "level 0: the unchanged instruction" in stress.stdout


def test_unknown_generator_is_one_line_exit_2(tmp_path):
    suite = tmp_path / "adv.yaml"
    suite.write_text(
        "suite_id: s\nmode: adversarial\ncases:\n  - id: a\n    instruction: Write a parser.\n"
        "    generators:\n      - {generator: emoji_noise, count: 2}\n"
    )
    for command in (("run", str(suite), "--out", str(tmp_path / "out")), ("variants", str(suite))):
        result = cli(*command)
        assert result.returncode == 2
        assert result.stderr.startswith(
            f"ironbench: error: {suite}: cases[0].generators[0]: unknown generator 'emoji_noise' (known: "
        )
    assert not (tmp_path / "out").exists()


def test_plan_answers_how_many_runs_a_comparison_needs():
    result = cli("plan", "--p", "0.9", "--drop", "0.2", "--cases", "10", check=True)
    assert result.stdout.startswith(
        "to detect a drop from 90% to 70% success in 10 case(s) with 80% power at "
        "alpha 0.05: 6 runs per case on each side"
    )
    data = json.loads(cli("plan", "--p", "0.9", "--drop", "0.2", "--format", "json", check=True).stdout)
    assert data["runs_per_case"] == 56 and data["power_reached"] >= 0.8
    assert [row["runs_per_case"] for row in data["curve"]] == [14, 28, 56, 112]
    bad = cli("plan", "--p", "0.3", "--drop", "0.5")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "ironbench: error: --drop 0.5: must be above 0 and at most --p 0.3 (a rate cannot fall below 0)"
    ]


@pytest.mark.slow
def test_show_states_what_a_stable_decision_supports(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10}))
    out = str(tmp_path / "out")
    run_id = cli("run", str(suite), "--out", out, "-q", check=True).stdout.strip()
    shown = json.loads(cli("show", run_id, "--out", out, "--format", "json", check=True).stdout)
    [case] = shown["cases"]
    assert case["decision"] == "stable" and case["reproduce_lower_95"] == 0.368
    table = cli("show", run_id, "--out", out, check=True).stdout
    assert "reproduce_lower_95" in table and "0.368" in table


def test_compare_rejects_unknown_gate_values(tmp_path):
    result = cli("compare", "a", "b", "--gate", "sometimes", "--out", str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr


@pytest.mark.slow
def test_a_target_that_cannot_start_stops_the_run_with_its_stderr(tmp_path):
    import sys

    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3, "b": 3}))
    out = tmp_path / "out"
    missing = tmp_path / "missing.py"
    result = cli(
        "run",
        str(suite),
        "--target",
        f"{shlex.join([sys.executable, str(missing)])} {{instruction}}",
        "--out",
        str(out),
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "the target cannot start. Its first 3 invocations exited with code 2" in result.stderr
    assert "can't open file" in result.stderr and "Hint: run it by hand" in result.stderr
    with sqlite3.connect(out / "ironbench.db") as conn:
        run_id, status = conn.execute("SELECT run_id, status FROM runs").fetchone()
        assert conn.execute("SELECT count(*) FROM invocations").fetchone()[0] == 3
        assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0  # never "stable, 0/3"
    assert status == "aborted"
    log = cli("log", run_id, "a", "--run", "1", "--out", str(out), check=True).stdout
    assert log.startswith(f"== {run_id} baseline/a/run_001 (exit 2; failure_stage unknown;")
    assert "-- stderr --" in log and "can't open file" in log
    assert cli("log", run_id, "zzz", "--out", str(out)).returncode == 2


@pytest.mark.slow
def test_the_readme_order_with_the_real_progress_reporter(tmp_path):
    """Baseline first, then adversarial against the stored baseline, then a mixed suite
    twice: every run without -q, so the progress bar meets early decisions."""
    from ironbench.suite.models import parse_suite
    from tests.conftest import SCRIPTED_TARGET

    instruction = "Write a Python function that reverses the order of words in a sentence."
    out = str(tmp_path / "out")
    env = {"SCRIPTED_OUTCOMES": json.dumps({"c": ["success"], "s/level_2": ["generation"]})}
    baseline = write_suite(
        tmp_path / "baseline.yaml",
        parse_suite(
            {
                "suite_id": "b",
                "mode": "baseline",
                "target": SCRIPTED_TARGET,
                "cases": [{"id": "c", "instruction": instruction, "runs": 3}],
            },
            "b.yaml",
        ),
    )
    adversarial = write_suite(
        tmp_path / "adversarial.yaml",
        parse_suite(
            {
                "suite_id": "a",
                "mode": "adversarial",
                "target": SCRIPTED_TARGET,
                "cases": [
                    {
                        "id": "c",
                        "instruction": instruction,
                        "generators": [{"generator": "whitespace_noise", "count": 2, "seed": 1}],
                    }
                ],
            },
            "a.yaml",
        ),
    )
    demo = write_suite(
        tmp_path / "demo.yaml",
        parse_suite(
            {
                "suite_id": "demo",
                "mode": "mixed",
                "target": SCRIPTED_TARGET,
                "cases": [
                    {"id": "c", "mode": "baseline", "instruction": instruction, "runs": 3},
                    {
                        "id": "w",
                        "mode": "adversarial",
                        "instruction": instruction,
                        "generators": [{"generator": "whitespace_noise", "count": 1, "seed": 1}],
                    },
                    {
                        "id": "s",
                        "mode": "stress",
                        "instruction": instruction,
                        "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 5, "runs_per_level": 2},
                    },
                ],
            },
            "demo.yaml",
        ),
    )
    run_ids, consoles = [], []
    for suite in (baseline, adversarial, demo, demo):
        result = cli("run", str(suite), "--out", out, env=env)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        run_ids.append(result.stdout.strip())
        consoles.append(result.stderr)
    # one line per decision, saying what its runs support
    assert (
        "  baseline/c: stable after 3 runs, 3/3 succeeded; this outcome recurs with probability >= 0.37 "
        "(one-sided 95%)" in consoles[0]
    )
    assert (
        "  stress/s/level_2: systematic_failure after 2 runs, 0/2 succeeded; success rate <= 0.78 "
        "(one-sided 95%); p = 0.167 against level 0" in consoles[3]
    )
    assert (
        "  stress/s: tentative: level 2 fails systematically, but not significantly worse than level 0 "
        "(2/2 succeeded): p = 0.167 > 0.05/2; with 2 runs no outcome could be" in consoles[3]
    )
    second = cli("show", run_ids[1], "--out", out, check=True).stdout
    assert f"reference c: judged against baseline baseline/c of run {run_ids[0]}" in second
    last = cli("show", run_ids[3], "--out", out, check=True).stdout
    # 0/2 at level 2 against 2/2 at level 0 cannot be told apart (Fisher p = 1/6)
    assert "stress s: tentative boundary at level 2" in last
    statuses = json.loads(cli("runs", "--out", out, "-f", "json", check=True).stdout)
    assert [r["status"] for r in statuses] == ["finished"] * 4


@pytest.mark.slow
def test_label_and_recorded_environment_reach_metadata_and_events(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}, record_env=["IRONBENCH_TEST_HOST", "UNSET_VAR_X"]))
    out = tmp_path / "out"
    run_id = cli(
        "run",
        str(suite),
        "--out",
        str(out),
        "-q",
        "--label",
        "ollama on gpu-2",
        env={"IRONBENCH_TEST_HOST": "http://gpu-2:11434"},
        check=True,
    ).stdout.strip()
    metadata = json.loads((out / run_id / "metadata.json").read_text())
    assert metadata["label"] == "ollama on gpu-2"
    assert metadata["environment"] == {"IRONBENCH_TEST_HOST": "http://gpu-2:11434", "UNSET_VAR_X": None}
    with sqlite3.connect(out / "ironbench.db") as conn:
        payload = json.loads(conn.execute("SELECT payload FROM events WHERE type = 'run_started'").fetchone()[0])
    assert payload["label"] == "ollama on gpu-2" and payload["environment"] == metadata["environment"]
    listed = json.loads(cli("runs", "--out", str(out), "-f", "json", check=True).stdout)
    assert listed[0]["label"] == "ollama on gpu-2"
