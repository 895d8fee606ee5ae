"""A gauntlet run's conversations read from the store, and laid out side by side for the console."""

import json

from ironbench.console.layout import render, wrap
from ironbench.console.printable import printable
from ironbench.projections.gauntlet_summary import summary_from_counts, verdict_sentences


def format_summary(table: dict, sentences: bool = True, width: int | None = None) -> str:
    """The side-by-side table: per engine `conversations violated/conversations` and turns, per
    scorer, then (with `sentences`) the verdict sentences; fitted to `width` when given."""
    scorers = table["scorers"]
    engines = list(table["totals"])
    header = ["scenario", "domain"] + [f"{e} ({'; '.join(scorers)})" for e in engines]
    rows = []

    def cell(data) -> str:
        return "; ".join(
            f"{data['conversations_violated'].get(s, 0)}/{data['num_conversations']}c "
            f"{data['num_violations'].get(s, 0)}/{data['num_turns']}t"
            for s in scorers
        )

    for name, row in table["scenarios"].items():
        rows.append(
            [name, printable(row["domain"])]
            + ["-" if row["engines"].get(e) is None else cell(row["engines"][e]) for e in engines]
        )
    rows.append(["TOTAL", ""] + [cell(table["totals"][e]) for e in engines])
    lines = render(header, rows, width, keys=1, atomic=[False, False] + [True] * len(engines))
    lines.append(
        wrap("c = conversations with at least one violation / conversations; t = violated turns / turns", width)
    )
    if sentences:
        lines += [wrap(printable(sentence), width) for sentence in verdict_sentences(table)]
    return "\n".join(lines)


_COUNTS = """
SELECT s.engine, s.scenario, any_value(s.domain), s.scorer, s.conversation, count(*),
       count(*) FILTER (WHERE s.violated::BOOLEAN)
FROM store.turn_scores s WHERE s.run_id = ? GROUP BY 1, 2, 4, 5
"""


def summary_from_store(store_path, run_id: str) -> dict:
    """The comparison table of a stored gauntlet run (read model, through DuckDB)."""
    from ironbench.analysis.query import connect  # DuckDB: only when a store is read

    con = connect(store_path)
    try:
        rows = con.execute(_COUNTS, [run_id]).fetchall()
        suite = con.execute(
            "SELECT payload FROM store.events WHERE run_id = ? AND type = 'run_started'", [run_id]
        ).fetchone()
    finally:
        con.close()
    spec = json.loads(suite[0])["suite"] if suite else {"engines": [], "scenarios": []}
    return summary_from_counts(rows, spec)
