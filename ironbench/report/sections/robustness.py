"""Robustness per generator: how the runs hold up when the instruction is reworded, across cases
and per case (the field's measures, as `ironbench show` computes them)."""

from ironbench.analysis.field import GENERATOR_ESTIMATES
from ironbench.report.markup import Markup, el
from ironbench.report.records import Estimate, Flips, RobustnessSection
from ironbench.report.widgets import Col, Td, number, section, table


def estimate_cell(entry: Estimate | None, digits: int = 2) -> Td:
    """An estimate with its interval and n, sorted by the estimate."""
    if entry is None or entry.estimate is None:
        return Td("–", -1.0)
    value = entry.estimate
    low, high = entry.ci_95
    n = entry.n if entry.n is not None else entry.cases
    return Td(f"{number(value, digits)} [{number(low, digits)}, {number(high, digits)}] (n = {n})", value)


def robustness(data: RobustnessSection) -> Markup:
    """Per generator across cases, then per case: robust pass, worst case, robust drop, flips."""
    columns = [
        Col("generator"),
        Col("cases", True, "cases the generator rewrote, and their variants"),
        Col("nominal", True, "the base instructions' success rate over their runs"),
        Col("robust pass", True, "share of cases where the base and every variant succeeded"),
        Col("worst case", True, "share of cases where every variant succeeded (the worst case over them)"),
        Col("robust drop", True, "(nominal − worst case) / nominal, over case means"),
        Col("success → failure", True, "variants that failed where the base succeeded, of those that could"),
        Col("failure → success", True, "variants that succeeded where the base failed, of those that could"),
    ]
    rows = [
        [
            g.generator,
            Td(f"{g.cases} ({g.variants} variants)", g.cases),
            *(estimate_cell(getattr(g, name)) for name in GENERATOR_ESTIMATES),
        ]
        for g in data.generators
    ]
    per_case = [
        [
            c.case_id,
            c.generator,
            "success" if c.base_success else "failure",
            Td(f"{c.variants_succeeded}/{c.variants}", c.variants_succeeded),
            "yes" if c.robust_pass else "no",
            number(c.robust_drop),
            _flip(c.flips_success_to_failure),
            _flip(c.flips_failure_to_success),
        ]
        for c in data.cases
    ]
    return section(
        "robustness",
        "Robustness per generator",
        "How the runs hold up when the instruction is reworded (ReCode's robust pass and robust drop, "
        "HELM's worst case, and flips in both directions). Each variant counts by its first run: later "
        "runs are the verdict's repeats and would bias these rates. Across cases, the case is the unit: "
        "shares of cases with Wilson intervals, pooled rates with the case as cluster; 95% intervals.",
        table(columns, rows, caption="Across cases, per generator"),
        el(
            "details",
            None,
            el("summary", None, f"Per case and generator ({len(per_case)})"),
            table(
                [
                    Col("case"),
                    Col("generator"),
                    Col("base"),
                    Col("variants succeeded", True),
                    Col("robust pass"),
                    Col("robust drop", True),
                    Col("success → failure", True),
                    Col("failure → success", True),
                ],
                per_case,
                filterable=len(per_case) > 10,
            ),
        ),
    )


def _flip(entry: Flips) -> Td:
    if not entry.n:
        return Td("–", -1.0)
    low, high = entry.ci_95
    return Td(f"{entry.count}/{entry.n} [{number(low)}, {number(high)}]", entry.rate)
