"""Correctness in the rules, through the front door: `equivalence` with `correct` replays a
baseline until its check verdicts agree too; in adversarial mode with a check, a variant whose
correctness flips is material (repeated and classed)."""

import json
import sqlite3
from pathlib import Path

import pytest
import yaml

from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET, cli

# the scripted brick returns 1 ("success"), or the text after the colon ("success:0" returns '0')
CHECK = {"python": "def check(candidate):\n    assert candidate() == 1\n", "entry_point": "brick"}
ALTERNATING = ["success", "success:0"] * 5  # right on odd runs, wrong on even ones; verified every time
INSTRUCTION = "Write a Python class implementing a simple cache with get, set and a maximum size."


def write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump({"target": SCRIPTED_TARGET, "timeout_seconds": 30, **data}, sort_keys=False))
    return path


def run(suite: Path, out: Path, script: dict) -> str:
    env = {"SCRIPTED_OUTCOMES": json.dumps(script)}
    return cli("run", str(suite), "--out", str(out), "-q", "--no-report", env=env, check=True).stdout.strip()


def decisions(out: Path, run_id: str) -> dict[str, tuple[str, int]]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return {
            variant: (decision, n)
            for variant, decision, n in conn.execute(
                "SELECT variant_id, decision, n FROM decisions WHERE run_id = ?", (run_id,)
            )
        }


def baseline(tmp_path: Path, **settings) -> Path:
    cases = [{"id": "flaky", "instruction": "Write a function named brick that returns 1.", "runs": 10}]
    return write(tmp_path / "b.yaml", {"suite_id": "b", "mode": "baseline", "check": CHECK, **settings, "cases": cases})


@pytest.mark.slow
def test_a_baseline_right_on_odd_runs_does_not_settle_when_correctness_counts(tmp_path):
    out = tmp_path / "out"
    spec = run(baseline(tmp_path), out, {"flaky": ALTERNATING})
    assert decisions(out, spec) == {"base": ("stable", 3)}  # the spec's equivalence: verified 3 times
    fields = ["success", "failure_stage", "attempts", "repairs_triggered", "correct"]
    counted = run(baseline(tmp_path, equivalence=fields), out, {"flaky": ALTERNATING})
    assert decisions(out, counted) == {"base": ("exhausted", 10)}  # never 3 agreeing verdicts in a row
    steady = run(baseline(tmp_path, equivalence=fields), out, {"flaky": ["success:0"]})
    assert decisions(out, steady) == {"base": ("stable", 3)}  # wrong every time: that agrees
    shown = cli("show", counted, "--out", str(out), check=True).stdout
    assert "exhausted" in shown


def test_correct_in_equivalence_needs_a_check_and_the_spec_s_four_stay(tmp_path):
    fields = ["success", "failure_stage", "attempts", "repairs_triggered", "correct"]
    unchecked = write(
        tmp_path / "u.yaml",
        {"suite_id": "u", "mode": "baseline", "equivalence": fields, "cases": [{"id": "a", "instruction": "Add."}]},
    )
    result = cli("variants", str(unchecked))
    assert result.returncode == 2 and "no case of this suite has a check" in result.stderr
    short = baseline(tmp_path, equivalence=["success", "correct"])
    result = cli("variants", str(short))
    assert result.returncode == 2 and "failure_stage, attempts, repairs_triggered missing" in result.stderr
    assert parse_suite(
        {"suite_id": "s", "mode": "baseline", "cases": [{"id": "a", "instruction": "Add."}]}, "s"
    ).equivalence == [
        "success",
        "failure_stage",
        "attempts",
        "repairs_triggered",
    ]


@pytest.mark.slow
def test_a_variant_whose_correctness_flips_is_repeated_and_classed(tmp_path):
    out = tmp_path / "out"
    cases = [{"id": "c", "instruction": INSTRUCTION, "variants": [{"generator": "punctuation_noise", "count": 1}]}]
    script = {"c/baseline": ["success"], "c/punctuation_noise": ["success:0"]}  # verified, but wrong
    checked = write(tmp_path / "a.yaml", {"suite_id": "a", "mode": "adversarial", "check": CHECK, "cases": cases})
    run_id = run(checked, out, script)
    found = decisions(out, run_id)
    assert found["punctuation_noise/variant_0001"] == ("structural", 4)  # repeated 3 times: wrong every time
    with sqlite3.connect(out / "ironbench.db") as conn:
        (direction,) = conn.execute(
            "SELECT direction FROM decisions WHERE run_id = ? AND decision = 'structural'", (run_id,)
        ).fetchone()
    assert direction == "correctness lost"
    # without a check, self-reported success alone: the same runs change nothing
    unchecked = write(tmp_path / "n.yaml", {"suite_id": "n", "mode": "adversarial", "cases": cases})
    plain = run(unchecked, out, script)
    assert decisions(out, plain)["punctuation_noise/variant_0001"] == ("not_material", 1)
