"""Listing and showing runs from the read models (through DuckDB, read-only)."""

from collections import Counter
from pathlib import Path

from ironbench.errors import RunNotFound
from ironbench.query import REPO_QUERIES, QueryResult, connect, run_sql

_RUNS = """
SELECT r.run_id, r.suite_id, r.mode, r.status, r.started_utc, r.finished_utc,
       count(i.invocation_key) AS invocations,
       count(i.invocation_key) FILTER (WHERE i.success::BOOLEAN) AS successes,
       r.ironclad_version
FROM store.runs r LEFT JOIN store.invocations i USING (run_id)
GROUP BY ALL ORDER BY r.started_utc
"""

_CASES = """
SELECT i.case_id, i.variant_id, count(*) AS runs,
       count(*) FILTER (WHERE i.success::BOOLEAN) AS successes,
       round(count(*) FILTER (WHERE i.success::BOOLEAN) / count(*), 3) AS success_rate,
       any_value(d.decision) AS decision,
       round(any_value(d.wilson_low), 3) AS wilson_low,
       round(any_value(d.wilson_high), 3) AS wilson_high,
       round(any_value(d.chance_agreement), 3) AS chance_agreement,
       round(avg(i.attempts), 2) AS mean_attempts,
       round(quantile_cont(i.duration_ms, 0.95), 1) AS p95_duration_ms
FROM store.invocations i
LEFT JOIN store.decisions d ON d.run_id = i.run_id AND d.case_id = i.case_id AND d.variant_id = i.variant_id
WHERE i.run_id = ?
GROUP BY 1, 2 ORDER BY 1, 2
"""


_GAUNTLET = """
SELECT s.engine, s.scenario, any_value(s.domain) AS domain, count(DISTINCT s.turn) AS turns,
       count(*) FILTER (WHERE s.scorer = 'literal' AND s.violated::BOOLEAN) AS literal_violations,
       count(*) FILTER (WHERE s.scorer = 'negation_aware' AND s.violated::BOOLEAN) AS negation_aware_violations
FROM store.turn_scores s
WHERE s.run_id = ?
GROUP BY 1, 2 ORDER BY 2, 1
"""


def list_runs(store_path: Path) -> QueryResult:
    con = connect(store_path)
    try:
        cursor = con.execute(_RUNS)
        return QueryResult([d[0] for d in cursor.description], cursor.fetchall())
    finally:
        con.close()


def show_run(store_path: Path, run_id: str) -> tuple[dict, QueryResult]:
    con = connect(store_path)
    try:
        cursor = con.execute(f"SELECT * FROM ({_RUNS}) WHERE run_id = ?", [run_id])
        row = cursor.fetchone()
        if row is None:
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        header = dict(zip([d[0] for d in cursor.description], row))
        cursor = con.execute(_GAUNTLET if header["mode"] == "gauntlet" else _CASES, [run_id])
        return header, QueryResult([d[0] for d in cursor.description], cursor.fetchall())
    finally:
        con.close()


def ai_acceptance(store_path: Path, run_id: str) -> QueryResult:
    """Per AI generator: attempts, accepted, acceptance rate, accepted variants run."""
    return run_sql(store_path, (REPO_QUERIES / "ai_acceptance.sql").read_text(encoding="utf-8"), run_id,
                   source="ai_acceptance.sql")


_SUMMARY_INVOCATIONS = """
SELECT count(*), count(*) FILTER (WHERE success),
       list(coalesce(failure_stage, CASE WHEN timed_out THEN 'timeout' ELSE 'unknown' END))
           FILTER (WHERE NOT success)
FROM invocations
"""
_SUMMARY_DECISIONS = """
SELECT case_mode, case_id, variant_id, decision, n, successes, wilson_low, wilson_high, level
FROM decisions ORDER BY seq
"""


def run_summary(store_path: Path, run_id: str) -> list[str]:
    """A few lines saying what a finished baseline/adversarial/stress run found."""
    invocations = run_sql(store_path, _SUMMARY_INVOCATIONS, run_id).rows[0]
    decisions = run_sql(store_path, _SUMMARY_DECISIONS, run_id).rows
    acceptance = ai_acceptance(store_path, run_id)
    return summary_lines(run_id, invocations, decisions, acceptance)


def summary_lines(run_id: str, invocations: tuple, decisions: list[tuple], acceptance: QueryResult) -> list[str]:
    total, successes, stages = invocations
    stage_counts = Counter(stages or [])
    lines = [f"{run_id}: {total} invocations, {successes} succeeded"
             + (f"; failures by stage: {', '.join(f'{s} {n}' for s, n in stage_counts.most_common())}"
                if stage_counts else "")]
    baseline, adversarial, stress = [], {}, []
    for mode, case_id, variant_id, decision, n, wins, low, high, level in decisions:
        if mode == "baseline":
            baseline.append(f"  baseline {case_id}: {decision} after {n} runs, {wins} of {n} succeeded "
                            f"(Wilson 95% {low:.2f}-{high:.2f})")
        elif mode == "adversarial" and decision != "reference":
            adversarial.setdefault(case_id, Counter())[decision] += 1
        elif mode == "stress" and variant_id == "ladder":
            stress.append(f"  stress {case_id}: " + (f"capability boundary at level {level}" if decision == "boundary"
                                                     else "no boundary: no level failed systematically"))
    lines += baseline
    lines += [f"  adversarial {case_id}: {sum(counts.values())} variants: "
              + ", ".join(f"{n} {d}" for d, n in counts.most_common()) for case_id, counts in adversarial.items()]
    lines += stress
    columns = acceptance.columns
    if acceptance.rows:
        rows = [dict(zip(columns, row)) for row in acceptance.rows]
        lines.append("  AI rewrites: " + ", ".join(
            f"{r['generator']} {r['accepted']} of {r['attempts']} accepted" for r in rows)
            + f"; {sum(r['accepted_and_run'] for r in rows)} accepted variants run")
    return lines
