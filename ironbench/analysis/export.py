"""Export the read-model views to Parquet, CSV or JSON lines, for pandas, polars and notebooks.

The one deliberate write of the query side: DuckDB copies each view (for one run,
or all of them) into a file. Files appear whole or not at all: each is written
beside its final name and renamed into place.
"""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ironbench.analysis.query import connect, shipped_queries
from ironbench.core.errors import IronbenchError

EXPORTED_VIEWS = ("runs", "invocations", "decisions", "variants", "rejections", "turns", "turn_scores")
# Shipped queries exported beside the views: the numbers the field reports, per case and turn.
EXPORTED_QUERIES = ("pass_k", "robustness", "survival")
FORMATS = {
    "parquet": ("parquet", "(FORMAT parquet)"),
    "csv": ("csv", "(FORMAT csv, HEADER)"),
    "jsonl": ("jsonl", "(FORMAT json)"),
}


class ExportError(IronbenchError):
    """The export directory cannot be written."""


@dataclass(frozen=True)
class Exported:
    view: str
    path: Path
    rows: int


def export_views(store_path: Path, to: Path, fmt: str, run_id: str | None = None) -> list[Exported]:
    """Write every view (restricted to `run_id` when given) as `to/<view>.<ext>`, and the
    shipped queries in EXPORTED_QUERIES as `to/<query>.<ext>`."""
    import duckdb

    selects = {view: f"SELECT * FROM {view}" for view in EXPORTED_VIEWS}
    for name in EXPORTED_QUERIES:
        selects[name] = (shipped_queries() / f"{name}.sql").read_text(encoding="utf-8").strip().rstrip(";")

    extension, options = FORMATS[fmt]
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{to}: cannot create export directory: {exc.strerror}") from None
    con = connect(store_path, run_id, export_dir=to)
    exported: list[Exported] = []
    try:
        for view, select in selects.items():
            final = to / f"{view}.{extension}"
            handle, partial = tempfile.mkstemp(prefix=f".{view}.", suffix=f".{extension}", dir=to.resolve())
            os.close(handle)
            try:
                quoted = partial.replace("'", "''")
                con.execute(f"COPY ({select}) TO '{quoted}' {options}")
                rows = con.execute(f"SELECT count(*) FROM ({select})").fetchone()[0]
                os.replace(partial, final)
            except BaseException:
                Path(partial).unlink(missing_ok=True)
                raise
            exported.append(Exported(view, final, rows))
    except (OSError, duckdb.Error) as exc:
        message = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise ExportError(f"{to}: cannot write export: {message}") from None
    finally:
        con.close()
    return exported
