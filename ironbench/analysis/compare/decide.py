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
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.console.numbers import number, percent, points
from ironbench.console.printable import printable
from ironbench.analysis.query import connect
from ironbench.console.tables import render, wrap
from ironbench.stats.exact import (
    fisher_null_law, holm_adjust, min_detectable_drop, min_p_adjust, newcombe_difference,
    percentile, significant, smallest_adjusted_p, stratified_difference, stratified_exact_test,
    stratified_min_detectable_drop, stratified_permutation_test, wilson_interval, Z95,
)

POWER = 0.8
GATES = ("overall", "cases")
FAIL_ON = ("regression", "change")


class CannotCompare(IronbenchError):
    """The two runs hold no evidence that can be compared."""


@dataclass(frozen=True)
class Runs:
    """One side of one case: every evidence run's outcome label and attempts, in run order,
    plus the runs that are not evidence about the target."""

    outcomes: tuple[str, ...]  # "success", a failure stage, or "timeout"
    attempts: tuple[int, ...] = ()
    repairs: tuple[int, ...] = ()
    durations_ms: tuple[int, ...] = ()
    harness_errors: int = 0
    infra_errors: int = 0
    unresolved_infra: tuple[str, ...] = ()  # run slots with only infrastructure-errored attempts

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def successes(self) -> int:
        return self.outcomes.count("success")

    @property
    def timeouts(self) -> int:
        return self.outcomes.count("timeout")


@dataclass(frozen=True)
class Side:
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    mean_attempts: float
    mean_repairs: float
    p95_duration_ms: float
    timeouts: int = 0
    harness_errors: int = 0
    infra_errors: int = 0
    outcomes: dict = field(default_factory=dict)

    @classmethod
    def of(cls, runs: Runs) -> "Side":
        low, high = wilson_interval(runs.successes, runs.n)
        mean = (lambda xs: sum(xs) / len(xs) if xs else 0.0)
        return cls(runs.n, runs.successes, runs.successes / runs.n if runs.n else 0.0, low, high,
                   mean(runs.attempts), mean(runs.repairs), percentile(list(runs.durations_ms), 95),
                   runs.timeouts, runs.harness_errors, runs.infra_errors, dict(sorted(Counter(runs.outcomes).items())))


@dataclass(frozen=True)
class CaseComparison:
    case_id: str
    variant_id: str
    a: Side | None
    b: Side | None
    delta: float | None = None
    delta_ci_95: tuple[float, float] | None = None
    p_regression: float | None = None
    p_improvement: float | None = None
    p_adjusted: float | None = None  # regression, Westfall-Young min-p over the compared cases
    flagged: bool = False
    mde: float | None = None  # smallest drop found with 80% power at alpha / cases
    can_be_flagged: bool = True
    verdict: str = ""  # regression | improvement | no significant change | only in A | only in B


@dataclass(frozen=True)
class Overall:
    delta: float
    delta_ci_95: tuple[float, float]
    delta_upper: float  # one-sided (1 − alpha) upper bound: what --margin reads
    p_regression: float
    p_improvement: float
    informative_cases: int
    cases: int
    mde: float | None  # smallest uniform drop the gate finds with 80% power


@dataclass(frozen=True)
class Shift:
    """A secondary test: another way B may differ from A."""

    name: str
    a: str
    b: str
    effect: float
    direction: str
    p_value: float
    gating: bool  # a member of the --fail-on change family
    p_adjusted: float | None = None


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    alpha: float
    gate: str
    fail_on: str
    margin: float | None
    cases: list[CaseComparison]
    overall: Overall
    shifts: list[Shift]
    verdict: str  # regression | within margin | change | improvement | no significant change
    failed: bool
    reason: str
    warnings: list[str]
    unit: str = "run"  # gauntlet: "conversation"
    engines: list[str] = field(default_factory=list)  # gauntlet: one sentence per engine

    @property
    def regressed(self) -> bool:
        return self.verdict == "regression"

    @property
    def overall_p_regression(self) -> float:
        return self.overall.p_regression

    def to_dict(self) -> dict:
        return asdict(self)


def z_quantile(q: float) -> float:
    """The standard normal quantile, by bisection on erf (exact to 1e-12)."""
    low, high = -40.0, 40.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if 0.5 * math.erfc(-middle / math.sqrt(2)) < q else (low, middle)
    return (low + high) / 2


def _two_sided_rate(strata) -> float:
    return stratified_exact_test(strata).p_two_sided


def decide(sides_a: dict[tuple[str, str], Runs], sides_b: dict[tuple[str, str], Runs], alpha: float = 0.05,
           gate: str = "overall", fail_on: str = "regression", margin: float | None = None,
           run_a: str = "A", run_b: str = "B", power: bool = True, unit: str = "run",
           secondary: bool = True) -> Comparison:
    """The comparison of two runs' evidence, per (case, variant): pure. `power` and
    `secondary` (the shift tests) can be skipped where only the gate matters (simulations)."""
    keys = sorted(set(sides_a) | set(sides_b))
    common = [k for k in keys if k in sides_a and k in sides_b and sides_a[k].n and sides_b[k].n]
    if not common:
        raise CannotCompare(f"cannot compare {run_a} and {run_b}: no case in common with evidence "
                            f"(A: {_names(sides_a)}; B: {_names(sides_b)})")
    strata = [(sides_a[k].successes, sides_a[k].n, sides_b[k].successes, sides_b[k].n) for k in common]
    sizes = [(s[1], s[3]) for s in strata]
    laws = [fisher_null_law(*s) for s in strata]
    tests = [stratified_exact_test([s]) for s in strata]
    adjusted = min_p_adjust([t.p_regression for t in tests], laws)
    per_case_level = alpha / len(common)
    z_case = z_quantile(1 - per_case_level) if margin is not None else Z95

    cases, warnings = [], []
    for index, (key, stratum, test) in enumerate(zip(common, strata, tests)):
        a, b = sides_a[key], sides_b[key]
        interval = newcombe_difference(*stratum)
        flagged = significant(adjusted[index], alpha)
        if margin is not None:
            flagged = flagged and newcombe_difference(*stratum, z=z_case).high < -margin
        reachable = significant(smallest_adjusted_p(index, sizes, laws), alpha)
        if not reachable:
            warnings.append(f"{_label(key)} cannot be flagged on its own with {a.n} vs {b.n} runs "
                            f"(its smallest possible adjusted p is {smallest_adjusted_p(index, sizes, laws):.2g} "
                            f"> alpha {alpha})")
        verdict = ("regression" if flagged else "improvement" if significant(test.p_improvement, alpha)
                   else "no significant change")
        mde = min_detectable_drop(a.n, b.n, a.successes / a.n, per_case_level, POWER) if power else None
        cases.append(CaseComparison(key[0], key[1], Side.of(a), Side.of(b), float(interval.delta),
                                    (float(interval.low), float(interval.high)), float(test.p_regression),
                                    float(test.p_improvement), float(adjusted[index]), bool(flagged),
                                    None if mde is None else float(mde), bool(reachable), verdict))
    for key in keys:
        if key not in common:
            a, b = sides_a.get(key), sides_b.get(key)
            cases.append(CaseComparison(key[0], key[1], Side.of(a) if a else None, Side.of(b) if b else None,
                                        verdict="only in B" if a is None or not a.n else "only in A"))
    cases.sort(key=lambda c: (c.case_id, c.variant_id))

    overall_test = stratified_exact_test(strata)
    difference = stratified_difference(strata)
    upper = stratified_difference(strata, z=z_quantile(1 - alpha)).high
    mde = (stratified_min_detectable_drop(sizes, [s[0] / s[1] for s in strata], alpha, POWER)
           if power else None)
    overall = Overall(float(difference.delta), (float(difference.low), float(difference.high)), float(upper),
                      float(overall_test.p_regression), float(overall_test.p_improvement),
                      overall_test.informative_strata, len(common), None if mde is None else float(mde))
    if power and mde is None:
        warnings.append(f"the overall test cannot detect even a drop to 0% with {POWER:.0%} power at these run counts")

    shifts = _shifts(sides_a, sides_b, common) if unit == "run" and secondary else []
    if gate == "overall":
        worse = significant(overall.p_regression, alpha)
        regression = worse and (margin is None or upper < -margin)
    else:
        worse = any(c.p_adjusted is not None and significant(c.p_adjusted, alpha) for c in cases)
        regression = any(c.flagged for c in cases)
    family = [("success rate", _success_change_p(strata, laws, tests, gate))]
    family += [(s.name, s.p_value) for s in shifts if s.gating]
    family_adjusted = {n: float(p) for n, p in zip([n for n, _ in family], holm_adjust([p for _, p in family]))}
    shifts = [Shift(**{**asdict(s), "effect": float(s.effect), "p_value": float(s.p_value),
                       "p_adjusted": family_adjusted.get(s.name)}) for s in shifts]
    changed = [name for name, p in family_adjusted.items() if significant(p, alpha)]
    improvement = significant(overall.p_improvement, alpha)
    if fail_on == "regression":
        failed = regression
        verdict = ("regression" if regression else "within margin" if worse
                   else "improvement" if improvement else "no significant change")
    else:  # one family, either direction: its verdicts are only "change" or not
        failed = bool(changed)
        verdict = "change" if changed else "no significant change"
    reason = _reason(verdict, failed, overall, cases, gate, fail_on, margin, alpha, changed, family_adjusted, unit)
    if fail_on == "change" and not failed and worse:
        reason = (f"B's success is lower by the one-sided test (p = {overall.p_regression:.3g}), but not as a "
                  f"change within the family of {len(family)} tests (Holm). " + reason)
    return Comparison(run_a, run_b, alpha, gate, fail_on, margin, cases, overall, shifts, verdict, failed, reason,
                      warnings, unit)


def _success_change_p(strata, laws, tests, gate: str) -> float:
    if gate == "overall":
        return stratified_exact_test(strata).p_two_sided
    two_sided = [fisher_null_law(*s, two_sided=True) for s in strata]
    return min(min_p_adjust([t.p_two_sided for t in tests], two_sided))


def _shifts(sides_a, sides_b, common) -> list[Shift]:
    """Failure stage and attempts (permutation tests within cases), timeout, harness-error and
    infrastructure-error rates (exact tests stratified by case)."""
    a_runs, b_runs = [sides_a[k] for k in common], [sides_b[k] for k in common]
    shifts = []
    effect, p = stratified_permutation_test([(a.outcomes, b.outcomes) for a, b in zip(a_runs, b_runs)],
                                            "categories")
    pooled = (lambda sides: ", ".join(f"{k} {v}" for k, v in sorted(
        sum((Counter(s.outcomes) for s in sides), Counter()).items())))
    shifts.append(Shift("outcome distribution", pooled(a_runs), pooled(b_runs), effect,
                        f"outcome distribution moved by {effect:.0%} (total variation)" if effect else "none", p, True))
    effect, p = stratified_permutation_test([(a.attempts, b.attempts) for a, b in zip(a_runs, b_runs)], "mean")
    mean = (lambda sides: sum(sum(s.attempts) for s in sides) / max(1, sum(len(s.attempts) for s in sides)))
    shifts.append(Shift("attempts", f"{mean(a_runs):.2f}", f"{mean(b_runs):.2f}", effect,
                        "more attempts" if effect > 0 else "fewer attempts" if effect < 0 else "none", p, True))
    for name, count, total, gating in (
            ("timeouts", lambda s: s.timeouts, lambda s: s.n, True),
            ("harness errors", lambda s: s.harness_errors, lambda s: s.n + s.harness_errors, True),
            # the backend's failures, not the target's: reported, never a reason to fail
            ("infrastructure errors", lambda s: s.infra_errors,
             lambda s: s.n + s.harness_errors + s.infra_errors, False)):
        strata = [(count(a), total(a), count(b), total(b)) for a, b in zip(a_runs, b_runs)]
        ca, na = sum(s[0] for s in strata), sum(s[1] for s in strata)
        cb, nb = sum(s[2] for s in strata), sum(s[3] for s in strata)
        effect = stratified_difference(strata).delta
        shifts.append(Shift(name, f"{ca}/{na}", f"{cb}/{nb}", effect,
                            "more" if effect > 0 else "fewer" if effect < 0 else "none",
                            float(_two_sided_rate(strata)), gating))
    return shifts


def _names(sides) -> str:
    return ", ".join(_label(k) for k in sorted(sides)) or "none"


def _label(key: tuple[str, str]) -> str:
    return key[0] if key[1] == "base" else f"{key[0]}/{key[1]}"


def _pp(x: float) -> str:
    return points(x, 1)


def _reason(verdict, failed, overall: Overall, cases, gate, fail_on, margin, alpha, changed, adjusted, unit) -> str:
    what = "clean conversations" if unit == "conversation" else "success rate"
    interval = (f"Δ {what} B − A = {_pp(overall.delta)} (95% CI {_pp(overall.delta_ci_95[0])} to "
                f"{_pp(overall.delta_ci_95[1])}, {overall.cases} cases)")
    if verdict == "regression" and gate == "cases":
        names = ", ".join(_label((c.case_id, c.variant_id)) for c in cases if c.flagged)
        text = (f"B regressed in {names}: adjusted p <= alpha {alpha} (one-sided Fisher per case, "
                f"Westfall-Young min-p over {overall.cases} cases)")
    elif verdict == "regression":
        text = (f"B's {what} is lower across cases: {interval}; p = {overall.p_regression:.3g} <= alpha {alpha} "
                "(exact test stratified by case, one-sided)")
    elif verdict == "within margin":
        text = (f"B is worse, but not by more than the margin: {interval}; p(regression) = "
                f"{overall.p_regression:.3g} <= alpha {alpha}")
    elif verdict == "change":
        parts = ", ".join(f"{n} (Holm-adjusted p = {adjusted[n]:.3g})" for n in changed)
        text = f"B's runs differ from A's: {parts}; {interval}"
    else:
        mde = (f"these runs would find a uniform drop of {overall.mde:.0%} with {POWER:.0%} power; a smaller one "
               "may go unseen" if overall.mde is not None else "these runs cannot find any drop reliably")
        lead = "B improved" if verdict == "improvement" else "No significant regression"
        text = f"{lead}: {interval}, p(regression) = {overall.p_regression:.3g}; {mde}"
    if margin is not None and gate == "overall":
        text += (f". Margin {margin:.0%}: the one-sided {1 - alpha:.0%} upper bound of B − A is "
                 f"{_pp(overall.delta_upper)}, {'below' if overall.delta_upper < -margin else 'not below'} "
                 f"−{margin:.0%}")
    gate_text = f"gate {gate}, fail on {fail_on}"
    return f"{text}. {'FAIL' if failed else 'pass'} ({gate_text})."


# -- reading the store ------------------------------------------------------------------------

_INVOCATIONS = """
SELECT case_id, variant_id, run_index, success::BOOLEAN, failure_stage, attempts, repairs_triggered, duration_ms,
       timed_out::BOOLEAN, harness_error, infra_error
FROM store.invocations WHERE run_id = ? ORDER BY case_id, variant_id, run_index, seq
"""

_CONVERSATIONS = """
SELECT engine, scenario, conversation, bool_or(violated::BOOLEAN)
FROM store.turn_scores WHERE run_id = ? AND scorer = ?
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
"""


def runs_from_rows(rows) -> dict[tuple[str, str], Runs]:
    """Invocation rows → evidence per case. Infrastructure-errored attempts are not evidence;
    a run slot holding nothing else is unresolved (resume re-runs it)."""
    slots: dict[tuple[str, str], dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        slots[(row[0], row[1])][row[2]].append(row)
    out = {}
    for key, by_index in slots.items():
        outcomes, attempts, repairs, durations, harness, infra, unresolved = [], [], [], [], 0, 0, []
        for index in sorted(by_index):
            evidence = None
            for _, _, _, success, stage, n_attempts, n_repairs, duration, timed_out, harness_error, infra_error \
                    in by_index[index]:
                if infra_error is not None:
                    infra += 1
                elif harness_error is not None:
                    harness += 1
                else:
                    evidence = ("success" if success else "timeout" if timed_out else stage or "unknown",
                                n_attempts, n_repairs, duration)
            if evidence is not None:
                outcomes.append(evidence[0])
                attempts.append(evidence[1])
                repairs.append(evidence[2])
                durations.append(evidence[3])
            elif any(r[10] is not None for r in by_index[index]):
                unresolved.append(f"{_label(key)} run {index}: {by_index[index][-1][10]}")
        out[key] = Runs(tuple(outcomes), tuple(attempts), tuple(repairs), tuple(durations), harness, infra,
                        tuple(unresolved))
    return out


def compare_runs(store_path: Path, run_a: str, run_b: str, alpha: float = 0.05, scorer: str = "negation_aware",
                 gate: str = "overall", fail_on: str = "regression", margin: float | None = None) -> Comparison:
    """For gauntlet runs, a case is (engine, scenario), the unit a conversation, and a success
    a conversation in which the engine never asserted the forbidden phrase by `scorer`."""
    if gate not in GATES or fail_on not in FAIL_ON:
        raise IronbenchError(f"--gate must be one of {', '.join(GATES)} and --fail-on one of {', '.join(FAIL_ON)}")
    if margin is not None and not 0 <= margin < 1:
        raise IronbenchError(f"--margin {margin}: must be at least 0 and below 1 (a share, e.g. 0.05)")
    con = connect(store_path)
    try:
        modes = []
        for run_id in (run_a, run_b):
            row = con.execute("SELECT mode FROM store.runs WHERE run_id = ?", [run_id]).fetchone()
            if row is None:
                raise RunNotFound(f"run {run_id!r} not found in {store_path}")
            modes.append(row[0])
        if (modes[0] == "gauntlet") != (modes[1] == "gauntlet"):
            raise CannotCompare(f"cannot compare a gauntlet run with a {'non-' if modes[0] == 'gauntlet' else ''}"
                                "gauntlet run")
        if modes[0] == "gauntlet":
            sides = [_conversations(con.execute(_CONVERSATIONS, [r, scorer]).fetchall()) for r in (run_a, run_b)]
        else:
            sides = [runs_from_rows(con.execute(_INVOCATIONS, [r]).fetchall()) for r in (run_a, run_b)]
    finally:
        con.close()
    for run_id, side in zip((run_a, run_b), sides):
        unresolved = [u for runs in side.values() for u in runs.unresolved_infra]
        if unresolved:
            raise CannotCompare(f"cannot compare: {run_id} has {len(unresolved)} run(s) with unresolved "
                                f"infrastructure errors (first: {unresolved[0]}); `ironbench resume {run_id}` "
                                "re-runs them")
    unit = "conversation" if modes[0] == "gauntlet" else "run"
    comparison = decide(*sides, alpha, gate, fail_on, margin, run_a, run_b, unit=unit)
    if unit == "conversation":
        comparison = Comparison(**{**comparison.__dict__, "engines": _engine_sentences(*sides, alpha)})
    return comparison


def _conversations(rows) -> dict[tuple[str, str], Runs]:
    grouped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for engine, scenario, _, violated in rows:
        grouped[(engine, scenario)].append("violated" if violated else "success")
    return {key: Runs(tuple(v)) for key, v in grouped.items()}


def _engine_sentences(sides_a, sides_b, alpha: float) -> list[str]:
    """Per engine, across its scenarios: did B's runs assert the falsehood more often than A's?"""
    out = []
    for engine in sorted({k[0] for k in sides_a} & {k[0] for k in sides_b}):
        strata = [(sides_a[k].successes, sides_a[k].n, sides_b[k].successes, sides_b[k].n)
                  for k in sorted(sides_a) if k[0] == engine and k in sides_b]
        if not strata:
            continue
        test = stratified_exact_test(strata)
        interval = stratified_difference(strata)
        verdict = ("cannot be told apart" if not significant(test.p_two_sided, alpha)
                   else "violated more often in B (worse)" if test.p_regression < test.p_improvement
                   else "violated less often in B (better)")
        out.append(f"{engine}: {verdict}: violation rate B − A {_pp(-interval.delta)} "
                   f"(95% CI {_pp(-interval.high)} to {_pp(-interval.low)}), p = {test.p_two_sided:.3g} "
                   "(two-sided, exact, stratified by scenario)")
    return out


# -- the console table ---------------------------------------------------------------------

def _mde(c: CaseComparison) -> str:
    """"never": even a drop to 0% is found less than 80% of the time at these run counts."""
    if c.mde is not None:
        return percent(c.mde)
    return "-" if c.a is None or c.b is None or not c.a.successes else "never"


def format_comparison(comparison: Comparison, width: int | None = None) -> str:
    """The console table, one row per compared case, then the overall figures and the verdict;
    fitted to `width` when given (the case column repeats when the table continues)."""
    def rate(side: Side | None) -> str:
        if side is None:
            return "-"
        return f"{side.successes}/{side.n} {percent(side.success_rate)}"

    def shift(a: Side | None, b: Side | None, name: str, fmt: str) -> str:
        if a is None or b is None:
            return "-"
        return f"{number(getattr(a, name), fmt)}→{number(getattr(b, name), fmt)}"

    def p(x: float | None) -> str:
        return "-" if x is None else number(x, ".3g")

    header = ["case", "A", "B", "Δ B−A [95% CI]", "p(regr)", "p adj", "MDE", "attempts", "p95 ms", "verdict"]
    rows = []
    for c in comparison.cases:
        delta = ("-" if c.delta is None else
                 f"{points(c.delta, unit='')} [{points(c.delta_ci_95[0], unit='')},"
                 f"{points(c.delta_ci_95[1], unit='')}] pp")
        rows.append([
            printable(_label((c.case_id, c.variant_id))), rate(c.a), rate(c.b), delta, p(c.p_regression),
            p(c.p_adjusted), _mde(c),
            shift(c.a, c.b, "mean_attempts", ".2f"), shift(c.a, c.b, "p95_duration_ms", ".0f"),
            ("REGRESSION" if c.flagged else c.verdict) + ("" if c.can_be_flagged else " (cannot flag)"),
        ])
    unit = "conversations without a violation" if comparison.unit == "conversation" else "successful runs"
    lines = [wrap(f"compare {comparison.run_a} (A) → {comparison.run_b} (B), alpha {comparison.alpha}, "
                  f"gate {comparison.gate}, fail on {comparison.fail_on}"
                  + (f", margin {percent(comparison.margin)}" if comparison.margin is not None else "")
                  + f"; A/B = {unit}", width)]
    lines += render(header, rows, width, keys=1, atomic=[False] + [True] * 8 + [False])
    o = comparison.overall
    prose = [
        f"overall ({o.cases} cases, {o.informative_cases} informative): Δ = {_pp(o.delta)} "
        f"[{_pp(o.delta_ci_95[0])}, {_pp(o.delta_ci_95[1])}] (Mantel-Haenszel, stratified Newcombe 95% CI); "
        f"p(regression) = {p(o.p_regression)}, p(improvement) = {p(o.p_improvement)} (exact, stratified by case); "
        f"MDE at 80% power: {percent(o.mde)}",
        "p adj: one-sided Fisher per case, Westfall-Young min-p over the compared cases; "
        "MDE per case: Fisher at alpha/cases"]
    for s in comparison.shifts:
        adjusted = "" if s.p_adjusted is None else f", Holm-adjusted {p(s.p_adjusted)}"
        note = "" if s.gating else " (backend, not the target: reported only)"
        prose.append(f"{s.name}: A {s.a} → B {s.b}: {s.direction}, p = {p(s.p_value)}{adjusted}{note}")
    prose += [f"engine {sentence}" for sentence in comparison.engines]
    prose += [f"warning: {w}" for w in comparison.warnings]
    shown = comparison.verdict.upper() if comparison.failed else comparison.verdict
    prose.append(f"verdict: {shown}. {comparison.reason}")
    lines += [wrap(printable(line), width) for line in prose]
    return "\n".join(lines)
