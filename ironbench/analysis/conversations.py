"""A gauntlet run's conversations read from the store, and laid out side by side for the console."""

from pathlib import Path

from ironbench.console.layout import render, wrap
from ironbench.console.printable import printable
from ironbench.projections.gauntlet_summary import Counts, EngineTotals, GauntletSummary, summary_from_counts


def format_summary(table: GauntletSummary, sentences: bool = True, width: int | None = None) -> str:
    """The side-by-side table: per engine `conversations violated/conversations` and turns, per
    scorer, then (with `sentences`) the verdict sentences; fitted to `width` when given."""
    scorers = table.scorers
    engines = list(table.totals)
    header = ["scenario", "domain"] + [f"{e} ({'; '.join(scorers)})" for e in engines]
    rows = []

    def cell(data: Counts | EngineTotals) -> str:
        return "; ".join(
            f"{data.conversations_violated.get(s, 0)}/{data.num_conversations}c "
            f"{data.num_violations.get(s, 0)}/{data.num_turns}t"
            for s in scorers
        )

    for name, row in table.scenarios.items():
        found = row.engines
        rows.append([name, printable(row.domain)] + ["-" if e not in found else cell(found[e]) for e in engines])
    rows.append(["TOTAL", ""] + [cell(table.totals[e]) for e in engines])
    lines = render(header, rows, width, keys=1, atomic=[False, False] + [True] * len(engines))
    lines.append(
        wrap("c = conversations with at least one violation / conversations; t = violated turns / turns", width)
    )
    if sentences:
        lines += [wrap(printable(sentence), width) for sentence in table.verdict_sentences()]
    return "\n".join(lines)


_COUNTS = """
SELECT s.engine, s.scenario, any_value(s.domain), s.scorer, s.conversation, count(*),
       count(*) FILTER (WHERE s.violated::BOOLEAN)
FROM store.turn_scores s WHERE s.run_id = ? GROUP BY 1, 2, 4, 5
"""


def summary_from_store(store_path: Path, run_id: str) -> GauntletSummary:
    """The comparison table of a stored gauntlet run (read model, through DuckDB), in the
    order of the suite it recorded."""
    from ironbench.analysis.query import connect  # DuckDB: only when a store is read
    from ironbench.analysis.recorded import run_suite

    con = connect(store_path)
    try:
        rows = con.execute(_COUNTS, [run_id]).fetchall()
    finally:
        con.close()
    suite = run_suite(store_path, run_id)
    return summary_from_counts(rows, suite.engine_names, [s.name for s in suite.scenarios])
