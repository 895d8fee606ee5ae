"""Listing and showing runs from the read models (through DuckDB, read-only)."""

from pathlib import Path

from ironbench.errors import RunNotFound
from ironbench.query import QueryResult, connect

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
       round(any_value(d.reproduce_lower_95), 3) AS reproduce_lower_95,
       round(any_value(d.success_upper_95), 3) AS success_upper_95,
       any_value(d.direction) AS direction,
       round(avg(i.attempts), 2) AS mean_attempts,
       round(quantile_cont(i.duration_ms, 0.95), 1) AS p95_duration_ms
FROM store.invocations i
LEFT JOIN store.decisions d ON d.run_id = i.run_id AND d.case_id = i.case_id AND d.variant_id = i.variant_id
WHERE i.run_id = ?
GROUP BY 1, 2
UNION ALL
-- a stress ladder's own verdict (boundary, tentative, ...) has no runs of its own
SELECT case_id, variant_id, n, successes, round(success_rate, 3),
       decision || coalesce(' at level ' || level, '') || coalesce(', p=' || round(p_value, 4), ''),
       round(wilson_low, 3), round(wilson_high, 3), round(chance_agreement, 3), NULL,
       round(success_upper_95, 3), NULL, NULL, NULL
FROM store.decisions WHERE run_id = ? AND variant_id = 'ladder'
ORDER BY 1, 2
"""


_GAUNTLET = """
SELECT s.engine, s.scenario, any_value(s.domain) AS domain, count(DISTINCT s.conversation) AS conversations,
       count(DISTINCT (s.conversation, s.turn)) AS turns,
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
        if header["mode"] == "gauntlet":
            cursor = con.execute(_GAUNTLET, [run_id])
        else:
            cursor = con.execute(_CASES, [run_id, run_id])
        return header, QueryResult([d[0] for d in cursor.description], cursor.fetchall())
    finally:
        con.close()
