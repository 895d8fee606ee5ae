"""When a run must wait or stop: its backend is failing, or its target cannot start.

Not decisions about the target (those are pure functions of outcomes in stopping.py):
operational choices, taken in completion order, that keep a broken setup from being
recorded as the target's behaviour. An outage is ridden out: after an infrastructure
error nothing starts until a backoff has passed (exponential, jittered, at least what a
429's Retry-After asked), and the run stops only once the backend has been failing for
`max_outage` seconds. `ironbench resume` continues a stopped run.
"""

import os
import random
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ironbench.core.errors import IronbenchError, RunStopped

if TYPE_CHECKING:  # the CLI reads this module's defaults, and must start fast
    from ironbench.core.outcome import Outcome
    from ironbench.sandbox import Denial
    from ironbench.targets import ProcessResult

MAX_OUTAGE_SECONDS = 300.0  # how long a backend may fail before the run stops
BACKOFF_ENV = "IRONBENCH_BACKOFF"  # "FIRST[,MOST]": the first wait and the longest, in seconds
BACKOFF_FIRST, BACKOFF_MOST = 1.0, 60.0
CANNOT_START_RUNS = 3  # the first invocations that, all failing blind, mean the target cannot start
STDERR_TAIL_LINES = 8


@dataclass(frozen=True)
class Backoff:
    """Waits after failed rounds: `first` seconds, doubling, at most `most`, each drawn in its
    upper half (jitter, so that many clients of one backend do not come back at once)."""

    first: float = BACKOFF_FIRST
    most: float = BACKOFF_MOST

    def delay(self, rounds: int, draw: float) -> float:
        """The wait after the `rounds`-th failed round (1, 2, ...), `draw` uniform in [0, 1)."""
        full = min(self.most, self.first * 2.0 ** min(rounds - 1, 64))
        return full * (0.5 + 0.5 * draw)

    @classmethod
    def from_environ(cls) -> "Backoff":
        value = os.environ.get(BACKOFF_ENV, "").strip()
        if not value:
            return cls()
        try:
            parts = [float(part) for part in value.split(",")]
        except ValueError:
            parts = []
        if len(parts) not in (1, 2) or any(not 0 <= p < float("inf") for p in parts):
            raise IronbenchError(f"{BACKOFF_ENV}={value!r}: expected FIRST or FIRST,MOST in seconds (e.g. 1,60)")
        first = parts[0]
        return cls(first, max(first, parts[1]) if len(parts) == 2 else max(first, BACKOFF_MOST))


def seconds_text(seconds: float) -> str:
    """A duration as people say it: 0.4 s, 42 s, 3 min 5 s, 1 h 2 min."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


@dataclass
class Outage:
    """The backend failing since `since`: its errors, and the rounds of waiting they caused."""

    since: float  # on the guard's clock
    since_utc: str
    errors: int = 0
    rounds: int = 0
    round_began: float = 0.0  # invocations started before this belong to the round before
    hold_until: float = 0.0
    last: str = ""


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
    max_infra_errors: int | None = None  # also stop after this many in a row (None: only max_outage)
    max_outage: float = MAX_OUTAGE_SECONDS
    backoff: Backoff = field(default_factory=Backoff)
    clock: Callable[[], float] = time.monotonic
    draw: Callable[[], float] = random.random
    infra_streak: list[str] = field(default_factory=list)
    first_results: "list[ProcessResult | None]" = field(default_factory=list)  # None: not a blind failure
    fenced_out: "dict[str, Denial]" = field(default_factory=dict)  # what the fence withheld from them
    outage: Outage | None = None

    def hold(self) -> float:
        """Seconds before any invocation may start (0: now)."""
        if self.outage is None:
            return 0.0
        return max(0.0, self.outage.hold_until - self.clock())

    def after(
        self,
        where: str,
        case_id: str,
        argv: list[str],
        result: "ProcessResult",
        outcome: "Outcome",
        started: float | None = None,
        retry_after: float | None = None,
        fenced_out: "tuple[Denial, ...]" = (),
    ) -> RunStopped | None:
        """Why the run must stop after this completion (`where`: group and run), if it must.
        `started`: when the invocation started, on the guard's clock; `retry_after`: the
        longest wait its backend asked for; `fenced_out`: what its fence withheld that explains
        its failure (none: the fence is not its cause)."""
        if outcome.infra_error is not None:
            self.infra_streak.append(f"{outcome.infra_error!r} ({where})")
            stop = self._failed(f"{outcome.infra_error!r} ({where})", started, retry_after)
            if stop is not None:
                return stop
        else:
            self.infra_streak.clear()
            self.outage = None
        if self.max_infra_errors is not None and len(self.infra_streak) >= self.max_infra_errors:
            return RunStopped(
                f"{self.run_id} stopped after {len(self.infra_streak)} consecutive infrastructure errors, the last "
                f"{self.infra_streak[-1]}; the backend failed, not the target. Once it is back: {self.resume}"
            )
        if len(self.first_results) < CANNOT_START_RUNS:
            from ironbench.core.outcome import UNKNOWN_STAGE

            blind = result.exit_code not in (0, None) and outcome.failure_stage == UNKNOWN_STAGE
            self.first_results.append(result if blind else None)
            for denial in fenced_out if blind else ():
                self.fenced_out.setdefault(denial.line(), denial)
            if len(self.first_results) == CANNOT_START_RUNS and all(self.first_results):
                return self._cannot_start(case_id, argv)
        return None

    def _failed(self, what: str, started: float | None, retry_after: float | None) -> RunStopped | None:
        """One more infrastructure error: the outage grows; a round of waiting begins when it
        comes from an invocation started after the last one began (those started before
        were under way when the backend failed, and add no round)."""
        now = self.clock()
        outage = self.outage
        if outage is None:
            outage = self.outage = Outage(now, datetime.now(UTC).strftime("%H:%M:%S UTC"))
        outage.errors += 1
        outage.last = what
        failed_for = now - outage.since
        if failed_for >= self.max_outage:
            return RunStopped(
                f"{self.run_id} stopped: the backend has failed for {seconds_text(failed_for)} (since "
                f"{outage.since_utc}, more than the {seconds_text(self.max_outage)} --max-outage allows): "
                f"{outage.errors} infrastructure error{'s' if outage.errors != 1 else ''}, the last {what}; "
                f"runs waited {outage.rounds} time{'s' if outage.rounds != 1 else ''} with backoff in between. "
                f"The backend failed, not the target. Once it is back: {self.resume}"
            )
        if outage.rounds == 0 or started is None or started >= outage.round_began:
            outage.rounds += 1
            outage.round_began = now
            outage.hold_until = max(outage.hold_until, now + self.backoff.delay(outage.rounds, self.draw()))
        if retry_after is not None:
            outage.hold_until = max(outage.hold_until, now + retry_after)
        return None

    def waiting(self) -> str | None:
        """What the run waits for, when it waits (a line for the reporter)."""
        hold = self.hold()
        if self.outage is None or hold <= 0:
            return None
        outage = self.outage
        return (
            f"  the backend is failing ({outage.errors} infrastructure error{'s' if outage.errors != 1 else ''} in "
            f"{seconds_text(self.clock() - outage.since)}, the last {outage.last}): nothing starts for "
            f"{seconds_text(hold)}; the run stops if it still fails after {seconds_text(self.max_outage)}"
        )

    def _cannot_start(self, case_id: str, argv: list[str]) -> RunStopped:
        blind = [r for r in self.first_results if r is not None]  # all of them, when this is called
        codes = ", ".join(str(c) for c in sorted({r.exit_code for r in blind if r.exit_code is not None}))
        tail = blind[-1].stderr.rstrip().splitlines()[-STDERR_TAIL_LINES:]
        shown = "\n".join(f"    {line}" for line in tail) or "    (nothing)"
        if self.fenced_out:  # the fence's doing, not the command's: what it withheld comes first
            withheld = "\n".join(f"    {line}" for line in list(self.fenced_out)[:STDERR_TAIL_LINES])
            flags = " ".join(d.flag for d in self.fenced_out.values() if d.flag)
            return RunStopped(
                f"{self.run_id} stopped: the fence withheld what the target needs. Its first {CANNOT_START_RUNS} "
                f"invocations exited with code {codes} and printed none of the markers the outcome rules know; "
                f"what they lacked:\n{withheld}\nIts stderr ended with:\n{shown}\n"
                + (
                    f"Hint: run it again with {flags} (read from what the target printed, its own word: allow "
                    "only what you mean it to have)"
                    if flags
                    else "Hint: no flag allows that: the target must do without it"
                )
                + f"; `ironbench sandbox --target ...` shows what a target sees; `ironbench log {self.run_id} {case_id}` "
                "shows each invocation's output."
            )
        return RunStopped(
            f"{self.run_id} stopped: the target cannot start. Its first {CANNOT_START_RUNS} invocations exited with "
            f"code {codes} and printed none of the markers the outcome rules know. Its stderr ended with:\n{shown}\n"
            f"Hint: run it by hand ({shlex.join(argv)}) and fix the command, or pass another --target (it runs in "
            f"a fresh working directory under {self.workdirs}, so give file paths absolute); "
            f"`ironbench log {self.run_id} {case_id}` shows each invocation's output."
        )
