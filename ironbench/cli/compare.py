"""Commands that compare runs: `compare`, `report`, `plan`."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    OutOption,
    ReportFormat,
    StoreOption,
    run_paths,
    say,
    width,
)
from ironbench.core.kinds import FailOn, Gate, On


def compare(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A", help="Reference run.")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B", help="Candidate run.")],
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    gate: Annotated[
        Gate,
        typer.Option(
            "--gate",
            help="What fails CI: the stratified test across cases (overall) "
            "or any case after min-p adjustment (cases).",
        ),
    ] = Gate.overall,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on",
            help="regression: lower success only; change: also a "
            "shifted failure stage, attempts, timeout or harness-error rate "
            "(Holm-adjusted), either direction.",
        ),
    ] = FailOn.regression,
    margin: Annotated[
        float | None,
        typer.Option(
            "--margin",
            help="Fail only when B is worse by more than this share: the upper bound of B − A "
            "below −MARGIN (e.g. 0.05).",
        ),
    ] = None,
    scorer: Annotated[
        str, typer.Option("--scorer", help="Gauntlet runs: the scorer whose violations count.")
    ] = "negation_aware",
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write the comparison as JUnit XML (a test case per case and one for "
            "the gate; failures exactly when compare exits 1), for CI systems.",
        ),
    ] = None,
    on: Annotated[
        On,
        typer.Option(
            "--on",
            help="What counts as a success: the target's own claim (success), or the harness's check "
            "of the brick it saved (correct; both runs need checks).",
        ),
    ] = On.success,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Compare two runs; exits 1 when B significantly regressed against A (a CI gate)."""
    from ironbench.analysis.compare import compare_runs, format_comparison

    comparison = compare_runs(
        run_paths(out, store).store_path, run_a, run_b, alpha, scorer, gate.value, fail_on.value, margin, on.value
    )
    if junit is not None:
        from ironbench.analysis.junit import write_junit

        typer.echo(f"junit: {write_junit(comparison, junit)}", err=True)
    if format is ReportFormat.json:
        typer.echo(json.dumps(comparison.to_dict(), indent=2))
    else:
        say(format_comparison(comparison, width()))
    if comparison.failed:
        raise typer.Exit(1)


def report(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    compare: Annotated[
        str | None,
        typer.Option(
            "--compare", metavar="BASE_RUN", help="Also compare RUN (B) against BASE_RUN (A), as `compare` does."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="HTML file [default: OUT/RUN/report.html, with --compare OUT/RUN/compare_BASE_RUN.html].",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level (--compare).")] = 0.05,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Write one self-contained HTML page for a run (and its comparison); prints its path (and on
    stderr the comparison's warnings, as `compare` gives them)."""
    from ironbench.console.printable import printable
    from ironbench.report import write_report

    paths = run_paths(out, store)
    written = write_report(paths.store_path, paths.out_dir, run_id, compare, output, alpha)
    for warning in written.warnings:
        typer.echo(printable(f"warning: {warning}"), err=True)
    typer.echo(str(written.path))


def plan(
    suite: Annotated[
        str | None,
        typer.Argument(
            metavar="[SUITE]",
            help="Estimate what running this suite costs, from a stored run of the same target (its cost "
            "per invocation times the most invocations the suite can take).",
        ),
    ] = None,
    p: Annotated[float | None, typer.Option("--p", min=0.0, max=1.0, help="Success rate today (A).")] = None,
    drop: Annotated[
        float | None, typer.Option("--drop", min=0.0, max=1.0, help="The drop to detect, e.g. 0.2.")
    ] = None,
    cases: Annotated[int, typer.Option("--cases", min=1, help="Cases, each dropping by the same amount.")] = 1,
    alpha: Annotated[float, typer.Option("--alpha", min=0.0, max=1.0, help="Significance level.")] = 0.05,
    power: Annotated[float, typer.Option("--power", min=0.0, max=1.0, help="Chance to detect it.")] = 0.8,
    gate: Annotated[Gate, typer.Option("--gate", help="The compare gate you will use.")] = Gate.overall,
    target: Annotated[
        str | None,
        typer.Option("--target", help="With SUITE: the target it will run (as `run --target`); default the suite's."),
    ] = None,
    from_run: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="RUN",
            help="With SUITE: estimate from this stored run [default: the latest priced run of the same target].",
        ),
    ] = None,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """How many runs per case does compare need to detect a drop from p to p − drop (--p, --drop)?
    With SUITE: what will running it cost, estimated from a stored run of the same target?"""
    if suite is not None:
        from ironbench.analysis.cost_plan import plan_cost
        from ironbench.suite import open_suite
        from ironbench.targets import resolve_target

        loaded = open_suite(suite)[0]
        argv = list(resolve_target(target if target is not None else loaded.target).argv_template)
        estimate = plan_cost(run_paths(out, store).store_path, loaded, argv, from_run)
        if format is ReportFormat.json:
            typer.echo(json.dumps(estimate.to_dict(), indent=2))
        else:
            say("\n".join(estimate.lines()))
        return
    if p is None or drop is None:
        raise typer.BadParameter("give --p and --drop (runs per case to detect a drop), or a SUITE (its cost)")
    from ironbench.analysis.compare import format_plan
    from ironbench.stats import plan_runs

    answer = plan_runs(p, drop, cases, alpha, power, gate.value)
    typer.echo(json.dumps(answer, indent=2) if format is ReportFormat.json else format_plan(answer))
