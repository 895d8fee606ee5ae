"""EventStore: the append-only SQLite log every other view of a run is derived from."""

import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from sqlalchemy import create_engine, event, insert, select
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError

from ironbench.errors import StoreError
from ironbench.events import SCHEMA_VERSION, RecordedEvent, _Event, event_from_dict
from ironbench.store.tables import EventRecord, ProjectionPosition

EVENTS = EventRecord.__table__
POSITIONS = ProjectionPosition.__table__
BUSY_TIMEOUT_MS = 30_000


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class Pending:
    """An event on its way into the store."""

    stream: str
    event: _Event
    idempotency_key: str | None = None


class InlineProjection(Protocol):
    """A read model updated in the same transaction as the events it reads."""

    name: str

    def apply(self, conn: Connection, events: Sequence[RecordedEvent]) -> None: ...


def _configure_sqlite(dbapi_conn, _record) -> None:
    # Let SQLAlchemy's begin emit BEGIN IMMEDIATE itself (pysqlite's implicit
    # transactions would start too late to take the write lock up front).
    dbapi_conn.isolation_level = None
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class EventStore:
    def __init__(self, path: Path, projections: Sequence[InlineProjection] = ()) -> None:
        self.path = path
        self.projections = list(projections)
        self.engine = create_engine(
            f"sqlite:///{path}",
            connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False},
        )
        event.listen(self.engine, "connect", _configure_sqlite)
        event.listen(self.engine, "begin", lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
        self._conn: Connection | None = None

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            try:
                self._conn = self.engine.connect()
            except SQLAlchemyError as exc:
                raise StoreError(f"{self.path}: cannot open store: {exc.orig or exc}") from exc
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        self.engine.dispose()

    def __enter__(self) -> "EventStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def append(self, run_id: str, pending: Iterable[Pending]) -> list[RecordedEvent]:
        """Append events atomically; events whose idempotency key exists are skipped."""
        recorded: list[RecordedEvent] = []
        try:
            with self.conn.begin():
                for item in pending:
                    recorded_event = self._insert(run_id, item)
                    if recorded_event is not None:
                        recorded.append(recorded_event)
                if recorded:
                    for projection in self.projections:
                        projection.apply(self.conn, recorded)
                        self._set_position(self.conn, projection.name, recorded[-1].seq)
        except SQLAlchemyError as exc:
            raise StoreError(f"{self.path}: append failed: {exc.orig or exc}") from exc
        return recorded

    def _insert(self, run_id: str, item: Pending) -> RecordedEvent | None:
        event_id = uuid.uuid4().hex
        timestamp = utc_now()
        values = {
            "event_id": event_id,
            "run_id": run_id,
            "stream": item.stream,
            "type": item.event.event,
            "schema_version": SCHEMA_VERSION,
            "timestamp_utc": timestamp,
            "idempotency_key": item.idempotency_key,
            "payload": json.dumps(item.event.to_dict(), separators=(",", ":")),
        }
        statement = insert(EVENTS).values(**values)
        if item.idempotency_key is not None:
            statement = statement.prefix_with("OR IGNORE")
        result = self.conn.execute(statement)
        if result.rowcount == 0:
            return None
        return RecordedEvent(result.lastrowid, event_id, run_id, item.stream, timestamp, item.event)

    @staticmethod
    def _set_position(conn: Connection, name: str, seq: int) -> None:
        conn.exec_driver_sql(
            "INSERT INTO projection_positions(name, last_seq) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET last_seq = excluded.last_seq",
            (name, seq),
        )

    def position(self, name: str) -> int:
        row = self.conn.execute(select(POSITIONS.c.last_seq).where(POSITIONS.c.name == name)).first()
        self.conn.rollback()
        return row[0] if row else 0

    def set_position(self, name: str, seq: int) -> None:
        try:
            with self.conn.begin():
                self._set_position(self.conn, name, seq)
        except SQLAlchemyError as exc:
            raise StoreError(f"{self.path}: cannot record projection position: {exc.orig or exc}") from exc

    def read(
        self,
        run_id: str | None = None,
        after: int = 0,
        types: Sequence[str] | None = None,
        stream_prefix: str | None = None,
    ) -> Iterator[RecordedEvent]:
        query = select(EVENTS).where(EVENTS.c.seq > after).order_by(EVENTS.c.seq)
        if run_id is not None:
            query = query.where(EVENTS.c.run_id == run_id)
        if types:
            query = query.where(EVENTS.c.type.in_(list(types)))
        if stream_prefix is not None:
            query = query.where(EVENTS.c.stream.startswith(stream_prefix, autoescape=True))
        try:
            rows = self.conn.execute(query).all()
            self.conn.rollback()
        except SQLAlchemyError as exc:
            raise StoreError(f"{self.path}: read failed: {exc.orig or exc}") from exc
        for row in rows:
            yield RecordedEvent(
                row.seq, row.event_id, row.run_id, row.stream, row.timestamp_utc,
                event_from_dict(row.type, json.loads(row.payload)),
            )

    def run_ids(self) -> list[str]:
        rows = self.conn.exec_driver_sql(
            "SELECT run_id FROM events WHERE type = 'run_started' ORDER BY seq"
        ).all()
        self.conn.rollback()
        return [row[0] for row in rows]

    def has_run(self, run_id: str) -> bool:
        row = self.conn.exec_driver_sql(
            "SELECT 1 FROM events WHERE run_id = ? AND type = 'run_started' LIMIT 1", (run_id,)
        ).first()
        self.conn.rollback()
        return row is not None


def open_store(path: str | Path, projections: Sequence[InlineProjection] = (), create: bool = True) -> EventStore:
    """Open (and, on first use, create and migrate) the store at `path`."""
    from ironbench.store.migrate import ensure_schema

    path = Path(path)
    if not path.exists():
        if not create:
            raise StoreError(f"{path}: no store here (run something first, or pass --store)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{path}: cannot create store directory: {exc.strerror}") from None
    try:
        ensure_schema(path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: not an ironbench store: {exc}") from None
    return EventStore(path, projections)
