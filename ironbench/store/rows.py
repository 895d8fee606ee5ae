"""Row classes: a table declared once, as the class its rows are written through.

A table class lists its columns in order, typed (`str | None` is a nullable column), with
`column(...)` for keys and indexes: `class RunRow(Row, table="runs")`. Its instances are
rows, built by keyword and checked by mypy like any dataclass, and its statements are made
from its columns once, when the class is defined: `conn.execute(RunRow.replace,
row.values())`. They are plain text, so the write path never loads SQLAlchemy (importing it
and SQLModel costs a command about half a second); alembic and the drift test see the same
classes as SQLModel tables (`store/models.py`).
"""

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar, dataclass_transform


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: its name, its Python type (None in it: nullable) and its keys."""

    name: str
    type: Any
    primary_key: bool = False
    index: bool = False
    unique: bool = False


def column(*, primary_key: bool = False, index: bool = False, unique: bool = False) -> Any:
    """A column that is (part of) the primary key, has an index of its own, or is unique."""
    return dataclasses.field(metadata={"primary_key": primary_key, "index": index, "unique": unique})


@dataclass_transform(kw_only_default=True, field_specifiers=(column,))
class Row:
    """A table's row. A subclass with `table=` is a table; one without is a column set that
    tables share (its columns come first, as a dataclass's base fields do)."""

    tables: ClassVar[list[type["Row"]]] = []  # every table class, in the order they were declared
    __tablename__: ClassVar[str]
    schema: ClassVar[tuple[Column, ...]]
    columns: ClassVar[tuple[str, ...]]  # the column names, in order
    indexes: ClassVar[tuple[tuple[str, tuple[str, ...]], ...]]  # named indexes over several columns
    insert: ClassVar[str]  # INSERT INTO table(columns) VALUES (?, ...): a row's values()
    replace: ClassVar[str]  # INSERT OR REPLACE ...
    insert_or_ignore: ClassVar[str]  # INSERT OR IGNORE ...
    _values: ClassVar["attrgetter[Any]"]

    def __init_subclass__(
        cls, table: str | None = None, indexes: Iterable[tuple[str, tuple[str, ...]]] = (), frozen: bool = False
    ) -> None:
        """`table`: the table's name; `indexes`: (name, columns) of its indexes over several
        columns; `frozen`: for a table whose columns begin with a frozen dataclass's fields."""
        super().__init_subclass__()
        dataclass(kw_only=True, frozen=frozen)(cls)
        if table is None:
            return
        cls.__tablename__ = table
        cls.schema = tuple(
            Column(f.name, f.type, **{k: bool(f.metadata.get(k)) for k in ("primary_key", "index", "unique")})
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]  # a dataclass from here on
        )
        cls.columns = tuple(c.name for c in cls.schema)
        cls.indexes = tuple((name, cls._named(over)) for name, over in indexes)
        into = f"INTO {table}({', '.join(cls.columns)}) VALUES ({', '.join('?' * len(cls.columns))})"
        cls.insert, cls.replace, cls.insert_or_ignore = (
            f"INSERT {into}",
            f"INSERT OR REPLACE {into}",
            f"INSERT OR IGNORE {into}",
        )
        cls._values = attrgetter(*cls.columns)  # (every table has two columns or more: a tuple)
        Row.tables.append(cls)

    def values(self) -> tuple[Any, ...]:
        """The row's values in its columns' order: the parameters of `insert` and `replace`."""
        return self._values(self)  # type: ignore[no-any-return]

    @classmethod
    def _named(cls, names: Iterable[str]) -> tuple[str, ...]:
        """`names`, each one of this table's columns (a statement naming another fails when the
        module that makes it is imported, not when it first runs)."""
        names = tuple(names)
        unknown = [n for n in names if n not in cls.columns]
        if unknown:
            raise ValueError(f"{cls.__name__} ({cls.__tablename__}) has no column {', '.join(unknown)}")
        return names

    @classmethod
    def _where(cls, where: Iterable[str]) -> str:
        return " AND ".join(f"{name} = ?" for name in cls._named(where))

    @classmethod
    def select(cls, *columns: str, where: Iterable[str] = ()) -> str:
        """SELECT these columns (all, when none are named) of the rows equal to `where`'s parameters."""
        sql = f"SELECT {', '.join(cls._named(columns or cls.columns))} FROM {cls.__tablename__}"
        condition = cls._where(where)
        return f"{sql} WHERE {condition}" if condition else sql

    @classmethod
    def update(cls, *columns: str, where: Iterable[str]) -> str:
        """SET these columns of the rows equal to `where`'s parameters (the new values first)."""
        assignments = ", ".join(f"{name} = ?" for name in cls._named(columns))
        return f"UPDATE {cls.__tablename__} SET {assignments} WHERE {cls._where(where)}"

    @classmethod
    def delete(cls, *where: str) -> str:
        """DELETE the rows equal to the parameters, column by column (every row: no columns)."""
        condition = cls._where(where)
        return f"DELETE FROM {cls.__tablename__}" + (f" WHERE {condition}" if condition else "")

    @classmethod
    def copy_from(cls, other: type["Row"], where: str) -> str:
        """INSERT OR REPLACE the rows of `other`, a table of the same columns, that `where` selects."""
        if other.columns != cls.columns:
            raise ValueError(f"{other.__name__} and {cls.__name__} differ in their columns")
        names = ", ".join(cls.columns)
        return (
            f"INSERT OR REPLACE INTO {cls.__tablename__}({names}) SELECT {names} FROM {other.__tablename__} "
            f"WHERE {where}"
        )
