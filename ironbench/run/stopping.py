"""Adaptive stopping: decisions as pure functions of outcomes ordered by run index.

Every decision carries what its runs support: the Wilson interval, one-sided exact
(Clopper-Pearson) bounds on the success rate and, for `stable`, on the chance that the
instruction reproduces the agreed outcome. Operating characteristics (how often each rule
errs) are computed in `ironbench/run/operating.py` and checked by the tests.
"""

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ironbench.core.events import StopDecision
from ironbench.core.outcome import Outcome
from ironbench.stats import (
    chance_agreement,
    clopper_pearson_lower,
    clopper_pearson_upper,
    confidence_thresholds,
    exact_distribution_test,
    significant,
    stratified_exact_test,
    wilson_interval,
)
from ironbench.suite import MATERIAL_REPEATS, ConfidenceStop, FixedStop, SeedStop

AGREEING_RUNS = 3
VARIANT_REPEATS = MATERIAL_REPEATS  # the spec's; a case's `material_repeats` (runs_per_variant) sets its own
STRESS_MIN_RUNS_FOR_EARLY_STOP = 3
SYSTEMATIC_FAILURE_RATE = 0.8
ALPHA = 0.05  # the error rate every test behind a decision is held to


def evidence(outcomes: Sequence[Outcome], decision: str, reason: str, **extra: Any) -> StopDecision:
    n = len(outcomes)
    successes = sum(1 for o in outcomes if o.success)
    rate = successes / n if n else 0.0
    low, high = wilson_interval(successes, n)
    return StopDecision(
        decision,
        reason,
        n,
        successes,
        rate,
        low,
        high,
        chance_agreement(rate, AGREEING_RUNS),
        clopper_pearson_lower(successes, n),
        clopper_pearson_upper(successes, n),
        **extra,
    )


def _stable(outcomes: Sequence[Outcome], reason: str) -> StopDecision:
    """Stable on the latest outcome: how many runs reproduced it, and the one-sided 95% lower
    bound on the chance of reproducing it (3/3 → 0.37, 10/10 → 0.74). The bound treats the
    runs as a fixed sample; the rule's own operating characteristic is in docs/concepts/statistics.md."""
    agreed = outcomes[-1].signature()
    same = sum(1 for o in outcomes if o.signature() == agreed)
    bound = clopper_pearson_lower(same, len(outcomes))
    return evidence(
        outcomes,
        "stable",
        f"{reason}; {same}/{len(outcomes)} runs gave this outcome, so it "
        f"recurs with probability >= {bound:.2f} (one-sided 95%)",
        reproduce_lower_95=bound,
    )


# -- baseline -----------------------------------------------------------------------------------


def baseline_decision(
    outcomes: Sequence[Outcome], max_runs: int, rule: SeedStop | ConfidenceStop | FixedStop | None = None
) -> StopDecision | None:
    """The seed's rule (default): stop once the last 3 runs are equivalent, or when `max_runs`
    are spent; else None. A ConfidenceStop `rule` selects confidence_decision, a FixedStop
    fixed_decision."""
    if isinstance(rule, ConfidenceStop):
        return confidence_decision(outcomes, rule.reproduce, rule.confidence, rule.max_runs)
    if isinstance(rule, FixedStop):
        return fixed_decision(outcomes, rule.runs)
    last = outcomes[-AGREEING_RUNS:]
    if len(last) == AGREEING_RUNS and len({o.signature() for o in last}) == 1:
        return _stable(outcomes, f"last {AGREEING_RUNS} runs equivalent")
    if len(outcomes) >= max_runs:
        return evidence(outcomes, "exhausted", f"{max_runs} runs without {AGREEING_RUNS} equivalent in a row")
    return None


def baseline_horizon(
    outcomes: Sequence[Outcome], max_runs: int, rule: SeedStop | ConfidenceStop | FixedStop | None = None
) -> int:
    """The fewest runs after which `baseline_decision` could decide, given the first outcomes
    (more than there are): what the scheduler would find by trying continuations, said by the
    rule itself in O(runs) instead (the seed's rule in O(1)). Runs up to it are needed whatever
    they show."""
    m = len(outcomes)
    if isinstance(rule, FixedStop):
        return max(m + 1, rule.runs)
    if isinstance(rule, ConfidenceStop):
        limits = confidence_thresholds(rule.reproduce, rule.confidence, rule.max_runs)
        agreed = max(Counter(o.signature() for o in outcomes).values(), default=0)
        for n in range(m + 1, rule.max_runs + 1):
            # the most common outcome may recur in every new run, or no new run may agree
            if agreed + n - m >= limits[n - 1] or n - max(agreed, 1) > rule.max_runs - limits[-1]:
                return n
        return max(m + 1, rule.max_runs)
    for n in range(m + 1, max_runs):
        new = n - m
        if n >= AGREEING_RUNS and (
            new >= AGREEING_RUNS or len({o.signature() for o in outcomes[m - (AGREEING_RUNS - new) :]}) == 1
        ):
            return n
    return max(m + 1, max_runs)


def fixed_decision(outcomes: Sequence[Outcome], runs: int) -> StopDecision | None:
    """`stop: {rule: fixed, runs: N}`: decided after exactly N runs whatever they show, so
    the number of runs carries no information and pass@k, pass^k are unbiased. `stable` when
    every run gave the same outcome; otherwise `exhausted`, naming how many gave the most
    common one."""
    n = len(outcomes)
    if n < runs:
        return None
    agreed = max(Counter(o.signature() for o in outcomes).values())
    if agreed == n:
        return _stable(outcomes, f"all {n} runs (fixed in advance) equivalent")
    return evidence(outcomes, "exhausted", f"{n} runs, fixed in advance: {agreed}/{n} gave the most common outcome")


def confidence_decision(
    outcomes: Sequence[Outcome], reproduce: float, confidence: float, max_runs: int
) -> StopDecision | None:
    """The opt-in rule: `stable` once the runs show, with the given confidence (sequentially
    calibrated), that the most common outcome recurs with probability above `reproduce`;
    `exhausted` at `max_runs` or as soon as that can no longer happen within the cap."""
    n = len(outcomes)
    if n == 0:
        return None
    counts = Counter(o.signature() for o in outcomes)
    agreed = max(counts.values())
    limits = confidence_thresholds(reproduce, confidence, max_runs)
    if agreed >= limits[n - 1]:
        bound = clopper_pearson_lower(agreed, n)
        return evidence(
            outcomes,
            "stable",
            f"{agreed}/{n} runs gave the same outcome: it recurs with probability "
            f"> {reproduce:.2f} at {confidence:.0%} confidence (sequential test; bound {bound:.2f})",
            reproduce_lower_95=bound,
        )
    if n >= max_runs or n - agreed > max_runs - limits[-1]:
        return evidence(
            outcomes,
            "exhausted",
            f"{agreed}/{n} runs agree: cannot show recurrence above {reproduce:.2f} within {max_runs} runs",
        )
    return None


# -- adversarial --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """The baseline a variant is judged against: the behaviour it stands for, and (when more
    than one run was seen) every baseline outcome's signature, in run order."""

    signature: tuple
    outcomes: tuple[tuple, ...] = ()
    stable: bool = True

    @classmethod
    def of(cls, outcomes: Sequence[Outcome], stable: bool) -> "Reference":
        return cls(
            reference_signature(outcomes, stable), tuple(o.signature() for o in outcomes), stable or len(outcomes) == 1
        )

    @property
    def unstable(self) -> bool:
        """A baseline that never settled (e.g. 7/10, exhausted): one signature cannot stand for it."""
        return not self.stable and len(set(self.outcomes)) > 1


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
    return evidence(
        outcomes,
        "reference",
        "no stored baseline of this instruction with the same target, version and environment: ran it once",
    )


def direction(variant: Sequence[tuple], reference: Sequence[tuple]) -> str:
    """Which way variant runs differ from reference runs (signatures): success first, then
    correctness (where compared), attempts, repairs, failure stage."""

    def mean(rows: Sequence[tuple], index: int) -> float:
        return sum(float(r[index] or 0) for r in rows) / len(rows)

    for index, more, fewer in (
        (0, "success gained", "success lost"),
        (4, "correctness gained", "correctness lost"),  # compared where checks are (None: unknown, as 0)
        (2, "more attempts", "fewer attempts"),
        (3, "more repairs", "fewer repairs"),
    ):
        if index >= min(len(r) for r in [*variant, *reference]):
            continue
        if mean(variant, index) > mean(reference, index):
            return more
        if mean(variant, index) < mean(reference, index):
            return fewer
    return "other failure stage" if {r[1] for r in variant} != {r[1] for r in reference} else "none"


def variant_decision(
    outcomes: Sequence[Outcome], reference: "Reference | tuple", repeats: int = VARIANT_REPEATS
) -> StopDecision | None:
    """A variant runs once; if it differs materially from the reference it is repeated
    up to `repeats` times (the spec's 3): a repeat that agrees with the reference makes the
    difference stochastic, repeats that all differ make it structural. Every difference says
    which way it went. Against an unstable baseline (`Reference.unstable`) one agreeing repeat
    proves little, so a variant whose first run differs from the baseline's most common outcome
    runs all 1 + `repeats` times and its outcomes are compared with every baseline outcome by an
    exact permutation test: `structural` when p <= 0.05, else `within_noise` (the baseline's own
    noise explains the difference)."""
    if not outcomes:
        return None
    if not isinstance(reference, Reference):
        reference = Reference(tuple(reference), (tuple(reference),))
    signatures = [o.signature() for o in outcomes]
    if signatures[0] == reference.signature:
        return evidence(outcomes, "not_material", "first run equivalent to the baseline")
    if reference.unstable:
        return _against_distribution(outcomes, signatures, reference, repeats)
    if len(outcomes) > 1 and signatures[-1] == reference.signature:
        return evidence(
            outcomes,
            "stochastic",
            f"repeat {len(outcomes) - 1} agreed with the baseline",
            direction=direction(signatures[:-1], [reference.signature]),
        )
    if len(outcomes) >= 1 + repeats:
        return evidence(
            outcomes,
            "structural",
            f"differed from the baseline in all {len(outcomes)} runs",
            direction=direction(signatures, [reference.signature]),
        )
    return None


def _against_distribution(
    outcomes: Sequence[Outcome], signatures: Sequence[tuple], reference: Reference, repeats: int
) -> StopDecision | None:
    base = len(reference.outcomes)
    way = direction(signatures, list(reference.outcomes))
    if len(outcomes) < 1 + repeats:
        return None
    p = exact_distribution_test(reference.outcomes, signatures)
    if significant(p, ALPHA):
        return evidence(
            outcomes,
            "structural",
            f"outcomes differ from the unstable baseline's {base} runs beyond "
            f"its noise (exact permutation test p = {p:.3g})",
            direction=way,
            p_value=p,
        )
    return evidence(
        outcomes,
        "within_noise",
        f"differs from the baseline's usual outcome, but the unstable "
        f"baseline's {base} runs explain it (exact permutation test p = {p:.3g})",
        direction=way,
        p_value=p,
    )


# -- stress -------------------------------------------------------------------------------------


def level_alpha(level: int, alpha: float = ALPHA) -> float:
    """The level at which ladder level j (>= 1) is tested against level 0: alpha / j.

    Not alpha at every level: a ladder climbs past levels that do not fail and tests the first
    that fails systematically, so a fixed-sequence argument does not apply (that argument lets
    a test run only after the one before it *rejected*). Testing every level at alpha names a
    false boundary up to 10% of the time over 10 levels; alpha / j keeps it below 3.6% for any
    ladder of 2-5 runs per level (exact, `operating.false_boundary_rate`, checked in the tests).
    """
    return alpha / level


def worse_than_base(base: Sequence[Outcome], outcomes: Sequence[Outcome]) -> float:
    """One-sided Fisher p-value that a level succeeds less often than level 0."""
    return stratified_exact_test(
        [(sum(o.success for o in base), len(base), sum(o.success for o in outcomes), len(outcomes))]
    ).p_regression


def stress_level_decision(
    outcomes: Sequence[Outcome],
    max_runs: int,
    level: int | None = None,
    base: Sequence[Outcome] | None = None,
    alpha: float = ALPHA,
    threshold: Callable[[int, float], float] = level_alpha,
) -> StopDecision | None:
    """At least 2, at most `max_runs` (<= 5) runs per level. The decision carries the one-sided
    95% upper bound on the level's success rate: 0/3 still allows 63%.

    Level 0 (the unchanged instruction) is the reference for every level: it runs all
    `max_runs`. A level above it (given level 0's outcomes, `base`) stops early after 3 runs
    only when more runs cannot change the ladder's verdict, or the verdict is reached: at 100%
    success (it can no longer fail systematically), or at >= 80% failure that is already
    significantly worse than level 0 (one-sided Fisher at `threshold(level, alpha)`). A level
    that fails systematically but is not yet shown worse runs on to `max_runs`. Without a
    level 0 to compare with, or when level 0 itself fails systematically (the verdict is then
    `fails_at_base` whatever the level does), >= 80% failure after 3 runs stops it.
    """
    n = len(outcomes)
    if n == 0:
        return None
    failures = sum(1 for o in outcomes if not o.success)
    if level == 0:
        if n < max_runs:
            return None
        return _level_end(outcomes, failures, f"level 0, the reference for every level: all {max_runs} runs")
    comparable = level is not None and level > 0 and base is not None and not _systematic(base)
    if n >= STRESS_MIN_RUNS_FOR_EARLY_STOP or n >= max_runs:
        if failures / n >= SYSTEMATIC_FAILURE_RATE:
            if not comparable or base is None or level is None:  # (comparable implies both are set)
                return evidence(outcomes, "systematic_failure", f"{failures}/{n} runs failed (>= 80%)")
            p, limit = worse_than_base(base, outcomes), threshold(level, alpha)
            if significant(p, limit):
                return evidence(
                    outcomes,
                    "systematic_failure",
                    f"{failures}/{n} runs failed (>= 80%), worse "
                    f"than level 0 ({_count(base)}): p = {p:.3g} <= {_limit(alpha, level, limit)}",
                    p_value=p,
                )
            if n >= max_runs:
                return evidence(
                    outcomes,
                    "systematic_failure",
                    f"{failures}/{n} runs failed (>= 80%), not shown "
                    f"worse than level 0 ({_count(base)}): p = {p:.3g} > {_limit(alpha, level, limit)}",
                    p_value=p,
                )
            return None  # systematic so far, not yet shown worse: more runs can tell
        if failures == 0:
            return evidence(outcomes, "systematic_success", f"all {n} runs succeeded")
    if n >= max_runs:
        return evidence(outcomes, "mixed", f"{failures}/{n} runs failed after {max_runs} runs")
    return None


def _level_end(outcomes: Sequence[Outcome], failures: int, why: str) -> StopDecision:
    n = len(outcomes)
    if failures / n >= SYSTEMATIC_FAILURE_RATE:
        return evidence(outcomes, "systematic_failure", f"{failures}/{n} runs failed (>= 80%); {why}")
    if failures == 0:
        return evidence(outcomes, "systematic_success", f"all {n} runs succeeded; {why}")
    return evidence(outcomes, "mixed", f"{failures}/{n} runs failed; {why}")


def _count(outcomes: Sequence[Outcome]) -> str:
    return f"{sum(o.success for o in outcomes)}/{len(outcomes)} succeeded"


def _limit(alpha: float, level: int, limit: float) -> str:
    return f"{alpha}/{level}" if math.isclose(limit, alpha / level) else f"{limit:.3g}"


def _systematic(outcomes: Sequence[Outcome]) -> bool:
    return bool(outcomes) and sum(1 for o in outcomes if not o.success) / len(outcomes) >= SYSTEMATIC_FAILURE_RATE


@dataclass(frozen=True)
class Boundary:
    level: int | None
    decision: StopDecision  # boundary | no_boundary | tentative | fails_at_base


def capability_boundary(
    levels: Sequence[tuple[int, Sequence[Outcome]]],
    alpha: float = ALPHA,
    threshold: Callable[[int, float], float] = level_alpha,
) -> Boundary:
    """The capability boundary of a ladder, from each level's outcomes (level 0 = the
    unchanged instruction, when it was run).

    `boundary`: the first level whose failure is systematic (>= 80%) and significantly worse
    than level 0: one-sided Fisher, level j tested at alpha/j (`level_alpha`). Exact, in
    `operating.py` and the tests: at most 3.6% false boundaries for ladders of any length and
    2-5 runs per level whose levels all share one success rate. `fails_at_base`: level 0
    itself fails systematically. `tentative`: a systematic failure that level 0 cannot be
    shown to beat (or no level 0); the reason says whether any outcome of that many runs
    could have. `no_boundary`: no level failed systematically.
    """
    by_level = dict(sorted((level, list(outcomes)) for level, outcomes in levels if outcomes))
    base = by_level.get(0)
    if base is not None and _systematic(base):
        return Boundary(
            0,
            evidence(
                base,
                "fails_at_base",
                f"level 0 (the unchanged instruction) already fails "
                f"systematically: {len(base) - sum(o.success for o in base)}/{len(base)} "
                "failed",
            ),
        )
    first: tuple[int, list[Outcome], float | None] | None = None
    for level, outcomes in by_level.items():
        if level == 0 or not _systematic(outcomes):
            continue
        if base is None:
            first = first or (level, outcomes, None)
            continue
        p, limit = worse_than_base(base, outcomes), threshold(level, alpha)
        if significant(p, limit):
            return Boundary(
                level,
                evidence(
                    outcomes,
                    "boundary",
                    f"level {level} fails systematically and worse "
                    f"than level 0 ({_count(base)}): p = {p:.3g} <= "
                    f"{_limit(alpha, level, limit)}",
                    p_value=p,
                ),
            )
        first = first or (level, outcomes, p)
    if first is not None:
        level, outcomes, first_p = first
        return Boundary(
            level,
            evidence(
                outcomes,
                "tentative",
                f"level {level} fails systematically, but "
                f"{_not_shown(base, outcomes, level, first_p, alpha, threshold)}",
                p_value=first_p,
            ),
        )
    everything = [o for outcomes in by_level.values() for o in outcomes]
    return Boundary(
        None,
        evidence(everything, "no_boundary", f"no systematic failure in {len([lv for lv in by_level if lv])} levels"),
    )


def _not_shown(
    base: Sequence[Outcome] | None,
    outcomes: Sequence[Outcome],
    level: int,
    p: float | None,
    alpha: float,
    threshold: Callable[[int, float], float],
) -> str:
    if p is None or base is None:  # (a p-value means there was a level 0)
        return "no level 0 to compare with"
    limit = threshold(level, alpha)
    why = f"not significantly worse than level 0 ({_count(base)}): p = {p:.3g} > {_limit(alpha, level, limit)}"
    runs = len(outcomes)
    best = worse_than_base(base, [Outcome(False, None, 0, 0)] * runs)
    if significant(best, limit):
        return f"{why} ({runs} failures in {runs} runs would have been)"
    return (
        f"{why}; with {runs} runs no outcome could be (smallest p = {best:.3g}): more runs per level, "
        "or a level 0 that succeeds more, would be needed"
    )
