"""The table classes describe exactly the schema the alembic migrations build."""

import sqlite3

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from ironbench.store import open_store
from ironbench.store.models import MODELS, metadata
from ironbench.store.rows import Row


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    path = tmp_path_factory.mktemp("schema") / "store.db"
    with open_store(path):
        pass
    return path


def test_the_models_and_the_migrated_store_never_drift(migrated):
    """Tables, columns, types, nullability, indexes and unique constraints (alembic's comparison)."""
    engine = create_engine(f"sqlite:///{migrated}")
    try:
        with engine.connect() as conn:
            differences = compare_metadata(MigrationContext.configure(conn), metadata)
            inspector = inspect(conn)
            keys = {t: inspector.get_pk_constraint(t)["constrained_columns"] for t in metadata.tables}
    finally:
        engine.dispose()
    assert differences == []
    # alembic does not compare primary keys: they decide what INSERT OR REPLACE replaces
    assert keys == {name: [c.name for c in table.primary_key.columns] for name, table in metadata.tables.items()}


def test_every_table_is_a_row_class_and_each_row_class_one_model():
    assert set(MODELS) == set(Row.tables)
    assert {model.__tablename__ for model in MODELS.values()} == set(metadata.tables)
    for row, model in MODELS.items():
        assert tuple(model.__table__.columns.keys()) == row.columns


def test_each_row_class_writes_and_reads_its_table(migrated):
    """Its statements name the store's own columns (those of every row, in the class's order)."""
    with sqlite3.connect(migrated) as conn:
        for row in Row.tables:
            stored = [r[1] for r in conn.execute(f"PRAGMA table_info({row.__tablename__})")]
            assert sorted(stored) == sorted(row.columns), row.__name__
            conn.execute(row.select())
            assert row.insert.startswith(f"INSERT INTO {row.__tablename__}({', '.join(row.columns)}) VALUES")
            assert row.insert.count("?") == len(row.columns)


def test_a_statement_naming_a_column_a_table_lacks_fails_when_made():
    from ironbench.store.tables import RunRow

    assert RunRow.update("status", where=("run_id",)) == "UPDATE runs SET status = ? WHERE run_id = ?"
    with pytest.raises(ValueError, match="RunRow \\(runs\\) has no column statuz"):
        RunRow.update("statuz", where=("run_id",))
