"""ironbench's commands. Each parses its options and calls one library function."""

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ironbench.errors import IronbenchError

app = typer.Typer(
    name="ironbench",
    help="Benchmark harness for LLM-driven systems: every invocation an event, every answer a query.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Manage the event store's schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")

OutOption = Annotated[Path, typer.Option(
    "--out", envvar="IRONBENCH_OUT", help="Output directory: run trees, working directories and the store.")]
StoreOption = Annotated[Optional[Path], typer.Option(
    "--store", envvar="IRONBENCH_STORE", help="SQLite event store [default: OUT/ironbench.db].")]
JobsOption = Annotated[int, typer.Option("--jobs", "-j", min=1, help="Cases invoked in parallel.")]
MaxFailuresOption = Annotated[Optional[int], typer.Option(
    "--max-failures", min=1, help="Stop the run after this many rejected AI outputs (resume continues it).")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or turn-by-turn output.")]
DEFAULT_OUT = Path("outputs")


class TableFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


class ReportFormat(str, Enum):
    table = "table"
    json = "json"


def _paths(out: Path, store: Optional[Path]):
    from ironbench.runner import RunPaths

    return RunPaths.resolve(out, store)


def _reporter(quiet: bool):
    if quiet:
        return None
    from rich.console import Console

    from ironbench.cli.progress import ProgressReporter

    return ProgressReporter(Console(stderr=True))


@app.command()
def run(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    target: Annotated[Optional[str], typer.Option(
        "--target", help='Registered target name (ironclad, fixture) or a command with {instruction}, '
        'e.g. "python my_agent.py {instruction}". Overrides the suite\'s target.')] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = 1,
    max_failures: MaxFailuresOption = None,
    quiet: QuietOption = False,
) -> None:
    """Run a suite against its target; prints the run id."""
    from ironbench.runner import start_run
    from ironbench.suite import load_suite

    loaded = load_suite(suite)
    reporter = _reporter(quiet)
    paths = _paths(out, store)
    run_id = start_run(loaded, paths, target, jobs, str(suite), reporter, max_failures=max_failures)
    if loaded.mode == "gauntlet" and not quiet:
        from ironbench.gauntlet.report import format_summary, summary_from_store

        typer.echo(format_summary(summary_from_store(paths.store_path, run_id)), err=True)
    elif not quiet:
        from ironbench.runs import run_summary

        typer.echo("\n".join(run_summary(paths.store_path, run_id)), err=True)
    typer.echo(run_id)


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id to continue.")],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = 1,
    max_failures: MaxFailuresOption = None,
    quiet: QuietOption = False,
) -> None:
    """Continue an interrupted run: nothing completed is lost or repeated."""
    from ironbench.runner import resume_run

    reporter = _reporter(quiet)
    status = resume_run(run_id, _paths(out, store), jobs, reporter, max_failures=max_failures)
    typer.echo(f"{run_id} {status}")


@app.command()
def runs(
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
) -> None:
    """List the runs in the store."""
    from ironbench.query import format_result
    from ironbench.runs import list_runs

    typer.echo(format_result(list_runs(_paths(out, store).store_path), format.value))


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """Show one run: its metadata and, per case, outcomes and the stopping decision."""
    from ironbench.query import format_result
    from ironbench.runs import show_run

    header, cases = show_run(_paths(out, store).store_path, run_id)
    if header["mode"] == "gauntlet" and format is ReportFormat.table:
        header = {k: v for k, v in header.items() if k not in ("invocations", "successes", "ironclad_version")}
    acceptance = None
    if header["mode"] != "gauntlet":
        from ironbench.runs import ai_acceptance

        acceptance = ai_acceptance(_paths(out, store).store_path, run_id)
    if format is ReportFormat.json:
        extra = {"ai_acceptance": [dict(zip(acceptance.columns, r)) for r in acceptance.rows]} if acceptance else {}
        typer.echo(json.dumps({**header, "cases": [dict(zip(cases.columns, r)) for r in cases.rows], **extra},
                              indent=2, default=str))
        return
    for key, value in header.items():
        typer.echo(f"{key:>17}: {value}")
    typer.echo("")
    if header["mode"] == "gauntlet":
        from ironbench.gauntlet.report import format_summary, summary_from_store

        typer.echo(format_summary(summary_from_store(_paths(out, store).store_path, run_id)))
        return
    typer.echo(format_result(cases, "table"))
    if acceptance is not None and acceptance.rows:
        typer.echo("\nAI rewrites, acceptance per generator:")
        typer.echo(format_result(acceptance, "table"))


@app.command()
def project(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Delete and regenerate from events alone.")] = False,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Bring a run's output tree up to date from the event store."""
    from ironbench.projections.rebuild import project_run

    paths = _paths(out, store)
    typer.echo(str(project_run(paths.store_path, paths.out_dir, run_id, rebuild)))


@app.command()
def query(
    name: Annotated[str, typer.Argument(
        help="A .sql file path, a name in queries/ (e.g. failure_breakdown.sql), or inline SQL (SELECT ...).")],
    run_id: Annotated[Optional[str], typer.Option("--run", help="Restrict every view to this run.")] = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Run a SQL query in DuckDB over the store (read-only). Views: runs, invocations, decisions, variants, rejections, turns, turn_scores, events."""
    from ironbench.query import format_result, run_query

    typer.echo(format_result(run_query(_paths(out, store).store_path, name, run_id), format.value))


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="Reference run.")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="Candidate run.")],
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    scorer: Annotated[str, typer.Option("--scorer", help="Gauntlet runs: the scorer whose violations count.")] =
    "negation_aware",
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Compare two runs; exits 1 when B significantly regressed against A (a CI gate)."""
    from ironbench.compare import compare_runs, format_comparison

    comparison = compare_runs(_paths(out, store).store_path, run_a, run_b, alpha, scorer)
    if format is ReportFormat.json:
        typer.echo(json.dumps(comparison.to_dict(), indent=2))
    else:
        typer.echo(format_comparison(comparison))
    if comparison.regressed:
        raise typer.Exit(1)


@app.command()
def rescore(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="A gauntlet run.")],
    scorer: Annotated[str, typer.Option("--scorer", help="Scorer name: literal, negation_aware, judge (the model "
                                        "in $IRONBENCH_JUDGE_MODEL, default the embedded one) or judge:MODEL.")],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Re-score a gauntlet run's stored transcripts (new events; no engine is called)."""
    from ironbench.gauntlet.rescore import rescore_run

    paths = _paths(out, store)
    violations = rescore_run(paths.store_path, paths.out_dir, run_id, scorer)
    for engine, count in violations.items():
        typer.echo(f"{engine}: {count} violation(s) by {scorer}")


@app.command()
def variants(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """Preview every variant and ladder level of a suite, diffed against its base; invokes nothing."""
    from dataclasses import asdict

    from ironbench.preview import preview, word_diff
    from ironbench.suite import load_suite

    items = preview(load_suite(suite))
    if format is ReportFormat.json:
        typer.echo(json.dumps([asdict(i) for i in items], indent=2))
        return
    current = None
    for item in items:
        if item.case_id != current:
            current = item.case_id
            typer.echo(f"\n{item.mode}/{item.case_id}: {item.base_instruction}")
        label = item.variant_id or ("AI" if item.note.startswith("up to") else "DROPPED")
        if item.generator == "-":
            typer.echo("  (baseline: no variants)")
            continue
        if label == "AI":
            typer.echo(f"  {item.generator}: {item.note}")
            continue
        typer.echo(f"  {item.generator}/{label.split('/')[-1]}: {word_diff(item.base_instruction, item.instruction)}")
        if item.note:
            typer.echo(f"      {item.note}")


@db_app.command("upgrade")
def db_upgrade(out: OutOption = DEFAULT_OUT, store: StoreOption = None) -> None:
    """Create the store if needed and apply every pending alembic revision."""
    from ironbench.store.migrate import upgrade

    path = _paths(out, store).store_path
    path.parent.mkdir(parents=True, exist_ok=True)
    typer.echo(f"{path}: at revision {upgrade(path)}")


def main() -> None:
    try:
        app()
    except IronbenchError as exc:
        print(f"ironbench: error: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
