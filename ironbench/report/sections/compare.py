"""The compare section: per-case B − A as a forest plot, the overall estimate, the gate, and
how else B differs from A (`ironbench compare`'s comparison, drawn as it decided it)."""

from ironbench.analysis.compare import Shift, Side
from ironbench.console import numbers
from ironbench.core.labels import case_label
from ironbench.report import svg
from ironbench.report.listing import forest
from ironbench.report.markup import Markup, el, join
from ironbench.report.records import CompareSection
from ironbench.report.verdict import points
from ironbench.report.widgets import Col, left_out, number, section, table


def _side(side: Side | None) -> tuple[str, float]:
    if side is None:
        return "–", -1.0
    return (
        f"{side.successes}/{side.n} ({side.success_rate:.0%}, {side.wilson_low:.0%}–{side.wilson_high:.0%})",
        round(side.success_rate, 4),
    )


def compare(data: CompareSection) -> Markup:
    comparison, overall = data.comparison, data.comparison.overall
    both = forest(data.cases)
    compared = sum(1 for c in data.cases if c.delta is not None)
    rows = []
    for c in both:
        assert c.a is not None and c.b is not None and c.delta is not None and c.delta_ci_95 is not None  # compared
        rows.append(
            svg.ForestRow(
                case_label(c.case_id, c.variant_id),
                c.delta,
                *c.delta_ci_95,
                f"{c.a.successes}/{c.a.n} → {c.b.successes}/{c.b.n}",
                flagged=c.flagged,
            )
        )
    summary = None
    if overall.delta is not None:
        summary = svg.ForestRow(
            "overall (Mantel–Haenszel)",
            overall.delta,
            *overall.delta_ci_95,
            points(overall.delta),
            flagged=comparison.failed,
        )
    verdict, failed = comparison.verdict, comparison.failed
    gate = el(
        "div",
        {"class": f"gate {'bad' if failed else 'ok'}"},
        el(
            "p",
            None,
            el("b", None, f"Gate: {verdict.upper() if failed else verdict}"),
            f" (--gate {comparison.gate}, --fail-on {comparison.fail_on}"
            + (f", --margin {comparison.margin:g}" if comparison.margin is not None else "")
            + f", alpha {comparison.alpha:g}); exit {'1' if failed else '0'}.",
        ),
        el("p", None, "Why: ", comparison.reason),
        el(
            "p",
            None,
            f"Overall exact test stratified by case ({overall.informative_cases} informative): "
            f"p(regression) = {overall.p_regression:.3g}, "
            f"p(improvement) = {overall.p_improvement:.3g}. Weighted difference B − A "
            f"{points(overall.delta)} (95% CI {points(overall.delta_ci_95[0])} to {points(overall.delta_ci_95[1])})"
            + (
                f"; the smallest drop these runs detect with 80% power: {points(-overall.mde)}"
                + (f" ({overall.mde_method})." if overall.mde_method else ".")
                if overall.mde is not None
                else "; no drop is detectable with 80% power."
            ),
        ),
        join([el("p", {"class": "warn"}, "⚠ ", w) for w in comparison.warnings]),
    )
    table_rows = []
    for c in data.cases:
        low, high = c.delta_ci_95 or (None, None)
        table_rows.append(
            [
                case_label(c.case_id, c.variant_id),
                _side(c.a),
                _side(c.b),
                (points(c.delta), c.delta if c.delta is not None else -9),
                (f"{points(low)} to {points(high)}" if c.delta is not None else "–", low if low is not None else -9),
                (number(c.p_regression, 3), c.p_regression if c.p_regression is not None else 9),
                (number(c.p_adjusted, 3), c.p_adjusted if c.p_adjusted is not None else 9),
                (
                    points(-c.mde) if c.mde is not None else ("cannot be flagged" if not c.can_be_flagged else "–"),
                    c.mde if c.mde is not None else 9,
                ),
                el("span", {"class": "badge " + ("bad" if c.flagged else "ok")}, c.verdict),
            ]
        )
    unit = "conversations without a violation" if comparison.unit == "conversation" else "successful runs"
    engines = [el("li", None, line) for line in comparison.engines]
    return section(
        "compare",
        f"Compare: {comparison.run_a} (A) → {comparison.run_b} (B)",
        f"Per case, B's share of {unit} minus A's with Newcombe's 95% interval; each case is tested with Fisher's "
        "exact test (p adjusted across cases by Westfall–Young min-p), and all of them together with the exact test "
        "stratified by case, which alone decides the default gate. Infrastructure errors are not evidence and are "
        "left out. Gauntlet runs compare conversations without a violation, per engine and scenario.",
        gate,
        el("ul", {"class": "engines"}, engines) if engines else None,
        el(
            "figure",
            None,
            el("div", {"class": "scroll"}, svg.forest(rows, summary, "Difference in success rate, B − A, per case")),
            el(
                "figcaption",
                None,
                "Left of zero: B succeeds less often than A. Red: flagged after adjustment."
                + (
                    f" Rows: {len(both)} of the {compared:,} compared cases listed below, the flagged and the lowest "
                    "adjusted p first."
                    if compared > len(both)
                    else ""
                ),
            ),
        ),
        table(
            [
                Col("case"),
                Col("A", True),
                Col("B", True),
                Col("B − A", True),
                Col("95% CI", True),
                Col("p(regression)", True),
                Col("p adjusted", True),
                Col("detectable drop", True, "the smallest drop Fisher's test finds with 80% power at alpha/cases"),
                Col("verdict"),
            ],
            table_rows,
            filterable=True,
        ),
        left_out(data.left_out, "cases"),
        shifts(comparison.shifts),
    )


def _effect(shift: Shift) -> tuple[str, float]:
    if shift.name == "attempts":
        return f"{numbers.number(shift.effect, '+.2f')} per run", shift.effect
    return points(shift.effect), shift.effect


def shifts(rows: list[Shift]) -> Markup | None:
    """The secondary tests: how else B may differ from A than in success rate."""
    if not rows:
        return None
    return table(
        [
            Col("what"),
            Col("A"),
            Col("B"),
            Col("which way"),
            Col("effect", True),
            Col("p", True),
            Col("Holm-adjusted p", True, "within the --fail-on change family"),
            Col("role"),
        ],
        [
            [
                s.name,
                s.a,
                s.b,
                s.direction,
                _effect(s),
                (f"{s.p_value:.3g}", s.p_value),
                (f"{s.p_adjusted:.3g}", s.p_adjusted) if s.p_adjusted is not None else ("–", 9.0),
                "fails with --fail-on change" if s.gating else "reported only (the backend's, not the target's)",
            ]
            for s in rows
        ],
        caption="More than success rate: the outcome distribution (success, each failure stage, timeout) and mean "
        "attempts by permutation tests within cases; timeout, harness-error and infrastructure-error rates "
        "by exact tests stratified by case",
    )
