"""What a run tells the person watching it: the Reporter protocol, a silent one, and one that redacts.

The console's progress bar (console/progress.py) is a Reporter too; it needs no import
from here, since a Protocol is satisfied by shape.
"""

from typing import Protocol

from ironbench.core.events import InvocationCompleted
from ironbench.core.redact import Redactor
from ironbench.run.stopping import StopDecision


class Reporter(Protocol):
    def note(self, text: str) -> None: ...
    def started(self, run_id: str, cases: int, max_invocations: int, done: int) -> None: ...
    def invocation(self, case_id: str, run_index: int, completed: InvocationCompleted) -> None: ...
    def decision(self, case_id: str, decision: StopDecision, skipped_runs: int) -> None: ...
    def finished(self, run_id: str, status: str) -> None: ...


class SilentReporter:
    """Reports nothing: for quiet runs and library callers."""

    def note(self, text: str) -> None:
        pass

    def started(self, run_id: str, cases: int, max_invocations: int, done: int) -> None:
        pass

    def invocation(self, case_id: str, run_index: int, completed: InvocationCompleted) -> None:
        pass

    def decision(self, case_id: str, decision: StopDecision, skipped_runs: int) -> None:
        pass

    def finished(self, run_id: str, status: str) -> None:
        pass


class RedactingReporter:
    """Notes (model answers, rejection reasons) are logs too: no secret reaches them."""

    def __init__(self, reporter: Reporter, redactor: Redactor) -> None:
        self._reporter, self._redactor = reporter, redactor

    def note(self, text: str) -> None:
        self._reporter.note(self._redactor.text(text))

    def started(self, run_id: str, cases: int, max_invocations: int, done: int) -> None:
        self._reporter.started(run_id, cases, max_invocations, done)

    def invocation(self, case_id: str, run_index: int, completed: InvocationCompleted) -> None:
        self._reporter.invocation(case_id, run_index, completed)

    def decision(self, case_id: str, decision: StopDecision, skipped_runs: int) -> None:
        self._reporter.decision(case_id, decision, skipped_runs)

    def finished(self, run_id: str, status: str) -> None:
        self._reporter.finished(run_id, status)
