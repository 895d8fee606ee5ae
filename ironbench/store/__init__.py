"""The SQLite event store and its read-model tables."""

from ironbench.store.eventstore import EventStore, open_store

__all__ = ["EventStore", "open_store"]
