"""`ironbench run SUITE --against RUN_A`: the sequential regression gate through the front door."""

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, cli
from tests.fixtures.dask_cluster import LoopbackCluster

# The end-to-end tier (`pytest -m slow`): gated runs, killed and resumed, on a cluster.
pytestmark = pytest.mark.slow

COIN = Path(__file__).resolve().parents[1] / "fixtures" / "coin_target.py"
CASES = 8


def coin(rate: float, seed: str) -> str:
    return f"{shlex.join([sys.executable, str(COIN), str(rate), str(seed)])} {{instruction}}"


def write_coin_suite(path: Path, cases: int = CASES, runs: int = 8, suite_id: str = "coin") -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "suite_id": suite_id,
                "mode": "baseline",
                "timeout_seconds": 30,
                "debug_enabled": False,
                "rules": "exit-code",
                "stop": {"rule": "fixed", "runs": runs},
                "cases": [{"id": f"case_{k:02d}", "instruction": f"Task {k}."} for k in range(cases)],
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """Main's run: 8 cases x 8 runs at 80% success, kept in the store."""
    root = tmp_path_factory.mktemp("gate")
    suite = write_coin_suite(root / "coin.yaml")
    out = root / "out"
    run_a = cli("run", str(suite), "--target", coin(0.8, "main"), "--out", str(out), "-q", "--no-report", check=True)
    return suite, out, run_a.stdout.strip()


def gate_rows(out: Path, run_id: str) -> tuple[list, int]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        looks = conn.execute(
            "SELECT round, look, invocations, round(z, 9), decision, failed FROM gate_looks WHERE run_id = ? "
            "ORDER BY round",
            (run_id,),
        ).fetchall()
        invocations = conn.execute("SELECT count(*) FROM invocations WHERE run_id = ?", (run_id,)).fetchone()[0]
    return looks, invocations


def branch(reference, rate: float, seed: str, *extra: str, out: Path | None = None):
    suite, ref_out, run_a = reference
    return cli(
        "run", str(suite), "--target", coin(rate, seed), "--against", run_a, "--drop", "0.3",
        "--out", str(out or ref_out), "--no-report", *extra,
    )  # fmt: skip


def test_a_broken_branch_fails_early_and_a_sound_one_passes_with_fewer_invocations(reference):
    _, out, _ = reference
    broken = branch(reference, 0.2, "broken", "-q")
    assert broken.returncode == 1, broken.stderr
    sound = branch(reference, 0.8, "sound", "-q")
    assert sound.returncode == 0, sound.stderr
    for result, verdict in ((broken, "success rate is lower than A's"), (sound, "is not worse than A by 30%")):
        run_id = result.stdout.strip()
        looks, invocations = gate_rows(out, run_id)
        assert looks[-1][2] == invocations < 8 * CASES  # stopped before the fixed design's size
        assert [r[0] for r in looks] == sorted({r[0] for r in looks})  # one look per round
        said = " ".join(result.stderr.split())  # the verdict lines, unwrapped
        assert verdict in said and f"{invocations} invocations of B, against the fixed design's" in said
        shown = cli("show", run_id, "--out", str(out), check=True).stdout
        assert "gate verdict" in shown and "look 1 after round" in shown
    compared = cli("compare", reference[2], broken.stdout.strip(), "--out", str(out))
    assert "ignores that stopping" in compared.stdout


def test_any_jobs_takes_the_same_looks_and_invocations(reference, tmp_path):
    _, out, _ = reference
    one = branch(reference, 0.6, "jobs", "-q", "--jobs", "1")
    many = branch(reference, 0.6, "jobs", "-q", "--jobs", "5")
    assert one.returncode == many.returncode
    assert gate_rows(out, one.stdout.strip()) == gate_rows(out, many.stdout.strip())


def test_bad_references_are_one_line_and_write_nothing(reference, tmp_path):
    suite, out, run_a = reference
    other = write_coin_suite(tmp_path / "other.yaml", suite_id="other")
    with sqlite3.connect(out / "ironbench.db") as conn:
        runs_before = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    for args, message in (
        ((str(suite), "--against", "run_nope"), "no such run"),
        ((str(other), "--against", run_a), "it ran suite coin, not other"),
        ((str(suite), "--against", run_a, "--drop", "1.5"), "--drop"),
    ):
        result = cli("run", *args, "--target", coin(0.8, "x"), "--out", str(out), "-q", "--no-report")
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and "Traceback" not in result.stderr
    with sqlite3.connect(out / "ironbench.db") as conn:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == runs_before


def test_a_killed_gate_resumes_without_looking_twice_and_decides_as_if_uninterrupted(reference, tmp_path):
    suite, ref_out, run_a = reference
    out = tmp_path / "out"
    store = out / "ironbench.db"
    out.mkdir()
    # the reference run's store, copied: a branch's CI job restores main's store the same way
    with sqlite3.connect(ref_out / "ironbench.db") as source, sqlite3.connect(store) as target:
        source.backup(target)
    command = [
        sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--target", coin(0.6, "resume"),
        "--against", run_a, "--drop", "0.3", "--out", str(out), "-q", "--no-report", "--jobs", "2",
    ]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "COIN_SLEEP_MS": "400"},  # a round of 8 on 2 jobs: >= 1.6 s to be killed in
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    with sqlite3.connect(store) as conn:  # the copied store holds the earlier branches' looks
        earlier = conn.execute("SELECT count(*) FROM gate_looks").fetchone()[0]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with sqlite3.connect(store) as conn:
            if conn.execute("SELECT count(*) FROM gate_looks").fetchone()[0] > earlier:
                break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    with sqlite3.connect(store) as conn:
        running = conn.execute("SELECT run_id FROM runs WHERE status = 'running'").fetchone()
        statuses = conn.execute("SELECT run_id, status FROM runs").fetchall()
    assert running is not None, f"ended before the kill: {statuses} {process.stderr.read().decode()[-600:]}"
    run_b = running[0]
    resumed = cli("resume", run_b, "--out", str(out), "-q", "--no-report")
    assert resumed.returncode in (0, 1), resumed.stderr
    looks, invocations = gate_rows(out, run_b)
    with sqlite3.connect(store) as conn:
        recorded = conn.execute(
            "SELECT json_extract(payload, '$.round') FROM events WHERE run_id = ? AND type = 'gate_looked'", (run_b,)
        ).fetchall()
    assert len(recorded) == len({r[0] for r in recorded}), "a round was looked at twice"
    # the same flips, the same looks, the same exit as a run nobody killed
    control = branch(reference, 0.6, "resume", "-q")
    assert (looks, invocations) == gate_rows(ref_out, control.stdout.strip())
    assert resumed.returncode == control.returncode


def test_on_a_dask_cluster_the_gate_looks_as_one_local_job(reference, tmp_path):
    cluster = LoopbackCluster(tmp_path)
    try:
        cluster.worker("w1", 3)
        cluster.wait_for_workers(1)
        _, out, _ = reference
        local = branch(reference, 0.6, "dask", "-q", "--jobs", "1")
        remote = branch(reference, 0.6, "dask", "-q", "--scheduler", cluster.address)
    finally:
        cluster.stop()
    assert remote.returncode == local.returncode, remote.stderr
    assert gate_rows(out, remote.stdout.strip()) == gate_rows(out, local.stdout.strip())
