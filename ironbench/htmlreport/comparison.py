"""The compare section: per-case B − A as a forest plot, the overall estimate, the gate."""

from ironbench.htmlreport import svg
from ironbench.htmlreport.markup import Markup, el, join
from ironbench.htmlreport.verdict import points
from ironbench.htmlreport.widgets import Col, number, section, table


def _label(case: dict) -> str:
    return case["case_id"] if case["variant_id"] in ("base", None) else f"{case['case_id']}/{case['variant_id']}"


def _side(side: dict | None) -> tuple[str, float]:
    if side is None:
        return "–", -1.0
    return (f"{side['successes']}/{side['n']} ({side['success_rate']:.0%}, "
            f"{side['wilson_low']:.0%}–{side['wilson_high']:.0%})", round(side["success_rate"], 4))


def compare(data: dict) -> Markup:
    both = [c for c in data["cases"] if c.get("difference") is not None]
    rows = [svg.ForestRow(_label(c), c["difference"], c["low"], c["high"],
                          f"{c['a']['successes']}/{c['a']['n']} → {c['b']['successes']}/{c['b']['n']}",
                          flagged=c["verdict"] == "regression") for c in both]
    overall = None
    if data.get("difference") is not None:
        low, high = data.get("low", data["difference"]), data.get("high", data["difference"])
        overall = svg.ForestRow("overall (Mantel–Haenszel)", data["difference"], low, high,
                                points(data["difference"]), flagged=data["verdict"] == "regression")
    verdict = data["verdict"]
    gate = el("div", {"class": f"gate {'bad' if verdict == 'regression' else 'ok'}"},
              el("p", None, el("b", None, f"Gate: {verdict.upper() if verdict == 'regression' else verdict}"),
                 f" at alpha {data['alpha']:g}."),
              el("p", None, "Why: ", data["gate_reason"], "."),
              el("p", None, f"Overall exact test stratified by case ({data['informative_cases']} informative): "
                            f"p(regression) = {data['overall_p_regression']:.3g}, "
                            f"p(improvement) = {data['overall_p_improvement']:.3g}."),
              _extra(data["extra"]))
    table_rows = []
    for c in data["cases"]:
        table_rows.append([
            _label(c), _side(c["a"]), _side(c["b"]),
            (points(c.get("difference")), c.get("difference") if c.get("difference") is not None else -9),
            (f"{points(c['low'])} to {points(c['high'])}" if c.get("difference") is not None else "–",
             c.get("low") if c.get("low") is not None else -9),
            (number(c["p_regression"], 3), c["p_regression"] if c["p_regression"] is not None else 9),
            (number(c["p_improvement"], 3), c["p_improvement"] if c["p_improvement"] is not None else 9),
            el("span", {"class": "badge " + ("bad" if c["verdict"] == "regression" else "ok")}, c["verdict"]),
            _extra(c["extra"]),
        ])
    return section(
        "compare", f"Compare: {data['run_a']} (A) → {data['run_b']} (B)",
        "Per case, B's success rate minus A's with Newcombe's 95% interval (from each side's Wilson interval); "
        "each case is tested with Fisher's exact test, and all of them together with the exact test stratified "
        "by case. Gauntlet runs compare turns without a violation, per engine and scenario.",
        gate,
        el("figure", None, el("div", {"class": "scroll"},
                              svg.forest(rows, overall, "Difference in success rate, B − A, per case")),
           el("figcaption", None, "Left of zero: B succeeds less often than A. Red: a significant regression.")),
        table([Col("case"), Col("A", True), Col("B", True), Col("B − A", True), Col("95% CI", True),
               Col("p(regression)", True), Col("p(improvement)", True), Col("verdict"), Col("more evidence")],
              table_rows, filterable=True))


def _extra(extra: dict) -> Markup:
    """Comparison fields this page does not name yet, shown as they are."""
    shown = [(k, v) for k, v in (extra or {}).items() if v is not None and not isinstance(v, (dict, list))]
    return join([el("span", {"class": "kv"}, f"{k} = {number(v, 3)}") for k, v in shown])
