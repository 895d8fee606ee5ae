"""The events' hash chain: each event's hash covers its columns and its predecessor's hash.

The triggers make history append-only for honest code; the file's owner can drop
them. The chain makes such an edit evident: changing, inserting or deleting any
event breaks the link at that event (or at the one after it), and only recomputing
every later hash hides it, which a recorded head hash (printed by verify) exposes.
"""

import hashlib
import sqlite3
from dataclasses import dataclass

from ironbench.store.tables import EventRecord

GENESIS = ""
COLUMNS = ", ".join(EventRecord.columns)  # the last is the hash itself
assert EventRecord.columns[-1] == "hash"


def event_hash(previous: str, *row: object) -> str:
    """sha256 over the predecessor's hash and an event's row: its columns in EventRecord's
    order, the hash left out (as `SELECT {COLUMNS}` reads them, less the last), each
    length-prefixed so no two different rows encode alike."""
    digest = hashlib.sha256()
    for part in (previous, *row):
        if part is None:
            digest.update(b"N")
            continue
        data = str(part).encode("utf-8")
        digest.update(b"S" + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def last_link(conn: sqlite3.Connection) -> tuple[int, str]:
    """(seq, hash) of the newest event, read inside the writer's transaction."""
    row = conn.execute(f"{EventRecord.select('seq', 'hash')} ORDER BY seq DESC LIMIT 1").fetchone()
    return (row[0], row[1] or GENESIS) if row else (0, GENESIS)


@dataclass(frozen=True)
class BrokenLink:
    seq: int
    run_id: str | None
    stream: str | None
    type: str | None
    problem: str

    def describe(self) -> str:
        where = f"seq {self.seq}"
        if self.run_id is not None:
            where += f" (run {self.run_id}, stream {self.stream}, {self.type})"
        return f"{where}: {self.problem}"


@dataclass(frozen=True)
class ChainReport:
    checked: int
    head: str | None  # the newest event's hash: record it to detect a rewritten chain later
    broken: BrokenLink | None


def _check(row: tuple, previous_seq: int, previous_hash: str) -> BrokenLink | None:
    seq, _, run_id, stream, type_, *_, stored = row
    if seq != previous_seq + 1:
        return BrokenLink(
            previous_seq + 1, None, None, None, f"missing: seq {seq} follows seq {previous_seq} (events were deleted)"
        )
    if stored != event_hash(previous_hash, *row[:-1]):
        return BrokenLink(
            seq,
            run_id,
            stream,
            type_,
            "hash does not match the event and its predecessor (changed after it was written)",
        )
    return None


def verify_chain(conn: sqlite3.Connection, run_id: str | None = None) -> ChainReport:
    """Recompute the chain over every event, or over one run's events and the events
    right after them; the first link that does not hold is reported."""
    if run_id is None:
        cursor = conn.execute(f"{EventRecord.select()} ORDER BY seq")
        previous_seq, previous_hash, checked = 0, GENESIS, 0
        while rows := cursor.fetchmany(1000):
            for row in rows:
                broken = _check(row, previous_seq, previous_hash)
                if broken:
                    return ChainReport(checked, None, broken)
                previous_seq, previous_hash, checked = row[0], row[-1], checked + 1
        return ChainReport(checked, previous_hash if checked else None, None)
    columns = ", ".join(f"e.{c}" for c in EventRecord.columns)
    cursor = conn.execute(
        f"SELECT {columns}, p.seq, p.hash FROM events e LEFT JOIN events p ON p.seq = e.seq - 1 "
        "WHERE e.run_id = ?1 OR e.seq - 1 IN (SELECT seq FROM events WHERE run_id = ?1) ORDER BY e.seq",
        (run_id,),
    )
    checked, head = 0, None
    while rows := cursor.fetchmany(1000):
        for *row, previous_seq, previous_hash in rows:
            if previous_seq is None and row[0] != 1:
                return ChainReport(
                    checked,
                    None,
                    BrokenLink(row[0] - 1, None, None, None, f"missing: the event before seq {row[0]} was deleted"),
                )
            broken = _check(tuple(row), row[0] - 1, previous_hash or GENESIS)
            if broken:
                return ChainReport(checked, None, broken)
            checked += 1
            head = row[-1]
    return ChainReport(checked, head, None)
