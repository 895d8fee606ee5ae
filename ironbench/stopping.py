"""Adaptive stopping: decisions as pure functions of outcomes ordered by run index."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.outcome import Outcome
from ironbench.stats import chance_agreement, wilson_interval

AGREEING_RUNS = 3
VARIANT_REPEATS = 3
STRESS_MIN_RUNS_FOR_EARLY_STOP = 3
SYSTEMATIC_FAILURE_RATE = 0.8


@dataclass(frozen=True, slots=True)
class StopDecision:
    decision: str
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


def reference_signature(outcomes: Sequence[Outcome], stable: bool) -> tuple:
    """The behaviour a baseline stands for: its agreeing tail when stable, else its
    most common outcome (ties go to the latest)."""
    if stable or len(outcomes) == 1:
        return outcomes[-1].signature()
    counts = Counter(o.signature() for o in outcomes)
    best = max(counts.values())
    return next(o.signature() for o in reversed(outcomes) if counts[o.signature()] == best)


def reference_decision(outcomes: Sequence[Outcome]) -> StopDecision | None:
    if not outcomes:
        return None
    return evidence(outcomes, "reference", "no stored baseline of this instruction with the same target, version "
                    "and environment: ran it once")


def variant_decision(outcomes: Sequence[Outcome], reference: tuple) -> StopDecision | None:
    """A variant runs once; if it differs materially from the reference it is repeated
    up to 3 times: a repeat that agrees with the reference makes the difference
    stochastic, three that all differ make it structural."""
    if not outcomes:
        return None
    if outcomes[0].signature() == reference:
        return evidence(outcomes, "not_material", "first run equivalent to the baseline")
    if len(outcomes) > 1 and outcomes[-1].signature() == reference:
        return evidence(outcomes, "stochastic", f"repeat {len(outcomes) - 1} agreed with the baseline")
    if len(outcomes) == 1 + VARIANT_REPEATS:
        return evidence(outcomes, "structural", f"differed from the baseline in all {len(outcomes)} runs")
    return None


def stress_level_decision(outcomes: Sequence[Outcome], max_runs: int) -> StopDecision | None:
    """At least 2, at most `max_runs` (<= 5) runs; after 3 runs stop early at >= 80%
    failure (systematic failure) or 100% success."""
    n = len(outcomes)
    if n == 0:
        return None
    failures = sum(1 for o in outcomes if not o.success)
    if n >= STRESS_MIN_RUNS_FOR_EARLY_STOP or n >= max_runs:
        if failures / n >= SYSTEMATIC_FAILURE_RATE:
            return evidence(outcomes, "systematic_failure", f"{failures}/{n} runs failed (>= 80%)")
        if failures == 0:
            return evidence(outcomes, "systematic_success", f"all {n} runs succeeded")
    if n >= max_runs:
        return evidence(outcomes, "mixed", f"{failures}/{n} runs failed after {max_runs} runs")
    return None


def boundary_level(level_decisions: Sequence[tuple[int, str]]) -> int | None:
    """The capability boundary: the first level whose failure is systematic."""
    return next((level for level, decision in sorted(level_decisions) if decision == "systematic_failure"), None)


BASE_LEVEL = 0  # a ladder's level 0 is the unchanged instruction


def boundary_verdict(level: int | None) -> str:
    """A ladder's verdict from its boundary level: when the unchanged instruction
    already fails systematically there is no boundary to name, it "fails at base"."""
    if level is None:
        return "no_boundary"
    return "fails_at_base" if level == BASE_LEVEL else "boundary"
