"""A run's correctness by the harness's checks, and why its validations failed: read from the
`invocations`, `checks` and `failure_causes` views, for `show` and the end of a run."""

import json
from pathlib import Path

from ironbench.analysis.query import run_sql
from ironbench.projections.summaries import names_check
from ironbench.stats import wilson_interval

# Runs the target verified whose brick the harness's check found not correct: shown first.
_VERIFIED_BUT_WRONG = """
SELECT i.case_id, i.variant_id, i.run_index, c.verdict, c.detail, c.output
FROM invocations i JOIN checks c USING (invocation_key)
WHERE i.success AND c.verdict NOT IN ('correct', 'harness_fault') AND c.rerun = i.rerun AND i.infra_error IS NULL
ORDER BY i.case_id, i.variant_id, i.run_index
"""
_RUNS = """
SELECT case_id, CASE WHEN coalesce(case_mode, mode) = 'stress' THEN level END, success::BOOLEAN, correct::BOOLEAN,
       check_verdict
FROM invocations WHERE infra_error IS NULL
"""
_SUITE = "SELECT payload FROM events WHERE type = 'run_started'"
_VERDICTS = """
SELECT check_verdict, count(*) FROM invocations
WHERE check_verdict IS NOT NULL AND infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""
_CAUSES = """
SELECT failure_cause, count(*) FROM invocations
WHERE failure_cause IS NOT NULL AND NOT success AND infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""
_ATTEMPT_CAUSES = """
SELECT f.cause, count(*) FROM failure_causes f JOIN invocations i USING (invocation_key)
WHERE i.infra_error IS NULL GROUP BY 1 ORDER BY 2 DESC, 1
"""


def correctness(store_path: Path, run_id: str) -> dict | None:
    """The run's checks (None when nothing was checked) and its failure causes (None when none
    were read): the runs verified but wrong, each with its check's output, listed first."""
    wrong = run_sql(store_path, _VERIFIED_BUT_WRONG, run_id)
    suite = json.loads(run_sql(store_path, _SUITE, run_id).rows[0][0]).get("suite", {})
    # the runs of checked cases (a case the suite checks, or one a re-check gave checks)
    rows = [r for r in run_sql(store_path, _RUNS, run_id).rows if r[4] is not None or names_check(suite, r[0], r[1])]
    faults = sum(1 for r in rows if r[4] == "harness_fault")
    runs = len(rows) - faults
    checked = sum(1 for r in rows if r[4] is not None) - faults
    correct = sum(1 for r in rows if r[3])
    verified_checked = sum(1 for r in rows if r[2] and r[4] not in (None, "harness_fault"))
    verdicts = dict(run_sql(store_path, _VERDICTS, run_id).rows)
    causes = dict(run_sql(store_path, _CAUSES, run_id).rows)
    attempts = dict(run_sql(store_path, _ATTEMPT_CAUSES, run_id).rows)
    result: dict = {}
    if rows:
        low, high = wilson_interval(correct, runs)
        result["checks"] = {
            "verified_but_wrong": [dict(zip(wrong.columns, row, strict=True)) for row in wrong.rows],
            "runs": runs,
            "checked": checked,
            "correct": correct,
            "verified_and_checked": verified_checked,
            "correct_rate": round(correct / runs, 6) if runs else 0.0,
            "correct_rate_wilson_95": [round(low, 6), round(high, 6)],
            "verdicts": verdicts,
            "harness_faults": faults,
        }
    if attempts:
        result["failure_causes"] = {"last_failed_attempt": causes, "every_failed_attempt": attempts}
    return result or None


def correctness_lines(found: dict | None) -> list[str]:
    """For people: verified but wrong first (each with its check's detail), then the counts."""
    if not found:
        return []
    lines = []
    checks = found.get("checks")
    if checks and not checks["checked"]:
        lines.append(f"correct: 0 of {checks['runs']} runs (none saved a brick the harness could check)")
    elif checks:
        wrong = checks["verified_but_wrong"]
        lines.append(
            f"VERIFIED BUT WRONG: {len(wrong)} of {checks['verified_and_checked']} verified and checked runs "
            "(the target said verified; the harness's check says not)"
        )
        for row in wrong:
            variant = "" if row["variant_id"] in ("base", "baseline") else f" {row['variant_id']}"
            lines.append(f"  {row['case_id']}{variant} run {row['run_index']}: {row['verdict']}: {row['detail']}")
        low, high = checks["correct_rate_wilson_95"]
        verdicts = ", ".join(f"{v} {n}" for v, n in checks["verdicts"].items())
        lines.append(
            f"correct: {checks['correct']} of {checks['runs']} runs ({checks['correct_rate']:.1%}, Wilson 95% "
            f"{low:.1%}-{high:.1%}; a run without a brick is not correct); checks: {verdicts}"
            + (
                f"; {checks['harness_faults']} the harness could not run (in no rate)"
                if checks["harness_faults"]
                else ""
            )
        )
    causes = found.get("failure_causes")
    if causes:
        last = ", ".join(f"{c} {n}" for c, n in causes["last_failed_attempt"].items()) or "none"
        every = ", ".join(f"{c} {n}" for c, n in causes["every_failed_attempt"].items())
        lines.append(f"why validation failed: last attempt of each failed run: {last}; every failed attempt: {every}")
    return lines
