"""When a run must stop itself: its backend keeps failing, or its target cannot start.

Not decisions about the target (those are pure functions of outcomes in stopping.py):
operational stops, taken in completion order, that keep a broken setup from being
recorded as the target's behaviour. `ironbench resume` continues the run.
"""

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.core.errors import RunStopped
from ironbench.core.outcome import UNKNOWN_STAGE, Outcome
from ironbench.targets.command import ProcessResult

MAX_INFRA_ERRORS = 3  # consecutive infrastructure errors that stop a run
CANNOT_START_RUNS = 3  # the first invocations that, all failing blind, mean the target cannot start
STDERR_TAIL_LINES = 8


def resume_command(run_id: str, out_dir: Path, store_path: Path) -> str:
    command = f"ironbench resume {run_id}"
    if out_dir != Path("outputs"):
        command += f" --out {shlex.quote(str(out_dir))}"
    if store_path != out_dir / "ironbench.db":
        command += f" --store {shlex.quote(str(store_path))}"
    return command


@dataclass
class RunGuard:
    run_id: str
    resume: str  # the command that continues the run
    workdirs: Path
    max_infra_errors: int = MAX_INFRA_ERRORS
    infra_streak: list[str] = field(default_factory=list)
    first_results: list[ProcessResult | None] = field(default_factory=list)  # None: not a blind failure

    def after(
        self, where: str, case_id: str, argv: list[str], result: ProcessResult, outcome: Outcome
    ) -> RunStopped | None:
        """Why the run must stop after this completion (`where`: group and run), if it must."""
        if outcome.infra_error is not None:
            self.infra_streak.append(f"{outcome.infra_error!r} ({where})")
        else:
            self.infra_streak.clear()
        if len(self.infra_streak) >= self.max_infra_errors:
            return RunStopped(
                f"{self.run_id} stopped after {len(self.infra_streak)} consecutive infrastructure errors, the last "
                f"{self.infra_streak[-1]}; the backend failed, not the target. Once it is back: {self.resume}"
            )
        if len(self.first_results) < CANNOT_START_RUNS:
            blind = result.exit_code not in (0, None) and outcome.failure_stage == UNKNOWN_STAGE
            self.first_results.append(result if blind else None)
            if len(self.first_results) == CANNOT_START_RUNS and all(self.first_results):
                return self._cannot_start(case_id, argv)
        return None

    def _cannot_start(self, case_id: str, argv: list[str]) -> RunStopped:
        blind = [r for r in self.first_results if r is not None]  # all of them, when this is called
        codes = ", ".join(str(c) for c in sorted({r.exit_code for r in blind if r.exit_code is not None}))
        tail = blind[-1].stderr.rstrip().splitlines()[-STDERR_TAIL_LINES:]
        shown = "\n".join(f"    {line}" for line in tail) or "    (nothing)"
        return RunStopped(
            f"{self.run_id} stopped: the target cannot start. Its first {CANNOT_START_RUNS} invocations exited with "
            f"code {codes} and printed none of the markers the outcome rules know. Its stderr ended with:\n{shown}\n"
            f"Hint: run it by hand ({shlex.join(argv)}) and fix the command, or pass another --target (it runs in "
            f"a fresh working directory under {self.workdirs}, so give file paths absolute); "
            f"`ironbench log {self.run_id} {case_id}` shows each invocation's output."
        )
