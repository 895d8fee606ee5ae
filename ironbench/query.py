"""DuckDB over the store, read-only and offline: views of the read models, queries/*.sql."""

import csv
import io
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from ironbench.errors import QueryError, RunNotFound, StoreError

REPO_QUERIES = Path(__file__).resolve().parents[1] / "queries"

# Booleans live in SQLite as integers; the views restore their type so queries read naturally.
_VIEWS = {
    "runs": "SELECT * FROM store.runs",
    "invocations": (
        "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out, "
        "debug_artifacts_present::BOOLEAN AS debug_artifacts_present) FROM store.invocations"
    ),
    # Attempts of a slot that a re-run replaced (they hit infrastructure errors).
    "superseded_invocations": (
        "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out, "
        "debug_artifacts_present::BOOLEAN AS debug_artifacts_present) FROM store.superseded_invocations"
    ),
    "decisions": "SELECT * FROM store.decisions",
    "variants": "SELECT * REPLACE (dropped::BOOLEAN AS dropped) FROM store.variants",
    "rejections": "SELECT * FROM store.rejections",
    "turns": "SELECT * FROM store.turns",
    "turn_scores": "SELECT * REPLACE (violated::BOOLEAN AS violated) FROM store.turn_scores",
    "events": "SELECT seq, event_id, run_id, stream, type, schema_version, timestamp_utc, payload FROM store.events",
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


def connect(store_path: Path, run_id: str | None = None):
    """An in-memory DuckDB with the store attached read-only and views per read model.

    With `run_id`, every view shows that run only, so one query file serves both
    "across all runs" and "this run".
    """
    import duckdb

    if not Path(store_path).exists():
        raise StoreError(f"{store_path}: no store here (run something first, or pass --store)")
    from ironbench.store.migrate import SCHEMA_HEAD, current_revision

    try:
        revision = current_revision(Path(store_path))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{store_path}: not an ironbench store: {exc}") from None
    if revision != SCHEMA_HEAD:
        # Queries only read; bringing the schema up to date is an explicit write.
        raise StoreError(f"{store_path}: store schema is at revision {revision}, this ironbench needs "
                         f"{SCHEMA_HEAD}: run `ironbench db upgrade`")
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    try:
        con.execute(f"LOAD '{_extension_path()}'")
        con.execute(f"ATTACH '{_quote(str(store_path))}' AS store (TYPE sqlite, READ_ONLY)")
        if run_id is not None:
            found = con.execute("SELECT count(*) FROM store.runs WHERE run_id = ?", [run_id]).fetchone()[0]
            if not found:
                raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        for name, select in _VIEWS.items():
            where = f" WHERE run_id = '{_quote(run_id)}'" if run_id is not None else ""
            con.execute(f"CREATE TEMP VIEW {name} AS SELECT * FROM ({select}){where}")
    except duckdb.Error as exc:
        con.close()
        raise StoreError(f"{store_path}: cannot open with DuckDB: {str(exc).splitlines()[0]}") from None
    return con


def _quote(text: str) -> str:
    return text.replace("'", "''")


def resolve_query(name: str) -> Path:
    """A path to a .sql file, or a name looked up in ./queries and the shipped queries/."""
    candidates = [Path(name)]
    file_name = name if name.endswith(".sql") else f"{name}.sql"
    candidates += [Path("queries") / file_name, REPO_QUERIES / file_name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(p.name for p in REPO_QUERIES.glob("*.sql")))
    raise QueryError(f"query {name!r} not found (as a path, in ./queries, or shipped: {shipped})")


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    rows: list[tuple]


def run_sql(store_path: Path, sql: str, run_id: str | None = None, source: str = "query") -> QueryResult:
    import duckdb

    con = connect(store_path, run_id)
    try:
        cursor = con.execute(sql)
        if cursor.description is None:
            return QueryResult([], [])
        return QueryResult([d[0] for d in cursor.description], cursor.fetchall())
    except duckdb.Error as exc:
        raise QueryError(f"{source}: {str(exc).splitlines()[0]}") from None
    finally:
        con.close()


def looks_like_sql(text: str) -> bool:
    return not text.endswith(".sql") and text.lstrip().split(" ", 1)[0].upper() in ("SELECT", "WITH", "FROM",
                                                                                  "DESCRIBE", "SUMMARIZE")


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
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def format_result(result: QueryResult, fmt: str) -> str:
    if fmt == "json":
        return json.dumps([dict(zip(result.columns, row)) for row in result.rows], indent=2, default=str)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.columns)
        writer.writerows(result.rows)
        return buffer.getvalue().rstrip("\n")
    cells = [[_cell(v) for v in row] for row in result.rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(result.columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(result.columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    lines.append(f"({len(cells)} row{'s' if len(cells) != 1 else ''})")
    return "\n".join(lines)
