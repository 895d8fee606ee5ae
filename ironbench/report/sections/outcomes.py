"""Every invocation of the target by what came of it, per mode."""

from ironbench.core.outcome_codes import BY_CODE
from ironbench.report.markup import Markup, join
from ironbench.report.records import OutcomeRow
from ironbench.report.widgets import Col, number, section, strip, table


def outcomes(rows: list[OutcomeRow]) -> Markup:
    counted: dict[str, int] = {}
    for row in rows:
        if _evidence(row):
            counted[row.case_mode] = counted.get(row.case_mode, 0) + row.runs
    body = []
    for row in rows:
        share = (
            (f"{row.runs / counted[row.case_mode]:.0%}", round(row.runs / counted[row.case_mode], 4))
            if _evidence(row)
            else ("excluded", -1.0)
        )
        body.append(
            [
                row.case_mode,
                join([strip(row.code), " ", BY_CODE[row.code].name if row.code in BY_CODE else row.code]),
                (str(row.runs), row.runs),
                share,
                (number(row.p50_ms, 0), row.p50_ms),
                (number(row.p95_ms, 0), row.p95_ms),
            ]
        )
    return section(
        "outcomes",
        "Invocations by outcome",
        "Every invocation of the target, by what came of it. A timeout is a failure of its own kind "
        "(failure stage timeout). Harness faults and infrastructure errors (the target's backend failed) "
        "are counted here but excluded from every rate and decision; an attempt whose infrastructure "
        "error was re-run is kept as superseded, and only the re-run counts. Shares are of the runs "
        "that count.",
        table(
            [
                Col("mode"),
                Col("outcome"),
                Col("runs", True),
                Col("share", True, "of the mode's runs that count in rates"),
                Col("median ms", True),
                Col("p95 ms", True),
            ],
            body,
        ),
    )


def _evidence(row: OutcomeRow) -> bool:
    return row.code in BY_CODE and BY_CODE[row.code].evidence
