"""Another ironbench store's runs, merged into this one with their events.

The other store's hash chain is verified first (a broken link refuses the whole import,
naming it); then each run this store lacks comes in whole, in one transaction, its events
keeping their ids, times and payloads and linked into this store's chain. A run is known
by its first event's id, so importing the same store twice, or a store that already holds
runs from this one, adds only what is new. A different run under an id this store already
uses comes in renamed (`run_..._2`): parallel CI jobs started in the same second merge.
"""

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.events import RunImported, event_from_dict
from ironbench.store import COLUMNS, Foreign, verify_chain

SQLITE_HEADER = b"SQLite format 3\x00"
RUN_STREAM = "run"


class NotAStore(ValueError):
    """A file that is no ironbench store."""


class ChainRefused(ValueError):
    """The other store's hash chain does not hold: nothing of it is imported."""


class Forked(ValueError):
    """A run both stores hold, recorded differently since they parted."""


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


@dataclass(frozen=True)
class SourceEvent:
    """One event of the other store, as it holds it."""

    seq: int
    event_id: str
    run_id: str
    stream: str
    type: str
    schema_version: int
    timestamp_utc: str
    idempotency_key: str | None
    payload: str


def read_source(path: Path) -> dict[str, list[SourceEvent]]:
    """Every run of the store at `path` with its events in order, read in one snapshot after
    its whole chain is verified. The file is opened read-only; nothing is written to it."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except sqlite3.Error as exc:
        raise NotAStore(f"{path}: cannot open: {exc}") from None
    try:
        try:
            conn.execute("BEGIN")  # one snapshot, even while a run there goes on
            columns = {row[1] for row in conn.execute("PRAGMA table_info(events)")}
        except sqlite3.DatabaseError as exc:
            raise NotAStore(f"{path}: not an ironbench store ({exc})") from None
        if not {"event_id", "payload", "hash"} <= columns:
            what = "no events table" if not columns else "events without a hash chain (an older store: upgrade it)"
            raise NotAStore(f"{path}: not an ironbench store this version can import ({what})")
        report = verify_chain(conn)
        if report.broken is not None:
            raise ChainRefused(
                f"{path}: hash chain broken at {report.broken.describe()} ({report.checked} events before it "
                "hold); nothing imported"
            )
        runs: dict[str, list[SourceEvent]] = {}
        for row in conn.execute(f"SELECT {COLUMNS} FROM events ORDER BY seq"):
            event = SourceEvent(*row[:-1])
            runs.setdefault(event.run_id, []).append(event)
        conn.execute("COMMIT")
        return runs
    finally:
        conn.close()


def renamed_key(key: str | None, old: str, new: str) -> str | None:
    """An idempotency key (`completed:RUN/...`, `finished:RUN`) or invocation key under the new run id."""
    if key is None or old == new:
        return key
    head, colon, tail = key.partition(":")
    prefix, rest = (head + colon, tail) if colon and "/" not in head else ("", key)
    if rest == old or rest.startswith(old + "/"):
        return f"{prefix}{new}{rest[len(old) :]}"
    return key


def _as_foreign(source: SourceEvent, old: str, new: str) -> Foreign:
    payload = source.payload
    data = json.loads(payload)
    if old != new and isinstance(data.get("key"), str):
        data["key"] = renamed_key(data["key"], old, new)
        payload = json.dumps(data, separators=(",", ":"))
    return Foreign(
        source.stream,
        event_from_dict(source.type, data, source.schema_version),
        source.timestamp_utc,
        renamed_key(source.idempotency_key, old, new),
        source.event_id,
        payload,
        source.schema_version,
    )


def _store_marker(event: SourceEvent) -> bool:
    """The other store's own note that it imported this run from a third store: a fact of that
    store's history, not of the run (a store's marker for a run from an outputs tree, which
    carries what the tree recorded, comes along)."""
    return event.type == "run_imported" and json.loads(event.payload).get("format") == "store"


def _free_id(conn: sqlite3.Connection, wanted: str) -> str:
    """`wanted`, or the first `wanted_N` no run of this store has or is claiming."""
    candidates: Iterator[str] = iter([wanted, *(f"{wanted}_{n}" for n in range(2, 10_000))])
    for candidate in candidates:
        taken = conn.execute(
            "SELECT 1 FROM events WHERE run_id = ?1 UNION ALL SELECT 1 FROM run_leases WHERE run_id = ?1 LIMIT 1",
            (candidate,),
        ).fetchone()
        if taken is None:
            return candidate
    raise Forked(f"{wanted}: no free run id")  # (ten thousand runs of one second)


@dataclass
class Merge:
    """What one run's import added (filled in by `select`, under the write lock)."""

    run_id: str | None = None  # its id in this store
    renamed_from: str | None = None
    added: int = 0
    invocations: int = 0


def select_run(
    events: Sequence[SourceEvent], source: str, merge: Merge
) -> Callable[[sqlite3.Connection], tuple[str, list[Foreign]]]:
    """The `select` of EventStore.append_foreign for one run of the other store: what this
    store lacks of it, under the id it has (or gets) here."""

    def select(conn: sqlite3.Connection) -> tuple[str, list[Foreign]]:
        first = events[0]
        row = conn.execute("SELECT run_id FROM events WHERE event_id = ?", (first.event_id,)).fetchone()
        old = first.run_id
        new = row[0] if row is not None else _free_id(conn, old)
        have = {
            event_id: key
            for event_id, key in conn.execute(
                "SELECT event_id, idempotency_key FROM events WHERE run_id = ?", (new,)
            ).fetchall()
        }
        keys = set(have.values())
        chosen: list[Foreign] = []
        for event in events:
            if event.event_id in have or _store_marker(event):
                continue
            foreign = _as_foreign(event, old, new)
            if foreign.idempotency_key is not None and foreign.idempotency_key in keys:
                raise Forked(
                    f"{source}: run {old} (here {new}) was recorded differently in the two stores since they "
                    f"parted: both hold {foreign.idempotency_key} (seq {event.seq} there); nothing of it imported"
                )
            chosen.append(foreign)
        merge.run_id, merge.renamed_from = new, (old if new != old else None)
        merge.added = len(chosen)
        merge.invocations = sum(1 for f in chosen if f.event.event == "invocation_completed")
        if not chosen:
            return new, []
        imported = RunImported(
            format="store", source=source, invocations=merge.invocations, renamed_from=merge.renamed_from
        )
        return new, [*chosen, Foreign(RUN_STREAM, imported, chosen[-1].timestamp_utc)]

    return select
