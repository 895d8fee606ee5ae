"""The SQLModel tables describe exactly the schema the alembic migrations build."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine
from sqlmodel import SQLModel

import ironbench.store.tables  # noqa: F401  (registers the tables)
from ironbench.store import open_store


def test_the_models_and_the_migrated_store_never_drift(tmp_path):
    path = tmp_path / "store.db"
    with open_store(path):
        pass
    engine = create_engine(f"sqlite:///{path}")
    try:
        with engine.connect() as conn:
            differences = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    finally:
        engine.dispose()
    assert differences == []
