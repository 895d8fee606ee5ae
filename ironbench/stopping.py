"""Adaptive stopping: decisions as pure functions of outcomes ordered by run index."""

from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.outcome import Outcome
from ironbench.stats import chance_agreement, wilson_interval

AGREEING_RUNS = 3


@dataclass(frozen=True, slots=True)
class StopDecision:
    decision: str  # "stable" or "exhausted"
    reason: str
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    chance_agreement: float


def evidence(outcomes: Sequence[Outcome], decision: str, reason: str) -> StopDecision:
    n = len(outcomes)
    successes = sum(1 for o in outcomes if o.success)
    rate = successes / n if n else 0.0
    low, high = wilson_interval(successes, n)
    return StopDecision(decision, reason, n, successes, rate, low, high, chance_agreement(rate, AGREEING_RUNS))


def baseline_decision(outcomes: Sequence[Outcome], max_runs: int) -> StopDecision | None:
    """Stop once the last 3 runs are equivalent, or when `max_runs` are spent; else None."""
    last = outcomes[-AGREEING_RUNS:]
    if len(last) == AGREEING_RUNS and len({o.signature() for o in last}) == 1:
        return evidence(outcomes, "stable", f"last {AGREEING_RUNS} runs equivalent")
    if len(outcomes) >= max_runs:
        return evidence(outcomes, "exhausted", f"{max_runs} runs without {AGREEING_RUNS} equivalent in a row")
    return None
