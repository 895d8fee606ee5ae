"""Invocations on a real Dask cluster on loopback: same decisions as one local job, even
when a worker is killed mid-run (ironbench/run/executors.py)."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import FENCE_LEVEL, SCRIPTED_TARGET, cli, make_suite, write_suite
from tests.fixtures.dask_cluster import LoopbackCluster

pytest.importorskip("distributed")

# Workers give targets their own environment: the script every cluster test plays.
SCRIPT = {
    "steady": ["success"],
    "late": ["validation", "success_r1", "success", "success", "success"],
    "flip": ["success", "generation"],
    "a/baseline": ["success"],
    "a/whitespace_noise/variant_0001": ["generation", "success"],
    "a/whitespace_noise": ["success"],
    "hang": ["spawn_hang"],
}
SLEEP_MS = 250
WORKER_ENV = {"SCRIPTED_OUTCOMES": json.dumps(SCRIPT), "SCRIPTED_SLEEP_MS": str(SLEEP_MS)}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = LoopbackCluster(tmp_path_factory.mktemp("cluster"), WORKER_ENV)
    try:
        cluster.worker("w1", 3)
        cluster.worker("w2", 3)
        cluster.wait_for_workers(2)
        yield cluster
    finally:
        cluster.stop()


def _baseline_suite():
    return make_suite({"steady": 10, "late": 10, "flip": 6})


def _facts(out: Path, run_id: str):
    with sqlite3.connect(out / "ironbench.db") as conn:
        found = conn.execute(
            "SELECT group_path, decision, n, successes FROM decisions WHERE run_id = ? ORDER BY 1", (run_id,)
        ).fetchall()
        evidence = conn.execute(
            "SELECT group_path, run_index, success, attempts FROM invocations WHERE run_id = ? ORDER BY 1, 2", (run_id,)
        ).fetchall()
        keys = [
            r[0]
            for r in conn.execute(
                "SELECT idempotency_key FROM events WHERE run_id = ? AND type = 'invocation_completed'", (run_id,)
            )
        ]
    return found, evidence, keys


def _local(tmp_path, suite_file) -> tuple:
    """The same suite, one local job: what any cluster run must agree with."""
    out = tmp_path / "local"
    env = {"SCRIPTED_OUTCOMES": json.dumps(SCRIPT), "SCRIPTED_SLEEP_MS": "0", "IRONBENCH_SCHEDULER": ""}
    run_id = cli(
        "run", str(suite_file), "--out", str(out), "-q", "--no-report", "--jobs", "1", env=env, check=True
    ).stdout.strip()
    return _facts(out, run_id)


@pytest.mark.slow
def test_a_suite_on_the_cluster_decides_as_one_local_job(cluster, tmp_path):
    suite_file = write_suite(tmp_path / "s.yaml", _baseline_suite())
    out = tmp_path / "cluster"
    result = cli(
        "run", str(suite_file), "--out", str(out), "-q", "--no-report", "--scheduler", cluster.address, check=True
    )
    run_id = result.stdout.strip()
    found, evidence, keys = _facts(out, run_id)
    assert (found, evidence) == _local(tmp_path, suite_file)[:2]
    assert len(keys) == len(set(keys)) == len(evidence)
    with sqlite3.connect(out / "ironbench.db") as conn:
        payloads = [
            json.loads(p)
            for (p,) in conn.execute("SELECT payload FROM events WHERE type IN ('invocation_completed', 'run_started')")
        ]
    started, completed = payloads[0], payloads[1:]
    assert started["scheduler"] == cluster.address and started["jobs"] == 6
    # each ran in a directory on its worker, named with the worker's host
    host = os.uname().nodename
    roots = {str(cluster.root / "w1_workdirs"), str(cluster.root / "w2_workdirs")}
    for event in completed:
        where, path = event["debug_path"].split(":", 1)
        assert where == host and any(path.startswith(root) for root in roots)
        assert Path(path).is_dir() and event["stdout_path"].startswith(f"{host}:")
    # each worker fenced its targets as this machine allows, and said so in an event of its own
    with sqlite3.connect(out / "ironbench.db") as conn:
        fences = [json.loads(p) for (p,) in conn.execute("SELECT payload FROM events WHERE type = 'sandbox_applied'")]
    workers = {fence["worker"] for fence in fences}
    assert len(workers) == 2 and "coordinator" not in workers, workers
    assert {fence["level"] for fence in fences} == {FENCE_LEVEL}


@pytest.mark.slow
def test_a_worker_killed_mid_run_changes_no_decision_and_records_each_run_once(cluster, tmp_path):
    victim = cluster.worker("victim", 3)
    cluster.wait_for_workers(3)
    suite_file = write_suite(tmp_path / "s.yaml", _baseline_suite())
    out = tmp_path / "cluster"
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ironbench.cli.main",
            "run",
            str(suite_file),
            "--out",
            str(out),
            "-q",
            "--no-report",
            "--scheduler",
            cluster.address,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    victim_root = cluster.root / "victim_workdirs"
    deadline = time.monotonic() + 60
    while not _running_in(victim_root, out):  # kill it while it runs an invocation
        assert time.monotonic() < deadline and run.poll() is None, run.stderr and run.stderr.read()
        time.sleep(0.02)
    os.kill(victim.pid, signal.SIGKILL)
    killed_during = _running_in(victim_root, out)
    stdout, stderr = run.communicate(timeout=120)
    assert run.returncode == 0, stderr
    found, evidence, keys = _facts(out, stdout.strip())
    assert (found, evidence) == _local(tmp_path, suite_file)[:2]
    assert len(keys) == len(set(keys)) == len(evidence)  # exactly once, none lost
    # what the victim was running when it died was run again, by another worker, to the end
    with sqlite3.connect(out / "ironbench.db") as conn:
        finished_where = {
            e["group"] + f"/run_{e['run_index']:03d}": e["debug_path"]
            for e in map(
                json.loads,
                (p for (p,) in conn.execute("SELECT payload FROM events WHERE type = 'invocation_completed'")),
            )
        }
    assert killed_during and all(str(victim_root) not in finished_where[s] for s in killed_during)


def _running_in(root: Path, out: Path) -> list[str]:
    """Invocations whose working directory is under `root` and that have not completed."""
    started = {
        "/".join(p.relative_to(root).parts[1:])
        for p in root.glob("run_*/baseline/*/run_*")
        if (p / "ironbench_stdout.txt").exists()
    }
    if not started:
        return []
    try:
        with sqlite3.connect(f"file:{out / 'ironbench.db'}?mode=ro", uri=True) as conn:
            done = {s for (s,) in conn.execute("SELECT stream FROM events WHERE type = 'invocation_completed'")}
    except sqlite3.OperationalError:
        return []
    return sorted(started - done)


def _completed(out: Path) -> int:
    try:
        with sqlite3.connect(f"file:{out / 'ironbench.db'}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM events WHERE type = 'invocation_completed'").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_an_interrupted_local_run_resumes_on_the_cluster(cluster, tmp_path):
    suite_file = write_suite(tmp_path / "s.yaml", _baseline_suite())
    out = tmp_path / "moved"
    env = {**os.environ, "SCRIPTED_OUTCOMES": json.dumps(SCRIPT), "SCRIPTED_SLEEP_MS": str(SLEEP_MS)}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ironbench.cli.main",
            "run",
            str(suite_file),
            "--out",
            str(out),
            "-q",
            "--no-report",
            "--jobs",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    deadline = time.monotonic() + 60
    while _completed(out) < 2:
        assert time.monotonic() < deadline and run.poll() is None
        time.sleep(0.05)
    os.kill(run.pid, signal.SIGKILL)
    run.communicate(timeout=30)
    with sqlite3.connect(out / "ironbench.db") as conn:
        run_id = conn.execute("SELECT run_id FROM runs").fetchone()[0]
    resumed = cli(
        "resume", run_id, "--out", str(out), "-q", "--no-report", env={"IRONBENCH_SCHEDULER": cluster.address}
    )
    assert resumed.returncode == 0 and resumed.stdout.strip() == f"{run_id} finished", resumed.stderr
    found, evidence, keys = _facts(out, run_id)
    assert (found, evidence) == _local(tmp_path, suite_file)[:2]
    assert len(keys) == len(set(keys)) == len(evidence)


def test_a_target_missing_on_the_workers_is_one_error_before_anything_is_written(cluster, tmp_path):
    suite_file = write_suite(tmp_path / "s.yaml", make_suite({"c": 3}, target="no-such-agent-binary {instruction}"))
    result = cli("run", str(suite_file), "--out", str(tmp_path / "out"), "--scheduler", cluster.address)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "on worker tcp://127.0.0.1" in result.stderr and "no-such-agent-binary" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_an_unreachable_scheduler_is_one_error(tmp_path):
    suite_file = write_suite(tmp_path / "s.yaml", make_suite({"c": 3}))
    result = cli(
        "run",
        str(suite_file),
        "--out",
        str(tmp_path / "out"),
        "--scheduler",
        "tcp://127.0.0.1:9",
        env={"IRONBENCH_SCHEDULER_TIMEOUT": "1"},
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_variants_on_the_cluster_decide_as_one_local_job(cluster, tmp_path):
    from ironbench.suite.models import parse_suite

    suite = parse_suite(
        {
            "suite_id": "a",
            "mode": "adversarial",
            "target": SCRIPTED_TARGET,
            "cases": [
                {
                    "id": "a",
                    "instruction": "Write a Python function that adds two numbers.",
                    "generators": [{"generator": "whitespace_noise", "count": 3}],
                }
            ],
        },
        "a.yaml",
    )
    suite_file = write_suite(tmp_path / "a.yaml", suite)
    out = tmp_path / "cluster"
    run_id = cli(
        "run", str(suite_file), "--out", str(out), "-q", "--no-report", "--scheduler", cluster.address, check=True
    ).stdout.strip()
    found, evidence, _ = _facts(out, run_id)
    assert (found, evidence) == _local(tmp_path, suite_file)[:2]
    assert ("adversarial/a/whitespace_noise/variant_0001", "stochastic", 2, 1) in found


@pytest.mark.slow
def test_targets_and_their_descendants_are_contained_on_the_worker(cluster, tmp_path):
    suite_file = write_suite(tmp_path / "s.yaml", make_suite({"hang": 3}, timeout_seconds=1))
    out = tmp_path / "cluster"
    # unfenced, so that the pids the targets write are this machine's: the containment below the
    # fence is what this checks (a fence ends all it holds at once: tests/sandbox/test_fence.py)
    run_id = cli(
        "run", str(suite_file), "--out", str(out), "-q", "--no-report", "--scheduler", cluster.address,
        "--sandbox", "off", check=True,
    ).stdout.strip()  # fmt: skip
    with sqlite3.connect(out / "ironbench.db") as conn:
        timed_out = [r[0] for r in conn.execute("SELECT timed_out FROM invocations WHERE run_id = ?", (run_id,))]
    assert timed_out == [1, 1, 1]  # three at once on the workers, each killed at its timeout
    children = [
        int(p.read_text())
        for root in ("w1_workdirs", "w2_workdirs")
        for p in (cluster.root / root / run_id).rglob("child.pid")
    ]
    assert len(children) == 3
    assert not [pid for pid in children if _alive(pid)], "a grandchild outlived its invocation on the worker"


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


@pytest.mark.slow
def test_a_lost_scheduler_stops_the_run_and_resume_finishes_it_here(tmp_path):
    own = LoopbackCluster(tmp_path, WORKER_ENV)
    try:
        own.worker("w", 2)
        own.wait_for_workers(1)
        suite_file = write_suite(tmp_path / "s.yaml", _baseline_suite())
        out = tmp_path / "out"
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ironbench.cli.main",
                "run",
                str(suite_file),
                "--out",
                str(out),
                "-q",
                "--no-report",
                "--scheduler",
                own.address,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while _completed(out) < 1:
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        os.kill(own.processes[0].pid, signal.SIGKILL)
        _, stderr = run.communicate(timeout=60)
    finally:
        own.stop()
    assert run.returncode == 1 and stderr.count("\n") == 1, stderr
    assert "lost its task on the Dask cluster" in stderr and "ironbench resume" in stderr
    with sqlite3.connect(out / "ironbench.db") as conn:
        run_id = conn.execute("SELECT run_id FROM runs").fetchone()[0]
    env = {**WORKER_ENV, "SCRIPTED_SLEEP_MS": "0", "IRONBENCH_SCHEDULER": ""}
    resumed = cli("resume", run_id, "--out", str(out), "-q", "--no-report", "--jobs", "2", env=env)
    assert resumed.returncode == 0, resumed.stderr
    found, evidence, keys = _facts(out, run_id)
    assert (found, evidence) == _local(tmp_path, suite_file)[:2]
    assert len(keys) == len(set(keys)) == len(evidence)


def test_on_a_worker_its_own_secrets_are_redacted_and_paths_name_its_host(tmp_path, monkeypatch):
    from ironbench.core.redact import Redactor
    from ironbench.run.executors import InvocationSetup, Work, run_invocation
    from ironbench.run.options import RunOptions
    from ironbench.run.planner import Group
    from ironbench.sandbox import SandboxPolicy

    monkeypatch.setenv("IRONBENCH_WORKDIRS", str(tmp_path / "roots"))
    monkeypatch.setenv("WORKER_API_TOKEN", "worker-only-secret-value")
    group = Group("baseline", "baseline", "c", "base", "x", 10, 3, "baseline/c")
    work = Work(group, 1, "k", "run_x/baseline/c/run_001")
    coordinator = Redactor({"coordinator-secret-value": "COORD_TOKEN"})
    # the target is given the worker's variable (a fenced target gets none it is not given) and prints it
    on_a_worker = InvocationSetup(
        RunOptions(sandbox=SandboxPolicy(pass_env=("WORKER_API_TOKEN",))), None, False, coordinator, None
    )
    ran = run_invocation(work, on_a_worker, ["sh", "-c", 'echo "$WORKER_API_TOKEN coordinator-secret-value"'], {})
    assert ran.result.stdout.strip() == "[REDACTED:WORKER_API_TOKEN] [REDACTED:COORD_TOKEN]"
    host = os.uname().nodename
    assert ran.workdir == f"{host}:{tmp_path / 'roots' / 'run_x/baseline/c/run_001'}"
    assert ran.result.stdout_path.startswith(f"{host}:{tmp_path / 'roots'}")


@pytest.mark.slow
def test_checks_run_on_the_cluster_where_the_bricks_are(cluster, tmp_path):
    from tests.fixtures.humaneval_target import target, write_data

    data = write_data(tmp_path / "problems.json")
    mode = target("canonical,wrong=7+119,crash=135", data)
    verdicts = []
    for where in (["--scheduler", cluster.address], ["--jobs", "1"]):
        out = tmp_path / where[0].strip("-")
        cli(
            "run",
            "humaneval",
            "--sample",
            "6",
            "--seed",
            "5",
            "--target",
            mode,
            "--out",
            str(out),
            "-q",
            "--no-report",
            *where,
            check=True,
        )
        with sqlite3.connect(out / "ironbench.db") as conn:
            verdicts.append(conn.execute("SELECT case_id, check_verdict FROM invocations ORDER BY case_id").fetchall())
            if where[0] == "--scheduler":
                paths = [p for (p,) in conn.execute("SELECT brick_path FROM checks")]
    assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 6
    assert sorted(v for _, v in verdicts[0]) == ["correct"] * 3 + ["import_error", "wrong", "wrong"]
    assert paths and all(p.startswith("verified_bricks/") for p in paths)
