"""When conversations break: per scorer, a Kaplan–Meier plot per engine, when and how its
conversations broke, and each pair of engines compared (as `ironbench show` computes them)."""

from ironbench.analysis.field import Survival
from ironbench.projections.gauntlet_summary import MeanFlips
from ironbench.report import svg
from ironbench.report.markup import Markup, el
from ironbench.report.widgets import Col, Td, figure, number, section, table


def survival(data: Survival) -> Markup:
    """Per scorer (the one the verdicts use first), one Kaplan–Meier plot per engine, a table
    of when and how conversations broke, and each pair of engines compared."""
    parts = []
    for index, (scorer, found) in enumerate(data.items()):
        engines = found.engines
        charts = [
            svg.survival_curve(
                [svg.HoldingStep(p.turn, p.rate, *p.ci_95) for p in entry.still_holding],
                engine,
                f"{engine}: still holding after each turn ({scorer}); {entry.violated} of "
                f"{entry.conversations} conversations violated",
                svg.SERIES[k % len(svg.SERIES)],
            )
            for k, (engine, entry) in enumerate(engines.items())
        ]
        rows = []
        for engine, e in engines.items():
            last = e.still_holding[-1]
            low, high = e.median_ci_95
            median = e.median_turn_of_first_violation
            rows.append(
                [
                    engine,
                    Td(f"{e.violated}/{e.conversations}", e.violated / max(1, e.conversations)),
                    Td(
                        f"{'not reached' if median is None else median} "
                        f"[{low or '> ' + str(last.turn)}, {high or '> ' + str(last.turn)}]",
                        median if median is not None else 1e9,
                    ),
                    Td(f"{number(last.rate)} [{number(last.ci_95[0])}, {number(last.ci_95[1])}]", last.rate),
                    _flips(e.flips),
                    Td(f"{e.recovered} recovered, {e.persisted} persisted", e.recovered),
                ]
            )
        block = [
            figure(
                el("div", {"class": "row"}, charts),
                "Still holding (no violation yet) after each turn: Kaplan–Meier, the turn of the first violation "
                "as the time and a conversation without one censored at its last turn; the band is the pointwise "
                "95% interval (Greenwood, log-log).",
            ),
            table(
                [
                    Col("engine"),
                    Col("violated", True, "conversations with a violation, of all"),
                    Col("median turn of first violation", True, "Brookmeyer–Crowley 95% interval"),
                    Col("still holding at the end", True),
                    Col("flips per conversation", True, "changes between violating and not, turn to turn"),
                    Col("after a violation", True, "a later answer that does not violate, or none"),
                ],
                rows,
            ),
            el("ul", {"class": "verdicts"}, [el("li", None, c.sentence) for c in found.comparisons]),
        ]
        title = el("h3", None, f"{scorer} scorer")
        parts.append(
            el("div", None, title, block) if index == 0 else el("details", None, el("summary", None, title), block)
        )
    return section(
        "survival",
        "When conversations break",
        "Not only whether an engine asserted the falsehood, but when (SYCON-Bench's turn of flip), how often "
        "it flipped, and whether it recovered. Engines are compared by the log-rank test stratified by "
        "scenario, its p-value by permutation within scenarios, Holm over the pairs.",
        parts,
    )


def _flips(entry: MeanFlips | None) -> Td:
    if entry is None:
        return Td("–", -1.0)
    low, high = entry.ci_95
    return Td(f"{number(entry.mean)} [{number(low)}, {number(high)}]", entry.mean)
