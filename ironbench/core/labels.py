"""How a run's parts are named: a case for people, and a group, its track and its runs' streams
in the store (in Python, and in SQL over a read-model table's columns), and the order names
are listed in."""

import re

BASE = "base"  # the variant id of a case's own instruction


def case_label(case_id: str, variant_id: str | None) -> str:
    """A case as people name it: its id, with the variant unless it is the base instruction."""
    return case_id if variant_id in (BASE, None) else f"{case_id}/{variant_id}"


def group_path(group: str, case_id: str) -> str:
    """The group a decision or an invocation belongs to; stores from before groups were
    recorded hold baseline cases only, whose group is `baseline/<case>`."""
    return group or f"baseline/{case_id}"


def group_path_sql(table: str = "") -> str:
    """`group_path` over a read-model row's `group_path` and `case_id` columns (`table`: their
    qualifier, as `i.`); the same SQL in SQLite and DuckDB."""
    return f"coalesce(nullif({table}group_path, ''), 'baseline/' || {table}case_id)"


def group_of(stream: str) -> str:
    """The group of an invocation's stream: the stream without its `run_NNN` leaf."""
    return stream.rsplit("/", 1)[0]


def track_of(group: str) -> str:
    """The track a group belongs to: a stress level's ladder, an adversarial group's case."""
    return group.rsplit("/", 1)[0]


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(name: str | None) -> tuple[tuple[int, int, str], ...]:
    """The key that lists names as people count: `humaneval_2` before `humaneval_12` (a run of
    digits compares as its number, then as written, so `a01` and `a1` keep one order); None
    (no variant) first. Every listing of cases, variants and groups sorts by it."""
    if name is None:
        return ()
    # split by a captured pattern: text, digits, text, ... (the digit runs at odd places)
    return tuple((0, int(part), part) if i % 2 else (1, 0, part) for i, part in enumerate(_DIGITS.split(name)) if part)
