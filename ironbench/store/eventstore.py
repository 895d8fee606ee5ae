"""EventStore: the append-only SQLite log every other view of a run is derived from.

The schema is defined with SQLModel and migrated by alembic (see tables.py and
migrations/); the hot path talks to SQLite directly, since every invocation
appends and the harness must vanish next to the target.
"""

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, Self

from ironbench.core.errors import RunLeased, StoreError
from ironbench.core.events import Event, RecordedEvent, event_from_dict
from ironbench.core.files import file_failure
from ironbench.core.redact import Redactor
from ironbench.store.chain import event_hash, last_link
from ironbench.store.failures import sqlite_failure
from ironbench.store.leases import Heartbeat, Holder, Lease, claim, holds, read_lease, release
from ironbench.store.tables import EventRecord, ProjectionPosition, StoreReserve

BUSY_TIMEOUT_MS = 30_000
RESERVE_BYTES = 256 * 1024  # about 64 pages inside the store: room to record a stop when it is full
RESERVE_FILE_BYTES = 1 << 20  # and a file beside it, freed first, so SQLite's log can grow again

# A projection's position only moves forward, whichever writer records it.
_SET_POSITION = (
    f"{ProjectionPosition.insert} ON CONFLICT(name) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq)"
)
_POSITION = ProjectionPosition.select("last_seq", where=("name",))
# What a reader of events needs of each row (its hash and key are the store's own).
_READ = EventRecord.select("seq", "event_id", "run_id", "stream", "timestamp_utc", "type", "schema_version", "payload")


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def _chain(row: EventRecord, previous: str) -> str:
    """Give `row` its hash: over its other columns and the hash of the event before it."""
    row.hash = event_hash(previous, *row.values()[:-1])
    return row.hash


def _set_position(conn: sqlite3.Connection, name: str, seq: int) -> None:
    conn.execute(_SET_POSITION, ProjectionPosition(name=name, last_seq=seq).values())


@dataclass(frozen=True, slots=True)
class Pending:
    """An event on its way into the store."""

    stream: str
    event: Event
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class Foreign:
    """An event recorded elsewhere (another harness's tree, another store) on its way in:
    it keeps its own time and, from a store, its own id and payload bytes in the shape (version)
    they were recorded in: a reader upcasts them, as it does this store's own."""

    stream: str
    event: Event
    timestamp_utc: str
    idempotency_key: str | None = None
    event_id: str | None = None  # None: a new id
    payload: str | None = None  # the payload as recorded (JSON); None: the event's own
    schema_version: int | None = None  # the payload's version as recorded; None: the event's own


class InlineProjection(Protocol):
    """A read model updated in the same transaction as the events it reads."""

    name: str

    def apply(self, conn: sqlite3.Connection, batch: Sequence[RecordedEvent]) -> None: ...


class EventStore:
    def __init__(
        self,
        path: Path,
        projections: Sequence[InlineProjection] = (),
        redactor: Redactor | None = None,
        read_only: bool = False,
    ) -> None:
        self.path = path
        self.projections = list(projections)
        self.holder: Holder | None = None  # this process, once it claims a run
        self._leased: set[str] = set()  # the runs this store writes under a lease
        # Secrets are replaced before an event is stored, so projections see the same.
        self.redactor = redactor if redactor else None
        try:
            if read_only:  # SQLite itself refuses every write on this connection
                self.conn = sqlite3.connect(
                    f"{Path(path).resolve().as_uri()}?mode=ro",
                    uri=True,
                    timeout=BUSY_TIMEOUT_MS / 1000,
                    isolation_level=None,
                    check_same_thread=False,
                )
                self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
                return
            # isolation_level=None: transactions are ours, begun IMMEDIATE so the
            # write lock is taken up front instead of failing half-way.
            self.conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise sqlite_failure(path, "cannot open the store", exc) from exc

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; storage errors surface as StoreError."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise sqlite_failure(self.path, "cannot write the store", exc) from exc
        except BaseException:
            # A Ctrl-C that arrived while BEGIN ran is raised as it returns: the transaction is
            # open, and left so, no later write (the run's abort, its lease) could begin one.
            self._rollback()
            raise
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException as exc:
            self._rollback()
            if isinstance(exc, sqlite3.Error):
                raise sqlite_failure(self.path, "cannot write the store", exc) from exc
            raise

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (it rolls back by itself on
        some errors, a full disk among them). Whatever went wrong first is what the caller
        reports: a failed ROLLBACK never hides it."""
        if not self.conn.in_transaction:
            return
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def append(
        self,
        run_id: str,
        pending: Iterable[Pending],
        positions: Mapping[str, int] | None = None,
        free_reserve: bool = False,
    ) -> list[RecordedEvent]:
        """Append events atomically; events whose idempotency key exists are skipped.

        Inline projections see the new events in the same transaction; `positions`
        lets an out-of-database projection record how far it got in it too. A run this
        store holds the lease of is written only while the lease is still its own.
        `free_reserve` first frees the store's space reserve (see `leased`).
        """
        recorded: list[RecordedEvent] = []
        with self.transaction() as conn:
            if run_id in self._leased and self.holder is not None and not holds(conn, run_id, self.holder):
                lease = read_lease(conn, run_id)
                taker = f" to {lease.describe(datetime.now(UTC))}" if lease else ""
                raise RunLeased(f"{run_id}: this coordinator lost its lease{taker}; it stops writing")
            if free_reserve:  # the disk is full: give back the reserve, so this append fits
                conn.execute(StoreReserve.delete())
            # Read under the write lock: whichever process appends, each new event
            # links to the one truly before it.
            link = last_link(conn)
            for item in pending:
                recorded_event, link = self._insert(conn, run_id, item, link)
                if recorded_event is not None:
                    recorded.append(recorded_event)
            if recorded:
                self._project(conn, recorded)
            for name, seq in (positions or {}).items():
                _set_position(conn, name, seq)
        return recorded

    def append_foreign(
        self, select: "Callable[[sqlite3.Connection], tuple[str, Sequence[Foreign]]]"
    ) -> list[RecordedEvent]:
        """Append one run's events recorded elsewhere, in one transaction: `select` reads the
        store under the write lock and returns the run's id here and what to add (nothing
        this store already has), so two imports of the same history add it once. Each event
        is linked into this store's hash chain; inline projections see them in the same
        transaction."""
        recorded: list[RecordedEvent] = []
        with self.transaction() as conn:
            link = last_link(conn)
            run_id, items = select(conn)
            for item in items:
                event = item.event
                row = EventRecord(
                    seq=link[0] + 1,
                    event_id=item.event_id or uuid.uuid4().hex,
                    run_id=run_id,
                    stream=item.stream,
                    type=event.event,
                    schema_version=item.schema_version if item.schema_version is not None else event.version,
                    timestamp_utc=item.timestamp_utc,
                    idempotency_key=item.idempotency_key,
                    payload=item.payload if item.payload is not None else _json(event.to_dict()),
                    hash=None,
                )
                digest = _chain(row, link[1])
                conn.execute(EventRecord.insert, row.values())
                recorded.append(RecordedEvent(row.seq, row.event_id, run_id, item.stream, item.timestamp_utc, event))
                link = (row.seq, digest)
            if recorded:
                self._project(conn, recorded)
        return recorded

    def _project(self, conn: sqlite3.Connection, recorded: list[RecordedEvent]) -> None:
        """The inline projections see the new events, and record how far they got, in the append's transaction."""
        for projection in self.projections:
            projection.apply(conn, recorded)
            _set_position(conn, projection.name, recorded[-1].seq)

    # -- leases: one coordinator per run ----------------------------------------------

    def claim_new_run(self, candidates: Iterable[str]) -> str:
        """The first candidate id no run has yet, claimed at once: two processes starting
        runs in the same second get two runs, never one."""
        holder = self._holder()
        with self.transaction() as conn:
            for run_id in candidates:
                taken = conn.execute(
                    "SELECT 1 FROM events WHERE run_id = ? UNION ALL SELECT 1 FROM run_leases WHERE run_id = ?",
                    (run_id, run_id),
                ).fetchone()
                if taken is None:
                    claim(conn, run_id, holder)
                    self._fill_reserve(conn)
                    self._leased.add(run_id)
                    self._keep_reserve_file()
                    return run_id
        raise StoreError(f"{self.path}: no free run id")  # candidates are endless in practice

    @contextmanager
    def leased(self, run_id: str, resume_hint: str = "") -> Iterator[Lease | None]:
        """Hold the run's lease while the block writes it (claimed now unless this store already
        holds it); yields the stale lease taken over, if any. The heartbeat keeps it alive; it
        is released at the end, even when the block fails."""
        holder = self._holder()
        taken_over = None
        if run_id not in self._leased:
            with self.transaction() as conn:
                taken_over = claim(conn, run_id, holder, resume_hint)
                self._fill_reserve(conn)
            self._leased.add(run_id)
            self._keep_reserve_file()
        try:
            with Heartbeat(str(self.path), run_id, holder):
                yield taken_over
        finally:
            self._leased.discard(run_id)
            try:
                with self.transaction() as conn:
                    release(conn, run_id, holder)
            except StoreError:
                pass  # a full or vanished store: the lease goes stale once this process exits

    def _holder(self) -> Holder:
        if self.holder is None:
            self.holder = Holder.this_process()
        return self.holder

    @property
    def reserve_file(self) -> Path:
        return self.path.with_name(self.path.name + "-reserve")

    def _keep_reserve_file(self) -> None:
        """A file of zeros beside the store, written when a run starts or resumes (if there
        is room: a run never fails for want of it)."""
        if self.reserve_file.is_file() and self.reserve_file.stat().st_size >= RESERVE_FILE_BYTES:
            return
        try:
            with open(self.reserve_file, "wb") as out:
                out.write(bytes(RESERVE_FILE_BYTES))
        except OSError:
            self.reserve_file.unlink(missing_ok=True)

    def free_reserves(self) -> None:
        """The disk is full: give back the file reserve, so that the next append (with
        `free_reserve=True`, which also frees the space kept inside the store) can record why
        the run stopped. Both are written again when the run resumes."""
        self.reserve_file.unlink(missing_ok=True)

    @staticmethod
    def _fill_reserve(conn: sqlite3.Connection) -> None:
        """Keep a little space back: when the disk fills mid-run, freeing it lets the run
        record that it stopped (`append(..., free_reserve=True)`)."""
        conn.execute(StoreReserve.insert_or_ignore, StoreReserve(id=1, filler=bytes(RESERVE_BYTES)).values())

    def _insert(
        self, conn: sqlite3.Connection, run_id: str, item: Pending, link: tuple[int, str]
    ) -> tuple[RecordedEvent | None, tuple[int, str]]:
        """Insert one event linked to `link`; returns it and the new last link (unchanged
        when an idempotency key made the insert a no-op)."""
        event, payload = item.event, item.event.to_dict()
        if self.redactor is not None:
            redacted = self.redactor.value(payload)
            if redacted != payload:
                payload, event = redacted, event_from_dict(event.event, redacted, event.version)
        seq = link[0] + 1
        row = EventRecord(
            seq=seq,
            event_id=uuid.uuid4().hex,
            run_id=run_id,
            stream=item.stream,
            type=event.event,
            schema_version=event.version,
            timestamp_utc=utc_now(),
            idempotency_key=item.idempotency_key,
            payload=_json(payload),
            hash=None,
        )
        digest = _chain(row, link[1])
        statement = EventRecord.insert_or_ignore if item.idempotency_key else EventRecord.insert
        cursor = conn.execute(statement, row.values())
        if cursor.rowcount == 0:
            return None, link
        return RecordedEvent(seq, row.event_id, run_id, item.stream, row.timestamp_utc, event), (seq, digest)

    def position(self, name: str) -> int:
        row = self._query(_POSITION, (name,)).fetchone()
        return row[0] if row else 0

    def set_position(self, name: str, seq: int) -> None:
        with self.transaction() as conn:
            _set_position(conn, name, seq)

    def _query(self, sql: str, params: tuple = ()) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, params)
        except sqlite3.Error as exc:
            raise sqlite_failure(self.path, "cannot read the store", exc) from exc

    def read(
        self,
        run_id: str | None = None,
        after: int = 0,
        types: Sequence[str] | None = None,
        stream_prefix: str | None = None,
        *,
        until: int | None = None,
        case_id: str | None = None,
        limit: int | None = None,
        newest: bool = False,
    ) -> Iterator[RecordedEvent]:
        """The events with after < seq (<= until), in the store's order: of one run, of some
        types, on streams under a prefix, about one case (their `case_id`); at most `limit` of
        them, the first ones or (`newest`) the last ones."""
        sql = f"{_READ} WHERE seq > ?"
        params: list = [after]
        for condition, value in (("seq <= ?", until), ("run_id = ?", run_id)):
            if value is not None:
                sql += f" AND {condition}"
                params.append(value)
        if types:
            sql += f" AND type IN ({','.join('?' * len(types))})"
            params += list(types)
        if stream_prefix is not None:
            sql += " AND substr(stream, 1, ?) = ?"
            params += [len(stream_prefix), stream_prefix]
        if case_id is not None:
            sql += " AND json_extract(payload, '$.case_id') = ?"
            params.append(case_id)
        sql += " ORDER BY seq DESC" if newest else " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        rows = self._query(sql, tuple(params)).fetchall()
        for seq, event_id, run, stream, timestamp, type_, version, payload in reversed(rows) if newest else rows:
            event = event_from_dict(type_, json.loads(payload), version)  # upcast, when stored in an older shape
            yield RecordedEvent(seq, event_id, run, stream, timestamp, event)

    def run_ids(self) -> list[str]:
        return [r[0] for r in self._query("SELECT run_id FROM events WHERE type = 'run_started' ORDER BY seq")]

    def has_run(self, run_id: str) -> bool:
        return (
            self._query("SELECT 1 FROM events WHERE run_id = ? AND type = 'run_started' LIMIT 1", (run_id,)).fetchone()
            is not None
        )


def open_store(
    path: str | Path,
    projections: Sequence[InlineProjection] = (),
    create: bool = True,
    redactor: Redactor | None = None,
) -> EventStore:
    """Open (and, on first use, create and migrate) the store at `path`."""
    from ironbench.store.migrate import ensure_schema

    path = Path(path)
    if not path.exists():
        if not create:
            raise StoreError(f"{path}: no store here (run something first, or pass --store)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise file_failure(path.parent, exc, "the store's folder") from None
    try:
        ensure_schema(path)
    except sqlite3.DatabaseError as exc:
        raise sqlite_failure(path, "cannot write the store", exc) from None
    return EventStore(path, projections, redactor)


def open_read_only(path: str | Path) -> EventStore:
    """The store at `path` for reading only (the viewer): opened `mode=ro`, so no statement
    can write it, and never created or migrated."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"{path}: no store here (run something first, or pass --store)")
    return EventStore(path, read_only=True)
