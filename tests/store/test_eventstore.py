import sqlite3

import pytest

from ironbench.core.errors import StoreError
from ironbench.core.events import RunAborted, RunFinished
from ironbench.store import open_store
from ironbench.store.eventstore import Pending
from ironbench.store.migrate import SCHEMA_HEAD, current_revision, migrations_dir, upgrade


def test_schema_head_constant_matches_alembic_head(tmp_path):
    from alembic.script import ScriptDirectory

    from ironbench.store.migrate import alembic_config

    assert ScriptDirectory.from_config(alembic_config(tmp_path / "x.db")).get_current_head() == SCHEMA_HEAD
    assert (migrations_dir() / "versions").is_dir()


def test_first_use_creates_and_migrates_in_wal_mode(tmp_path):
    path = tmp_path / "deep" / "store.db"
    with open_store(path) as store:
        store.append("r", [Pending("run", RunFinished(invocations=0, successes=0))])
    assert current_revision(path) == SCHEMA_HEAD
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"events", "runs", "invocations", "decisions", "projection_positions", "alembic_version"} <= tables


def test_append_assigns_identity_and_reads_back_typed_events(tmp_path):
    with open_store(tmp_path / "s.db") as store:
        recorded = store.append(
            "r1", [Pending("run", RunFinished(invocations=3, successes=2)), Pending("run", RunAborted(reason="x"))]
        )
        store.append("r2", [Pending("run", RunAborted(reason="other run"))])
        assert [e.seq for e in recorded] == [1, 2]
        assert len({e.event_id for e in recorded}) == 2
        assert all(e.timestamp_utc.endswith("Z") for e in recorded)
        back = list(store.read("r1"))
    assert [e.event for e in back] == [RunFinished(invocations=3, successes=2), RunAborted(reason="x")]


def test_database_refuses_update_and_delete_of_events(tmp_path):
    path = tmp_path / "s.db"
    with open_store(path) as store:
        store.append("r1", [Pending("run", RunAborted(reason="keep me"))])
    with sqlite3.connect(path) as conn:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("UPDATE events SET payload = '{}'")
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute("DELETE FROM events")
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1


def test_idempotency_key_records_a_fact_at_most_once(tmp_path):
    with open_store(tmp_path / "s.db") as store:
        first = store.append("r", [Pending("run", RunFinished(invocations=1, successes=1), "finished:r")])
        again = store.append("r", [Pending("run", RunFinished(invocations=1, successes=1), "finished:r")])
        assert len(first) == 1 and again == []
        assert len(list(store.read("r"))) == 1


class _InterruptedAfterBegin:
    """A store's connection that raises KeyboardInterrupt as BEGIN returns, as a Ctrl-C that
    arrived while BEGIN ran is raised (Python runs signal handlers between bytecodes)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, *args):
        cursor = self.conn.execute(sql, *args)
        if sql == "BEGIN IMMEDIATE":
            raise KeyboardInterrupt
        return cursor

    def __getattr__(self, name: str):
        return getattr(self.conn, name)


def test_a_ctrl_c_as_a_transaction_begins_leaves_none_open(tmp_path):
    """The run's abort is recorded after a Ctrl-C: a transaction the interrupt left open
    would refuse it ("cannot start a transaction within a transaction")."""
    with open_store(tmp_path / "s.db") as store:
        conn = store.conn
        store.conn = _InterruptedAfterBegin(conn)  # type: ignore[assignment]
        with pytest.raises(KeyboardInterrupt):
            store.append("r", [Pending("run", RunFinished(invocations=1, successes=1))])
        store.conn = conn
        assert not conn.in_transaction
        store.append("r", [Pending("run", RunAborted(reason="interrupted"))])
        assert [e.event for e in store.read("r")] == [RunAborted(reason="interrupted")]


def test_not_a_database_is_a_store_error(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="s.db"):
        open_store(path)


def test_upgrade_is_idempotent(tmp_path):
    path = tmp_path / "s.db"
    assert upgrade(path) == SCHEMA_HEAD
    assert upgrade(path) == SCHEMA_HEAD


def test_a_store_from_the_first_revision_is_upgraded_on_open(tmp_path):
    from tests.conftest import store_at_revision

    path = store_at_revision(tmp_path / "old.db", "0001_initial")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO invocations(invocation_key, run_id, suite_id, mode, case_id, variant_id, run_index, "
            "instruction_hash, instruction_length, success, attempts, repairs_triggered, duration_ms, timed_out, "
            "debug_artifacts_present, timestamp_utc, seq) VALUES ('k','r','s','baseline','c','base',1,'h',1,1,1,0,"
            "5,0,0,'t',1)"
        )
    assert current_revision(path) == "0001_initial"
    open_store(path).close()
    assert current_revision(path) == SCHEMA_HEAD
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT case_mode, group_path FROM invocations").fetchone() == ("baseline", "baseline/c")
