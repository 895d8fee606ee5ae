"""The events' hash chain: appends link, tampering breaks a named link, rebuild refuses it."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ironbench.core.errors import ChainBroken
from ironbench.core.events import RunAborted, RunFinished
from ironbench.projections.rebuild import project_run, verify_store
from ironbench.store import open_store
from ironbench.store.chain import verify_chain
from ironbench.store.eventstore import Pending
from tests.conftest import cli, make_suite, store_at_revision

REPO = Path(__file__).resolve().parents[2]


def _tamper(path: Path, sql: str, params: tuple = ()) -> None:
    """What the file's owner can always do: drop the triggers and rewrite history."""
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TRIGGER events_no_update")
        conn.execute("DROP TRIGGER events_no_delete")
        conn.execute(sql, params)


def _store_with_events(path: Path) -> None:
    with open_store(path) as store:
        store.append("r1", [Pending("run", RunAborted(reason=f"event {i}")) for i in range(3)])
        store.append("r2", [Pending("run", RunAborted(reason="other run"))])
        store.append("r1", [Pending("run", RunFinished(invocations=1, successes=1), "finished:r1")])


def test_every_append_links_to_its_predecessor_and_ignored_duplicates_do_not(tmp_path):
    path = tmp_path / "s.db"
    _store_with_events(path)
    with open_store(path) as store:
        again = store.append(
            "r1",
            [
                Pending("run", RunFinished(invocations=1, successes=1), "finished:r1"),
                Pending("run", RunAborted(reason="after the duplicate")),
            ],
        )
        assert [e.seq for e in again] == [6]  # the duplicate took neither a seq nor a link
        report = verify_chain(store.conn)
    assert report.broken is None and report.checked == 6 and len(report.head) == 64


@pytest.mark.parametrize(
    "tampering, broken_seq",
    [
        ("UPDATE events SET payload = replace(payload, 'event 1', 'forged') WHERE seq = 2", 2),
        ("DELETE FROM events WHERE seq = 3", 3),
        ("UPDATE events SET run_id = 'r9' WHERE seq = 4", 4),
    ],
)
def test_tampering_names_the_first_broken_link(tmp_path, tampering, broken_seq):
    path = tmp_path / "s.db"
    _store_with_events(path)
    _tamper(path, tampering)
    report = verify_store(path)
    assert report.broken is not None and report.broken.seq == broken_seq
    assert report.checked == broken_seq - 1


def test_a_forged_event_with_a_recomputed_hash_still_breaks_the_next_link(tmp_path):
    from ironbench.store.chain import COLUMNS, event_hash

    path = tmp_path / "s.db"
    _store_with_events(path)
    with sqlite3.connect(path) as conn:
        rows = conn.execute(f"SELECT {COLUMNS} FROM events ORDER BY seq").fetchall()
    forged = list(rows[1])
    forged[8] = forged[8].replace("event 1", "forged")
    _tamper(
        path,
        "UPDATE events SET payload = ?, hash = ? WHERE seq = 2",
        (forged[8], event_hash(rows[0][-1], *forged[:-1])),
    )
    assert verify_store(path).broken.seq == 3


def test_verify_a_run_checks_its_events_and_the_links_after_them(tmp_path):
    path = tmp_path / "s.db"
    _store_with_events(path)
    assert verify_store(path, "r2").broken is None
    _tamper(path, "UPDATE events SET payload = replace(payload, 'event 2', 'x') WHERE seq = 3")
    assert verify_store(path, "r2").broken is None  # r2's own links hold
    assert verify_store(path, "r1").broken.seq == 3


def test_rebuild_refuses_a_broken_chain_unless_forced(tmp_path, paths):
    from ironbench.run.runner import start_run

    run_id = start_run(make_suite({"c": 3}), paths)
    store_path = paths.store_path
    with sqlite3.connect(store_path) as conn:
        seq = conn.execute(
            "SELECT max(seq) FROM events WHERE run_id = ? AND type = 'invocation_completed'", (run_id,)
        ).fetchone()[0]
    _tamper(
        store_path,
        "UPDATE events SET payload = replace(payload, '\"duration_ms\":', '\"duration_ms\":9') WHERE seq = ?",
        (seq,),
    )
    with pytest.raises(ChainBroken, match=f"seq {seq}"):
        project_run(store_path, paths.out_dir, run_id, rebuild=True)
    where = ("--store", str(store_path), "--out", str(paths.out_dir))
    refused = cli("project", run_id, "--rebuild", *where)
    assert refused.returncode == 1 and "--force" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert cli("project", run_id, "--rebuild", "--force", *where).returncode == 0


def test_verify_and_project_through_the_cli(tmp_path):
    path = tmp_path / "s.db"
    _store_with_events(path)
    ok = cli("verify", "--store", str(path))
    assert ok.returncode == 0 and "hash chain holds over 5 events" in ok.stdout
    _tamper(path, "UPDATE events SET payload = '{}' WHERE seq = 4")
    broken = cli("verify", "--store", str(path))
    assert broken.returncode == 1
    assert broken.stderr.strip().splitlines() == [
        (
            "ironbench: error: hash chain broken at seq 4 (run r2, stream run, run_aborted): hash does not match "
            "the event and its predecessor (changed after it was written) (3 events before it hold)"
        )
    ]


def test_concurrent_processes_appending_keep_one_valid_chain(tmp_path):
    path = tmp_path / "s.db"
    open_store(path).close()
    writer = (
        "import sys\n"
        "from ironbench.store import open_store\n"
        "from ironbench.store.eventstore import Pending\n"
        "from ironbench.core.events import RunAborted\n"
        "with open_store(sys.argv[1]) as store:\n"
        "    for i in range(60):\n"
        "        store.append(sys.argv[2], [Pending('run', RunAborted(reason=str(i)))] * (1 + i % 3))\n"
    )
    writers = [subprocess.Popen([sys.executable, "-c", writer, str(path), f"r{k}"], cwd=REPO) for k in range(4)]
    assert [w.wait(timeout=120) for w in writers] == [0, 0, 0, 0]
    report = verify_store(path)
    assert report.broken is None and report.checked == 4 * 120


def test_upgrading_an_older_store_chains_the_events_it_already_holds(tmp_path):
    path = store_at_revision(tmp_path / "old.db", "0005_infra_errors")
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO events(event_id, run_id, stream, type, schema_version, timestamp_utc, payload) "
            "VALUES (?, 'r', 'run', 'run_aborted', 1, '2026-01-01T00:00:00Z', ?)",
            [(f"e{i}", f'{{"reason": "{i}"}}') for i in range(5)],
        )
    with open_store(path) as store:
        store.append("r", [Pending("run", RunAborted(reason="after the upgrade"))])
        report = verify_chain(store.conn)
    assert report.broken is None and report.checked == 6
