"""Commands that read runs: `runs`, `show`, `log`, `query`, `export`."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    ExportFormat,
    OutOption,
    ReportFormat,
    RunArgument,
    StoreOption,
    TableFormat,
    emit,
    run_paths,
    say,
    width,
)
from ironbench.core.errors import IronbenchError


def runs(
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
) -> None:
    """List the runs in the store."""
    from ironbench.analysis.query import format_result
    from ironbench.analysis.show import list_runs

    result = format_result(list_runs(run_paths(out, store).store_path), format.value, width(format))
    emit(result, format)


def show(
    run_id: RunArgument,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """Show one run: its metadata and, per case, outcomes and the stopping decision."""
    from ironbench.analysis.show import show_json, show_text

    store_path = run_paths(out, store).store_path
    if format is ReportFormat.json:
        typer.echo(json.dumps(show_json(store_path, run_id), indent=2, default=str))
    else:
        say(show_text(store_path, run_id, width()))


def log(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    case_id: Annotated[str, typer.Argument(metavar="CASE")],
    variant: Annotated[
        str | None,
        typer.Option("--variant", help="Only this variant (e.g. base, whitespace_noise/variant_0001, level_2)."),
    ] = None,
    run_index: Annotated[int | None, typer.Option("--run", min=1, help="Only this run number.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Print what a case's invocations wrote on stdout and stderr, as recorded."""
    from ironbench.analysis.show import format_logs, invocation_logs

    say(format_logs(invocation_logs(run_paths(out, store).store_path, run_id, case_id, variant, run_index)))


def query(
    name: Annotated[
        str,
        typer.Argument(
            help="A .sql file path, a name in queries/ (e.g. failure_breakdown.sql), or inline SQL (SELECT ...)."
        ),
    ],
    run_id: Annotated[str | None, typer.Option("--run", help="Restrict every view to this run.")] = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Run a SQL query in DuckDB over the store (read-only). Views: runs, invocations, superseded_invocations, surplus_invocations, decisions, variants, rejections, turns, turn_scores, model_calls, model_texts, fence_denials, events."""
    from ironbench.analysis.query import format_result, run_query

    result = format_result(run_query(run_paths(out, store).store_path, name, run_id), format.value, width(format))
    emit(result, format)


def export(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="The run to export (or --all).")] = None,
    all_runs: Annotated[bool, typer.Option("--all", help="Export every run in the store.")] = False,
    format: Annotated[ExportFormat, typer.Option("--format", "-f", help="File format.")] = ExportFormat.parquet,
    to: Annotated[Path, typer.Option("--to", help="Directory to write <view>.<format> files into.")] = Path("export"),
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Write the views (invocations, decisions, variants, rejections, turns, turn_scores, runs) as files."""
    from ironbench.analysis.export import export_views

    if (run_id is None) == (not all_runs):
        raise IronbenchError("export: name a RUN or pass --all (not both)")
    for item in export_views(run_paths(out, store).store_path, to, format.value, run_id):
        typer.echo(f"{item.path}\t{item.rows} rows")
