"""The one error hierarchy: every failure a user can cause or see is an IronbenchError."""


class IronbenchError(Exception):
    """Base of all ironbench errors; the CLI prints it as one line."""

    exit_code = 2
    prefix = "error: "  # what the CLI puts before the message; a stop that is no mistake has none


class SuiteError(IronbenchError):
    """A suite file is unreadable, malformed or breaks the single-string contract."""


class TargetError(IronbenchError):
    """The system under test cannot be invoked (missing executable, bad template)."""


class SandboxError(IronbenchError):
    """The fence a run asks for cannot be had: a bad --allow-net, --pass-env or path, or
    --sandbox on where the machine (or a worker) allows less than the full fence."""


class StoreError(IronbenchError):
    """The event store cannot be opened, migrated or written."""


class StoreFull(StoreError):
    """The disk holding the store (or the output folder) is full. Nothing recorded is lost:
    once space is freed, `ironbench resume` continues the run."""

    exit_code = 1
    prefix = ""


class StoreUnwritable(StoreError):
    """The store or the output folder is on a read-only filesystem, or not ours to write."""


class RunLeased(IronbenchError):
    """Another coordinator holds the run: one run has one writer."""

    exit_code = 1


class QueryError(IronbenchError):
    """A query file is missing or DuckDB rejected it."""


class RunNotFound(IronbenchError):
    """A run id names no run in the store."""


class RunStopped(IronbenchError):
    """A run stopped itself: its target cannot start, or its backend keeps failing.
    What was recorded stays; `ironbench resume` continues once the cause is fixed."""

    exit_code = 1


class BudgetExhausted(IronbenchError):
    """A run's recorded cost reached its budget (--budget, a suite's `budget:`): no invocation
    started after it, those running finished and were recorded; `ironbench resume RUN --budget
    MORE` continues it."""

    exit_code = 3
    prefix = ""


class RunInterrupted(IronbenchError):
    """Ctrl-C (SIGINT), or SIGTERM, stopped a run. Every completed invocation is kept; `ironbench
    resume` continues it. The CLI words the message (what was kept, the exact resume command)."""

    exit_code = 130
    prefix = ""

    def __init__(self, run_id: str, message: str | None = None) -> None:
        super().__init__(message or f"interrupted: run {run_id}; continue with: ironbench resume {run_id}")
        self.run_id = run_id


class ChainBroken(IronbenchError):
    """The events' hash chain does not hold: history was changed after it was written."""

    exit_code = 1


class ImportRefused(IronbenchError):
    """What `ironbench import` was given is no outputs tree and no store, or its history does
    not hold (a broken hash chain), or some of its runs could not be read: those are named,
    and nothing of them is written."""
