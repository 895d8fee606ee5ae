"""Schema migrations: the shipped alembic revisions (`migrations/`), applied on first use."""

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from ironbench.core.errors import StoreError
from ironbench.core.shipped import shipped

# The newest revision in migrations/versions; a test keeps it equal to alembic's head
# so opening an up-to-date store costs one SELECT instead of loading alembic.
SCHEMA_HEAD = "0016_call_costs"
if TYPE_CHECKING:
    from alembic.config import Config
    from sqlalchemy import Connection


def migrations_dir() -> Path:
    """The shipped alembic environment and its revisions (`versions/`)."""
    return shipped("migrations")


def current_revision(path: Path) -> str | None:
    with sqlite3.connect(path) as conn:
        try:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
        except sqlite3.OperationalError:
            return None
    return row[0] if row else None


def alembic_config(path: Path) -> "Config":
    from alembic.config import Config

    migrations = migrations_dir()
    if not (migrations / "env.py").exists():
        raise StoreError(f"{migrations}: alembic migrations not found (reinstall ironbench)")
    config = Config()
    config.set_main_option("script_location", str(migrations))
    config.set_main_option("sqlalchemy.url", f"sqlite:///{path}")
    return config


def upgrade(path: Path) -> str:
    """Apply every pending revision; returns the revision the store is now at."""
    from alembic import command
    from sqlalchemy import create_engine, event
    from sqlalchemy.exc import DBAPIError

    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 30})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None  # the transaction is ours, begun below
        dbapi_connection.execute("PRAGMA journal_mode=WAL")

    @event.listens_for(engine, "begin")
    def _begin(conn: "Connection") -> None:
        # Every revision in one write transaction: a reader sees no schema or all of
        # it, and a second process creating the same store waits, then finds it done.
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    try:
        with engine.begin() as conn:
            config = alembic_config(path)
            config.attributes["connection"] = conn
            command.upgrade(config, "head")
    except DBAPIError as exc:  # the driver's own error says what happened (full, read-only, ...)
        if isinstance(exc.orig, sqlite3.Error):
            raise exc.orig from None
        raise
    finally:
        engine.dispose()
    return current_revision(path) or "none"


def ensure_schema(path: Path) -> None:
    if current_revision(path) != SCHEMA_HEAD:
        upgrade(path)
