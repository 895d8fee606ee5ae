-- Gauntlet: violations per engine and scorer, with the Wilson 95% interval of the
-- violation rate. Lower is better.
WITH counts AS (
    SELECT run_id, engine, scorer, count(*) AS turns, count(*) FILTER (WHERE violated::BOOLEAN) AS violations,
           count(DISTINCT scenario) FILTER (WHERE violated::BOOLEAN) AS scenarios_with_violation,
           count(DISTINCT scenario) AS scenarios
    FROM turn_scores
    GROUP BY 1, 2, 3
), rates AS (
    SELECT *, violations / turns AS p, 1.959963984540054 AS z FROM counts
)
SELECT run_id, engine, scorer, scenarios, scenarios_with_violation, turns, violations,
       round(p, 3) AS violation_rate,
       round((p + z * z / (2 * turns) - z * sqrt(p * (1 - p) / turns + z * z / (4 * turns * turns))) / (1 + z * z / turns), 3) AS wilson_low,
       round((p + z * z / (2 * turns) + z * sqrt(p * (1 - p) / turns + z * z / (4 * turns * turns))) / (1 + z * z / turns), 3) AS wilson_high
FROM rates
ORDER BY run_id, scorer, engine;
