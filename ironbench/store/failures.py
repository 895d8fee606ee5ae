"""SQLite failures named for people: a full disk, a read-only or forbidden store, or another error.

SQLite reports them as error codes; they become the same few StoreErrors as a failed file
write does (core/files.py), so a person reads "the disk is full", never a driver's traceback.
"""

import sqlite3
from pathlib import Path

from ironbench.core.errors import StoreError, StoreFull, StoreUnwritable

_FULL_CODES = {sqlite3.SQLITE_FULL}
_UNWRITABLE_CODES = {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH}


def sqlite_failure(path: Path, doing: str, exc: sqlite3.Error) -> StoreError:
    """The StoreError a SQLite error means; `doing` says what failed ("cannot write the store")."""
    primary = primary_code(exc)
    if primary in _FULL_CODES:
        return StoreFull(f"the store's disk is full ({path}: {exc})")
    if primary in _UNWRITABLE_CODES:
        return StoreUnwritable(f"{path}: {doing} ({exc}): a read-only filesystem or no permission")
    if primary in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT):
        return StoreError(f"{path}: not an ironbench store: {exc}")
    return StoreError(f"{path}: {doing}: {exc}")


def primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None
