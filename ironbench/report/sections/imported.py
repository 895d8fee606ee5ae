"""An imported run: where its events came from, and how often the outcome its recorder wrote
down disagrees with the facts re-derived from the output it kept."""

from ironbench.report.markup import Markup, el
from ironbench.report.records import Imported
from ironbench.report.verdict import origin
from ironbench.report.widgets import Col, section, table


def imported(data: Imported) -> Markup:
    rows = [
        [
            name,
            (str(count), count),
            (f"{count / data.invocations:.0%}", round(count / data.invocations, 4)) if data.invocations else "–",
        ]
        for name, count in sorted(data.disagreements.items(), key=lambda item: (-item[1], item[0]))
    ]
    return section(
        "imported",
        "Imported: recorded against re-derived",
        f"This run was not run here: it was imported from {origin(data)}. Of its {data.invocations} "
        f"invocation(s), {data.with_output} kept the target's output, and their facts (success, failure "
        "stage, attempts, repairs, infrastructure errors) are re-derived from it by the same outcome rules "
        "a live run uses; the others' are as recorded. The outcome as recorded is kept beside each "
        "invocation (its summary.json's `recorded`); below, how often the two disagree, by field. "
        + (
            "Its recorder's stopping decisions are not part of its outputs, so no decision is shown "
            "for its groups; every count and rate is."
            if data.format == "outputs"
            else ""
        ),
        el(
            "p",
            None,
            f"{data.disagreeing} of {data.invocations} invocation(s) disagree with their record in at least one field."
            if data.disagreeing
            else "Every re-derived fact agrees with its record.",
        ),
        table(
            [
                Col("field"),
                Col("invocations disagreeing", True),
                Col("share", True, "of the run's invocations"),
            ],
            rows,
        )
        if rows
        else None,
    )
