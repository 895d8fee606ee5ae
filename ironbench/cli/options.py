"""The options several commands share, their formats, and the few helpers every command uses."""

from enum import Enum, StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # the run package loads with the commands that run something
    from ironbench.run.paths import RunPaths

DEFAULT_OUT = Path("outputs")

OutOption = Annotated[
    Path,
    typer.Option(
        "--out", envvar="IRONBENCH_OUT", help="Output directory: run trees, working directories and the store."
    ),
]
StoreOption = Annotated[
    Path | None,
    typer.Option("--store", envvar="IRONBENCH_STORE", show_default="OUT/ironbench.db", help="SQLite event store."),
]
JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        show_default="1; with --scheduler, the cluster's worker threads",
        help="Invocations run at once (the runs a decision needs start together, across and within cases).",
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        envvar="IRONBENCH_SCHEDULER",
        metavar="tcp://HOST:PORT",
        help="Run the invocations on this Dask cluster's workers (the store and decisions stay here).",
    ),
]
MaxFailuresOption = Annotated[
    int | None,
    typer.Option(
        "--max-failures", min=1, help="Stop the run after this many rejected AI outputs (resume continues it)."
    ),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or turn-by-turn output.")]
NoReportOption = Annotated[bool, typer.Option("--no-report", help="Do not write the run's HTML report at the end.")]
MaxInfraErrorsOption = Annotated[
    int | None,
    typer.Option(
        "--max-infra-errors",
        min=1,
        show_default="no limit: --max-outage decides",
        help="Also stop the run (exit 1) after this many consecutive infrastructure errors "
        "(the target's backend failed); resume re-runs those invocations.",
    ),
]
MaxOutageOption = Annotated[
    float,
    typer.Option(
        "--max-outage",
        min=0,
        metavar="SECONDS",
        help="Stop the run (exit 1) once the target's backend has failed for this long; until then, "
        "after an infrastructure error nothing starts until a backoff has passed (exponential, jittered, "
        "at least a 429's Retry-After). Resume re-runs what failed.",
    ),
]
BudgetOption = Annotated[
    float | None,
    typer.Option(
        "--budget",
        metavar="USD",
        min=0.000001,
        show_default="the suite's budget, else none",
        help="Stop the run once its recorded cost reaches this many USD: no invocation starts, those running "
        "finish and are recorded (exit 3). With resume: spend this much more.",
    ),
]
PriceOption = Annotated[
    list[str] | None,
    typer.Option(
        "--price",
        metavar="MODEL=IN/OUT",
        help="Price a model's calls at IN and OUT USD per million input and output tokens (IN/OUT/CACHED for "
        "cached input; repeatable): a local or private model, or one the price table prices otherwise.",
    ),
]
RedactOption = Annotated[
    list[str] | None,
    typer.Option(
        "--redact",
        metavar="NAME",
        help="Also redact this environment variable's value (repeatable); names with "
        "KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL are always redacted.",
    ),
]
RunArgument = Annotated[str, typer.Argument(metavar="RUN", help="A run id, as `ironbench runs` lists them.")]
SandboxOption = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        metavar="auto|on|off",
        show_default="the suite's, else auto",
        help="The fence around every target and check: auto takes the highest level this machine allows "
        "and says so when it is below full; on refuses to start below full (on every worker); off runs "
        "them unfenced, with your full reach.",
    ),
]
AllowReadOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-read",
        metavar="PATH",
        help="Let a fenced target read this file or folder too (repeatable), e.g. its own config.",
    ),
]
AllowWriteOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-write",
        metavar="PATH",
        help="Let a fenced target write this file or folder too (repeatable), e.g. a cache it keeps.",
    ),
]
AllowNetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--allow-net",
        metavar="HOST:PORT",
        help="Let a fenced target reach this endpoint (repeatable), e.g. 127.0.0.1:11434 (Ollama) or "
        "api.openai.com:443; the model gateway of --serve-model is always reachable, nothing else is.",
    ),
]
PassEnvOption = Annotated[
    list[str] | None,
    typer.Option(
        "--pass-env",
        metavar="NAME",
        help="Pass this environment variable to a fenced target (repeatable); it gets PATH, the locale, "
        "a HOME and TMPDIR of its own and ironbench's own variables, nothing else.",
    ),
]
MemoryOption = Annotated[
    int | None,
    typer.Option(
        "--memory",
        metavar="MB",
        min=64,
        show_default="8192",
        help="Address space a target or check may take (MB), recorded with the run.",
    ),
]


class TableFormat(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


class ReportFormat(StrEnum):
    table = "table"
    json = "json"


class ExportFormat(StrEnum):
    parquet = "parquet"
    csv = "csv"
    jsonl = "jsonl"


def run_paths(out: Path, store: Path | None) -> "RunPaths":
    from ironbench.run.paths import RunPaths

    return RunPaths.resolve(out, store)


def say(text: str) -> None:
    """Human-readable output: text from suites, targets and the store cannot drive the terminal."""
    from ironbench.console.printable import printable

    typer.echo(printable(text, keep_newlines=True))


def width(format: Enum | None = None) -> int | None:
    """The terminal's width for a table (None: piped, not wrapped); machine formats are never fitted."""
    from ironbench.console.layout import terminal_width

    return terminal_width() if format is None or format.value == "table" else None


def emit(result: str, format: TableFormat) -> None:
    if format is TableFormat.table:
        say(result)
    else:
        typer.echo(result, color=True)  # csv, json: the exact data (color=True: no ANSI stripping)
