import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from ironbench.core.errors import RunInterrupted, TargetError
from ironbench.core.events import DecisionTaken, InvocationCompleted, InvocationStarted, RunFinished, RunStarted
from ironbench.run.options import RunOptions
from ironbench.run.runner import start_run
from ironbench.store import open_store
from ironbench.targets import containment
from tests.conftest import make_suite


def events_of(paths, run_id):
    with open_store(paths.store_path) as store:
        return list(store.read(run_id))


def decisions(events):
    return {e.event.case_id: e.event for e in events if isinstance(e.event, DecisionTaken)}


def test_stops_as_soon_as_the_last_three_runs_agree(paths, script):
    script(
        {
            "steady": ["success"],
            "late": ["generation", "success", "success", "success"],
            "never": ["success", "generation"] * 5,
        }
    )
    suite = make_suite({"steady": 10, "late": 10, "never": 6})
    run_id = start_run(suite, paths)
    events = events_of(paths, run_id)
    found = decisions(events)
    assert (found["steady"].decision, found["steady"].n) == ("stable", 3)
    assert (found["late"].decision, found["late"].n, found["late"].successes) == ("stable", 4, 3)
    assert (found["never"].decision, found["never"].n) == ("exhausted", 6)
    completed = [e.event for e in events if isinstance(e.event, InvocationCompleted)]
    assert len(completed) == 3 + 4 + 6
    assert isinstance(events[0].event, RunStarted) and isinstance(events[-1].event, RunFinished)


def test_evidence_is_recorded_with_each_decision(paths, script):
    script({"c": ["success", "generation", "generation", "generation"]})
    run_id = start_run(make_suite({"c": 10}), paths)
    decision = decisions(events_of(paths, run_id))["c"]
    assert (decision.n, decision.successes) == (4, 1)
    assert decision.chance_agreement == pytest.approx(0.25**3 + 0.75**3)
    assert 0 < decision.wilson_low < 0.25 < decision.wilson_high < 1


def test_every_invocation_runs_in_its_own_fresh_directory(paths, script):
    script({"c": ["success"]})
    run_id = start_run(make_suite({"c": 3}), paths)
    events = events_of(paths, run_id)
    workdirs = [e.event.workdir for e in events if isinstance(e.event, InvocationStarted)]
    assert len(set(workdirs)) == 3
    completed = [e.event for e in events if isinstance(e.event, InvocationCompleted)]
    assert all(c.debug_artifacts_present and c.brick_path == "verified_bricks/brick.py" for c in completed)
    assert all(c.debug_path.endswith("build/.ironclad_debug") for c in completed)


def test_debug_disabled_means_no_debug_env(paths, script):
    script({"c": ["success"]})
    run_id = start_run(make_suite({"c": 3}, debug_enabled=False), paths)
    completed = [e.event for e in events_of(paths, run_id) if isinstance(e.event, InvocationCompleted)]
    assert not any(c.debug_enabled or c.debug_artifacts_present for c in completed)


@pytest.mark.slow
def test_timeouts_are_flagged_not_a_target_failure_stage(paths, script):
    script({"slow": ["hang"]})
    run_id = start_run(make_suite({"slow": 3}, timeout_seconds=1), paths)
    completed = [e.event for e in events_of(paths, run_id) if isinstance(e.event, InvocationCompleted)]
    assert len(completed) == 3
    # A timeout is its own category, never "unknown" (which means output nobody recognises).
    assert all(c.timed_out and c.failure_stage == "timeout" and c.exit_code is None for c in completed)


@pytest.mark.slow
def test_same_decisions_whatever_the_concurrency(tmp_path, script):
    from ironbench.run.runner import RunPaths

    script(
        {
            "a": ["success", "generation"] * 5,
            "b": ["validation", "success", "success", "success"],
            "c": ["success_r1", "success_r2", "success_r1", "success_r1", "success_r1"],
            "d": ["repair"],
        },
        sleep_ms=20,
    )
    suite = make_suite({"a": 7, "b": 10, "c": 10, "d": 10})
    outcomes = []
    for jobs in (1, 4):
        paths = RunPaths.resolve(tmp_path / f"jobs{jobs}", None)
        run_id = start_run(suite, paths, RunOptions(jobs=jobs))
        events = events_of(paths, run_id)
        outcomes.append(
            (
                {k: (d.decision, d.n, d.successes) for k, d in decisions(events).items()},
                sorted(
                    (e.event.case_id, e.event.run_index, e.event.success, e.event.attempts)
                    for e in events
                    if isinstance(e.event, InvocationCompleted)
                ),
            )
        )
    assert outcomes[0] == outcomes[1]


def test_missing_target_writes_nothing(paths):
    suite = make_suite({"c": 3}, target="no-such-agent-binary {instruction}")
    with pytest.raises(TargetError, match="no-such-agent-binary"):
        start_run(suite, paths)
    assert not paths.out_dir.exists()


def test_target_override_beats_the_suite(paths, script):
    script({"c": ["generation"]})
    suite = make_suite({"c": 3}, target="no-such-agent-binary {instruction}")
    run_id = start_run(suite, paths, RunOptions(target="fixture"))
    started = events_of(paths, run_id)[0].event
    assert started.target_argv[-2:] == ["ironbench.targets.fixture_ironclad", "{instruction}"]


def test_read_model_tables_follow_the_events(paths, script):
    script({"c": ["success", "generation", "generation", "generation"]})
    run_id = start_run(make_suite({"c": 10}), paths)
    with sqlite3.connect(paths.store_path) as conn:
        rows = conn.execute(
            "SELECT run_index, success, failure_stage FROM invocations WHERE run_id=? ORDER BY run_index", (run_id,)
        ).fetchall()
        status = conn.execute("SELECT status FROM runs WHERE run_id=?", (run_id,)).fetchone()[0]
        position = conn.execute("SELECT last_seq FROM projection_positions WHERE name='read_model'").fetchone()[0]
        last_seq = conn.execute("SELECT max(seq) FROM events").fetchone()[0]
    assert rows == [(1, 1, None), (2, 0, "generation"), (3, 0, "generation"), (4, 0, "generation")]
    assert status == "finished" and position == last_seq


def test_a_ctrl_c_that_does_not_wake_the_waiting_coordinator_still_stops_the_run_at_once(paths, script, ctrl_c_raises):
    """The kernel hands a process's SIGINT to any of its threads, and one that arrives just
    before the coordinator blocks leaves it blocked as well: then Python acts on it only when
    the wait ends. A held target must not make that wait last: here the signal is caught on
    another thread while the coordinator waits on a target that hangs for its 30 s timeout."""
    script({"held": ["hang"]})
    caught: dict[str, float] = {}

    def ctrl_c_on_this_thread() -> None:
        deadline = time.monotonic() + 60
        while not containment._registry.active and time.monotonic() < deadline:
            time.sleep(0.02)
        caught["target"] = next(iter(containment._registry.active), 0)
        time.sleep(0.3)  # the coordinator is waiting on it
        caught["at"] = time.monotonic()
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    threading.Thread(target=ctrl_c_on_this_thread, daemon=True).start()
    with pytest.raises(RunInterrupted):
        start_run(make_suite({"held": 1}, timeout_seconds=30), paths)
    assert time.monotonic() - caught["at"] < 10, "the interrupt waited for the held target"
    assert caught["target"] and not Path(f"/proc/{caught['target']}").exists()
