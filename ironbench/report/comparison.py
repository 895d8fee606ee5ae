"""The compare section: per-case B − A as a forest plot, the overall estimate, the gate."""

from ironbench.console import numbers
from ironbench.report import svg
from ironbench.report.listing import forest
from ironbench.report.markup import Markup, el, join
from ironbench.report.sections import left_out
from ironbench.report.verdict import points
from ironbench.report.widgets import Col, number, section, table


def _label(case: dict) -> str:
    return case["case_id"] if case["variant_id"] in ("base", None) else f"{case['case_id']}/{case['variant_id']}"


def _side(side: dict | None) -> tuple[str, float]:
    if side is None:
        return "–", -1.0
    return (
        (
            f"{side['successes']}/{side['n']} ({side['success_rate']:.0%}, "
            f"{side['wilson_low']:.0%}–{side['wilson_high']:.0%})"
        ),
        round(side["success_rate"], 4),
    )


def compare(data: dict) -> Markup:
    both = forest(data["cases"])
    compared = sum(1 for c in data["cases"] if c.get("difference") is not None)
    rows = [
        svg.ForestRow(
            _label(c),
            c["difference"],
            c["low"],
            c["high"],
            f"{c['a']['successes']}/{c['a']['n']} → {c['b']['successes']}/{c['b']['n']}",
            flagged=bool(c.get("flagged")),
        )
        for c in both
    ]
    overall = None
    if data.get("difference") is not None:
        overall = svg.ForestRow(
            "overall (Mantel–Haenszel)",
            data["difference"],
            data["low"],
            data["high"],
            points(data["difference"]),
            flagged=data["failed"],
        )
    verdict = data["verdict"]
    gate = el(
        "div",
        {"class": f"gate {'bad' if data['failed'] else 'ok'}"},
        el(
            "p",
            None,
            el("b", None, f"Gate: {verdict.upper() if data['failed'] else verdict}"),
            f" (--gate {data['gate']}, --fail-on {data['fail_on']}"
            + (f", --margin {data['margin']:g}" if data.get("margin") is not None else "")
            + f", alpha {data['alpha']:g}); exit {'1' if data['failed'] else '0'}.",
        ),
        el("p", None, "Why: ", data["gate_reason"]),
        el(
            "p",
            None,
            f"Overall exact test stratified by case ({data['informative_cases']} informative): "
            f"p(regression) = {data['overall_p_regression']:.3g}, "
            f"p(improvement) = {data['overall_p_improvement']:.3g}. Weighted difference B − A "
            f"{points(data['difference'])} (95% CI {points(data['low'])} to {points(data['high'])})"
            + (
                f"; the smallest drop these runs detect with 80% power: {points(-data['mde'])}"
                + (f" ({data['mde_method']})." if data.get("mde_method") else ".")
                if data.get("mde") is not None
                else "; no drop is detectable with 80% power."
            ),
        ),
        join([el("p", {"class": "warn"}, "⚠ ", w) for w in data.get("warnings") or []]),
    )
    table_rows = []
    for c in data["cases"]:
        table_rows.append(
            [
                _label(c),
                _side(c["a"]),
                _side(c["b"]),
                (points(c.get("difference")), c.get("difference") if c.get("difference") is not None else -9),
                (
                    f"{points(c['low'])} to {points(c['high'])}" if c.get("difference") is not None else "–",
                    c.get("low") if c.get("low") is not None else -9,
                ),
                (number(c["p_regression"], 3), c["p_regression"] if c["p_regression"] is not None else 9),
                (number(c.get("p_adjusted"), 3), c["p_adjusted"] if c.get("p_adjusted") is not None else 9),
                (
                    points(-c["mde"])
                    if c.get("mde") is not None
                    else ("cannot be flagged" if not c.get("can_be_flagged", True) else "–"),
                    c["mde"] if c.get("mde") is not None else 9,
                ),
                el("span", {"class": "badge " + ("bad" if c.get("flagged") else "ok")}, c["verdict"]),
            ]
        )
    unit = "conversations without a violation" if data.get("unit") == "conversation" else "successful runs"
    engines = [el("li", None, sentence) for sentence in data.get("engines") or []]
    return section(
        "compare",
        f"Compare: {data['run_a']} (A) → {data['run_b']} (B)",
        f"Per case, B's share of {unit} minus A's with Newcombe's 95% interval; each case is tested with Fisher's "
        "exact test (p adjusted across cases by Westfall–Young min-p), and all of them together with the exact test "
        "stratified by case, which alone decides the default gate. Infrastructure errors are not evidence and are "
        "left out. Gauntlet runs compare conversations without a violation, per engine and scenario.",
        gate,
        el("ul", {"class": "engines"}, engines) if engines else None,
        el(
            "figure",
            None,
            el("div", {"class": "scroll"}, svg.forest(rows, overall, "Difference in success rate, B − A, per case")),
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
        left_out(data.get("left_out"), "cases"),
        shifts(data.get("shifts") or []),
    )


def _effect(shift: dict) -> tuple[str, float]:
    if shift["name"] == "attempts":
        return f"{numbers.number(shift['effect'], '+.2f')} per run", shift["effect"]
    return points(shift["effect"]), shift["effect"]


def shifts(rows: list[dict]) -> Markup | None:
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
                s["name"],
                s["a"],
                s["b"],
                s["direction"],
                _effect(s),
                (f"{s['p_value']:.3g}", s["p_value"]),
                (f"{s['p_adjusted']:.3g}", s["p_adjusted"]) if s.get("p_adjusted") is not None else ("–", 9.0),
                "fails with --fail-on change" if s["gating"] else "reported only (the backend's, not the target's)",
            ]
            for s in rows
        ],
        caption="More than success rate: the outcome distribution (success, each failure stage, timeout) and mean "
        "attempts by permutation tests within cases; timeout, harness-error and infrastructure-error rates "
        "by exact tests stratified by case",
    )
