"""References prove the checks, through the front door: a broken check named first and its cases'
verdicts harness faults, `ironbench check --references`, timeouts calibrated on the reference."""

import json
import shlex
import sqlite3
from pathlib import Path

import pytest
import yaml

from tests.conftest import SCRIPTED_TARGET, cli, past_fence

REFERENCE = "def brick():\n    return 1\n"


def rows(out: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return conn.execute(sql, args).fetchall()


def payloads(out: Path, event_type: str) -> list[dict]:
    return [json.loads(p) for (p,) in rows(out, "SELECT payload FROM events WHERE type = ? ORDER BY seq", event_type)]


def proven_suite(folder: Path, typo: bool = True, **fields) -> Path:
    """Three checks with references: a pytest folder (its reference a file beside the suite), a
    python check (inline; with `typo`, broken: it calls a name it never defines) and a command."""
    (folder / "checks").mkdir()
    (folder / "checks" / "check_add.py").write_text(
        "from brick import brick\n\ndef test_one():\n    assert brick() == 1\n"
    )
    (folder / "reference").mkdir()
    (folder / "reference" / "brick.py").write_text(REFERENCE)
    python = (
        "def check(candidate):\n    assert candidat() == 1\n"
        if typo
        else "def check(candidate):\n    assert candidate() == 1\n"
    )
    suite = {
        "suite_id": "proven",
        "mode": "baseline",
        "timeout_seconds": 30,
        "check": {"pytest": "checks/check_add.py", "reference": "reference/brick.py"},
        "cases": [
            {"id": "one", "instruction": "Write a function named one.", "runs": 3},
            {
                "id": "typo",
                "instruction": "Write a function named typo.",
                "runs": 3,
                "check": {"python": python, "entry_point": "brick", "reference": REFERENCE},
            },
            {
                "id": "cmd",
                "instruction": "Write a function named cmd.",
                "runs": 3,
                "check": {"command": "grep -q 'return 1' {brick}", "reference": REFERENCE},
            },
        ],
        **fields,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def run(out: Path, suite: Path, *args: str) -> tuple[str, str]:
    result = cli("run", str(suite), "--target", shlex.join(SCRIPTED_TARGET), "--out", str(out), "--no-report", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1], result.stderr


def test_one_broken_check_is_named_first_and_its_cases_are_harness_faults(tmp_path):
    out = tmp_path / "out"
    run_id, said = run(out, proven_suite(tmp_path), "--jobs", "2")
    # the run names it before anything else happens (its notes, on stderr)
    first = said.splitlines()[0]
    assert first.startswith(
        "broken check: the python check of typo fails its reference (reference.py: wrong: NameError"
    )
    assert [(p["cases"], p["verdict"]) for p in payloads(out, "check_proven")] == [
        (["one"], "correct"),
        (["typo"], "wrong"),
        (["cmd"], "correct"),
    ]
    assert rows(out, "SELECT case_id, verdict, count(*) FROM checks GROUP BY 1, 2 ORDER BY 1") == [
        ("cmd", "correct", 3),
        ("one", "correct", 3),
        ("typo", "harness_fault", 3),
    ]
    (detail,) = {d for (d,) in rows(out, "SELECT detail FROM checks WHERE case_id = 'typo'")}
    assert detail.startswith("the check is broken: it fails its reference solution (reference.py: wrong: NameError")
    # in no rate: 6 of 6 correct, the 3 faults apart, with their cause
    show = past_fence(cli("show", run_id, "--out", str(out), check=True).stdout.splitlines())
    assert show[0].startswith("BROKEN CHECK: the python check of typo fails its reference")
    assert "correct: 6 of 6 runs" in show[2] and "3 checks could not run: the check is broken" in show[2]
    assert "none saved a brick" not in "\n".join(show)
    shown = json.loads(cli("show", run_id, "--out", str(out), "--format", "json", check=True).stdout)
    assert shown["checks"]["broken_checks"] == [show[0].removeprefix("BROKEN CHECK: ")]
    # the report's verdicts (and the console's) open with it, before correctness
    cli("report", run_id, "--out", str(out), check=True)
    page = (out / run_id / "report.html").read_text()
    assert page.index("1 check failed its reference solution") < page.index("Correct (the harness&#x27;s checks)")


def test_check_references_proves_a_suite_without_a_target(tmp_path):
    suite = proven_suite(tmp_path)
    result = cli("check", "--references", str(suite), "--out", str(tmp_path / "out"), "-q")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.strip().splitlines()
    assert [line for line in lines if line.startswith("broken: ")] == [
        (
            "broken: the python check of typo fails its reference (reference.py: wrong: NameError: "
            "name 'candidat' is not defined)"
        )
    ]
    assert lines[-1].startswith("proven: 2 of 3 checks pass their references (")
    assert not (tmp_path / "out").exists()  # nothing recorded


def test_check_references_passes_and_refuses(tmp_path):
    fine = tmp_path / "fine"
    fine.mkdir()
    result = cli("check", "--references", str(proven_suite(fine, typo=False)), "--out", str(tmp_path / "out"), "-q")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("proven: 3 of 3 checks pass their references (")
    plain = tmp_path / "plain.yaml"
    plain.write_text(yaml.safe_dump({"suite_id": "p", "mode": "baseline", "cases": [{"id": "a", "instruction": "x"}]}))
    for argv, message in [
        (["--references", str(plain)], "no check names a reference solution"),
        (["run_x", "--references", str(plain)], "not both"),
        ([], "name the RUN"),
    ]:
        result = cli("check", *argv, "--out", str(tmp_path / "out"))
        assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_check_times_out_at_k_times_its_references_time_when_longer(tmp_path):
    slow = {"command": "sh -c 'sleep 0.8; grep -q return {brick}'", "reference": REFERENCE}
    suite = tmp_path / "suite.yaml"
    cases = [{"id": "slow", "instruction": "Write a function named slow.", "runs": 3}]
    suite.write_text(
        yaml.safe_dump({"suite_id": "s", "mode": "baseline", "timeout_seconds": 2, "check": slow, "cases": cases})
    )
    out = tmp_path / "out"
    run(out, suite)
    (proof,) = payloads(out, "check_proven")
    assert proof["verdict"] == "correct" and proof["calibration"] == 4 and proof["duration_ms"] >= 800
    derived = max(2000, 4 * proof["duration_ms"])
    assert [c["timeout_ms"] for c in payloads(out, "check_completed")] == [derived] * 3
    assert derived > 2000  # longer than the case's own timeout


@pytest.mark.slow
def test_humanevals_canonical_solutions_prove_its_164_checks(tmp_path):
    result = cli("check", "--references", "humaneval", "--jobs", "2", "--out", str(tmp_path / "out"), check=True)
    assert result.stdout.strip().startswith("humaneval: 164 of 164 checks pass their references (")


def test_check_run_proves_first_the_checks_the_run_did_not_prove_as_they_are(tmp_path):
    fine, broken = tmp_path / "fine", tmp_path / "broken"
    fine.mkdir()
    broken.mkdir()
    out = tmp_path / "out"
    run_id, _ = run(out, proven_suite(fine, typo=False))
    assert {p["verdict"] for p in payloads(out, "check_proven")} == {"correct"}
    # the suite's typo check changed since the run: proven again (broken); the two others stand as proven
    changed = proven_suite(broken)
    result = cli("check", run_id, "--suite", str(changed), "--out", str(out), check=True)
    assert "broken check: the python check of typo fails its reference" in result.stderr
    assert f"{run_id}: 2 checks proven by the run as they are now (--prove proves them again)" in result.stderr
    assert result.stdout.strip() == f"{run_id}: checked 9 saved bricks (6 correct, 3 harness_fault)"
    again = [(p["cases"], p["verdict"]) for p in payloads(out, "check_proven") if p["recheck"]]
    assert again == [(["typo"], "wrong")]
    # --prove proves every one again
    cli("check", run_id, "--suite", str(changed), "--out", str(out), "--prove", check=True)
    again = [(p["cases"], p["verdict"]) for p in payloads(out, "check_proven") if p["recheck"]]
    assert again[1:] == [(["one"], "correct"), (["typo"], "wrong"), (["cmd"], "correct")]
    show = past_fence(cli("show", run_id, "--out", str(out), check=True).stdout.splitlines())
    assert show[0].startswith("BROKEN CHECK: the python check of typo")
