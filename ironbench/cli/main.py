"""ironbench's commands. Each parses its options and calls one library function."""

import json
import sys
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from ironbench.core.errors import IronbenchError, RunInterrupted

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
    "--store", envvar="IRONBENCH_STORE", show_default="OUT/ironbench.db", help="SQLite event store.")]
JobsOption = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", min=1, show_default="1; with --scheduler, the cluster's worker threads",
    help="Invocations run at once (the runs a decision needs start together, across and within cases).")]
SchedulerOption = Annotated[Optional[str], typer.Option(
    "--scheduler", envvar="IRONBENCH_SCHEDULER", metavar="tcp://HOST:PORT",
    help="Run the invocations on this Dask cluster's workers (the store and decisions stay here).")]
MaxFailuresOption = Annotated[Optional[int], typer.Option(
    "--max-failures", min=1, help="Stop the run after this many rejected AI outputs (resume continues it).")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or turn-by-turn output.")]
NoReportOption = Annotated[bool, typer.Option("--no-report", help="Do not write the run's HTML report at the end.")]
MaxInfraErrorsOption = Annotated[int, typer.Option(
    "--max-infra-errors", min=1, help="Stop the run (exit 1) after this many consecutive infrastructure errors "
    "(the target's backend failed); resume re-runs those invocations.")]
RedactOption = Annotated[Optional[list[str]], typer.Option(
    "--redact", metavar="NAME", help="Also redact this environment variable's value (repeatable); names with "
    "KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL are always redacted.")]
DEFAULT_OUT = Path("outputs")
RunArgument = Annotated[str, typer.Argument(metavar="RUN", help="A run id, as `ironbench runs` lists them.")]

# Typer labels on/off flags with a `<bool>` value placeholder, though a flag takes no
# value; show nothing there instead.
if hasattr(typer.core.TyperOption, "display_type_rich"):
    _display_type = typer.core.TyperOption.display_type_rich
    typer.core.TyperOption.display_type_rich = (
        lambda self, ctx: None if self.is_flag else _display_type(self, ctx))


def _version(value: bool) -> None:
    if value:
        from ironbench import __version__


        typer.echo(f"ironbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[Optional[bool], typer.Option(
        "--version", callback=_version, is_eager=True, help="Print ironbench's version and exit.")] = None,
) -> None:
    """Benchmark harness for LLM-driven systems: every invocation an event, every answer a query."""


class TableFormat(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


class ReportFormat(str, Enum):
    table = "table"
    json = "json"


def _paths(out: Path, store: Optional[Path]):
    from ironbench.run.runner import RunPaths

    return RunPaths.resolve(out, store)


def _finish(paths, run_id: str, quiet: bool, no_report: bool) -> None:
    """End of a run, on stderr: what it did (invocations, failures by stage, AI rewrites accepted),
    its verdict sentences (the report's header) and the report's path."""
    if quiet and no_report:
        return  # nothing to show or write: the store is not opened again
    import shutil

    from ironbench.report import write_report
    from ironbench.console.printable import printable
    from ironbench.analysis.show import run_summary

    report = write_report(paths.store_path, paths.out_dir, run_id, write=not no_report)
    if not quiet:
        typer.echo(printable("\n".join(run_summary(paths.store_path, run_id)), keep_newlines=True), err=True)
        width = min(100, shutil.get_terminal_size((100, 24)).columns)
        typer.echo(printable(report.console(width), keep_newlines=True), err=True)
    if report.path is not None:
        typer.echo(printable(f"report: {report.path}"), err=True)


def _say(text: str) -> None:
    """Human-readable output: text from suites, targets and the store cannot drive the terminal."""
    from ironbench.console.printable import printable

    typer.echo(printable(text, keep_newlines=True))


def _width(format: Enum | None = None) -> int | None:
    """The terminal's width for a table (None: piped, not wrapped); machine formats are never fitted."""
    from ironbench.console.tables import terminal_width

    return terminal_width() if format is None or format.value == "table" else None


def _emit(result: str, format: TableFormat) -> None:
    if format is TableFormat.table:
        _say(result)
    else:
        typer.echo(result, color=True)  # csv, json: the exact data (color=True: no ANSI stripping)


@contextmanager
def _interruptible(paths):
    """Ctrl-C during a run: one line saying what was kept and how to continue (exit 130)."""
    try:
        yield
    except RunInterrupted as exc:
        from ironbench.analysis.show import interruption

        raise RunInterrupted(exc.run_id, interruption(paths.store_path, paths.out_dir, exc.run_id)) from None


def _reporter(quiet: bool):
    if quiet:
        return None
    from rich.console import Console

    from ironbench.console.progress import ProgressReporter

    return ProgressReporter(Console(stderr=True))


@app.command()
def run(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    target: Annotated[Optional[str], typer.Option(
        "--target", help='A registered target (ironclad: the real Ironclad; forge: the built-in code generator on a '
        'local model; fixture: a simulated Ironclad, no model) or a command with {instruction}, e.g. '
        '"python my_agent.py {instruction}". Overrides the suite\'s target.')] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    speculate: Annotated[bool, typer.Option(
        "--speculate", help="Also start runs past a case's next possible decision on idle capacity (faster, "
        "more invocations); those past the decision are recorded as surplus and count in nothing.")] = False,
    max_failures: MaxFailuresOption = None,
    max_infra_errors: MaxInfraErrorsOption = 3,
    label: Annotated[Optional[str], typer.Option(
        "--label", help="A name for this run (e.g. the backend or model it used), kept in its metadata.")] = None,
    quiet: QuietOption = False,
    no_report: NoReportOption = False,
    redact: RedactOption = None,
    rules: Annotated[Optional[str], typer.Option(
        "--rules", metavar="NAME|FILE", help="Outcome rules: ironclad (Ironclad's printed markers), exit-code "
        "(success = exit 0, failure_stage exit_N), or a rules YAML file. Overrides the suite's rules.",
        show_default="the suite's, else ironclad")] = None,
) -> None:
    """Run a suite against its target; prints the run id (the verdict and the report's path go to stderr)."""
    from ironbench.run.runner import start_run
    from ironbench.suite.models import load_suite

    loaded = load_suite(suite)
    reporter = _reporter(quiet)
    paths = _paths(out, store)
    with _interruptible(paths):
        run_id = start_run(loaded, paths, target, jobs, str(suite), reporter, max_failures=max_failures,
                           max_infra_errors=max_infra_errors, label=label, redact=redact or (), rules=rules,
                           speculate=speculate, scheduler=scheduler)
    if loaded.mode == "gauntlet" and not quiet:
        from ironbench.analysis.conversations import format_summary, summary_from_store
        from ironbench.console.printable import printable
        from ironbench.console.tables import terminal_width

        # the verdict below says what the sentences under the table would (once)
        summary = format_summary(summary_from_store(paths.store_path, run_id), sentences=False,
                                 width=terminal_width(sys.stderr))
        typer.echo(printable(summary, keep_newlines=True), err=True)
    _finish(paths, run_id, quiet, no_report)
    typer.echo(run_id)


@app.command()
def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id to continue.")],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    max_failures: MaxFailuresOption = None,
    max_infra_errors: MaxInfraErrorsOption = 3,
    quiet: QuietOption = False,
    no_report: NoReportOption = False,
    redact: RedactOption = None,
) -> None:
    """Continue an interrupted or stopped run: nothing completed is lost or repeated; invocations
    whose backend failed run again."""
    from ironbench.run.runner import resume_run

    reporter = _reporter(quiet)
    paths = _paths(out, store)
    with _interruptible(paths):
        status = resume_run(run_id, paths, jobs, reporter, max_failures=max_failures,
                            max_infra_errors=max_infra_errors, redact=redact or (), scheduler=scheduler)
    _finish(paths, run_id, quiet, no_report)
    typer.echo(f"{run_id} {status}")


@app.command()
def runs(
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
) -> None:
    """List the runs in the store."""
    from ironbench.analysis.query import format_result
    from ironbench.analysis.show import list_runs

    result = format_result(list_runs(_paths(out, store).store_path), format.value, _width(format))
    _emit(result, format)


@app.command()
def show(
    run_id: RunArgument,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """Show one run: its metadata and, per case, outcomes and the stopping decision."""
    from ironbench.analysis.show import format_show, show_run

    header, cases, verdicts = show_run(_paths(out, store).store_path, run_id)
    acceptance = None
    if header["mode"] != "gauntlet":
        from ironbench.analysis.show import ai_acceptance

        acceptance = ai_acceptance(_paths(out, store).store_path, run_id)
    if format is ReportFormat.json:
        extra = {"ai_acceptance": [dict(zip(acceptance.columns, r)) for r in acceptance.rows]} if acceptance else {}
        typer.echo(json.dumps({**header, "cases": [dict(zip(cases.columns, r)) for r in cases.rows],
                               "verdicts": verdicts, **extra}, indent=2, default=str))
        return
    gauntlet = None
    if header["mode"] == "gauntlet":
        from ironbench.analysis.conversations import summary_from_store

        gauntlet = summary_from_store(_paths(out, store).store_path, run_id)
    _say(format_show(header, cases, verdicts, _width(), gauntlet))
    if acceptance is not None and acceptance.rows:
        from ironbench.analysis.query import format_result

        _say("\nAI rewrites, acceptance per case and generator:\n"
             + format_result(acceptance, "table", _width(), keys=2))


@app.command()
def log(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    case_id: Annotated[str, typer.Argument(metavar="CASE")],
    variant: Annotated[Optional[str], typer.Option(
        "--variant", help="Only this variant (e.g. base, whitespace_noise/variant_0001, level_2).")] = None,
    run_index: Annotated[Optional[int], typer.Option("--run", min=1, help="Only this run number.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Print what a case's invocations wrote on stdout and stderr, as recorded."""
    from ironbench.analysis.show import format_logs, invocation_logs

    _say(format_logs(invocation_logs(_paths(out, store).store_path, run_id, case_id, variant, run_index)))


@app.command()
def project(
    run_id: RunArgument,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Delete and regenerate from events alone.")] = False,
    force: Annotated[bool, typer.Option(
        "--force", help="Rebuild even from events whose hash chain is broken (see `ironbench verify`).")] = False,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Bring a run's output tree up to date from the event store."""
    from ironbench.projections.rebuild import project_run
    from ironbench.report import write_report

    paths = _paths(out, store)
    _say(str(project_run(paths.store_path, paths.out_dir, run_id, rebuild, force, report_writer=write_report)))


@app.command()
def verify(
    run_id: Annotated[Optional[str], typer.Argument(metavar="[RUN]", help="Only this run's events and links.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Check the events' hash chain; exits 1 naming the first broken link."""
    from ironbench.core.errors import ChainBroken
    from ironbench.projections.rebuild import verify_store

    report = verify_store(_paths(out, store).store_path, run_id)
    if report.broken is not None:
        raise ChainBroken(f"hash chain broken at {report.broken.describe()} ({report.checked} events before it hold)")
    scope = f"run {run_id}: " if run_id else ""
    _say(f"{scope}hash chain holds over {report.checked} events; head {report.head or '-'}")


@app.command()
def query(
    name: Annotated[str, typer.Argument(
        help="A .sql file path, a name in queries/ (e.g. failure_breakdown.sql), or inline SQL (SELECT ...).")],
    run_id: Annotated[Optional[str], typer.Option("--run", help="Restrict every view to this run.")] = None,
    format: Annotated[TableFormat, typer.Option("--format", "-f")] = TableFormat.table,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Run a SQL query in DuckDB over the store (read-only). Views: runs, invocations, superseded_invocations, surplus_invocations, decisions, variants, rejections, turns, turn_scores, events."""
    from ironbench.analysis.query import format_result, run_query

    result = format_result(run_query(_paths(out, store).store_path, name, run_id), format.value, _width(format))
    _emit(result, format)


class Gate(str, Enum):
    overall = "overall"
    cases = "cases"


class FailOn(str, Enum):
    regression = "regression"
    change = "change"


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="Reference run.")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="Candidate run.")],
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    gate: Annotated[Gate, typer.Option("--gate", help="What fails CI: the stratified test across cases (overall) "
                                       "or any case after min-p adjustment (cases).")] = Gate.overall,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="regression: lower success only; change: also a "
                                            "shifted failure stage, attempts, timeout or harness-error rate "
                                            "(Holm-adjusted), either direction.")] = FailOn.regression,
    margin: Annotated[Optional[float], typer.Option(
        "--margin", help="Fail only when B is worse by more than this share: the upper bound of B − A "
        "below −MARGIN (e.g. 0.05).")] = None,
    scorer: Annotated[str, typer.Option("--scorer", help="Gauntlet runs: the scorer whose violations count.")] =
    "negation_aware",
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    junit: Annotated[Optional[Path], typer.Option(
        "--junit", metavar="FILE", help="Also write the comparison as JUnit XML (a test case per case and one for "
        "the gate; failures exactly when compare exits 1), for CI systems.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Compare two runs; exits 1 when B significantly regressed against A (a CI gate)."""
    from ironbench.analysis.compare import compare_runs, format_comparison

    comparison = compare_runs(_paths(out, store).store_path, run_a, run_b, alpha, scorer, gate.value,
                              fail_on.value, margin)
    if junit is not None:
        from ironbench.analysis.junit import write_junit

        typer.echo(f"junit: {write_junit(comparison, junit)}", err=True)
    if format is ReportFormat.json:
        typer.echo(json.dumps(comparison.to_dict(), indent=2))
    else:
        _say(format_comparison(comparison, _width()))
    if comparison.failed:
        raise typer.Exit(1)


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    compare: Annotated[Optional[str], typer.Option(
        "--compare", metavar="BASE_RUN", help="Also compare RUN (B) against BASE_RUN (A), as `compare` does.")] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="HTML file [default: OUT/RUN/report.html, with --compare OUT/RUN/compare_BASE_RUN.html].")]
    = None,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level (--compare).")] = 0.05,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Write one self-contained HTML page for a run (and its comparison); prints its path."""
    from ironbench.report import write_report

    paths = _paths(out, store)
    typer.echo(str(write_report(paths.store_path, paths.out_dir, run_id, compare, output, alpha).path))


@app.command()
def plan(
    p: Annotated[float, typer.Option("--p", min=0.0, max=1.0, help="Success rate today (A).")],
    drop: Annotated[float, typer.Option("--drop", min=0.0, max=1.0, help="The drop to detect, e.g. 0.2.")],
    cases: Annotated[int, typer.Option("--cases", min=1, help="Cases, each dropping by the same amount.")] = 1,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", min=0.0, max=1.0, help="Chance to detect it.")] = 0.8,
    gate: Annotated[Gate, typer.Option("--gate", help="The compare gate you will use.")] = Gate.overall,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
) -> None:
    """How many runs per case does compare need to detect a drop from p to p − drop?"""
    from ironbench.analysis.compare import format_plan
    from ironbench.stats import plan_runs

    answer = plan_runs(p, drop, cases, alpha, power, gate.value)
    typer.echo(json.dumps(answer, indent=2) if format is ReportFormat.json else format_plan(answer))


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
        _say(f"{engine}: {count} violation(s) by {scorer}")


@app.command()
def variants(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    out: OutOption = DEFAULT_OUT,
) -> None:
    """Preview every variant and ladder level of a suite, diffed against its base; invokes nothing."""
    from dataclasses import asdict

    from ironbench.run.preview import preview, word_diff
    from ironbench.console.printable import printable
    from ironbench.suite.models import load_suite

    items = preview(load_suite(suite))
    if format is ReportFormat.json:
        typer.echo(json.dumps([asdict(i) for i in items], indent=2))
        return
    current = None
    for item in items:
        if item.case_id != current:
            current = item.case_id
            _say(f"\n{item.mode}/{item.case_id}: {printable(item.base_instruction)}")
        label = item.variant_id or ("AI" if item.note.startswith("up to") else "DROPPED")
        if item.generator == "-":
            _say("  (baseline: no variants)")
            continue
        if label == "AI":
            _say(f"  {item.generator}: {printable(item.note)}")
            continue
        _say(f"  {item.generator}/{label.split('/')[-1]}: {printable(word_diff(item.base_instruction, item.instruction))}")
        if item.note:
            _say(f"      {printable(item.note)}")


class ExportFormat(str, Enum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"


@app.command()
def export(
    run_id: Annotated[Optional[str], typer.Argument(metavar="[RUN]", help="The run to export (or --all).")] = None,
    all_runs: Annotated[bool, typer.Option("--all", help="Export every run in the store.")] = False,
    format: Annotated[ExportFormat, typer.Option("--format", "-f", help="File format.")] = ExportFormat.parquet,
    to: Annotated[Path, typer.Option("--to", help="Directory to write <view>.<format> files into.")] =
    Path("export"),
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Write the views (invocations, decisions, variants, rejections, turns, turn_scores, runs) as files."""
    from ironbench.analysis.export import export_views

    if (run_id is None) == (not all_runs):
        raise IronbenchError("export: name a RUN or pass --all (not both)")
    for item in export_views(_paths(out, store).store_path, to, format.value, run_id):
        typer.echo(f"{item.path}\t{item.rows} rows")


@app.command()
def schema(
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write to this file instead of stdout.")]
    = None,
) -> None:
    """Print the JSON Schema of suite files (for editors: yaml-language-server, CI linters)."""
    from ironbench.suite.schema import schema_text

    if output is None:
        typer.echo(schema_text(), nl=False)
    else:
        output.write_text(schema_text(), encoding="utf-8")
        typer.echo(str(output))


@db_app.command("upgrade")
def db_upgrade(out: OutOption = DEFAULT_OUT, store: StoreOption = None) -> None:
    """Create the store if needed and apply every pending alembic revision."""
    from ironbench.store.migrate import upgrade

    path = _paths(out, store).store_path
    path.parent.mkdir(parents=True, exist_ok=True)
    typer.echo(f"{path}: at revision {upgrade(path)}")


def main() -> None:
    from ironbench.console.printable import printable

    try:
        code = app(prog_name="ironbench", standalone_mode=False)
    except typer.TyperException as exc:  # click's errors, as vendored by typer
        exit_code = getattr(exc, "exit_code", 2)
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(exc.format_message(), err=True)
            sys.exit(exit_code)
        # A bad option is bad input like any other: one line, not a usage box.
        ctx = getattr(exc, "ctx", None)
        command = f"{ctx.command_path}: " if ctx is not None else ""
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"ironbench: error: {printable(command + message)}", file=sys.stderr)
        sys.exit(exit_code)
    except typer.Abort:
        print("ironbench: aborted", file=sys.stderr)
        sys.exit(130)
    except RunInterrupted as exc:  # not an error: what was kept, and how to continue
        print(f"ironbench: {printable(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except IronbenchError as exc:
        print(f"ironbench: error: {printable(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
