"""What the run's model calls cost: the run's cost beside its rates, each case's, who spent it
(the target, ironbench's own calls apart), and the suite's priced runs on a cost–correctness
plane with the Pareto frontier marked; on a comparison page, B's cost against A's."""

from ironbench.core.prices import usd
from ironbench.report import svg
from ironbench.report.markup import Markup, el
from ironbench.report.records import CompareSection, CostRow, CostSection
from ironbench.report.widgets import Col, commands, figure, left_out, section, table

CALLERS = {
    "target": "the target, through the model gateway",
    "engine": "gauntlet engines (the systems under test)",
    "ai_rewrite": "ironbench: AI rewrites",
    "rewrite_guard": "ironbench: the rewrite guard's judge",
}


def _money(value: float | None) -> tuple[str, int]:
    """A cost, sorting by nano-dollars (a table's float keys keep 4 decimals: too few for a call)."""
    return usd(value), -1 if value is None else round(value * 1e9)


def _rows(cases: list[CostRow], checked: bool) -> list[list]:
    return [
        [
            case.case_id,
            _money(case.usd),
            (f"{case.calls:,}", case.calls),
            (f"{case.unpriced:,}" if case.unpriced else "–", case.unpriced),
            (f"{case.attempts:,}", case.attempts),
            _money(case.per_invocation),
            _money(case.per_correct if checked else case.per_success),
        ]
        for case in cases
    ]


def cost(found: CostSection, compared: CompareSection | None = None) -> Markup:
    checked = found.target.correct is not None
    brick = "per correct brick" if checked else "per success"
    columns = [
        Col("case"),
        Col("cost", True, "what its priced calls cost, every attempt's (a lower bound with unpriced calls)"),
        Col("calls", True),
        Col("unpriced", True, "calls no price counted: the model is in no price table; give one with --price"),
        Col(f"{found.unit}s", True, "every attempt: superseded and surplus ones too (they were paid for)"),
        Col(f"per {found.unit}", True),
        Col(brick, True, "the cost over its correct bricks" if checked else "the cost over its successes"),
    ]
    callers = [
        [
            CALLERS.get(c.caller, c.caller),
            _money(c.usd),
            (f"{c.calls:,}", c.calls),
            (f"{c.unpriced:,}" if c.unpriced else "–", c.unpriced),
            (f"{c.local_seconds:.1f} s" if c.local_seconds else "–", c.local_seconds),
            c.priced_by or "–",
        ]
        for c in found.callers
    ]
    own = (
        f" ironbench's own calls cost {usd(found.own_usd)}, {found.own_share or 0:.0%} of the run's."
        if found.own_usd
        else ""
    )
    return section(
        "cost",
        "Cost",
        commands(
            "What the run's model calls cost, each priced when it was recorded from its tokens: by the price "
            "table (genai-prices, the version named), a price the suite or --price gave, or a local model's "
            "(its seconds, not money); a model no price knows is unpriced, never 0. Every attempt's calls "
            "count (they were paid for); per success and per correct brick count the runs that are evidence. "
            "Each call's price is in the view `costs` of `ironbench query`." + own
        ),
        el("p", None, el("b", None, "The run: "), found.summary, "."),
        table(
            [
                Col("who called"),
                Col("cost", True),
                Col("calls", True),
                Col("unpriced", True),
                Col("local model", True),
                Col("priced by"),
            ],
            callers,
        ),
        table(columns, _rows(found.cases, checked), filterable=len(found.cases) > 10),
        left_out(found.left_out, "cases"),
        _compared(compared),
        _plane(found, compared),
    )


def _compared(compared: CompareSection | None) -> Markup | None:
    """B's cost against A's, as `compare` says it."""
    cost = compared.comparison.cost if compared is not None else None
    if cost is None:
        return None
    assert compared is not None  # (a cost comes with its comparison)
    lines = cost.lines(compared.comparison.run_a, compared.comparison.run_b)
    return el("ul", {"class": "cost-difference"}, [el("li", None, line) for line in lines])


def _plane(found: CostSection, compared: CompareSection | None) -> Markup | None:
    """The suite's priced runs by cost per invocation and rate; A and B (or this run) marked."""
    cost = compared.comparison.cost if compared is not None else None
    points = cost.points if cost is not None else found.plane
    if len(points) < 2:
        return None
    marks = {}
    if compared is not None:
        marks = {compared.comparison.run_a: "A", compared.comparison.run_b: "B"}
    on = cost.on if cost is not None else found.on
    drawn = [
        svg.PlanePoint(
            p.label or p.run_id, p.per_invocation, p.rate, p.rate_low, p.rate_high, p.frontier, marks.get(p.run_id, "")
        )
        for p in points
    ]
    rate = "correct bricks" if on == "correct" else "successes"
    frontier = [p.run_id for p in points if p.frontier]
    return figure(
        svg.cost_plane(drawn, f"Cost per invocation against {rate}: the suite's priced runs", f"{rate} (rate)"),
        f"Each of the suite's {len(points)} priced runs by its cost per invocation and its rate of {rate} "
        f"(whiskers: Wilson 95%). Filled and joined: the Pareto frontier, the runs no other run beats on both "
        f"({', '.join(frontier)}).",
    )
