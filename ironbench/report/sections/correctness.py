"""Verified but wrong first: the runs the target verified whose brick the harness's check found
not correct, each with its check's output one click away; then correctness and why validation failed."""

from ironbench.analysis.correctness import could_not_run
from ironbench.report.markup import Markup, el
from ironbench.report.records import ChecksSection
from ironbench.report.widgets import Col, section, table


def checks(found: ChecksSection) -> Markup:
    """`found`: analysis.correctness.correctness of the run (its checks and failure causes)."""
    parts: list[Markup] = []
    checked = found.checks
    intro = (
        "The harness's own check of each brick the target saved, never shown to the target: a run the target "
        "verified is correct only when its check passes. A run that saved no brick is not correct; a check "
        "the harness could not run counts in nothing."
    )
    if checked:
        wrong = checked.verified_but_wrong
        low, high = checked.correct_rate_wilson_95
        verdicts = ", ".join(f"{verdict} {n}" for verdict, n in checked.verdicts.items()) or "none ran"
        faults = checked.harness_faults
        beside = f" ({could_not_run(faults, checked.fault_causes)}, in no rate)" if faults else ""
        parts.append(
            el(
                "p",
                {"class": "verified-but-wrong"},
                el("b", None, f"Verified but wrong: {len(wrong)} of {checked.verified_and_checked}"),
                f" verified and checked runs. Correct: {checked.correct} of {checked.runs} runs "
                f"({checked.correct_rate:.1%}, Wilson 95% {low:.1%}–{high:.1%}){beside}; checks: {verdicts}.",
            )
        )
        if wrong:
            rows = [
                [
                    row.case_id,
                    row.variant_id,
                    (str(row.run_index), row.run_index),
                    row.verdict,
                    el("details", None, el("summary", None, row.detail or "output"), el("pre", None, row.output)),
                ]
                for row in wrong
            ]
            columns = [Col("case"), Col("variant"), Col("run", True), Col("verdict"), Col("the check said")]
            parts.append(table(columns, rows, filterable=len(rows) > 10))
    causes = found.failure_causes
    if causes:
        last = ", ".join(f"{c} {n}" for c, n in causes.last_failed_attempt.items()) or "none"
        every = ", ".join(f"{c} {n}" for c, n in causes.every_failed_attempt.items())
        fenced = (
            " (fence: what the fence withheld, named at the top of the page with the flag that allows it)"
            if "fence" in causes.last_failed_attempt
            else ""
        )
        parts.append(
            el(
                "p",
                None,
                el("b", None, "Why runs failed"),
                f" (read from the target's debug files and the fence): each failed run's cause: {last}{fenced}"
                + (f"; every failed attempt: {every}." if every else "."),
            )
        )
    return section("checks", "Verified but wrong", intro, *parts)
