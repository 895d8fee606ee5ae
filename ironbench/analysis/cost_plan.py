"""What a run of a suite will cost, estimated before it starts from a stored run of the same
target: its cost per invocation (with a bootstrap interval over its cases) times the most
invocations the suite's plan can take, and what the stored run itself took where it ran the
same suite. `ironbench plan SUITE` says it."""

from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from ironbench.analysis.costs import RunCost, run_cost
from ironbench.analysis.query import connect
from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.prices import usd
from ironbench.stats import ratio_interval

# The latest run of this target whose calls were priced (the target as runs record it: its argv).
_SAME_TARGET = """
SELECT r.run_id FROM store.runs r
WHERE r.target = ? AND r.mode != 'gauntlet'
  AND EXISTS (SELECT 1 FROM store.call_costs c WHERE c.run_id = r.run_id AND c.caller = 'target')
ORDER BY r.started_utc DESC LIMIT 1
"""
_RUN = "SELECT suite_id, target FROM store.runs WHERE run_id = ?"


@dataclass(frozen=True)
class CostPlan:
    """A suite's estimated cost: the stored run it reads, its cost per invocation with the
    interval, and the most invocations the suite can take."""

    suite_id: str
    from_run: str
    same_suite: bool
    """The stored run ran this suite (its own invocations are a likely count)."""
    per_invocation: float
    low: float
    high: float
    cases: int
    """The stored run's cases the interval resamples."""
    at_most: int
    """The most invocations the suite's plan can take (every group to its cap)."""
    stored: RunCost
    unplanned: int = 0
    """AI generators whose variants are only known once made (their invocations are not counted)."""

    @property
    def estimate(self) -> float:
        return self.per_invocation * self.at_most

    def lines(self) -> list[str]:
        target = self.stored.target
        head = (
            f"{self.suite_id}: at most {self.at_most:,} invocation{'s' if self.at_most != 1 else ''} "
            f"(every case to its cap); from {self.from_run} (same target, {target.attempts:,} invocations, "
            f"{usd(target.usd)}): {usd(self.per_invocation)} per invocation [95% CI {usd(self.low)}, "
            f"{usd(self.high)}, bootstrap over its {self.cases} cases]"
        )
        estimate = (
            f"estimated cost: at most {usd(self.estimate)} [{usd(self.low * self.at_most)}, "
            f"{usd(self.high * self.at_most)}] for the target's calls"
        )
        lines = [head, estimate]
        if self.same_suite:
            lines.append(
                f"{self.from_run} ran this suite: {target.attempts:,} invocations cost {usd(target.usd)}"
                + (f", and ironbench's own calls {usd(self.stored.own)}" if self.stored.own else "")
                + (" (its stopping rules stopped cases early)" if target.attempts < self.at_most else "")
            )
        if target.unpriced or self.stored.unpriced:
            lines.append(
                f"warning: {self.from_run} has {self.stored.unpriced} unpriced calls: the estimate is a lower bound"
            )
        if self.unplanned:
            lines.append(
                f"note: {self.unplanned} AI generator entr{'ies' if self.unplanned != 1 else 'y'} make their "
                "variants at run time: their invocations and the rewrites' own calls are not counted"
            )
        return lines

    def to_dict(self) -> dict:
        return {
            "suite_id": self.suite_id,
            "from_run": self.from_run,
            "same_suite": self.same_suite,
            "per_invocation": self.per_invocation,
            "ci_95": [self.low, self.high],
            "cases": self.cases,
            "at_most_invocations": self.at_most,
            "estimate_usd": self.estimate,
            "estimate_ci_95": [self.low * self.at_most, self.high * self.at_most],
            "stored": self.stored.to_dict(),
            "unplanned_ai_entries": self.unplanned,
        }


def plan_cost(store_path: Path, suite, target_argv: list[str], from_run: str | None = None) -> CostPlan:
    """The estimate for `suite` run with `target_argv`, from `from_run` (else the latest priced
    run of that target in the store)."""
    from ironbench.run.planner import ai_entries, plan

    if suite.mode == "gauntlet":
        raise IronbenchError(
            "plan: a gauntlet's engines call their models themselves; its cost is in `show` after a run"
        )
    target = " ".join(target_argv)
    con = connect(store_path)
    try:
        if from_run is None:
            found = con.execute(_SAME_TARGET, [target]).fetchone()
            if found is None:
                raise IronbenchError(
                    f"plan: no stored run of this target has priced model calls ({target}); "
                    "run it once (a small --sample will do), or name one with --from RUN"
                )
            from_run = str(found[0])
        row = con.execute(_RUN, [from_run]).fetchone()
    finally:
        con.close()
    if row is None:
        raise RunNotFound(f"run {from_run!r} not found in {store_path}")
    stored = run_cost(store_path, from_run)
    if stored is None or not stored.target.attempts:
        raise IronbenchError(f"plan: {from_run} has no priced model calls of its target to estimate from")
    pairs = [(float(c.usd), float(c.attempts)) for c in stored.cases if c.attempts]
    found_interval = ratio_interval(pairs)
    assert found_interval is not None  # (the run has attempts)
    per, low, high = found_interval
    at_most = sum(group.max_runs for track in plan(suite) for group in track.groups)
    return CostPlan(
        suite.suite_id,
        from_run,
        row[0] == suite.suite_id,
        float(Decimal(str(per))),
        low,
        high,
        len(pairs),
        at_most,
        stored,
        len(ai_entries(suite)),
    )
