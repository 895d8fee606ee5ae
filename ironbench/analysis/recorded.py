"""A stored run as it recorded itself: its first event, typed, through the store's one event read
path (`EventStore.read`), and the suite it ran as the typed Suite (`ironbench.suite.recorded`)."""

from pathlib import Path

from ironbench.core.errors import RunNotFound
from ironbench.core.events import RecordedEvent, RunStarted
from ironbench.store import EventStore, open_read_only
from ironbench.suite import Suite, suite_of_run


def started_event(store: EventStore, run_id: str) -> RecordedEvent:
    """The run's RunStarted as the store holds it (its id, time and stream with it)."""
    first = next(store.read(run_id, types=("run_started",), limit=1), None)
    if first is None or not isinstance(first.event, RunStarted):
        raise RunNotFound(f"run {run_id!r} not found in {store.path}")
    return first


def run_started(store_path: Path, run_id: str) -> RecordedEvent:
    """`started_event` of a store on disk, opened read-only for the one read."""
    store = open_read_only(store_path)
    try:
        return started_event(store, run_id)
    finally:
        store.close()


def run_suite(store_path: Path, run_id: str) -> Suite:
    """The suite a stored run ran, typed (read once per run: `suite_of_run`)."""
    return suite_of_run(run_started(store_path, run_id))
