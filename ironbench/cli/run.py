"""Commands that run suites: `run` and `resume`."""

import math
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    AllowNetOption,
    AllowReadOption,
    AllowWriteOption,
    BudgetOption,
    JobsOption,
    MaxFailuresOption,
    MaxInfraErrorsOption,
    MaxOutageOption,
    MemoryOption,
    NoReportOption,
    OutOption,
    PassEnvOption,
    PriceOption,
    QuietOption,
    RedactOption,
    SandboxOption,
    SchedulerOption,
    StoreOption,
    run_paths,
)
from ironbench.cli.suite import SuiteArgument
from ironbench.core.errors import RunInterrupted
from ironbench.run.guards import MAX_OUTAGE_SECONDS

DEFAULT_DROP = 0.1  # run.options.DEFAULT_DROP, kept here so that `--help` imports none of the run package


def _usd(budget: float | None):
    """--budget as the exact amount typed (0.1 stays 0.1, not the float nearest it)."""
    from decimal import Decimal

    if budget is not None and not math.isfinite(budget):
        raise typer.BadParameter(f"{budget} is no amount: a budget is a finite number of USD", param_hint="--budget")
    return None if budget is None else Decimal(str(budget))


def _prices(values: list[str] | None) -> tuple:
    from ironbench.core.prices import parse_price

    return tuple(parse_price(value) for value in values or ())


def _finish(paths, run_id: str, quiet: bool, no_report: bool) -> bool:
    """End of a run, on stderr: what it did (invocations, failures by stage, AI rewrites accepted),
    its verdict sentences (the report's header) and the report's path. Quiet, only its problems
    (a fence below full, what the fence withheld, a broken check, every invocation failed). A run
    made with --against always ends with its gate's verdict (even quiet: it is what a CI log
    needs); returns whether the gate failed it."""
    from ironbench.analysis.gate_verdict import gate_verdict
    from ironbench.console.printable import printable

    gate = gate_verdict(paths.store_path, run_id)  # None for a run without --against
    if quiet:
        from ironbench.analysis.show import run_problems

        for line in run_problems(paths.store_path, run_id):
            typer.echo(printable(line), err=True)
        if no_report and gate is None:
            return False  # nothing more to show or write
    import shutil

    from ironbench.analysis.show import run_summary
    from ironbench.report import write_report

    report = write_report(paths.store_path, paths.out_dir, run_id, write=not no_report)
    width = min(100, shutil.get_terminal_size((100, 24)).columns)
    if not quiet:
        typer.echo(printable("\n".join(run_summary(paths.store_path, run_id)), keep_newlines=True), err=True)
    shown = report.console(width, only=("gate",) if quiet else None)
    if shown:
        typer.echo(printable(shown, keep_newlines=True), err=True)
    if report.path is not None:
        typer.echo(printable(f"report: {report.path}"), err=True)
    return gate is not None and gate.failed


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def _running(out, store, quiet: bool):
    """A run's paths and its progress bar (none when quiet); Ctrl-C or SIGTERM during the run:
    one line saying what was kept and how to continue (exit 130)."""
    paths = run_paths(out, store)
    reporter = None
    if not quiet:
        from rich.console import Console

        from ironbench.console.progress import ProgressReporter

        reporter = ProgressReporter(Console(stderr=True))
    # SIGTERM (a supervisor, `kill`, a CI job's timeout) stops a run the way Ctrl-C does: its
    # targets, checks and gateway stopped, its abort recorded (unless SIGTERM is ignored here).
    terminates = threading.current_thread() is threading.main_thread()
    terminates = terminates and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    if terminates:
        signal.signal(signal.SIGTERM, _terminated)
    try:
        yield paths, reporter
    except RunInterrupted as exc:
        from ironbench.analysis.show import interruption

        raise RunInterrupted(exc.run_id, interruption(paths.store_path, paths.out_dir, exc.run_id)) from None
    finally:
        if terminates:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def run(
    suite: SuiteArgument,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="A registered target (ironclad: the real Ironclad; forge: the built-in code generator on a "
            "local model; fixture: a simulated Ironclad, no model) or a command with {instruction}, e.g. "
            '"python my_agent.py {instruction}". Overrides the suite\'s target.',
        ),
    ] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    speculate: Annotated[
        bool,
        typer.Option(
            "--speculate",
            help="Also start runs past a case's next possible decision on idle capacity (faster, "
            "more invocations); those past the decision are recorded as surplus and count in nothing.",
        ),
    ] = False,
    max_failures: MaxFailuresOption = None,
    max_infra_errors: MaxInfraErrorsOption = None,
    max_outage: MaxOutageOption = MAX_OUTAGE_SECONDS,
    serve_model: Annotated[
        list[str] | None,
        typer.Option(
            "--serve-model",
            metavar="MODEL|REQUESTED=MODEL",
            help="Serve the target's model calls with this llm model id (e.g. ironbench-smollm2, the embedded "
            "model): a gateway on 127.0.0.1 speaks Ollama's and OpenAI's APIs, each invocation gets "
            "OLLAMA_HOST and OPENAI_BASE_URL pointing at it, and every call is recorded. REQUESTED=MODEL "
            "answers requests for REQUESTED with MODEL (repeatable). Overrides the suite's serve_model.",
        ),
    ] = None,
    replay: Annotated[
        str | None,
        typer.Option(
            "--replay",
            metavar="RUN",
            help="Answer the target's model calls from RUN's recorded calls (each invocation from the same "
            "case and run's), in order: a deterministic re-run of the target's own logic.",
        ),
    ] = None,
    label: Annotated[
        str | None,
        typer.Option("--label", help="A name for this run (e.g. the backend or model it used), kept in its metadata."),
    ] = None,
    quiet: QuietOption = False,
    no_report: NoReportOption = False,
    redact: RedactOption = None,
    rules: Annotated[
        str | None,
        typer.Option(
            "--rules",
            metavar="NAME|FILE",
            help="Outcome rules: ironclad (Ironclad's printed markers), exit-code "
            "(success = exit 0, failure_stage exit_N), or a rules YAML file. Overrides the suite's rules.",
            show_default="the suite's, else ironclad",
        ),
    ] = None,
    filter: Annotated[
        str,
        typer.Option(
            "--filter",
            metavar="small|mid|large|all",
            help="A canonical suite: run only its cases of this complexity.",
        ),
    ] = "all",
    sample: Annotated[
        int | None,
        typer.Option("--sample", metavar="N", min=1, help="Run a seeded sample of N of the suite's cases."),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="The seed --sample draws its cases with.")] = 0,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            metavar="RUN_A",
            help="A stored run of the same suite to gate against: the cases run in rounds and stop as soon "
            "as a sequential test decides whether this run regressed (exit 1) or is not worse by --drop "
            "(exit 0); at most the runs per case `plan` gives for a fixed design.",
        ),
    ] = None,
    drop: Annotated[
        float,
        typer.Option(
            "--drop", min=0.0, max=1.0, help="With --against: the drop in success to find with --power, e.g. 0.2."
        ),
    ] = DEFAULT_DROP,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0, max=1.0, help="With --against: the chance of a false alarm.")
    ] = 0.05,
    power: Annotated[
        float, typer.Option("--power", min=0.0, max=1.0, help="With --against: the chance to find a drop of --drop.")
    ] = 0.8,
    sandbox: SandboxOption = None,
    allow_read: AllowReadOption = None,
    allow_write: AllowWriteOption = None,
    allow_net: AllowNetOption = None,
    pass_env: PassEnvOption = None,
    memory: MemoryOption = None,
    budget: BudgetOption = None,
    price: PriceOption = None,
) -> None:
    """Run a suite against its target; prints the run id (the verdict and the report's path go to stderr).
    With --against, exits 1 when the run regressed against that run (a CI gate).

    An adversarial variant runs once; one whose outcome differs materially from the baseline is repeated up to the suite's runs_per_variant times (the spec's 3 when absent; `ironbench variants SUITE` says how many)."""
    from ironbench.gateway import parse_serving
    from ironbench.llms import EMBEDDED_MODEL
    from ironbench.run.options import Against, Limits, RunOptions
    from ironbench.run.runner import start_run
    from ironbench.sandbox import policy_from_options
    from ironbench.suite import open_suite

    fence = policy_from_options(sandbox, allow_read, allow_write, allow_net, pass_env, memory)
    options = RunOptions(
        target=target,
        rules=rules,
        jobs=jobs,
        scheduler=scheduler,
        speculate=speculate,
        label=label,
        redact=tuple(redact or ()),
        serve_model=parse_serving(serve_model, EMBEDDED_MODEL) if serve_model else None,
        replay_of=replay,
        against=Against(against, drop, alpha, power) if against is not None else None,
        limits=Limits(max_failures, max_infra_errors, max_outage, _usd(budget)),
        sandbox=fence,
        prices=_prices(price),
    )
    loaded, suite_path = open_suite(suite, sample, seed, complexity=filter)
    with _running(out, store, quiet) as (paths, reporter):
        run_id = start_run(loaded, paths, options, reporter, suite_path)
    if loaded.mode == "gauntlet" and not quiet:
        from ironbench.analysis.conversations import format_summary, summary_from_store
        from ironbench.console.layout import terminal_width
        from ironbench.console.printable import printable

        # the verdict below says what the sentences under the table would (once)
        summary = format_summary(
            summary_from_store(paths.store_path, run_id), sentences=False, width=terminal_width(sys.stderr)
        )
        typer.echo(printable(summary, keep_newlines=True), err=True)
    failed = _finish(paths, run_id, quiet, no_report)
    typer.echo(run_id)
    if failed:  # --against: the gate found a regression
        raise typer.Exit(1)


def resume(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="Run id to continue.")],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    max_failures: MaxFailuresOption = None,
    max_infra_errors: MaxInfraErrorsOption = None,
    max_outage: MaxOutageOption = MAX_OUTAGE_SECONDS,
    quiet: QuietOption = False,
    no_report: NoReportOption = False,
    redact: RedactOption = None,
    budget: BudgetOption = None,
    price: PriceOption = None,
) -> None:
    """Continue an interrupted or stopped run: nothing completed is lost or repeated; invocations
    whose backend failed run again. A run its budget stopped continues with --budget MORE."""
    from ironbench.run.options import Limits, RunOptions
    from ironbench.run.runner import resume_run

    # the rest of its options, the run recorded when it started
    options = RunOptions(
        jobs=jobs,
        scheduler=scheduler,
        redact=tuple(redact or ()),
        limits=Limits(max_failures, max_infra_errors, max_outage, _usd(budget)),
        prices=_prices(price),
    )
    with _running(out, store, quiet) as (paths, reporter):
        status = resume_run(run_id, paths, options, reporter)
    failed = _finish(paths, run_id, quiet, no_report)
    typer.echo(f"{run_id} {status}")
    if failed:
        raise typer.Exit(1)


def replay(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="A run that served a model (--serve-model).")],
    case_id: Annotated[
        str | None, typer.Argument(metavar="[CASE]", help="Replay this case's invocations (default: every one).")
    ] = None,
    variant: Annotated[
        str | None,
        typer.Option("--variant", help="Only this variant (e.g. base, whitespace_noise/variant_0001, level_2)."),
    ] = None,
    run_index: Annotated[int | None, typer.Option("--run", min=1, metavar="N", help="Only run N.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Run the target again for recorded invocations, its model calls answered from the recording in
    order; exit 0 when every stdout and exit code came out as recorded, 1 otherwise (saying which). A
    request that differs from the recorded one is shown as a divergence (which call, a diff)."""
    from ironbench.cli.options import say
    from ironbench.run.replay import replay_invocations

    identical = True
    for replayed in replay_invocations(run_paths(out, store), run_id, case_id, variant, run_index):
        say("\n".join([replayed.heading(run_id), *replayed.lines]))
        identical = identical and replayed.identical
    if not identical:
        raise typer.Exit(1)


def check(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="The run whose saved bricks to check.")] = None,
    references: Annotated[
        str | None,
        typer.Option(
            "--references",
            metavar="SUITE",
            help="Prove this suite's checks instead (a file or shipped name): each run on its reference "
            "solution, no target; exit 0 when all pass, 1 naming each that fails.",
        ),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            metavar="FILE",
            help="Check with this suite's checks (a file or shipped name) instead of those the run recorded.",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            envvar="IRONBENCH_SCHEDULER",
            metavar="tcp://HOST:PORT",
            show_default="the cluster the run recorded, when it can be reached",
            help="Check the bricks Dask workers saved on this cluster, each by a worker on its host.",
        ),
    ] = None,
    prove: Annotated[
        bool,
        typer.Option(
            "--prove",
            help="Prove every check on its reference again first, also those the run proved as they are now.",
        ),
    ] = False,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    jobs: JobsOption = None,
    quiet: QuietOption = False,
) -> None:
    """Check (or check again) the bricks a run saved with the harness's checks, invoking no target;
    the verdicts are added to the run's events. Bricks a run on Dask saved on its workers are checked
    on the cluster, where they are. With --references SUITE, prove a suite's checks on their
    reference solutions instead."""
    from ironbench.run.recheck import check_run
    from ironbench.suite import open_suite

    if references is not None:
        if run_id is not None or suite is not None:
            raise typer.BadParameter("give a RUN (and --suite) or --references SUITE, not both")
        _prove(references, run_paths(out, store), jobs or 1, quiet)
        return
    if run_id is None:
        raise typer.BadParameter("name the RUN whose bricks to check (or --references SUITE)")
    loaded = open_suite(suite)[0] if suite is not None else None
    paths = run_paths(out, store)
    say = (lambda line: None) if quiet else _note
    done = check_run(run_id, paths, loaded, jobs or 1, say, scheduler or None, prove)
    verdicts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(done.verdicts.items())) or "none"
    where = f", {done.on_cluster} on the Dask cluster at {done.cluster}" if done.on_cluster else ""
    skipped = sum(len(bricks) for bricks in done.skipped.values())
    missed = f"; {skipped} skipped" if skipped else ""
    typer.echo(
        f"{run_id}: checked {done.checked} saved brick{'' if done.checked == 1 else 's'} ({verdicts}){where}{missed}"
    )


def _prove(name: str, paths, jobs: int, quiet: bool) -> None:
    """`check --references`: one line per broken check (exit 1), else how many passed."""
    from ironbench.console.printable import printable
    from ironbench.run.proving import prove_suite
    from ironbench.suite import open_suite

    loaded, suite_path = open_suite(name)
    proven = prove_suite(loaded, paths, suite_path, jobs, note=(lambda line: None) if quiet else _note)
    for proof in proven.broken:
        typer.echo(printable(f"broken: {proof.line()}"))
    total, passed = len(proven.proofs), len(proven.proofs) - len(proven.broken)
    unproven = f"; {proven.unproven} name no reference" if proven.unproven else ""
    typer.echo(
        f"{loaded.suite_id}: {passed} of {total} check{'s' if total != 1 else ''} pass their references "
        f"({proven.seconds:.1f} s{unproven})"
    )
    if proven.broken:
        raise typer.Exit(1)


def _note(line: str) -> None:
    from ironbench.console.printable import printable

    typer.echo(printable(line), err=True)
