"""Operating characteristics of the decision rules: how often each one errs, and its power.

Exact where the rule allows (stopping rules and stress boundaries, by dynamic programming
over run outcomes with two signatures), seeded Monte Carlo elsewhere (the compare gate, the
variant verdict). The tests check these against the rules themselves and the figures in
docs/concepts/statistics.md; `tests/perf/stats_figures.py` prints those tables.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeAlias

import numpy as np

from ironbench.core.outcome import Outcome
from ironbench.run.stopping import (
    AGREEING_RUNS,
    VARIANT_REPEATS,
    Reference,
    capability_boundary,
    confidence_decision,
    level_alpha,
    stress_level_decision,
    variant_decision,
)
from ironbench.stats import (
    fisher_null_law,
    min_p_adjust,
    significant,
    stratified_exact_test,
    stratified_p_regression_batch,
)

Threshold: TypeAlias = Callable[[int, float], float]  # the level a ladder tests level j at (stopping.level_alpha)
SUCCESS = Outcome(True, None, 1, 0)
FAILURE = Outcome(False, "generation", 0, 0)


@dataclass(frozen=True)
class StoppingOC:
    stable: float  # P(the rule says stable)
    stable_on_success: float
    expected_runs: float


def seed_rule_oc(p: float, max_runs: int = 10) -> StoppingOC:
    """The seed's rule ("last 3 agree", at most max_runs) when every run succeeds with
    probability p and otherwise fails the same way: exact, over (last outcome, streak)."""
    alive = {(True, 1): p, (False, 1): 1 - p}  # after run 1
    stable = on_success = expected = 0.0
    for n in range(1, max_runs + 1):
        if n > 1:
            grown: dict = {}
            for (last, streak), mass in alive.items():
                for outcome, q in ((True, p), (False, 1 - p)):
                    key = (outcome, streak + 1 if outcome == last else 1)
                    grown[key] = grown.get(key, 0.0) + mass * q
            alive = grown
        for (last, streak), mass in list(alive.items()):
            if streak >= AGREEING_RUNS:
                stable += mass
                on_success += mass if last else 0.0
                expected += n * mass
                del alive[(last, streak)]
    expected += max_runs * sum(alive.values())
    return StoppingOC(stable, on_success, expected)


def confidence_rule_oc(q: float, reproduce: float, confidence: float, max_runs: int) -> StoppingOC:
    """The confidence rule when each run gives outcome S with probability q, else F: exact
    over (runs, S count), calling the rule itself on every reachable state."""
    alive = {0: 1.0}
    stable = on_success = expected = 0.0
    for n in range(1, max_runs + 1):
        grown: dict = {}
        for k, mass in alive.items():
            grown[k + 1] = grown.get(k + 1, 0.0) + mass * q
            grown[k] = grown.get(k, 0.0) + mass * (1 - q)
        alive = {}
        for k, mass in grown.items():
            decision = confidence_decision([SUCCESS] * k + [FAILURE] * (n - k), reproduce, confidence, max_runs)
            if decision is None:
                alive[k] = mass
                continue
            expected += n * mass
            if decision.decision == "stable":
                stable += mass
                on_success += mass if k > n - k else 0.0
    return StoppingOC(stable, on_success, expected)


# -- stress boundaries --------------------------------------------------------------------------


def _runs(successes: int, n: int) -> list[Outcome]:
    return [SUCCESS] * successes + [FAILURE] * (n - successes)


@lru_cache(maxsize=4096)
def _level_law(
    runs_per_level: int,
    level: int | None = None,
    base: tuple[int, int] | None = None,
    threshold: Threshold = level_alpha,
) -> tuple[tuple[int, int, str, int], ...]:
    """Every way a level can end under stress_level_decision, given level 0's (successes, runs):
    (runs, successes, decision, how many run sequences end so). The rule sees counts only, so
    the sequences are counted over (runs, successes) states, asking the rule at every one."""
    base_runs = _runs(*base) if base is not None else None
    alive: dict[int, int] = {0: 1}
    ends: dict[tuple[int, int, str], int] = {}
    for n in range(1, runs_per_level + 1):
        grown: dict = {}
        for s, count in alive.items():
            grown[s + 1] = grown.get(s + 1, 0) + count
            grown[s] = grown.get(s, 0) + count
        alive = {}
        for s, count in grown.items():
            decision = stress_level_decision(_runs(s, n), runs_per_level, level, base_runs, threshold=threshold)
            if decision is None:
                alive[s] = count
            else:
                ends[(n, s, decision.decision)] = ends.get((n, s, decision.decision), 0) + count
    return tuple((n, s, d, count) for (n, s, d), count in sorted(ends.items()))


@lru_cache(maxsize=4096)
def _level_verdicts(
    runs_per_level: int, level: int, base: tuple[int, int], threshold: Threshold = level_alpha
) -> tuple[tuple[int, int, str, int], ...]:
    """Each way level `level` can end, with what capability_boundary makes of it next to level 0:
    boundary, tentative (systematic, not shown worse) or no_boundary."""
    return tuple(
        (
            n,
            s,
            capability_boundary([(0, _runs(*base)), (level, _runs(s, n))], threshold=threshold).decision.decision,
            count,
        )
        for n, s, _, count in _level_law(runs_per_level, level, base, threshold)
    )


def ladder_law(
    rates: Sequence[float], runs_per_level: int, stop_at_boundary: bool = True, threshold: Threshold = level_alpha
) -> dict[tuple[str, int | None], float]:
    """The exact law of a ladder's verdict, {(verdict, level): probability}, when level j's runs
    succeed with probability rates[j] (rates[0]: level 0), using the rules themselves.

    With stop_at_boundary the climb ends at the first level that fails systematically (its
    verdict: boundary or tentative); without, every level runs and the verdict is the first
    boundary, else the first systematic failure (tentative)."""
    law: dict[tuple[str, int | None], float] = {}

    def add(key: tuple[str, int | None], mass: float) -> None:
        law[key] = law.get(key, 0.0) + mass

    for n0, s0, _, count0 in _level_law(runs_per_level, 0):
        mass0 = count0 * rates[0] ** s0 * (1 - rates[0]) ** (n0 - s0)
        if capability_boundary([(0, _runs(s0, n0))]).decision.decision == "fails_at_base":
            add(("fails_at_base", 0), mass0)
            continue
        states = {None: mass0}  # the first tentative level so far (None: no systematic failure yet)
        for level, p in enumerate(rates[1:], start=1):
            ends = {"boundary": 0.0, "tentative": 0.0, "no_boundary": 0.0}
            for n, s, verdict, count in _level_verdicts(runs_per_level, level, (s0, n0), threshold):
                ends[verdict] += count * p**s * (1 - p) ** (n - s)
            grown: dict = {}
            for first, mass in states.items():
                add(("boundary", level), mass * ends["boundary"])
                if first is None and stop_at_boundary:
                    add(("tentative", level), mass * ends["tentative"])
                    grown[None] = grown.get(None, 0.0) + mass * ends["no_boundary"]
                elif first is None:
                    grown[level] = grown.get(level, 0.0) + mass * ends["tentative"]
                    grown[None] = grown.get(None, 0.0) + mass * ends["no_boundary"]
                else:
                    grown[first] = grown.get(first, 0.0) + mass * (1 - ends["boundary"])
            states = grown
        for first, mass in states.items():
            add(("no_boundary", None) if first is None else ("tentative", first), mass)
    return law


def false_boundary_rate(
    p: float,
    levels: int,
    runs_per_level: int,
    stop_at_boundary: bool = True,
    rule: str = "ironbench",
    threshold: Threshold = level_alpha,
) -> float:
    """P(a `boundary` is reported) when level 0 and every level succeed with the same
    probability p: exact. rule "seed" is the seed's rule (first systematic failure, no level 0)."""
    if rule == "seed":
        p_systematic = sum(
            count * p**s * (1 - p) ** (n - s)
            for n, s, d, count in _level_law(runs_per_level)
            if d == "systematic_failure"
        )
        return 1 - (1 - p_systematic) ** levels
    law = ladder_law([p] * (levels + 1), runs_per_level, stop_at_boundary, threshold)
    return sum(mass for (verdict, _), mass in law.items() if verdict == "boundary")


def worst_false_boundary_rate(
    levels: int, runs_per_level: int, stop_at_boundary: bool = True, threshold: Threshold = level_alpha, grid: int = 100
) -> tuple[float, float]:
    """(the largest false-boundary rate over success rates 1/grid .. 1 - 1/grid, where it is)."""
    return max(
        (false_boundary_rate(k / grid, levels, runs_per_level, stop_at_boundary, threshold=threshold), k / grid)
        for k in range(1, grid)
    )


@dataclass(frozen=True)
class BoundaryPower:
    found: float  # P(boundary named at the real boundary)
    tentative: float  # P(tentative there)
    below: float  # P(a boundary named below it: a false one)


def boundary_power(
    base_rate: float, failing_rate: float, at: int, levels: int, runs_per_level: int, stop_at_boundary: bool = True
) -> BoundaryPower:
    """A real boundary: level 0 and levels below `at` succeed with base_rate, `at` and above
    with failing_rate. Exact."""
    rates = [base_rate] * at + [failing_rate] * (levels - at + 1)
    law = ladder_law(rates, runs_per_level, stop_at_boundary)
    return BoundaryPower(
        law.get(("boundary", at), 0.0),
        law.get(("tentative", at), 0.0),
        sum(law.get(("boundary", j), 0.0) for j in range(1, at)),
    )


# -- the compare gate ---------------------------------------------------------------------------


def gate_rates(
    cases: int,
    runs: int,
    p_a: Sequence[float],
    p_b: Sequence[float],
    alpha: float = 0.05,
    sims: int = 2000,
    seed: int = 0,
) -> dict[str, float]:
    """How often each gate fails CI when every case has `runs` runs per side at the given true
    rates: the stratified exact test (`--gate overall`), the min-p adjusted per-case flags
    (`--gate cases`), and the seed's gate (overall or any unadjusted case at p < alpha)."""
    rng = np.random.default_rng(seed)
    s_a = rng.binomial(runs, p_a, size=(sims, cases))
    s_b = rng.binomial(runs, p_b, size=(sims, cases))
    overall = stratified_p_regression_batch(s_a, s_b, [runs] * cases, [runs] * cases)
    fails_overall = np.array([significant(p, alpha) for p in overall])
    fails_cases = np.zeros(sims, dtype=bool)
    fails_seed = np.zeros(sims, dtype=bool)
    for r in range(sims):
        strata = [(int(a), runs, int(b), runs) for a, b in zip(s_a[r], s_b[r], strict=True)]
        fails_cases[r], fails_seed[r] = cases_gate(strata, alpha), seed_gate(strata, alpha)
    return {
        "overall": float(fails_overall.mean()),
        "cases": float(fails_cases.mean()),
        "seed": float(fails_seed.mean()),
    }


def cases_gate(strata: Sequence[tuple[int, int, int, int]], alpha: float) -> bool:
    """`--gate cases` without margin, as compare.decide takes it (the tests hold them equal)."""
    raw = [stratified_exact_test([s]).p_regression for s in strata]
    return significant(min(min_p_adjust(raw, [fisher_null_law(*s) for s in strata])), alpha)


def seed_gate(strata: Sequence[tuple[int, int, int, int]], alpha: float) -> bool:
    """The seed's gate: the stratified test or any unadjusted case at p < alpha."""
    return stratified_exact_test(strata).p_regression < alpha or any(
        stratified_exact_test([s]).p_regression < alpha for s in strata
    )


# -- adversarial verdicts against a settled baseline -------------------------------------------


def material_variant_law(differ: float, repeats: int = VARIANT_REPEATS) -> dict[str, float]:
    """The verdicts on a variant judged against a settled baseline, whose every run differs from
    the baseline's outcome with probability `differ` (independently), repeated up to `repeats`
    times once its first run differed: `structural` only when every run differed. `differ` is
    the baseline's own noise when the variant changed nothing (the rate of calling noise
    structural), the variant's effect when it changed something (the rate of finding it)."""
    structural = differ ** (1 + repeats)
    return {"not_material": 1 - differ, "stochastic": differ - structural, "structural": structural}


# -- adversarial verdicts against an unstable baseline -----------------------------------------


def variant_verdict_rates(
    baseline_p: float,
    variant_p: float,
    baseline_runs: int = 10,
    sims: int = 2000,
    seed: int = 0,
    repeats: int = VARIANT_REPEATS,
) -> dict[str, float]:
    """How often a variant is called `structural` when runs succeed with baseline_p (baseline)
    and variant_p (variant), the baseline having been `exhausted` (unstable): by the seed's
    rule (judged against the baseline's most common outcome) and by ironbench's, a material
    variant repeated up to `repeats` times (a case's `material_repeats`)."""
    rng = np.random.default_rng(seed)
    structural = {"seed": 0, "ironbench": 0}
    for _ in range(sims):
        baseline = [SUCCESS if u < baseline_p else FAILURE for u in rng.random(baseline_runs)]
        variant = [SUCCESS if u < variant_p else FAILURE for u in rng.random(1 + repeats)]
        for name, reference in (
            ("seed", Reference.of(baseline, False).signature),
            ("ironbench", Reference.of(baseline, False)),
        ):
            decision = None
            for k in range(1, 2 + repeats):
                decision = variant_decision(variant[:k], reference, repeats)
                if decision is not None:
                    break
            assert decision is not None  # a variant's last run always decides
            structural[name] += decision.decision == "structural"
    return {name: count / sims for name, count in structural.items()}
