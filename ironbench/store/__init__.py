"""The SQLite event store: append-only events, their hash chain, migrations and table definitions."""

from ironbench.store.chain import ChainReport, verify_chain
from ironbench.store.eventstore import EventStore, Pending, open_store
from ironbench.store.migrate import upgrade

__all__ = ["ChainReport", "EventStore", "Pending", "open_store", "upgrade", "verify_chain"]
