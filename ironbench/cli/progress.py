"""A rich progress bar for runs: invocations done, successes so far, ETA."""

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ironbench.printable import printable


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
        self.console.print(printable(text), highlight=False, markup=False)

    def started(self, run_id, cases, max_invocations, done):
        self.progress.start()
        self.task = self.progress.add_task(run_id, total=max_invocations - self._skipped, completed=done,
                                           decided=self._decided, successes=0)

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
            f"  {printable(case_id)}: {decision.decision} after {decision.n} runs, "
            f"{decision.successes}/{decision.n} succeeded "
            f"(Wilson 95% {decision.wilson_low:.2f}–{decision.wilson_high:.2f}, "
            f"chance agreement {decision.chance_agreement:.2f})",
            highlight=False, markup=False,
        )

    def finished(self, run_id, status):
        if self.task is not None:
            if status == "finished":  # early stops leave the planned total unreached
                self.progress.update(self.task, total=self.progress.tasks[self.task].completed)
            self.progress.stop()
