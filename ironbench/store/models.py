"""The tables as SQLModel sees them, built from the row classes (store/tables.py) for alembic's
environment and the drift test: importing this registers them on `SQLModel.metadata`.

Only schema work imports it (it loads SQLAlchemy and SQLModel, about half a second); the
store, the read model and every command write through the row classes themselves.
"""

import types
from typing import Any

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from ironbench.store import tables
from ironbench.store.rows import Row


def _model(row: type[Row]) -> type[SQLModel]:
    """`row` as a SQLModel table class: the same columns, types, keys and indexes."""
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__qualname__": row.__name__,
        "__doc__": row.__doc__,
        "__tablename__": row.__tablename__,
        "__annotations__": {c.name: c.type for c in row.schema},
    }
    for c in row.schema:
        if c.primary_key or c.index or c.unique:
            namespace[c.name] = Field(primary_key=c.primary_key, index=c.index, unique=c.unique)
    if row.indexes:
        namespace["__table_args__"] = tuple(Index(name, *over) for name, over in row.indexes)
    return types.new_class(row.__name__, (SQLModel,), {"table": True}, lambda body: body.update(namespace))


assert tables.EventRecord in Row.tables  # (every table class is declared by importing tables)
MODELS: dict[type[Row], type[SQLModel]] = {row: _model(row) for row in Row.tables}
metadata = SQLModel.metadata
