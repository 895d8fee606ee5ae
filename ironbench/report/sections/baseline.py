"""Baseline: does the same instruction converge? Success per case with its interval, the runs
in order, attempts, and each case's decision with what its runs support."""

from ironbench.core.labels import case_label
from ironbench.core.outcome_codes import BY_CODE
from ironbench.report import svg
from ironbench.report.markup import Markup, el, join
from ironbench.report.records import BaselineCase, BaselineSection, ComplexityRow
from ironbench.report.verdict import agreeing_runs, not_evidence
from ironbench.report.widgets import (
    Col,
    Td,
    also,
    decided_cell,
    extra_evidence,
    figure,
    has_extra,
    interval,
    left_out,
    number,
    ratio,
    runs_cell,
    section,
    table,
)

CHART_ROWS = 150  # per-case charts taller than this stop being read; the tables keep every row


def charted(cases: list[BaselineCase], limit: int = CHART_ROWS) -> tuple[list[BaselineCase], str]:
    """The cases a per-case chart shows: all of them, or past `limit` the ones that most
    need a look (undecided, exhausted, then the lowest interval), in suite order."""
    if len(cases) <= limit:
        return cases, ""
    first = {"undecided": 0, "exhausted": 1}

    def need(i: int) -> tuple:
        return first.get(cases[i].decided or "undecided", 2), cases[i].low, cases[i].rate

    keep = sorted(sorted(range(len(cases)), key=need)[:limit])
    return (
        [cases[i] for i in keep],
        (
            f" Charts show {limit} of {len(cases)} cases: the undecided, the exhausted "
            f"and those with the lowest success rates; the table has every case."
        ),
    )


def supports(case: BaselineCase) -> tuple[str, float]:
    """What a case's decision says its runs support, as a table cell sorting by the bound."""
    decision = case.decision
    if decision is None:
        return "–", -1.0
    n = decision.n
    if decision.decision == "stable":
        bound = decision.reproduce_lower_95
        if bound is None:
            return "–", -1.0
        k = agreeing_runs(n, bound)
        return f"{f'{k}/{n}' if k is not None else n} agreed → recurs with p ≥ {bound:.2f}", bound
    low, high = decision.success_lower_95, decision.success_upper_95
    if low is None or high is None:
        return "–", -1.0
    return f"success ≥ {low:.0%} and ≤ {high:.0%}", round(low, 4)


def _reason(case: BaselineCase) -> str:
    """A decision's reason, without the bound a stable one ends with: the column beside it
    states that already (the embedded data keeps the whole reason)."""
    decision = case.decision
    if decision is None:
        return ""
    if decision.decision == "stable" and decision.reproduce_lower_95 is not None:
        return decision.reason.split(";")[0]
    return decision.reason


def by_complexity(rows: list[ComplexityRow]) -> Markup:
    """A canonical run's groups: how success falls as the tasks grow."""
    bars = svg.interval_bars(
        [svg.IntervalRow(g.complexity, g.rate, g.low, g.high, f"{g.successes}/{g.n}") for g in rows],
        "Success rate per complexity with its 95% Wilson interval",
    )
    return el(
        "div",
        {"class": "complexity"},
        el("h3", None, "By complexity"),
        el(
            "p",
            {"class": "intro"},
            "A canonical suite groups its cases by complexity and runs each a fixed number of times. "
            "The success rate counts every run of the group once; its interval takes the runs as "
            "independent, and runs of one case are not quite, so read it as the narrowest the runs "
            "support. pass@k and pass^k are the means over the group's cases of each case's unbiased "
            "estimate at k, the fewest runs a case of the group took: the chance that at least one "
            "of k runs succeeds, and that all k do.",
        ),
        figure(bars, "Success rate per complexity, smallest first; the whisker is the 95% Wilson interval."),
        table(
            [
                Col("complexity"),
                Col("cases", True),
                Col("runs", True, "runs that are evidence"),
                Col("success", True),
                Col("95% CI", True, "Wilson, over the group's runs"),
                Col("k", True, "the fewest runs a case of the group took"),
                Col("pass@k", True, "mean over the cases: at least one of k runs succeeds"),
                Col("pass^k", True, "mean over the cases: all k runs succeed"),
            ],
            [
                [
                    g.complexity,
                    (str(g.cases), g.cases),
                    (str(g.n), g.n),
                    ratio(g.successes, g.n),
                    interval(g.low, g.high),
                    (str(g.k), g.k),
                    (number(g.pass_at_k), g.pass_at_k if g.pass_at_k is not None else -1),
                    (number(g.pass_hat_k), g.pass_hat_k if g.pass_hat_k is not None else -1),
                ]
                for g in rows
            ],
        ),
    )


def baseline(data: BaselineSection) -> Markup:
    cases = data.cases
    shown, note = charted(cases)
    bars = svg.interval_bars(
        [
            svg.IntervalRow(
                case_label(c.case_id, c.variant_id),
                c.rate,
                c.low,
                c.high,
                f"{c.successes}/{c.n}",
                flagged=c.decided == "exhausted",
            )
            for c in shown
        ],
        "Success rate per case with its 95% Wilson interval",
    )
    sequences = svg.sequence_grid(
        [
            svg.SequenceRow(
                case_label(c.case_id, c.variant_id),
                c.codes,
                c.planned,
                f"{case_label(c.case_id, c.variant_id)}: {c.successes} of {c.n} succeeded; "
                f"{c.decided or 'undecided'} after {len(c.codes)} of {c.planned} runs",
            )
            for c in shown
        ],
        "Run outcomes in order; hollow squares are runs the adaptive stop saved",
    )
    used = sorted({code for c in cases for code in c.codes}, key=list(BY_CODE).index)
    success, failure = BY_CODE["S"].colour, BY_CODE["G"].colour
    attempts = svg.stacked_columns(
        [
            (str(a.attempts), [(a.successes, success, "succeeded"), (a.failures, failure, "failed")])
            for a in data.attempts
        ],
        "Validation cycles per run (attempts), split by outcome",
        "attempts",
    )
    extra = has_extra([c.decision for c in cases])
    grouped = bool(data.complexities)
    rows = []
    for c in cases:
        chance = c.decision.chance_agreement if c.decision else None
        rows.append(
            [
                case_label(c.case_id, c.variant_id),
                *([c.complexity or "–"] if grouped else []),
                runs_cell(c.codes, c.superseded),
                ratio(c.successes, c.n),
                interval(c.low, c.high),
                decided_cell(c.decision),
                supports(c),
                Td(_reason(c), cls="reason"),
                (number(chance), chance if chance is not None else -1),
                *([extra_evidence(c.decision)] if extra else []),
                (number(c.mean_attempts), c.mean_attempts or 0),
                (number(c.p95_ms, 0), c.p95_ms or 0),
                Td(c.instruction or "", cls="text"),
            ]
        )
    return section(
        "baseline",
        "Baseline: does the same instruction converge?",
        "Each instruction is replayed until its last 3 runs agree (stable) or its runs are spent (exhausted). "
        "A stable decision shows only what its runs support: the one-sided 95% lower bound on the chance that the "
        "instruction gives that outcome again, from how many runs gave it (3/3 → 0.37, 10/10 → 0.74); an "
        "exhausted one, one-sided 95% bounds on its success rate. Chance agreement is the probability that 3 runs "
        "agree by chance at the observed rate, p³ + (1 − p)³." + also(not_evidence(data.excluded)),
        figure(
            bars, "Success rate per case; the whisker is the 95% Wilson interval. Red: exhausted, no agreement." + note
        ),
        figure(sequences, join(["Outcomes in run order.", note, " ", svg.legend(used)])),
        figure(attempts, "Attempts: 0 when generation produced nothing, else 1 + repairs.") if data.attempts else None,
        by_complexity(data.complexities) if grouped else None,
        table(
            [
                Col("case"),
                *([Col("complexity")] if grouped else []),
                Col("runs"),
                Col("success", True),
                Col("95% CI", True),
                Col("decision"),
                Col(
                    "what the runs support",
                    True,
                    "stable: agreeing runs → lower bound on the chance the outcome "
                    "recurs; otherwise bounds on the success rate (one-sided 95%)",
                ),
                Col("reason"),
                Col("chance agreement", True, "p³ + (1 − p)³ at the observed rate"),
                *([Col("more evidence")] if extra else []),
                Col("mean attempts", True),
                Col("p95 ms", True),
                Col("instruction"),
            ],
            rows,
            filterable=True,
        ),
        left_out(data.left_out, "cases"),
    )
