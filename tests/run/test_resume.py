"""Kill a run with SIGKILL part-way, resume it, and account for every invocation."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from ironbench.projections.rebuild import project_run
from ironbench.run.runner import RunPaths
from tests.conftest import REPO, cli, make_suite, write_suite
from tests.projections.test_tree import snapshot

OUTCOMES = {
    "a": ["success", "generation"] * 5,  # never agrees: all 10 runs
    "b": ["validation", "success", "generation", "success", "success", "success"],  # stable at 6
    "c": ["success_r1"],  # stable at 3
}
EXPECTED_RUNS = {"a": 10, "b": 6, "c": 3}


def completed_count(store) -> int:
    try:
        with sqlite3.connect(store) as conn:
            return conn.execute("SELECT count(*) FROM events WHERE type='invocation_completed'").fetchone()[0]
    except sqlite3.Error:
        return 0


@pytest.mark.slow
def test_sigkill_then_resume_loses_and_repeats_nothing(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10, "b": 10, "c": 10}))
    out = tmp_path / "out"
    env = {**os.environ, "SCRIPTED_OUTCOMES": json.dumps(OUTCOMES), "SCRIPTED_SLEEP_MS": "150"}
    process = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(out), "-q", "--jobs", "2"],
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while completed_count(out / "ironbench.db") < 7 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    killed_at = completed_count(out / "ironbench.db")
    assert 7 <= killed_at < sum(EXPECTED_RUNS.values())

    with sqlite3.connect(out / "ironbench.db") as conn:
        run_id = conn.execute("SELECT run_id FROM runs").fetchone()[0]
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "running"

    resumed = cli("resume", run_id, "--out", str(out), "-q", env={k: env[k] for k in ("SCRIPTED_OUTCOMES",)})
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == f"{run_id} finished"

    with sqlite3.connect(out / "ironbench.db") as conn:
        keys = [
            r[0]
            for r in conn.execute("SELECT json_extract(payload, '$.key') FROM events WHERE type='invocation_completed'")
        ]
        per_case = dict(conn.execute("SELECT case_id, count(*) FROM invocations GROUP BY case_id").fetchall())
        indices = conn.execute(
            "SELECT case_id, group_concat(run_index) FROM "
            "(SELECT * FROM invocations ORDER BY run_index) GROUP BY case_id"
        ).fetchall()
        finished = conn.execute("SELECT count(*) FROM events WHERE type='run_finished'").fetchone()[0]
        decisions = conn.execute("SELECT count(*) FROM events WHERE type='decision_taken'").fetchone()[0]
    assert len(keys) == len(set(keys)), "an invocation was recorded twice"
    assert per_case == EXPECTED_RUNS, "an invocation was lost or repeated"
    for case_id, joined in indices:
        assert [int(i) for i in joined.split(",")] == list(range(1, EXPECTED_RUNS[case_id] + 1))
    assert finished == 1 and decisions == 3

    run_dir = out / run_id
    for case_id, runs in EXPECTED_RUNS.items():
        assert len(list((run_dir / "baseline" / case_id).glob("run_*"))) == runs
        aggregate = json.loads((run_dir / "baseline" / case_id / "aggregate.json").read_text())
        assert aggregate["total_runs"] == runs
    assert json.loads((run_dir / "metadata.json").read_text())["status"] == "finished"
    before = snapshot(run_dir)
    paths = RunPaths.resolve(out, None)
    project_run(paths.store_path, paths.out_dir, run_id, rebuild=True)
    assert snapshot(run_dir) == before


@pytest.mark.slow
def test_resuming_a_finished_run_does_nothing(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"c": 3}))
    out = str(tmp_path / "out")
    run_id = cli("run", str(suite), "--out", out, "-q", check=True).stdout.strip()
    result = cli("resume", run_id, "--out", out, "-q", check=True)
    assert result.stdout.strip() == f"{run_id} already finished"
    with sqlite3.connect(tmp_path / "out" / "ironbench.db") as conn:
        assert conn.execute("SELECT count(*) FROM events WHERE type='invocation_completed'").fetchone()[0] == 3
