"""A run recorded at the store's first revision (78fe111, 0001_initial) still reads, projects, shows and
reports as it did: its payloads are upcast when read, never rewritten, and its chain holds.

tests/fixtures/first_revision/: store.json is that store's every table as recorded (a baseline run
of two cases against the fixture target); tree.json and show.txt are what ironbench made of it
before the row classes and the upcasters (46a2584: `project RUN --rebuild`, `show RUN`)."""

import json
import sqlite3
from pathlib import Path

import pytest

from ironbench.core.events import DecisionTaken, InvocationCompleted, InvocationStarted, RunStarted
from ironbench.projections.rebuild import project_run
from ironbench.report import write_report
from ironbench.store import open_store, verify_chain
from ironbench.store.chain import event_hash
from tests.conftest import cli, store_at_revision

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "first_revision"
RUN = "run_20261128_050901"
# The chain head 46a2584 computed for these events when it upgraded the store (0008_harden).
HEAD = "bfa4e030c2b21958e5c3584bf84e268ff700a6d215ec7227e9475b1631c204c1"


def first_revision_store(path: Path) -> Path:
    """The store as 78fe111 left it: its schema (0001_initial) and every row it wrote."""
    path.parent.mkdir(parents=True, exist_ok=True)
    store_at_revision(path, "0001_initial")
    recorded = json.loads((FIXTURES / "store.json").read_text())["tables"]
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM alembic_version")
        for table, found in recorded.items():
            marks = ", ".join("?" * len(found["columns"]))
            conn.executemany(f"INSERT INTO {table}({', '.join(found['columns'])}) VALUES ({marks})", found["rows"])
    return path


@pytest.fixture
def old_store(tmp_path) -> Path:
    return first_revision_store(tmp_path / "out" / "ironbench.db")


def test_its_events_read_in_todays_shape_and_their_rows_stay_as_recorded(old_store):
    with open_store(old_store) as store:
        events = list(store.read(RUN))
        stored = store.conn.execute("SELECT DISTINCT schema_version FROM events").fetchall()
    assert stored == [(1,)]  # upgraded on read, never rewritten
    started = events[0].event
    assert isinstance(started, RunStarted) and started.label is None and started.rules is None
    assert started.suite["suite_id"] == "first_revision"  # the recorded suite, as recorded
    completed = [e.event for e in events if isinstance(e.event, InvocationCompleted)]
    assert len(completed) == 8 and {(c.mode, c.group, c.rerun) for c in completed} == {
        ("baseline", "baseline/email_regex", 0),
        ("baseline", "baseline/list_to_dict", 0),
    }
    started_runs = [e.event for e in events if isinstance(e.event, InvocationStarted)]
    assert {s.group for s in started_runs} == {"baseline/email_regex", "baseline/list_to_dict"}
    decisions = [e.event for e in events if isinstance(e.event, DecisionTaken)]
    assert [(d.group, d.decision, d.reference_group, d.complexity) for d in decisions] == [
        ("baseline/email_regex", "exhausted", None, None),
        ("baseline/list_to_dict", "exhausted", None, None),
    ]


def test_its_chain_holds_with_the_hashes_it_was_given(old_store):
    with open_store(old_store) as store:
        report = verify_chain(store.conn)
        first = store.conn.execute(
            "SELECT seq, event_id, run_id, stream, type, schema_version, timestamp_utc, "
            "idempotency_key, payload, hash FROM events WHERE seq = 1"
        ).fetchone()
    assert report.broken is None and report.checked == 20 and report.head == HEAD
    assert event_hash("", *first[:-1]) == first[-1]


def test_hash_values_are_the_ones_46a2584_computed():
    """event_hash takes the predecessor's hash and the row; the values are unchanged."""
    row = (1, "e1", "run_a", "run", "run_started", 1, "2026-11-22T00:00:00.000000Z", None, '{"suite_id":"s"}')
    assert event_hash("", *row) == "40e291bfa517747243fd03da54098cb0b0048ca3e36511ca554675e4af887be0"
    keyed = (2, "e2", "run_a", "baseline/c/run_001", "invocation_completed", 1, "2026-11-22T00:00:01.000000Z")
    assert (
        event_hash("ab" * 32, *keyed, "completed:run_a/s/c/base/001", "{}")
        == "6b59a7c10ea720d77f35c590b59ba03cb8676cbe7d6c4713ec978c710013f192"
    )


def test_it_rebuilds_byte_for_byte_as_before_shows_and_reports(old_store):
    out = old_store.parent
    folder = project_run(old_store, out, RUN, rebuild=True)
    expected = json.loads((FIXTURES / "tree.json").read_text())["files"]
    assert {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()} == expected
    with sqlite3.connect(old_store) as conn:  # the rebuilt rows carry each group as the migrations fill it in
        assert set(conn.execute("SELECT group_path FROM invocations UNION SELECT group_path FROM decisions")) == {
            ("baseline/email_regex",),
            ("baseline/list_to_dict",),
        }
    shown = cli("show", RUN, "--out", str(out), env={"COLUMNS": "120"}, check=True).stdout
    assert shown == (FIXTURES / "show.txt").read_text()
    page = write_report(old_store, out, RUN).path.read_text()
    assert RUN in page and "email_regex" in page and "list_to_dict" in page
