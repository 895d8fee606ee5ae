"""Operating characteristics of the decision rules: how often each one errs, and its power.

Exact where the rule allows (stopping rules and stress boundaries, by dynamic programming
over run outcomes with two signatures), seeded Monte Carlo elsewhere (the compare gate, the
variant verdict). The tests check these against the rules themselves and the README's
figures; `tests/perf/stats_figures.py` prints the README tables.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np

from ironbench.outcome import Outcome
from ironbench.stats import (
    fisher_null_law, min_p_adjust, significant, stratified_exact_test, stratified_p_regression_batch,
)
from ironbench.stopping import (
    AGREEING_RUNS, Reference, capability_boundary, confidence_decision, confidence_thresholds,
    stress_level_decision, variant_decision,
)

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

@lru_cache(maxsize=16)
def _level_law(runs_per_level: int) -> tuple[tuple[int, int, str, int], ...]:
    """Every way a level can end under stress_level_decision: (runs, successes, decision,
    how many run sequences end so)."""
    ends: dict = {}
    for bits in product((True, False), repeat=runs_per_level):
        outcomes = []
        for bit in bits:
            outcomes.append(SUCCESS if bit else FAILURE)
            decision = stress_level_decision(outcomes, runs_per_level)
            if decision is not None:
                break
        ends.setdefault((len(outcomes), sum(bits[:len(outcomes)]), decision.decision), set()).add(
            bits[:len(outcomes)])
    return tuple((n, s, d, len(seqs)) for (n, s, d), seqs in sorted(ends.items()))


def false_boundary_rate(p: float, levels: int, runs_per_level: int, stop_at_boundary: bool = True,
                        rule: str = "ironbench") -> float:
    """P(a `boundary` is reported) when level 0 and every level succeed with the same
    probability p: exact. rule "seed" is the old rule (first systematic failure, no level 0)."""
    law = [(n, s, d, count * p**s * (1 - p) ** (n - s)) for n, s, d, count in _level_law(runs_per_level)]
    systematic = [(n, s, q) for n, s, d, q in law if d == "systematic_failure"]
    p_systematic = sum(q for _, _, q in systematic)
    if rule == "seed":
        return 1 - (1 - p_systematic) ** levels
    total = 0.0
    for n0, s0, d0, q0 in law:
        if d0 == "systematic_failure":
            continue  # fails_at_base: no boundary is named
        base = [SUCCESS] * s0 + [FAILURE] * (n0 - s0)
        found = []
        for j in range(1, levels + 1):
            found.append(sum(q for n, s, q in systematic if capability_boundary(
                [(0, base), (j, [SUCCESS] * s + [FAILURE] * (n - s))]).decision.decision == "boundary"))
        if stop_at_boundary:  # the climb stops at the first systematic level: only it is tested
            total += q0 * sum((1 - p_systematic) ** (j - 1) * r for j, r in enumerate(found, start=1))
        else:
            total += q0 * (1 - float(np.prod([1 - r for r in found])))
    return total


# -- the compare gate ---------------------------------------------------------------------------

def gate_rates(cases: int, runs: int, p_a: Sequence[float], p_b: Sequence[float], alpha: float = 0.05,
               sims: int = 2000, seed: int = 0) -> dict[str, float]:
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
        strata = [(int(a), runs, int(b), runs) for a, b in zip(s_a[r], s_b[r])]
        fails_cases[r], fails_seed[r] = cases_gate(strata, alpha), seed_gate(strata, alpha)
    return {"overall": float(fails_overall.mean()), "cases": float(fails_cases.mean()),
            "seed": float(fails_seed.mean())}


def cases_gate(strata, alpha: float) -> bool:
    """`--gate cases` without margin, as compare.decide takes it (the tests hold them equal)."""
    raw = [stratified_exact_test([s]).p_regression for s in strata]
    return significant(min(min_p_adjust(raw, [fisher_null_law(*s) for s in strata])), alpha)


def seed_gate(strata, alpha: float) -> bool:
    """The seed's gate: the stratified test or any unadjusted case at p < alpha."""
    return stratified_exact_test(strata).p_regression < alpha or any(
        stratified_exact_test([s]).p_regression < alpha for s in strata)


# -- adversarial verdicts against an unstable baseline -----------------------------------------

def variant_verdict_rates(baseline_p: float, variant_p: float, baseline_runs: int = 10, sims: int = 2000,
                          seed: int = 0) -> dict[str, float]:
    """How often a variant is called `structural` when runs succeed with baseline_p (baseline)
    and variant_p (variant), the baseline having been `exhausted` (unstable): by the seed's
    rule (judged against the baseline's most common outcome) and by ironbench's."""
    rng = np.random.default_rng(seed)
    structural = {"seed": 0, "ironbench": 0}
    for _ in range(sims):
        baseline = [SUCCESS if u < baseline_p else FAILURE for u in rng.random(baseline_runs)]
        variant = [SUCCESS if u < variant_p else FAILURE for u in rng.random(4)]
        for name, reference in (("seed", Reference.of(baseline, False).signature),
                                ("ironbench", Reference.of(baseline, False))):
            decision = None
            for k in range(1, 5):
                decision = variant_decision(variant[:k], reference)
                if decision is not None:
                    break
            structural[name] += decision.decision == "structural"
    return {name: count / sims for name, count in structural.items()}


def confidence_thresholds_table(reproduce: float, confidence: float, max_runs: int) -> list[tuple[int, int]]:
    """(n, agreeing runs needed) where the confidence rule can first stop."""
    return [(n, k) for n, k in enumerate(confidence_thresholds(reproduce, confidence, max_runs), start=1) if k <= n]
