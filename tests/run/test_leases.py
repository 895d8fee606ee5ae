"""One run, one coordinator: a second one is refused naming the holder; a dead one's run is taken over."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ironbench.core.errors import RunLeased
from ironbench.core.events import RunAborted
from ironbench.store import open_store
from ironbench.store.eventstore import Pending
from ironbench.store.leases import Holder, claim
from tests.conftest import REPO, cli, make_suite, write_suite
from tests.run.test_resume import EXPECTED_RUNS, OUTCOMES, completed_count


def recorded(store: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT payload FROM events WHERE type = 'invocation_completed'").fetchall()
    return [(json.loads(p)["key"], json.loads(p)["rerun"]) for (p,) in rows]


def per_case(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as conn:
        return dict(conn.execute("SELECT case_id, count(*) FROM invocations GROUP BY case_id").fetchall())


def lease_row(store: Path) -> tuple | None:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT run_id, host, pid FROM run_leases").fetchone()


def start_and_kill(tmp_path: Path, at: int = 7) -> tuple[Path, str, dict[str, str]]:
    """A run SIGKILLed after `at` invocations: its lease stays behind, held by a dead process."""
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10, "b": 10, "c": 10}))
    out = tmp_path / "out"
    env = {**os.environ, "SCRIPTED_OUTCOMES": json.dumps(OUTCOMES), "SCRIPTED_SLEEP_MS": "150"}
    process = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(out), "-q", "--jobs", "2"],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while completed_count(out / "ironbench.db") < at and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    row = lease_row(out / "ironbench.db")
    assert row is not None and row[2] == process.pid  # the dead coordinator's lease is still there
    return out, row[0], env


def resume(run_id: str, out: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "resume", run_id, "--out", str(out)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


@pytest.mark.slow
def test_two_resumes_at_once_one_runs_the_other_is_refused_naming_it(tmp_path):
    out, run_id, env = start_and_kill(tmp_path)
    first, second = resume(run_id, out, env), resume(run_id, out, env)
    results = [(p.wait(timeout=300), *p.communicate()) for p in (first, second)]
    finished = [r for r in results if r[0] == 0]
    refused = [r for r in results if r[0] != 0]
    assert len(finished) == 1 and len(refused) == 1, results
    assert finished[0][1].strip() == f"{run_id} finished"
    code, _, stderr = refused[0]
    [line] = stderr.strip().splitlines()
    assert code == 1 and line.startswith(f"ironbench: error: {run_id} is being run by pid "), line
    winner = first if first.returncode == 0 else second
    assert f"pid {winner.pid} on " in line and "File exists" not in stderr
    keys = recorded(out / "ironbench.db")
    assert len(keys) == len(set(keys)) and per_case(out / "ironbench.db") == EXPECTED_RUNS
    assert lease_row(out / "ironbench.db") is None  # released at the end


@pytest.mark.slow
def test_a_dead_coordinators_lease_is_taken_over_without_a_lost_or_doubled_invocation(tmp_path):
    out, run_id, env = start_and_kill(tmp_path)
    dead_pid = lease_row(out / "ironbench.db")[2]
    listed = cli("runs", "--out", str(out), "--format", "json", check=True)
    assert json.loads(listed.stdout)[0]["status"] == "interrupted"  # nobody is running it
    taken = resume(run_id, out, env)
    _, stderr = taken.communicate(timeout=300)
    assert taken.returncode == 0, stderr
    assert f"taking over from pid {dead_pid} on " in stderr
    keys = recorded(out / "ironbench.db")
    assert len(keys) == len(set(keys)) and per_case(out / "ironbench.db") == EXPECTED_RUNS


def _lease_elsewhere(store: Path, run_id: str, heartbeat_age: timedelta) -> None:
    stamp = (datetime.now(UTC) - heartbeat_age).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with sqlite3.connect(store) as conn:
        conn.execute("DELETE FROM run_leases")
        conn.execute("INSERT INTO run_leases VALUES (?, 'another-host', 4242, 1.0, ?, ?)", (run_id, stamp, stamp))


@pytest.mark.slow
def test_a_coordinator_on_another_host_holds_the_run_until_its_heartbeat_stops(tmp_path):
    out, run_id, env = start_and_kill(tmp_path)
    store = out / "ironbench.db"
    _lease_elsewhere(store, run_id, timedelta(seconds=5))  # alive: it beat 5 s ago
    refused = cli("resume", run_id, "--out", str(out), "-q", env=env)
    assert refused.returncode == 1
    assert "is being run by pid 4242 on another-host" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert lease_row(store) == (run_id, "another-host", 4242)  # untouched
    _lease_elsewhere(store, run_id, timedelta(minutes=5))  # gone: no heartbeat for 5 minutes
    taken = cli("resume", run_id, "--out", str(out), env=env)
    assert taken.returncode == 0, taken.stderr
    assert "taking over from pid 4242 on another-host" in taken.stderr
    assert per_case(store) == EXPECTED_RUNS


@pytest.mark.slow
def test_a_rebuild_waits_for_the_runs_coordinator(tmp_path):
    out, run_id, _ = start_and_kill(tmp_path)
    _lease_elsewhere(out / "ironbench.db", run_id, timedelta(seconds=1))
    refused = cli("project", run_id, "--rebuild", "--out", str(out))
    assert refused.returncode == 1 and "is being run by pid 4242 on another-host" in refused.stderr


def test_an_append_after_the_lease_was_taken_over_is_refused(tmp_path):
    """Even if a coordinator misjudged another as gone, the store never takes two writers."""
    with open_store(tmp_path / "s.db") as store:
        run_id = store.claim_new_run(["run_x"])
        with store.transaction() as conn:  # another process takes the lease over
            conn.execute("UPDATE run_leases SET host = 'another-host', pid = 4242")
        with pytest.raises(RunLeased, match="lost its lease to pid 4242 on another-host"):
            store.append(run_id, [Pending("run", RunAborted(reason="late"))])
        assert list(store.read(run_id)) == []


def test_runs_started_in_the_same_second_get_distinct_ids(tmp_path):
    """Run ids are claimed, not merely checked: concurrent starts never share one."""
    path = tmp_path / "s.db"
    open_store(path).close()
    got: list[str] = []

    def start() -> None:
        with open_store(path) as store:
            got.append(
                store.claim_new_run(["run_20260101_000000", *(f"run_20260101_000000_{n}" for n in range(2, 20))])
            )

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == ["run_20260101_000000", *(f"run_20260101_000000_{n}" for n in range(2, 7))]


def test_a_lease_held_by_a_live_process_on_this_host_is_never_stale(tmp_path):
    """Same host: a running holder is alive whatever its heartbeat; a dead pid, or a pid reused
    by another process (its start time differs), is gone at once."""
    path = tmp_path / "s.db"
    me = Holder.this_process()
    with open_store(path) as store, store.transaction() as conn:
        old = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        conn.execute(
            "INSERT INTO run_leases VALUES ('r', ?, ?, ?, ?, ?)", (me.host, me.pid, me.process_started, old, old)
        )
        intruder = Holder(me.host, me.pid + 1_000_000, 0.0)
        with pytest.raises(RunLeased):
            claim(conn, "r", intruder)
        conn.execute("UPDATE run_leases SET process_started = process_started - 100")  # the pid was reused
        assert claim(conn, "r", intruder) is not None  # taken over
