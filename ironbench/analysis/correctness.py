"""A run's correctness by the harness's checks, and why its validations failed: read from the
`invocations`, `checks` and `failure_causes` views, for `show` and the end of a run."""

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ironbench.core.labels import natural_key
from ironbench.stats import wilson_interval

# Runs the target verified whose brick the harness's check found not correct: shown first.
_VERIFIED_BUT_WRONG = """
SELECT i.case_id, i.variant_id, i.run_index, c.verdict, c.detail, c.output
FROM invocations i JOIN checks c USING (invocation_key)
WHERE i.success AND c.verdict NOT IN ('correct', 'harness_fault') AND c.rerun = i.rerun AND i.infra_error IS NULL
ORDER BY i.case_id, i.variant_id, i.run_index
"""
_RUNS = """
SELECT case_id, CASE WHEN coalesce(case_mode, mode) = 'stress' THEN level END, success::BOOLEAN, correct::BOOLEAN,
       check_verdict
FROM invocations WHERE infra_error IS NULL
"""
_VERDICTS = """
SELECT check_verdict, count(*) FROM invocations
WHERE check_verdict IS NOT NULL AND infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""
# Why the checks the harness could not run could not (their details), the most frequent first.
_FAULTS = """
SELECT c.detail, count(*) FROM invocations i JOIN checks c USING (invocation_key)
WHERE c.verdict = 'harness_fault' AND c.rerun = i.rerun AND i.infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""
_CAUSES = """
SELECT failure_cause, count(*) FROM invocations
WHERE failure_cause IS NOT NULL AND NOT success AND infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""
_ATTEMPT_CAUSES = """
SELECT f.cause, count(*) FROM failure_causes f JOIN invocations i USING (invocation_key)
WHERE i.infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""


@dataclass(frozen=True)
class VerifiedButWrong:
    """A run the target verified whose brick the harness's check found not correct."""

    case_id: str
    variant_id: str
    run_index: int
    verdict: str
    detail: str
    output: str


@dataclass(frozen=True)
class _Run:
    """What the counts read of a run that is evidence."""

    case_id: str
    level: int | None
    success: bool
    correct: bool | None
    check_verdict: str | None


@dataclass(frozen=True)
class CheckCounts:
    """The checked cases' runs: how many were checked and correct, the verdicts, and the runs
    verified but wrong (a run without a brick is not correct; a check the harness could not run
    counts in nothing)."""

    verified_but_wrong: list[VerifiedButWrong]
    runs: int
    checked: int
    correct: int
    verified_and_checked: int
    verdicts: dict[str, int]
    harness_faults: int
    fault_causes: dict[str, int] = field(default_factory=dict)  # why they could not run, by detail
    broken_checks: list[str] = field(default_factory=list)  # one line each: a check failing its reference

    @property
    def correct_rate(self) -> float:
        return round(self.correct / self.runs, 6) if self.runs else 0.0

    @property
    def correct_rate_wilson_95(self) -> list[float]:
        return [round(x, 6) for x in wilson_interval(self.correct, self.runs)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "verified_but_wrong": [asdict(row) for row in self.verified_but_wrong],
            "runs": self.runs,
            "checked": self.checked,
            "correct": self.correct,
            "verified_and_checked": self.verified_and_checked,
            "correct_rate": self.correct_rate,
            "correct_rate_wilson_95": self.correct_rate_wilson_95,
            "verdicts": self.verdicts,
            "harness_faults": self.harness_faults,
            "fault_causes": self.fault_causes,
            "broken_checks": self.broken_checks,
        }


class _Checked(Protocol):
    """What the correctness verdicts read of a run's checks (this module's CheckCounts, or the
    report's record of it)."""

    @property
    def runs(self) -> int: ...
    @property
    def correct(self) -> int: ...
    @property
    def harness_faults(self) -> int: ...
    @property
    def verdicts(self) -> dict[str, int]: ...
    @property
    def correct_rate_wilson_95(self) -> list[float]: ...
    @property
    def verified_but_wrong(self) -> Sequence[Any]: ...
    @property
    def fault_causes(self) -> dict[str, int]: ...
    @property
    def broken_checks(self) -> Sequence[str]: ...


def could_not_run(faults: int, causes: dict[str, int]) -> str:
    """ "n checks could not run: the cause" (the most frequent; how many other causes)."""
    said = f"{faults} check{'s' if faults != 1 else ''} could not run"
    if not causes:
        return said
    cause, rest = next(iter(causes)), len(causes) - 1
    return f"{said}: {cause}" + (f" (and {rest} other cause{'s' if rest != 1 else ''})" if rest else "")


def correctness_verdicts(checks: _Checked) -> list[tuple[str, str]]:
    """A checked run's first verdicts after its fence, each (headline, evidence): how many of
    its runs were correct, with the interval; then the runs that tampered with their check and
    those the target verified that were not correct, with what their checks said."""
    said = []
    broken = list(checks.broken_checks)
    if broken:  # what the correctness below does not rest on
        many = len(broken) != 1
        said.append(
            (
                (
                    f"{len(broken)} check{'s' if many else ''} failed {'their' if many else 'its'} reference "
                    f"solution{'s' if many else ''}: broken, {'their' if many else 'its'} cases' checks not counted."
                ),
                "; ".join(broken) + "; each of their verdicts is a harness fault, in no rate.",
            )
        )
    faults = checks.harness_faults
    if not checks.runs:
        if faults:
            said.append((f"No check gave a verdict: {could_not_run(faults, checks.fault_causes)}.", "In no rate."))
        return said
    low, high = checks.correct_rate_wilson_95
    rate = checks.correct / checks.runs
    said.append(
        (
            f"Correct (the harness's checks): {checks.correct} of {checks.runs} runs ({rate:.0%}).",
            f"n = {checks.runs} runs of checked cases, Wilson 95% interval {low:.0%} to {high:.0%}; "
            "a run without a brick counts as not correct"
            + (f"; {could_not_run(faults, checks.fault_causes)}, in no rate." if faults else "."),
        )
    )
    tampered = checks.verdicts.get("tampered", 0)
    wrong = [row for row in checks.verified_but_wrong if row.verdict != "tampered"]
    if tampered or wrong:
        parts = [f"{tampered} tampered with {'their checks' if tampered != 1 else 'its check'}"] if tampered else []
        parts += [f"{len(wrong)} verified by the target but not correct"] if wrong else []
        shown = [
            f"{r.case_id} {r.variant_id} run {r.run_index}: {r.verdict} ({r.detail})"
            for r in checks.verified_but_wrong[:3]
        ]
        more = len(checks.verified_but_wrong) - len(shown)
        said.append(
            (
                "Of those runs, " + " and ".join(parts) + ".",
                "; ".join(shown) + (f"; and {more} more (show, the report's Checks section)" if more > 0 else "")
                or "each with its evidence in the Checks section",
            )
        )
    return said


@dataclass(frozen=True)
class FailureCauses:
    """Why validation failed: the last failed attempt of each failed run, and every failed attempt."""

    last_failed_attempt: dict[str, int]
    every_failed_attempt: dict[str, int]


@dataclass(frozen=True)
class Correctness:
    """A run's checks (None: nothing checked) and its failure causes (None: none read)."""

    checks: CheckCounts | None
    failure_causes: FailureCauses | None

    def to_dict(self) -> dict[str, Any]:
        """As `show --format json` prints it: the parts the run has."""
        out: dict[str, Any] = {}
        if self.checks is not None:
            out["checks"] = self.checks.to_dict()
        if self.failure_causes is not None:
            out["failure_causes"] = asdict(self.failure_causes)
        return out


def correctness(store_path: Path, run_id: str) -> Correctness | None:
    """The run's checks and its failure causes (None when it has neither): the runs verified
    but wrong, each with its check's output, listed first."""
    from ironbench.analysis.query import connect
    from ironbench.analysis.recorded import run_proofs, run_suite

    con = connect(store_path, run_id)
    try:
        wrong = sorted(
            (VerifiedButWrong(*row) for row in con.execute(_VERIFIED_BUT_WRONG).fetchall()),
            key=lambda w: (natural_key(w.case_id), natural_key(w.variant_id), w.run_index),
        )
        every = [_Run(*row) for row in con.execute(_RUNS).fetchall()]
        verdicts = dict(con.execute(_VERDICTS).fetchall())
        fault_causes = dict(con.execute(_FAULTS).fetchall())
        causes = dict(con.execute(_CAUSES).fetchall())
        attempts = dict(con.execute(_ATTEMPT_CAUSES).fetchall())
    finally:
        con.close()
    suite = run_suite(store_path, run_id)
    # the runs of checked cases (a case the suite checks, or one a re-check gave checks)
    runs = [r for r in every if r.check_verdict is not None or suite.checked(r.case_id, r.level)]
    faults = sum(1 for r in runs if r.check_verdict == "harness_fault")
    checks = None
    if runs:
        checks = CheckCounts(
            wrong,
            len(runs) - faults,
            sum(1 for r in runs if r.check_verdict is not None) - faults,
            sum(1 for r in runs if r.correct),
            sum(1 for r in runs if r.success and r.check_verdict not in (None, "harness_fault")),
            verdicts,
            faults,
            fault_causes,
            [proof.line() for proof in run_proofs(store_path, run_id) if proof.broken],
        )
    # a run's causes: its attempts' (debug files), or the fence's alone
    found = Correctness(checks, FailureCauses(causes, attempts) if attempts or causes else None)
    return found if checks is not None or found.failure_causes is not None else None


def correctness_lines(found: Correctness | None) -> list[str]:
    """For people: verified but wrong first (each with its check's detail), then the counts."""
    if not found:
        return []
    lines = []
    checks = found.checks
    if checks:
        lines += [f"BROKEN CHECK: {line}" for line in checks.broken_checks]
    if checks and not checks.checked and not checks.harness_faults:
        lines.append(f"correct: 0 of {checks.runs} runs (none saved a brick the harness could check)")
    elif checks and not checks.checked:
        counted = f"0 of {checks.runs} runs" if checks.runs else "no check gave a verdict"
        lines.append(f"correct: {counted}; {could_not_run(checks.harness_faults, checks.fault_causes)}")
    elif checks:
        wrong = checks.verified_but_wrong
        faults = f"; {could_not_run(checks.harness_faults, {})} (in no rate)" if checks.harness_faults else ""
        lines.append(
            f"VERIFIED BUT WRONG: {len(wrong)} of {checks.verified_and_checked} verified and checked runs "
            f"(the target said verified; the harness's check says not){faults}"
        )
        for row in wrong:
            variant = "" if row.variant_id in ("base", "baseline") else f" {row.variant_id}"
            lines.append(f"  {row.case_id}{variant} run {row.run_index}: {row.verdict}: {row.detail}")
        low, high = checks.correct_rate_wilson_95
        verdicts = ", ".join(f"{v} {n}" for v, n in checks.verdicts.items())
        lines.append(
            f"correct: {checks.correct} of {checks.runs} runs ({checks.correct_rate:.1%}, Wilson 95% "
            f"{low:.1%}-{high:.1%}; a run without a brick is not correct); checks: {verdicts}"
            + (
                f"; {could_not_run(checks.harness_faults, checks.fault_causes)} (in no rate)"
                if checks.harness_faults
                else ""
            )
        )
    said = causes_line(found.failure_causes)
    return [*lines, said] if said else lines


def causes_line(causes: FailureCauses | None) -> str | None:
    """Why runs failed, in one line: each failed run's cause (its last failed attempt's, or
    `fence`), then every failed attempt's (none read: the fence's alone)."""
    if not causes:
        return None
    last = ", ".join(f"{c} {n}" for c, n in causes.last_failed_attempt.items()) or "none"
    if not causes.every_failed_attempt:
        return f"why runs failed: {last} (fence: what the fence withheld, said above with the flag that allows it)"
    every = ", ".join(f"{c} {n}" for c, n in causes.every_failed_attempt.items())
    return f"why validation failed: last attempt of each failed run: {last}; every failed attempt: {every}"
