"""A comparison, and a comparison's plan, as console text fitted to the terminal."""

from ironbench.analysis.compare.comparison import CaseComparison, Comparison, Side
from ironbench.analysis.compare.prose import pp
from ironbench.console.layout import render, wrap
from ironbench.console.numbers import number, percent, points
from ironbench.console.printable import printable
from ironbench.core.labels import case_label
from ironbench.stats import MAX_RUNS, RunsPlan


def _mde(c: CaseComparison) -> str:
    """ "never": even a drop to 0% is found less than 80% of the time at these run counts."""
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
        if c.delta is None:
            delta = "-"
        else:
            assert c.delta_ci_95 is not None  # decide sets both or neither
            delta = (
                f"{points(c.delta, unit='')} [{points(c.delta_ci_95[0], unit='')},"
                f"{points(c.delta_ci_95[1], unit='')}] pp"
            )
        rows.append(
            [
                printable(case_label(c.case_id, c.variant_id)),
                rate(c.a),
                rate(c.b),
                delta,
                p(c.p_regression),
                p(c.p_adjusted),
                _mde(c),
                shift(c.a, c.b, "mean_attempts", ".2f"),
                shift(c.a, c.b, "p95_duration_ms", ".0f"),
                ("REGRESSION" if c.flagged else c.verdict) + ("" if c.can_be_flagged else " (cannot flag)"),
            ]
        )
    unit = "conversations without a violation" if comparison.unit == "conversation" else "successful runs"
    lines = [
        wrap(
            f"compare {comparison.run_a} (A) → {comparison.run_b} (B), alpha {comparison.alpha}, "
            f"gate {comparison.gate}, fail on {comparison.fail_on}"
            + (f", margin {percent(comparison.margin)}" if comparison.margin is not None else "")
            + f"; A/B = {unit}",
            width,
        )
    ]
    lines += render(header, rows, width, keys=1, atomic=[False] + [True] * 8 + [False])
    o = comparison.overall
    prose = [
        (
            f"overall ({o.cases} cases, {o.informative_cases} informative): Δ = {pp(o.delta)} "
            f"[{pp(o.delta_ci_95[0])}, {pp(o.delta_ci_95[1])}] (Mantel-Haenszel, stratified Newcombe 95% CI); "
            f"p(regression) = {p(o.p_regression)}, p(improvement) = {p(o.p_improvement)} (exact, stratified by case); "
            f"MDE at 80% power: {percent(o.mde)}" + (f" ({o.mde_method})" if o.mde is not None and o.mde_method else "")
        ),
        (
            "p adj: one-sided Fisher per case, Westfall-Young min-p over the compared cases; "
            "MDE per case: Fisher at alpha/cases"
        ),
    ]
    for s in comparison.shifts:
        adjusted = "" if s.p_adjusted is None else f", Holm-adjusted {p(s.p_adjusted)}"
        note = "" if s.gating else " (backend, not the target: reported only)"
        prose.append(f"{s.name}: A {s.a} → B {s.b}: {s.direction}, p = {p(s.p_value)}{adjusted}{note}")
    prose += [f"engine {sentence}" for sentence in comparison.engines]
    prose += [f"sensitivity {change.sentence}" for change in comparison.sensitivity]
    if comparison.cost is not None:
        prose += comparison.cost.lines(comparison.run_a, comparison.run_b)
    prose += [f"warning: {w}" for w in comparison.warnings]
    shown = comparison.verdict.upper() if comparison.failed else comparison.verdict
    prose.append(f"verdict: {shown}. {comparison.reason}")
    lines += [wrap(printable(line), width) for line in prose]
    return "\n".join(lines)


def format_plan(answer: RunsPlan) -> str:
    """`plan_runs`' answer in lines: the runs needed, then the power curve."""
    head = (
        f"to detect a drop from {answer['p']:.0%} to {answer['p'] - answer['drop']:.0%} success "
        f"in {answer['cases']} case(s) with {answer['power']:.0%} power at alpha {answer['alpha']}"
    )
    if answer["runs_per_case"] is None:
        lines = [f"{head}: more than {MAX_RUNS} runs per case on each side"]
    else:
        lines = [
            (
                f"{head}: {answer['runs_per_case']} runs per case on each side "
                f"(power {answer['power_reached']:.0%}; {answer['test']})"
            )
        ]
    lines += [f"  {row['runs_per_case']:>4} runs per case: power {row['power']:.0%}" for row in answer["curve"]]
    return "\n".join(lines)
