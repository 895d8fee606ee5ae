"""The one error hierarchy: every failure a user can cause or see is an IronbenchError."""


class IronbenchError(Exception):
    """Base of all ironbench errors; the CLI prints it as one line."""

    exit_code = 2


class SuiteError(IronbenchError):
    """A suite file is unreadable, malformed or breaks the single-string contract."""


class TargetError(IronbenchError):
    """The system under test cannot be invoked (missing executable, bad template)."""


class StoreError(IronbenchError):
    """The event store cannot be opened, migrated or written."""


class QueryError(IronbenchError):
    """A query file is missing or DuckDB rejected it."""


class RunNotFound(IronbenchError):
    """A run id names no run in the store."""


class RunStopped(IronbenchError):
    """A run stopped itself: its target cannot start, or its backend keeps failing.
    What was recorded stays; `ironbench resume` continues once the cause is fixed."""

    exit_code = 1


class ChainBroken(IronbenchError):
    """The events' hash chain does not hold: history was changed after it was written."""

    exit_code = 1
