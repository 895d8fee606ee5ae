"""A rich progress bar for runs: invocations done, successes so far, ETA."""

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ironbench.console.numbers import number
from ironbench.console.printable import printable
from ironbench.core.kinds import DIFFERED, LADDER_DECISIONS, LEVEL_DECISIONS


def decision_line(case_id: str, decision) -> str:
    """One line per decision, saying what its runs support: the bound on reproducing the
    outcome (stable), the bound on the success rate (stress levels), the direction and
    p-value (variants), the verdict's reason (ladders); else the Wilson interval."""
    d = decision
    head = f"  {printable(case_id)}: {d.decision} after {d.n} runs, {d.successes}/{d.n} succeeded"
    p = f"p = {number(d.p_value)}" if d.p_value is not None else None
    if d.decision == "stable" and d.reproduce_lower_95 is not None:
        return f"{head}; this outcome recurs with probability >= {number(d.reproduce_lower_95, '.2f')} (one-sided 95%)"
    if d.decision in LEVEL_DECISIONS:
        return f"{head}; success rate <= {number(d.success_upper_95, '.2f')} (one-sided 95%)" + (
            f"; {p} against level 0" if p else ""
        )
    if d.decision in DIFFERED:
        return f"{head}; {d.direction or 'no direction'} against the baseline" + (f" ({p})" if p else "")
    if d.decision in LADDER_DECISIONS:
        bound = (
            f"; there, success rate <= {number(d.success_upper_95, '.2f')} (one-sided 95%)"
            if d.decision in ("boundary", "tentative")
            else ""
        )
        return f"  {printable(case_id)}: {d.decision}: {printable(d.reason)}{bound}"
    return f"{head} (Wilson 95% {number(d.wilson_low, '.2f')}–{number(d.wilson_high, '.2f')})"


class ProgressReporter:
    """Implements the runner's Reporter protocol; the bar's total shrinks as cases stop early."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("decisions {task.fields[decided]}"),
            TextColumn("[green]✓ {task.fields[successes]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = None
        self._skipped = 0  # runs and decisions known before the bar started
        self._decided = 0

    def note(self, text):
        # folded at words on a terminal; piped, one line each (rich would wrap at 80)
        self.console.print(printable(text), highlight=False, markup=False, soft_wrap=not self.console.is_terminal)

    def started(self, run_id, cases, max_invocations, done):
        self.progress.start()
        self.task = self.progress.add_task(
            run_id, total=max_invocations - self._skipped, completed=done, decided=self._decided, successes=0
        )

    def invocation(self, case_id, run_index, completed):
        if self.task is None or completed.infra_error is not None or completed.surplus:
            return  # an infrastructure error leaves its slot to be run again; a surplus run counts in nothing
        task = self.progress.tasks[self.task]
        self.progress.update(self.task, advance=1, successes=task.fields["successes"] + int(completed.success))

    def decision(self, case_id, decision, skipped_runs):
        if self.task is None:
            # Decided before the bar exists (a reference taken from a stored baseline):
            # counted once the bar starts.
            self._skipped += skipped_runs
            self._decided += 1
        else:
            task = self.progress.tasks[self.task]
            self.progress.update(self.task, total=task.total - skipped_runs, decided=task.fields["decided"] + 1)
        self.console.print(
            decision_line(case_id, decision), highlight=False, markup=False, soft_wrap=not self.console.is_terminal
        )

    def finished(self, run_id, status):
        if self.task is not None:
            if status == "finished":  # early stops leave the planned total unreached
                self.progress.update(self.task, total=self.progress.tasks[self.task].completed)
            self.progress.stop()
