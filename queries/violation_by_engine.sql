-- Gauntlet: per engine and scorer, conversations in which the engine asserted the
-- forbidden phrase at least once, with the Wilson 95% interval of that rate (the
-- conversation is the unit: its turns are not independent), and violated turns.
-- Lower is better.
WITH per_conversation AS (
    SELECT run_id, engine, scorer, scenario, conversation, count(*) AS turns,
           count(*) FILTER (WHERE violated::BOOLEAN) AS violations
    FROM turn_scores
    GROUP BY ALL
), counts AS (
    SELECT run_id, engine, scorer, count(DISTINCT scenario) AS scenarios,
           count(DISTINCT scenario) FILTER (WHERE violations > 0) AS scenarios_with_violation,
           count(*) AS conversations, count(*) FILTER (WHERE violations > 0) AS conversations_violated,
           sum(turns) AS turns, sum(violations) AS violations
    FROM per_conversation
    GROUP BY 1, 2, 3
), rates AS (
    SELECT *, conversations_violated / conversations AS p, conversations AS n, 1.959963984540054 AS z FROM counts
)
SELECT run_id, engine, scorer, scenarios, scenarios_with_violation, conversations, conversations_violated,
       round(p, 3) AS violation_rate,
       round((p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n), 3) AS wilson_low,
       round((p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n), 3) AS wilson_high,
       turns, violations
FROM rates
ORDER BY run_id, scorer, engine;
