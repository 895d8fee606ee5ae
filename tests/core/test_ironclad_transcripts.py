"""Real Ironclad transcripts replayed by a black-box target, through the whole harness:
every ending gives the counts Ironclad's own loop implies."""

import json
import sqlite3
import sys
from pathlib import Path

import pytest

from ironbench.analysis.query import run_query
from ironbench.core.errors import RunStopped
from ironbench.core.events import DecisionTaken, InvocationCompleted
from ironbench.run.options import Limits, RunOptions
from ironbench.run.runner import start_run
from ironbench.store import open_store
from ironbench.suite.models import parse_suite
from tests.conftest import fenced

REPLAY = Path(__file__).resolve().parents[1] / "fixtures" / "replay_ironclad.py"
REPLAY_TARGET = [sys.executable, str(REPLAY), "{instruction}"]

# ending -> (success, failure_stage, attempts, repairs_triggered)
ENDINGS = {
    "verified_after_0_repairs": (True, None, 1, 0),
    "verified_after_one_repair": (True, None, 2, 1),
    "verified_after_2_repairs": (True, None, 3, 2),
    "verified_after_3_repairs": (True, None, 4, 3),
    "validation_exhausted": (False, "validation", 4, 3),
    "repair_abort_at_attempt_1": (False, "repair", 1, 1),
    "repair_abort_after_two_repairs": (False, "repair", 2, 2),
    "repair_abort_at_attempt_3": (False, "repair", 3, 3),
    "generation_failed": (False, "generation", 0, 0),
}


def replay_suite(cases: dict[str, str], runs: int = 3, **fields):
    data = {
        "suite_id": "replay",
        "mode": "baseline",
        "timeout_seconds": 30,
        "target": REPLAY_TARGET,
        "cases": [{"id": case, "instruction": f"Write a function named {case}.", "runs": runs} for case in cases],
        **fields,
    }
    return parse_suite(data, "replay.yaml")


def completed(paths, run_id) -> list[InvocationCompleted]:
    with open_store(paths.store_path) as store:
        return [e.event for e in store.read(run_id) if isinstance(e.event, InvocationCompleted)]


def test_every_ironclad_ending_is_counted_as_ironclad_counts_it(paths, monkeypatch):
    monkeypatch.setenv("REPLAY_TRANSCRIPTS", json.dumps({name: name for name in ENDINGS}))
    run_id = start_run(replay_suite(ENDINGS), paths, RunOptions(jobs=2))
    with sqlite3.connect(paths.store_path) as conn:
        rows = conn.execute(
            "SELECT case_id, success, failure_stage, attempts, repairs_triggered, infra_error "
            "FROM invocations WHERE run_id = ?",
            (run_id,),
        ).fetchall()
    assert len(rows) == 3 * len(ENDINGS)  # every ending repeats itself: stable after 3
    for case_id, success, stage, attempts, repairs, infra in rows:
        assert (bool(success), stage, attempts, repairs) == ENDINGS[case_id], case_id
        assert infra is None
    summary = json.loads(
        (paths.out_dir / run_id / "baseline" / "repair_abort_at_attempt_3" / "run_001" / "summary.json").read_text()
    )
    assert (summary["attempts"], summary["repairs_triggered"], summary["failure_stage"]) == (3, 3, "repair")


@pytest.mark.slow
def test_a_run_killed_mid_repair_keeps_what_it_printed_and_is_a_timeout(paths, monkeypatch):
    monkeypatch.setenv("REPLAY_TRANSCRIPTS", json.dumps({"slow": "timeout_mid_repair+hang"}))
    run_id = start_run(replay_suite({"slow": ""}, timeout_seconds=1), paths)
    runs = completed(paths, run_id)
    assert len(runs) == 3
    for run in runs:
        assert (run.timed_out, run.exit_code, run.failure_stage) == (True, None, "timeout")
        assert (run.attempts, run.repairs_triggered) == (3, 3)  # three repairs had started
    aggregate = json.loads((paths.out_dir / run_id / "baseline" / "slow" / "aggregate.json").read_text())
    assert aggregate["timeouts"] == 3 and aggregate["failure_breakdown"] == {"timeout": 3}
    assert aggregate["attempts_distribution"] == {"3": 3}
    breakdown = run_query(paths.store_path, "failure_breakdown", run_id=run_id)
    assert [(r[2], r[3]) for r in breakdown.rows] == [("timeout", 3)]


@pytest.mark.parametrize(
    ("name", "line", "counts"),
    [
        ("outage_during_generation", "[!] Error connecting to Ollama: Connection error", (0, 0)),
        ("outage_during_repair", "[!] Repair Error: Server disconnected without sending a response.", (1, 1)),
    ],
)
def test_a_backend_outage_is_an_infrastructure_error_and_decides_nothing(paths, monkeypatch, name, line, counts):
    monkeypatch.setenv("REPLAY_TRANSCRIPTS", json.dumps({"down": name}))
    with pytest.raises(RunStopped, match="3 consecutive infrastructure errors"):
        start_run(replay_suite({"down": ""}), paths, RunOptions(limits=Limits(max_infra_errors=3)))
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
        events = [e.event for e in store.read(run_id)]
    runs = [e for e in events if isinstance(e, InvocationCompleted)]
    # One slot, tried three times: every attempt is kept, none is a failure of the target.
    assert [(r.run_index, r.rerun) for r in runs] == [(1, 0), (1, 1), (1, 2)]
    for run in runs:
        assert (run.infra_error, run.failure_stage, run.success) == (line, "infra_error", False)
        assert (run.attempts, run.repairs_triggered) == counts
    assert not any(isinstance(e, DecisionTaken) for e in events)  # never "stable" on a dead backend
    aggregate = json.loads((paths.out_dir / run_id / "baseline" / "down" / "aggregate.json").read_text())
    assert (aggregate["total_runs"], aggregate["failures"], aggregate["infra_errors"]) == (0, 0, 1)
    assert aggregate["failure_breakdown"] == {}
    summary = json.loads((paths.out_dir / run_id / "baseline" / "down" / "run_001" / "summary.json").read_text())
    assert (summary["infra_error"], summary["rerun"]) == (line, 2)
    assert run_query(paths.store_path, "failure_breakdown", run_id=run_id).rows == []


@pytest.mark.slow
def test_an_outage_stops_the_run_and_resume_reruns_those_slots(tmp_path):
    from tests.conftest import cli, write_suite

    suite = write_suite(tmp_path / "s.yaml", replay_suite({"up": "", "flaky": ""}))
    out = tmp_path / "out"
    down = tmp_path / "backend_down"
    down.write_text("")
    env = {
        "REPLAY_TRANSCRIPTS": json.dumps({"up": "verified_after_one_repair", "flaky": "verified_after_0_repairs"}),
        "REPLAY_DOWN_FLAG": str(down),
    }
    # The first invocation still reaches the backend; then it goes down.
    sequence = tmp_path / "sequence"
    sequence.write_text("verified_after_one_repair\n")
    stopped = cli(
        "run",
        str(suite),
        "--out",
        str(out),
        "-q",
        "--max-infra-errors",
        "2",
        "--allow-write",
        str(sequence),
        "--allow-read",
        str(down),
        env={**env, "REPLAY_SEQUENCE": str(sequence)},
    )
    assert stopped.returncode == 1, stopped.stderr
    [line] = stopped.stderr.strip().splitlines()
    with sqlite3.connect(out / "ironbench.db") as conn:
        run_id = conn.execute("SELECT run_id FROM runs").fetchone()[0]
        assert conn.execute("SELECT status FROM runs").fetchone()[0] == "aborted"
        infra_before = conn.execute(
            "SELECT count(*) FROM events WHERE type = 'invocation_completed' AND "
            "json_extract(payload, '$.infra_error') IS NOT NULL"
        ).fetchone()[0]
    assert line.startswith(f"ironbench: error: {run_id} stopped after 2 consecutive infrastructure errors")
    assert "[!] Error connecting to Ollama: Connection error" in line
    assert line.endswith(f"ironbench resume {run_id} --out {out}")
    assert infra_before >= 2

    down.unlink()  # the backend is back
    resumed = cli("resume", run_id, "--out", str(out), "-q", env=env)
    assert resumed.returncode == 0 and resumed.stdout.strip() == f"{run_id} finished", resumed.stderr

    with sqlite3.connect(out / "ironbench.db") as conn:
        live = conn.execute(
            "SELECT case_id, run_index, infra_error FROM invocations ORDER BY case_id, run_index"
        ).fetchall()
        superseded = conn.execute("SELECT count(*), count(infra_error) FROM superseded_invocations").fetchone()
        keys = [r[0] for r in conn.execute("SELECT idempotency_key FROM events WHERE type = 'invocation_completed'")]
    # Only live attempts in the view, none of them an infrastructure error ...
    assert [(c, i) for c, i, _ in live] == [("flaky", 1), ("flaky", 2), ("flaky", 3), ("up", 1), ("up", 2), ("up", 3)]
    assert all(infra is None for *_, infra in live)
    # ... while every earlier attempt stays in the store, superseded, recorded exactly once.
    assert superseded == (infra_before, infra_before)
    assert len(keys) == len(set(keys)) == 6 + infra_before
    for case_id in ("up", "flaky"):
        aggregate = json.loads((out / run_id / "baseline" / case_id / "aggregate.json").read_text())
        assert (aggregate["total_runs"], aggregate["successes"], aggregate["failures"]) == (3, 3, 0)
        assert aggregate["failure_breakdown"] == {} and aggregate["infra_errors"] == 0
        assert aggregate["stop_decision"]["decision"] == "stable"
    breakdown = json.loads(cli("query", "failure_breakdown.sql", "--out", str(out), "-f", "json", check=True).stdout)
    assert breakdown == []
    log = cli("log", run_id, "flaky", "--run", "1", "--out", str(out), check=True).stdout
    assert "superseded" in log and "infra_error '[!] Error connecting to Ollama: Connection error'" in log
    with sqlite3.connect(out / "ironbench.db") as conn:
        earlier = conn.execute(
            "SELECT count(*) FROM superseded_invocations WHERE case_id = 'flaky' AND run_index = 1"
        ).fetchone()[0]
    headers = [h for h in log.splitlines() if h.startswith("== ")]
    assert earlier >= 1 and len(headers) == earlier + 1  # every attempt of the slot, the live one last
    assert all("superseded" in h for h in headers[:-1]) and "superseded" not in headers[-1]


def test_decisions_ignore_infrastructure_errors_whatever_the_concurrency(tmp_path, monkeypatch):
    from ironbench.run.runner import RunPaths

    monkeypatch.setenv(
        "REPLAY_TRANSCRIPTS", json.dumps({"a": "verified_after_one_repair", "b": "validation_exhausted"})
    )
    suite = replay_suite({"a": "", "b": "", "c": ""}, runs=5)
    results = []
    for jobs, outages in ((1, 0), (3, 2), (1, 2)):
        sequence = tmp_path / f"sequence_{jobs}_{outages}"
        sequence.write_text("outage_during_repair\n" * outages)
        monkeypatch.setenv("REPLAY_SEQUENCE", str(sequence))
        paths = RunPaths.resolve(tmp_path / f"run_{jobs}_{outages}", None)
        run_id = start_run(suite, paths, RunOptions(jobs=jobs, sandbox=fenced(write=[sequence])))
        with open_store(paths.store_path) as store:
            events = [e.event for e in store.read(run_id)]
        assert sum(1 for e in events if isinstance(e, InvocationCompleted) and e.infra_error) == outages
        results.append(sorted((e.group, e.decision, e.n, e.successes) for e in events if isinstance(e, DecisionTaken)))
    assert results[0] == results[1] == results[2]
