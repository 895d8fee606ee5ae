"""DuckDB over the store, read-only and offline: views of the read models, queries/*.sql.

Read-only is enforced, not assumed: the store is attached READ_ONLY, every statement
is parsed and only SELECT-family statements run, file and network access is disabled
once the store is attached, and the configuration is locked so no query can undo it.
"""

import csv
import io
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ironbench.console.layout import is_atomic, render
from ironbench.console.numbers import number
from ironbench.console.printable import printable
from ironbench.core.errors import QueryError, RunNotFound, StoreError
from ironbench.store import sqlite_failure

# Booleans live in SQLite as integers; the views restore their type so queries read naturally.
_VIEWS = {
    "runs": "SELECT * FROM store.runs",
    "invocations": (
        "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out, "
        "debug_artifacts_present::BOOLEAN AS debug_artifacts_present, correct::BOOLEAN AS correct) FROM store.invocations"
    ),
    # Attempts of a slot that a re-run replaced (they hit infrastructure errors).
    "superseded_invocations": (
        "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out, "
        "debug_artifacts_present::BOOLEAN AS debug_artifacts_present, correct::BOOLEAN AS correct) "
        "FROM store.superseded_invocations"
    ),
    # Runs past their group's decision (--speculate): kept, never evidence.
    "surplus_invocations": (
        "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out, "
        "debug_artifacts_present::BOOLEAN AS debug_artifacts_present, correct::BOOLEAN AS correct) "
        "FROM store.surplus_invocations"
    ),
    # The harness's check of each saved brick (the latest, when it was checked again).
    "checks": "SELECT * REPLACE (correct::BOOLEAN AS correct, recheck::BOOLEAN AS recheck) FROM store.checks",
    # Why each failed validation attempt failed (the target's debug files, the rules' failure_causes).
    "failure_causes": "SELECT * FROM store.failure_causes",
    "decisions": "SELECT * FROM store.decisions",
    "variants": "SELECT * REPLACE (dropped::BOOLEAN AS dropped) FROM store.variants",
    "rejections": "SELECT * FROM store.rejections",
    "turns": "SELECT * FROM store.turns",
    "turn_scores": "SELECT * REPLACE (violated::BOOLEAN AS violated) FROM store.turn_scores",
    # The calls targets made to a run's model gateway (--serve-model), and their long texts.
    "model_calls": "SELECT * REPLACE (stream::BOOLEAN AS stream) FROM store.gateway_calls",
    "model_texts": "SELECT * FROM store.gateway_texts",
    # What every model call cost: the target's through the gateway and ironbench's own (caller).
    "costs": "SELECT * FROM store.call_costs",
    "gates": "SELECT * REPLACE (met::BOOLEAN AS met) FROM store.gates",
    "gate_looks": "SELECT * REPLACE (failed::BOOLEAN AS failed) FROM store.gate_looks",
    "events": "SELECT seq, event_id, run_id, stream, type, schema_version, timestamp_utc, payload FROM store.events",
    # Generators that made fewer variants than asked: few rows, so read from their events (no table).
    "variant_shortfalls": (
        "SELECT seq, run_id, json_extract_string(payload, '$.mode') AS case_mode, "
        "json_extract_string(payload, '$.case_id') AS case_id, "
        "json_extract_string(payload, '$.generator') AS generator, "
        "json_extract(payload, '$.asked')::BIGINT AS asked, json_extract(payload, '$.made')::BIGINT AS made, "
        "json_extract_string(payload, '$.reason') AS reason, "
        "json_extract(payload, '$.wordings')::BIGINT AS wordings, "
        "json_extract(payload, '$.dropped')::BIGINT AS dropped, timestamp_utc "
        "FROM store.events WHERE type = 'variant_shortfall'"
    ),
    # What the fence withheld from each invocation, one row per denial, with the flag that allows
    # it; `caused`: the invocation failed for it (its failure_cause is `fence`). Few rows: events.
    "fence_denials": (
        "SELECT e.seq, e.run_id, json_extract_string(e.payload, '$.key') AS invocation_key, "
        "json_extract(e.payload, '$.rerun')::BIGINT AS rerun, json_extract_string(e.payload, '$.case_id') AS case_id, "
        "json_extract_string(e.payload, '$.variant_id') AS variant_id, "
        "json_extract(e.payload, '$.run_index')::BIGINT AS run_index, "
        "json_extract(e.payload, '$.caused')::BOOLEAN AS caused, d.kind, d.what, d.flag, d.seen, d.explains, "
        "d.note, e.timestamp_utc FROM store.events e, unnest(from_json(json_extract(e.payload, '$.denials'), "
        '\'[{"kind": "VARCHAR", "what": "VARCHAR", "flag": "VARCHAR", "seen": "VARCHAR", '
        '"explains": "BOOLEAN", "note": "VARCHAR"}]\')) AS t(d) WHERE e.type = \'fence_denied\''
    ),
}


def _values(columns: tuple[str, ...], rows: list[tuple]) -> str:
    """A constant table as SQL: `SELECT * FROM (VALUES ...) t(columns)`."""

    def literal(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        return "'" + _quote(str(value)) + "'"

    body = ", ".join("(" + ", ".join(literal(v) for v in row) + ")" for row in rows)
    return f"SELECT * FROM (VALUES {body}) t({', '.join(columns)})"


def vocabulary_views() -> dict[str, str]:
    """The value sets queries count by, as views (declared once, in `ironbench.core`): every
    decision kind with whether it is a judged variant and a material one, and every outcome
    code with its name, colour, mark and whether it is evidence. Not per run."""
    from ironbench.core.kinds import decision_kind_rows
    from ironbench.core.outcome_codes import OUTCOME_CODES

    return {
        "decision_kinds": _values(("decision", "decides", "judged", "material"), decision_kind_rows()),
        "outcome_codes": _values(
            ("code", "name", "colour", "mark", "evidence", "success"),
            [(c.code, c.name, c.colour, c.mark, c.evidence, c.success) for c in OUTCOME_CODES],
        ),
    }


def _extension_path() -> str:
    try:
        import duckdb_extension_sqlite_scanner as package
    except ImportError:
        raise QueryError("the duckdb-extension-sqlite-scanner package is not installed") from None
    found = sorted((Path(package.__file__).parent / "extensions").glob("*/sqlite_scanner.duckdb_extension"))
    if not found:
        raise QueryError("duckdb-extension-sqlite-scanner ships no sqlite_scanner extension file")
    return str(found[-1])


# The sqlite scanner opens files with SQLite's own I/O, past DuckDB's disabled file
# access, and `query()` runs SQL hidden in a string: the store's views are the way in.
REFUSED_FUNCTIONS = frozenset({"sqlite_scan", "sqlite_attach", "sqlite_query", "query"})
SCHEMA_WAIT_SECONDS = 30.0


def _has_no_tables(store_path: Path) -> bool:
    with sqlite3.connect(f"file:{store_path}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def _schema_revision(store_path: Path, wait_seconds: float) -> str | None:
    """The store's revision; while the store is still being created (by a run that
    has just started, say), wait for its schema rather than report it missing."""
    from ironbench.store import current_revision

    deadline = time.monotonic() + wait_seconds
    try:
        while True:
            revision = current_revision(store_path)
            if revision is not None or time.monotonic() >= deadline or not _has_no_tables(store_path):
                return revision
            time.sleep(0.1)
    except sqlite3.DatabaseError as exc:
        # reading a store needs its folder writable too: SQLite keeps a shared-memory file beside it
        raise sqlite_failure(store_path, "cannot read the store", exc) from None


def connect(store_path: Path, run_id: str | None = None, export_dir: Path | None = None):
    """An in-memory DuckDB with the store attached read-only and views per read model.

    With `run_id`, every view shows that run only, so one query file serves both
    "across all runs" and "this run". External access is off once the store is
    attached; `export_dir` is the one directory `ironbench export` may write into.
    """
    import duckdb

    if not Path(store_path).exists():
        raise StoreError(f"{store_path}: no store here (run something first, or pass --store)")
    from ironbench.store import SCHEMA_HEAD

    revision = _schema_revision(Path(store_path), SCHEMA_WAIT_SECONDS)
    if revision is None and _has_no_tables(Path(store_path)):
        raise StoreError(
            f"{store_path}: no ironbench schema appeared within {SCHEMA_WAIT_SECONDS:.0f} s "
            "(an empty file: run something, or `ironbench db upgrade`)"
        )
    if revision != SCHEMA_HEAD:
        # Queries only read; bringing the schema up to date is an explicit write.
        raise StoreError(
            f"{store_path}: store schema is at revision {revision}, this ironbench needs "
            f"{SCHEMA_HEAD}: run `ironbench db upgrade`"
        )
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"LOAD '{_extension_path()}'")
        con.execute(f"ATTACH '{_quote(str(store_path))}' AS store (TYPE sqlite, READ_ONLY)")
        if run_id is not None:
            row = con.execute("SELECT count(*) FROM store.runs WHERE run_id = ?", [run_id]).fetchone()
            assert row is not None  # count(*) returns one row
            if not row[0]:
                raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        for name, select in _VIEWS.items():
            where = f" WHERE run_id = '{_quote(run_id)}'" if run_id is not None else ""
            con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM ({select}){where}")
        for name, select in vocabulary_views().items():
            con.execute(f"CREATE TEMP VIEW {name} AS {select}")
        if export_dir is not None:
            con.execute(f"SET allowed_directories = ['{_quote(str(Path(export_dir).resolve()))}/']")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"{store_path}: cannot open with DuckDB: {str(exc).splitlines()[0]}") from None
    return con


def _quote(text: str) -> str:
    return text.replace("'", "''")


def shipped_queries() -> Path:
    """The queries ironbench ships (`failure_breakdown.sql`, ...)."""
    from ironbench.core.shipped import shipped

    return shipped("queries")


def resolve_query(name: str) -> Path:
    """A path to a .sql file, or a name looked up in ./queries and the shipped queries/."""
    candidates = [Path(name)]
    file_name = name if name.endswith(".sql") else f"{name}.sql"
    candidates += [Path("queries") / file_name, shipped_queries() / file_name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.name for p in shipped_queries().glob("*.sql")))
    raise QueryError(f"query {name!r} not found (as a path, in ./queries, or shipped: {shipped})")


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple]


def _function_names(node) -> set[str]:
    if isinstance(node, dict):
        names = {node["function_name"]} if isinstance(node.get("function_name"), str) else set()
        return names.union(*(_function_names(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_function_names(v) for v in node))
    return set()


def read_only_statements(con, sql: str, source: str) -> list:
    """The parsed statements of `sql`, each checked to be a SELECT that reads only
    through the store's views; anything else refuses the whole text before any runs."""
    import duckdb

    statements = con.extract_statements(sql)
    if not statements:
        raise QueryError(f"{source}: no SQL statement")
    for position, statement in enumerate(statements, 1):
        if statement.type != duckdb.StatementType.SELECT:
            kind = statement.type.name.replace("_", " ")
            raise QueryError(
                f"{source}: statement {position} is {kind}: queries are read-only, "
                "only SELECT (WITH, FROM, DESCRIBE, SUMMARIZE, SHOW, VALUES) statements run"
            )
        tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [statement.query]).fetchone()[0])
        refused = sorted(_function_names(tree) & REFUSED_FUNCTIONS)
        if tree.get("error") or refused:
            what = f"function {refused[0]}()" if refused else tree.get("error_message", "statement")
            raise QueryError(f"{source}: statement {position} uses {what}: queries read the store's views only")
    return statements


def run_sql(store_path: Path, sql: str, run_id: str | None = None, source: str = "query") -> QueryResult:
    import duckdb

    con = connect(store_path, run_id)
    try:
        cursor = None
        for statement in read_only_statements(con, sql, source):
            cursor = con.execute(statement)
        if cursor is None or cursor.description is None:
            return QueryResult([], [])
        return QueryResult([d[0] for d in cursor.description], cursor.fetchall())
    except duckdb.Error as exc:
        raise QueryError(f"{source}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def looks_like_sql(text: str) -> bool:
    return not text.endswith(".sql") and text.lstrip().split(" ", 1)[0].upper() in (
        "SELECT",
        "WITH",
        "FROM",
        "DESCRIBE",
        "SUMMARIZE",
    )


def run_query(store_path: Path, name: str, run_id: str | None = None) -> QueryResult:
    """Run a query file (a path, or a name in ./queries or the shipped queries/), or inline SQL."""
    if looks_like_sql(name):
        return run_sql(store_path, name, run_id, source="inline SQL")
    path = resolve_query(name)
    try:
        sql = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QueryError(f"{path}: cannot read query: {exc}") from None
    return run_sql(store_path, sql, run_id, source=str(path))


def _cell(value) -> str:
    """A table cell: floats to 4 significant digits, and whole digits (20770, not 2.077e+04)
    for values that big."""
    if value is None:
        return ""
    if isinstance(value, float):
        return number(value, ".0f" if 1e4 <= abs(value) < 1e16 else ".4g")
    return printable(str(value))


def format_result(result: QueryResult, fmt: str, width: int | None = None, keys: int = 1) -> str:
    """json and csv: the exact data. table: for people, fitted to `width` (see tables.render),
    the first `keys` columns repeated when it continues in a further panel."""
    if fmt == "json":
        return json.dumps([dict(zip(result.columns, row, strict=True)) for row in result.rows], indent=2, default=str)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buffer.getvalue().rstrip("\n")
    cells = [[_cell(v) for v in row] for row in result.rows]
    atomic = [
        bool(result.rows) and all(v is None or is_atomic(v) for v in column)
        for column in zip(*result.rows, strict=True)
    ]
    lines = render([printable(c) for c in result.columns], cells, width, keys, atomic or None)
    lines.append(f"({len(cells)} row{'s' if len(cells) != 1 else ''})")
    return "\n".join(lines)
