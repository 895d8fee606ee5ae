"""Run leases: one coordinator per run, named by host, pid and process start, kept alive by a heartbeat.

A run has one writer. Whoever starts or resumes it claims its lease in the store; a second
coordinator is refused, naming the holder. A holder that is gone (killed, its machine
lost) leaves a stale lease that the next claim takes over: on this host when its process
no longer runs (pid and start time tell a reused pid apart), elsewhere when its heartbeat
is older than LEASE_TTL_SECONDS. Every append checks, under the write lock, that the
lease still names its writer, so two coordinators can never both write one run.
"""

import socket
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Self

from ironbench.core.errors import RunLeased
from ironbench.store.tables import RunLease

HEARTBEAT_SECONDS = 5.0
LEASE_TTL_SECONDS = 60.0  # a holder on another host is taken for gone after this long without a heartbeat
_STAMP = "%Y-%m-%dT%H:%M:%S.%fZ"
_READ = RunLease.select("host", "pid", "process_started", "acquired_utc", "heartbeat_utc", where=("run_id",))
_RELEASE = RunLease.delete("run_id", "host", "pid", "process_started")
_BEAT = RunLease.update("heartbeat_utc", where=("run_id", "host", "pid"))


def _now() -> datetime:
    return datetime.now(UTC)


def _stamp(when: datetime) -> str:
    return when.strftime(_STAMP)


def _parse(stamp: str) -> datetime:
    return datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC)


@dataclass(frozen=True)
class Holder:
    """A coordinator process: where it runs, its pid, and when it started (pids are reused)."""

    host: str
    pid: int
    process_started: float

    @classmethod
    def this_process(cls) -> "Holder":
        import psutil

        return cls(socket.gethostname(), psutil.Process().pid, psutil.Process().create_time())

    def running(self) -> bool | None:
        """Whether the process still runs; None when it is on another host (only its heartbeat tells)."""
        if self.host != socket.gethostname():
            return None
        import psutil

        try:
            return abs(psutil.Process(self.pid).create_time() - self.process_started) < 1.0
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return False


@dataclass(frozen=True)
class Lease:
    run_id: str
    holder: Holder
    acquired_utc: str
    heartbeat_utc: str

    def stale(self, now: datetime, ttl: float = LEASE_TTL_SECONDS) -> bool:
        running = self.holder.running()
        if running is not None:
            return not running
        return (now - _parse(self.heartbeat_utc)).total_seconds() > ttl

    def describe(self, now: datetime) -> str:
        age = max(0.0, (now - _parse(self.heartbeat_utc)).total_seconds())
        return (
            f"pid {self.holder.pid} on {self.holder.host} (since {self.acquired_utc}, last heartbeat {age:.0f} s ago)"
        )


def read_lease(conn: sqlite3.Connection, run_id: str) -> Lease | None:
    row = conn.execute(_READ, (run_id,)).fetchone()
    if row is None:
        return None
    return Lease(run_id, Holder(row[0], row[1], row[2]), row[3], row[4])


def claim(conn: sqlite3.Connection, run_id: str, holder: Holder, resume_hint: str = "") -> Lease | None:
    """Take the run's lease (inside a write transaction); returns the stale lease taken over,
    if any. Refused, naming the holder, while another live coordinator holds it."""
    now = _now()
    existing = read_lease(conn, run_id)
    if existing is not None and existing.holder != holder and not existing.stale(now):
        raise RunLeased(
            f"{run_id} is being run by {existing.describe(now)}: one run has one coordinator; "
            f"wait for it to finish, or stop it (kill {existing.holder.pid} on {existing.holder.host})"
            + (f" and then: {resume_hint}" if resume_hint else "")
        )
    lease = RunLease(
        run_id=run_id,
        host=holder.host,
        pid=holder.pid,
        process_started=holder.process_started,
        acquired_utc=_stamp(now),
        heartbeat_utc=_stamp(now),
    )
    conn.execute(RunLease.replace, lease.values())
    return existing if existing is not None and existing.holder != holder else None


def holds(conn: sqlite3.Connection, run_id: str, holder: Holder) -> bool:
    lease = read_lease(conn, run_id)
    return lease is not None and lease.holder == holder


def release(conn: sqlite3.Connection, run_id: str, holder: Holder) -> None:
    conn.execute(_RELEASE, (run_id, holder.host, holder.pid, holder.process_started))


class Heartbeat:
    """Refreshes a lease's heartbeat from a thread of its own (with its own connection), so a
    coordinator busy waiting on its targets stays visibly alive."""

    def __init__(self, path: str, run_id: str, holder: Holder, every: float = HEARTBEAT_SECONDS) -> None:
        self.path, self.run_id, self.holder, self.every = path, run_id, holder, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="ironbench-lease", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            try:
                conn = sqlite3.connect(self.path, timeout=5, isolation_level=None)
                try:
                    conn.execute(_BEAT, (_stamp(_now()), self.run_id, self.holder.host, self.holder.pid))
                finally:
                    conn.close()
            except sqlite3.Error:
                pass  # a busy or full store: the next beat tries again; appends check the lease anyway
