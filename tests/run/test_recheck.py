"""`ironbench check RUN` on a run made on Dask: the bricks its workers saved are checked on the
cluster, where they are (ironbench/run/recheck.py)."""

import sqlite3
from pathlib import Path

import pytest
import yaml

from tests.conftest import cli
from tests.fixtures.dask_cluster import LoopbackCluster
from tests.fixtures.humaneval_target import target, write_data

pytest.importorskip("distributed")

RECHECKS = "SELECT count(*) FROM events WHERE type = 'check_completed' AND json_extract(payload, '$.recheck')"
NO_SCHEDULER = {"IRONBENCH_SCHEDULER": "", "IRONBENCH_SCHEDULER_TIMEOUT": "3"}


def _rows(out: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return conn.execute(sql).fetchall()


def _strict(path: Path) -> Path:
    """A suite whose check every brick fails (it names a function no brick defines)."""
    cases = [{"id": f"humaneval_{n}", "instruction": "Write a function."} for n in range(164)]
    strict = {"python": "def check(candidate):\n    assert False\n", "entry_point": "no_such_function"}
    path.write_text(yaml.safe_dump({"suite_id": "strict", "mode": "baseline", "check": strict, "cases": cases}))
    return path


@pytest.mark.slow
def test_check_on_a_dask_run_checks_every_brick_on_the_cluster(tmp_path):
    data = write_data(tmp_path / "problems.json")
    strict = _strict(tmp_path / "strict.yaml")
    (tmp_path / "cluster").mkdir()
    cluster = LoopbackCluster(tmp_path / "cluster")
    out = tmp_path / "out"
    try:
        cluster.worker("w1", 2)
        cluster.wait_for_workers(1)
        run_id = cli(
            "run", "humaneval", "--sample", "4", "--seed", "5", "--target", target("canonical", data),
            "--out", str(out), "-q", "--no-report", "--scheduler", cluster.address, check=True,
        ).stdout.strip()  # fmt: skip
        # checked during the run, on the worker that saved each brick
        assert _rows(out, "SELECT verdict, recheck, count(*) FROM checks GROUP BY 1, 2") == [("correct", 0, 4)]
        paths = [
            p
            for (p,) in _rows(
                out, "SELECT json_extract(payload, '$.debug_path') FROM events WHERE type = 'invocation_completed'"
            )
        ]
        assert all(p.split(":", 1)[1].startswith(str(cluster.root / "w1_workdirs")) for p in paths), paths

        # --scheduler: every brick checked again on the cluster, none skipped
        result = cli(
            "check", run_id, "--suite", str(strict), "--scheduler", cluster.address, "--out", str(out), check=True
        )
        assert result.stdout.strip() == (
            f"{run_id}: checked 4 saved bricks (4 no_entry_point), 4 on the Dask cluster at {cluster.address}"
        )
        assert "skipped" not in result.stderr
        assert _rows(out, "SELECT DISTINCT check_verdict FROM invocations") == [("no_entry_point",)]
        assert _rows(out, RECHECKS) == [(4,)]

        # no --scheduler: the cluster the run recorded, reachable still, with the run's own checks
        result = cli("check", run_id, "--out", str(out), env=NO_SCHEDULER, check=True)
        assert (
            result.stdout.strip()
            == f"{run_id}: checked 4 saved bricks (4 correct), 4 on the Dask cluster at {cluster.address}"
        )
        assert _rows(out, "SELECT DISTINCT check_verdict FROM invocations") == [("correct",)]
        assert _rows(out, RECHECKS) == [(8,)]
    finally:
        cluster.stop()

    # the cluster gone: a --scheduler that cannot be reached is one line (exit 2), nothing added
    gone = cli(
        "check", run_id, "--scheduler", cluster.address, "--out", str(out), env={"IRONBENCH_SCHEDULER_TIMEOUT": "3"}
    )
    assert gone.returncode == 2 and len(gone.stderr.strip().splitlines()) == 1, gone.stderr
    assert "cannot reach the Dask scheduler" in gone.stderr
    # without one: the workers' paths are on this machine (loopback), so they are checked here
    result = cli("check", run_id, "--suite", str(strict), "--out", str(out), env=NO_SCHEDULER, check=True)
    assert result.stdout.strip() == f"{run_id}: checked 4 saved bricks (4 no_entry_point)"
    assert "not on the run's Dask cluster" in result.stderr
    assert _rows(out, RECHECKS) == [(12,)]
    # and where they are not (a worker's disk elsewhere), it says so in one line
    (cluster.root / "w1_workdirs").rename(cluster.root / "elsewhere")
    result = cli("check", run_id, "--out", str(out), env=NO_SCHEDULER, check=True)
    assert result.stdout.strip() == f"{run_id}: checked 0 saved bricks (none); 4 skipped"
    skipped = [line for line in result.stderr.splitlines() if "skipped" in line]
    assert len(skipped) == 1 and "4 bricks saved on Dask workers' disks that are not on this machine" in skipped[0]
    assert "--scheduler" in skipped[0]
    assert _rows(out, RECHECKS) == [(12,)]
