import json
from pathlib import Path

import pytest

from tests.conftest import cli, make_suite, write_suite


@pytest.mark.slow
def test_run_ends_with_the_verdict_and_the_report_and_report_rewrites_it(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 5, "b": 5}))
    out = tmp_path / "out"
    env = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success"], "b": ["generation", "success"]})}
    result = cli("run", str(suite), "--out", str(out), env=env, check=True)
    run_id = result.stdout.strip()
    assert run_id.startswith("run_") and "\n" not in run_id  # stdout stays the run id alone
    page = out / run_id / "report.html"
    assert f"report: {page}" in result.stderr.splitlines()
    verdict = result.stderr[result.stderr.index("• Baseline:") :]
    assert "• Baseline: 2 of 2 instructions stable" in verdict
    # what the runs support, and no more: b agreed in 3 of its 4 runs
    assert "3/4 → the outcome recurs with probability ≥ 0.25 (one-sided 95%) for b; 3/3 → ≥ 0.37 for a" in " ".join(
        verdict.split()
    )
    assert all(len(line) <= 100 for line in verdict.splitlines() if not line.startswith("report: "))
    assert page.read_text().startswith("<!doctype html>")

    page.unlink()
    again = cli("report", run_id, "--out", str(out), check=True)
    assert again.stdout.strip() == str(page) and page.exists()

    second = cli(
        "run",
        str(suite),
        "--out",
        str(out),
        "-q",
        "--no-report",
        env={"SCRIPTED_OUTCOMES": json.dumps({"a": ["generation"], "b": ["generation"]})},
        check=True,
    )
    regressed = second.stdout.strip()
    # quiet: no prose, no report; only the problem a quiet run still says (every invocation failed)
    assert second.stderr.splitlines() == [
        f"{regressed}: every invocation failed (6 of 6); `ironbench log {regressed} CASE` shows what each printed"
    ]
    assert not (out / regressed).joinpath("report.html").exists()
    compared = cli("report", regressed, "--compare", run_id, "--out", str(out), check=True).stdout.strip()
    assert compared == str(out / regressed / f"compare_{run_id}.html")
    text = (out / regressed / f"compare_{run_id}.html").read_text()
    assert '<section id="compare">' in text and "Gate: REGRESSION" in text
    chosen = tmp_path / "elsewhere" / "page.html"
    assert cli("report", run_id, "--out", str(out), "--output", str(chosen), check=True).stdout.strip() == str(chosen)
    assert chosen.exists()


@pytest.mark.slow
def test_a_stress_run_ends_with_each_ladders_verdict_and_its_evidence(tmp_path):
    from ironbench.suite.models import parse_suite
    from tests.conftest import SCRIPTED_TARGET

    suite = write_suite(
        tmp_path / "s.yaml",
        parse_suite(
            {
                "suite_id": "st",
                "mode": "stress",
                "target": SCRIPTED_TARGET,
                "cases": [
                    {
                        "id": "s",
                        "instruction": "Write a function named s.",
                        "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 5, "runs_per_level": 3},
                    },
                    {
                        "id": "f",
                        "instruction": "Write a function named f.",
                        "ladder": {"generator": "add_scope_detail", "additions": 2, "seed": 5, "runs_per_level": 3},
                    },
                ],
            },
            "s.yaml",
        ),
    )
    env = {
        "SCRIPTED_OUTCOMES": json.dumps(
            {
                "s/level_0": ["success", "generation", "success"],
                "s": ["success"],
                "s/level_2": ["generation"],
                "f": ["generation"],
            }
        )
    }
    result = cli("run", str(suite), "--out", str(tmp_path / "out"), env=env, check=True)
    said = " ".join(result.stderr[result.stderr.index("• Stress:") :].split())
    assert (
        "s (add_scope_detail): tentative boundary at level 2: it fails systematically, but is not shown to be "
        "worse than level 0. Level 2: 0/3 = 0% (95% CI 0%–56%; 0/3 still allows 63%); level 0 (the unchanged "
        "instruction): 2/3 = 67% (95% CI 21%–94%); level 2 against level 0: p = 0.2 > 0.05/2"
    ) in said
    assert "f (add_scope_detail): fails at base: level 0, the unchanged instruction, already fails" in said


@pytest.mark.slow
def test_quiet_run_prints_only_the_report_path_and_resume_writes_it_too(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}))
    out = tmp_path / "out"
    result = cli("run", str(suite), "--out", str(out), "-q", check=True)
    run_id = result.stdout.strip()
    assert result.stderr.splitlines() == [f"report: {out / run_id / 'report.html'}"]
    (out / run_id / "report.html").unlink()
    resumed = cli("resume", run_id, "--out", str(out), check=True)
    assert resumed.stdout.strip() == f"{run_id} already finished"
    assert "• Baseline: 1 of 1 instruction stable" in resumed.stderr
    assert (out / run_id / "report.html").exists()


@pytest.mark.slow
def test_report_on_an_unknown_run_is_one_line_exit_2_and_writes_nothing(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 3}))
    out = tmp_path / "out"
    run_id = cli("run", str(suite), "--out", str(out), "-q", "--no-report", check=True).stdout.strip()
    for args in (("report", "run_nope"), ("report", run_id, "--compare", "run_nope")):
        result = cli(*args, "--out", str(out))
        assert result.returncode == 2, args
        assert result.stderr.startswith("ironbench: error: ") and len(result.stderr.strip().splitlines()) == 1
        assert "run_nope" in result.stderr
    assert not list(out.rglob("*.html"))


@pytest.mark.slow
def test_a_rebuild_of_a_deleted_folder_gives_back_every_file_the_report_included(tmp_path):
    """Having a report is a fact of the run (a report_written event), not of a file on disk."""
    import shutil

    from tests.projections.test_tree import snapshot

    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 5, "b": 5}))
    out = tmp_path / "out"
    env = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success"], "b": ["generation", "success"]})}
    reported = cli("run", str(suite), "--out", str(out), "-q", env=env, check=True).stdout.strip()
    silent = cli("run", str(suite), "--out", str(out), "-q", "--no-report", env=env, check=True).stdout.strip()
    written = cli("report", reported, "--out", str(out), check=True).stdout.strip()  # what `report` writes
    before = {run_id: snapshot(out / run_id) for run_id in (reported, silent)}
    assert "report.html" in before[reported] and "report.html" not in before[silent]
    assert (
        before[reported]["report.html"] == (out / reported / "report.html").read_bytes() == Path(written).read_bytes()
    )
    for run_id in (reported, silent):
        shutil.rmtree(out / run_id)
        rebuilt = cli("project", run_id, "--rebuild", "--out", str(out), check=True).stdout.strip()
        assert rebuilt == str(out / run_id)
        assert snapshot(out / run_id) == before[run_id]  # byte for byte, the report as `report` wrote it
