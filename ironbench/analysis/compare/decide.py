"""Run comparison: did B regress against A? One primary test gates; every figure has its interval.

The gate (exit 1) is one test: the exact conditional test of success rates stratified by
case, one-sided, at alpha (`--gate overall`), or the per-case Fisher tests after
Westfall-Young min-p adjustment (`--gate cases`). Everything else (per-case flags under the
overall gate, outcome-distribution shifts, timeout and error rates) is reported; with
`--fail-on change` the success test (two-sided), the outcome-distribution (failure stage)
and attempts shifts and
the timeout and harness-error rates form one family, Holm-adjusted, and any of them fails.
"""

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ironbench.analysis.compare.comparison import (
    POWER,
    CaseComparison,
    Comparison,
    Evidence,
    Gating,
    Key,
    Overall,
    Shift,
    Side,
)
from ironbench.analysis.compare.prose import pp, reason
from ironbench.core.errors import IronbenchError
from ironbench.core.kinds import CaseVerdict, FailOn, Gate, Verdict
from ironbench.core.labels import case_label, natural_key
from ironbench.stats import (
    Z95,
    ExactTest,
    NullLaw,
    fisher_null_law,
    holm_adjust,
    min_detectable_drop,
    min_p_adjust,
    newcombe_difference,
    significant,
    smallest_adjusted_ps,
    stratified_difference,
    stratified_exact_test,
    stratified_min_detectable_drop,
    stratified_permutation_tests,
    stratified_power_method,
)

Strata = list[tuple[int, int, int, int]]


class CannotCompare(IronbenchError):
    """The two runs hold no evidence that can be compared."""


def z_quantile(q: float) -> float:
    """The standard normal quantile, by bisection on erf (exact to 1e-12)."""
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * math.erfc(-middle / math.sqrt(2)) < q else (low, middle)
    return (low + high) / 2


def _two_sided_rate(strata) -> float:
    return stratified_exact_test(strata).p_two_sided


GATED_BY_DEFAULT = Gating()  # the overall test, failing on a regression, at alpha 0.05


def decide(
    evidence: Evidence, gating: Gating = GATED_BY_DEFAULT, power: bool = True, secondary: bool = True
) -> Comparison:
    """The comparison of two runs' evidence, per (case, variant), as `gating` says: pure.
    `power` and `secondary` (the shift tests) can be skipped where only the gate matters
    (simulations)."""
    alpha, gate, fail_on, margin = gating.alpha, gating.gate, gating.fail_on, gating.margin
    common = evidence.common
    if not common:
        raise CannotCompare(
            f"cannot compare {evidence.run_a} and {evidence.run_b}: no case in common with evidence "
            f"(A: {_names(evidence.a)}; B: {_names(evidence.b)})"
        )
    tables = _Tables.of(common, evidence)
    cases, warnings = _compared_cases(tables, evidence, alpha, margin, power)
    compared = set(common)
    cases += _unmatched_cases([k for k in evidence.keys if k not in compared], evidence)
    cases.sort(key=lambda c: (natural_key(c.case_id), natural_key(c.variant_id)))
    overall = _overall(tables, alpha, power)
    if power and overall.mde is None:
        warnings.append(f"the overall test cannot detect even a drop to 0% with {POWER:.0%} power at these run counts")
    shifts = _shifts(evidence, common) if evidence.unit == "run" and secondary else []

    if gate == "overall":
        worse = significant(overall.p_regression, alpha)
        regression = worse and (margin is None or overall.delta_upper < -margin)
    else:
        worse = any(c.p_adjusted is not None and significant(c.p_adjusted, alpha) for c in cases)
        regression = any(c.flagged for c in cases)
    family = [("success rate", _success_change_p(tables.strata, tables.tests, overall, gate))]
    family += [(s.name, s.p_value) for s in shifts if s.gating]
    family_adjusted = {
        n: float(p) for n, p in zip([n for n, _ in family], holm_adjust([p for _, p in family]), strict=True)
    }
    shifts = [
        replace(s, effect=float(s.effect), p_value=float(s.p_value), p_adjusted=family_adjusted.get(s.name))
        for s in shifts
    ]
    changed = [name for name, p in family_adjusted.items() if significant(p, alpha)]
    if fail_on == "regression":
        failed = regression
        verdict: Verdict = (
            "regression"
            if regression
            else "within margin"
            if worse
            else "improvement"
            if significant(overall.p_improvement, alpha)
            else "no significant change"
        )
    else:  # one family, either direction: its verdicts are only "change" or not
        failed = bool(changed)
        verdict = "change" if changed else "no significant change"
    text = reason(
        verdict,
        failed,
        overall,
        gating,
        flagged=[case_label(c.case_id, c.variant_id) for c in cases if c.flagged],
        changed=[(name, family_adjusted[name]) for name in changed],
        unit=evidence.unit,
    )
    if fail_on == "change" and not failed and worse:
        text = (
            f"B's success is lower by the one-sided test (p = {overall.p_regression:.3g}), but not as a "
            f"change within the family of {len(family)} tests (Holm). " + text
        )
    return Comparison(
        evidence.run_a, evidence.run_b, alpha, Gate(gate), FailOn(fail_on), margin, cases, overall, shifts, verdict,
        failed, text, warnings, evidence.unit,
    )  # fmt: skip


@dataclass(frozen=True)
class _Tables:
    """The cases both runs hold evidence for: one 2x2 table each, its exact test, the law of
    its p-value under the null, and the p-values adjusted for multiplicity (Westfall-Young)."""

    keys: list[tuple[str, str]]
    strata: Strata
    laws: list[NullLaw]
    tests: list[ExactTest]
    adjusted: list[float]

    @property
    def sizes(self) -> list[tuple[int, int]]:
        return [(s[1], s[3]) for s in self.strata]

    @classmethod
    def of(cls, common: list[Key], evidence: Evidence) -> "_Tables":
        a, b = evidence.a, evidence.b
        strata = [(a[k].successes, a[k].n, b[k].successes, b[k].n) for k in common]
        laws = [fisher_null_law(*s) for s in strata]
        tests = [stratified_exact_test([s]) for s in strata]
        return cls(common, strata, laws, tests, min_p_adjust([t.p_regression for t in tests], laws))


def _compared_cases(
    tables: _Tables, evidence: Evidence, alpha: float, margin: float | None, power: bool
) -> tuple[list[CaseComparison], list[str]]:
    """Each case in both runs: B − A with its interval, its test, whether the per-case gate
    flags it (and could at all), and the smallest drop it would find."""
    per_case_level = alpha / len(tables.keys)
    z_case = z_quantile(1 - per_case_level) if margin is not None else Z95
    smallest = smallest_adjusted_ps(tables.sizes, tables.laws)
    cases, warnings = [], []
    for index, (key, stratum, test) in enumerate(zip(tables.keys, tables.strata, tables.tests, strict=True)):
        a, b = evidence.a[key], evidence.b[key]
        interval = newcombe_difference(*stratum)
        flagged = significant(tables.adjusted[index], alpha)
        if margin is not None:
            flagged = flagged and newcombe_difference(*stratum, z=z_case).high < -margin
        reachable = significant(smallest[index], alpha)
        if not reachable:
            warnings.append(
                f"{case_label(*key)} cannot be flagged on its own with {a.n} vs {b.n} runs "
                f"(its smallest possible adjusted p is {smallest[index]:.2g} > alpha {alpha})"
            )
        case_verdict: CaseVerdict = (
            "regression"
            if flagged
            else "improvement"
            if significant(test.p_improvement, alpha)
            else "no significant change"
        )
        mde = min_detectable_drop(a.n, b.n, a.successes / a.n, per_case_level, POWER) if power else None
        cases.append(
            CaseComparison(
                case_id=key[0],
                variant_id=key[1],
                a=Side.of(a),
                b=Side.of(b),
                delta=float(interval.delta),
                delta_ci_95=(float(interval.low), float(interval.high)),
                p_regression=float(test.p_regression),
                p_improvement=float(test.p_improvement),
                p_adjusted=float(tables.adjusted[index]),
                flagged=bool(flagged),
                mde=None if mde is None else float(mde),
                can_be_flagged=bool(reachable),
                verdict=case_verdict,
            )
        )
    return cases, warnings


def _unmatched_cases(keys: list[Key], evidence: Evidence) -> list[CaseComparison]:
    """Cases only one run holds evidence for: shown, compared with nothing."""
    cases = []
    for key in keys:
        only_a, only_b = evidence.a.get(key), evidence.b.get(key)
        cases.append(
            CaseComparison(
                key[0],
                key[1],
                Side.of(only_a) if only_a else None,
                Side.of(only_b) if only_b else None,
                verdict="only in B" if only_a is None or not only_a.n else "only in A",
            )
        )
    return cases


def _overall(tables: _Tables, alpha: float, power: bool) -> Overall:
    """Across cases: the exact test stratified by case, the Mantel-Haenszel difference with
    its interval and one-sided bound, and the smallest uniform drop the test would find."""
    strata = tables.strata
    test = stratified_exact_test(strata)
    difference = stratified_difference(strata)
    upper = stratified_difference(strata, z=z_quantile(1 - alpha)).high
    mde = stratified_min_detectable_drop(tables.sizes, [s[0] / s[1] for s in strata], alpha, POWER) if power else None
    return Overall(
        float(difference.delta),
        (float(difference.low), float(difference.high)),
        float(upper),
        float(test.p_regression),
        float(test.p_improvement),
        test.informative_strata,
        len(tables.keys),
        None if mde is None else float(mde),
        stratified_power_method(tables.sizes) if power else "",
    )


def _success_change_p(strata: Strata, tests: Sequence[ExactTest], overall: Overall, gate: str) -> float:
    if gate == "overall":  # the overall test's two-sided p (ExactTest.p_two_sided)
        return min(1.0, 2 * min(overall.p_regression, overall.p_improvement))
    two_sided = [fisher_null_law(*s, two_sided=True) for s in strata]
    return min(min_p_adjust([t.p_two_sided for t in tests], two_sided))


def _shifts(evidence: Evidence, common: list[Key]) -> list[Shift]:
    """Failure stage and attempts (permutation tests within cases), timeout, harness-error and
    infrastructure-error rates (exact tests stratified by case)."""
    a_runs, b_runs = [evidence.a[k] for k in common], [evidence.b[k] for k in common]
    shifts = []
    # one draw of permutations serves both tests: a run's outcome and attempts go together
    (effect, p), (attempts_effect, attempts_p) = stratified_permutation_tests(
        [
            ([(a.outcomes, b.outcomes) for a, b in zip(a_runs, b_runs, strict=True)], "categories"),
            ([(a.attempts, b.attempts) for a, b in zip(a_runs, b_runs, strict=True)], "mean"),
        ]
    )
    pooled = lambda sides: ", ".join(
        f"{k} {v}" for k, v in sorted(sum((Counter(s.outcomes) for s in sides), Counter()).items())
    )
    shifts.append(
        Shift(
            "outcome distribution",
            pooled(a_runs),
            pooled(b_runs),
            effect,
            f"outcome distribution moved by {effect:.0%} (total variation)" if effect else "none",
            p,
            True,
        )
    )
    effect, p = attempts_effect, attempts_p
    mean = lambda sides: sum(sum(s.attempts) for s in sides) / max(1, sum(len(s.attempts) for s in sides))
    shifts.append(
        Shift(
            "attempts",
            f"{mean(a_runs):.2f}",
            f"{mean(b_runs):.2f}",
            effect,
            "more attempts" if effect > 0 else "fewer attempts" if effect < 0 else "none",
            p,
            True,
        )
    )
    for name, count, total, gating in (
        ("timeouts", lambda s: s.timeouts, lambda s: s.n, True),
        ("harness errors", lambda s: s.harness_errors, lambda s: s.n + s.harness_errors, True),
        # the backend's failures, not the target's: reported, never a reason to fail
        ("infrastructure errors", lambda s: s.infra_errors, lambda s: s.n + s.harness_errors + s.infra_errors, False),
    ):
        strata = [(count(a), total(a), count(b), total(b)) for a, b in zip(a_runs, b_runs, strict=True)]
        ca, na = sum(s[0] for s in strata), sum(s[1] for s in strata)
        cb, nb = sum(s[2] for s in strata), sum(s[3] for s in strata)
        effect = stratified_difference(strata).delta
        shifts.append(
            Shift(
                name,
                f"{ca}/{na}",
                f"{cb}/{nb}",
                effect,
                "more" if effect > 0 else "fewer" if effect < 0 else "none",
                float(_two_sided_rate(strata)),
                gating,
            )
        )
    return shifts


def _names(keys: Iterable[Key]) -> str:
    ordered = sorted(keys, key=lambda k: (natural_key(k[0]), natural_key(k[1])))
    return ", ".join(case_label(*k) for k in ordered) or "none"


def engine_sentences(evidence: Evidence, alpha: float) -> list[str]:
    """Per engine, across its scenarios: did B's runs assert the falsehood more often than A's?"""
    a, b = evidence.a, evidence.b
    out = []
    for engine in sorted({k[0] for k in a} & {k[0] for k in b}):
        strata = [(a[k].successes, a[k].n, b[k].successes, b[k].n) for k in sorted(a) if k[0] == engine and k in b]
        if not strata:
            continue
        test = stratified_exact_test(strata)
        interval = stratified_difference(strata)
        verdict = (
            "cannot be told apart"
            if not significant(test.p_two_sided, alpha)
            else "violated more often in B (worse)"
            if test.p_regression < test.p_improvement
            else "violated less often in B (better)"
        )
        out.append(
            f"{engine}: {verdict}: violation rate B − A {pp(-interval.delta)} "
            f"(95% CI {pp(-interval.high)} to {pp(-interval.low)}), p = {test.p_two_sided:.3g} "
            "(two-sided, exact, stratified by scenario)"
        )
    return out
