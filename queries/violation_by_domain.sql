-- Gauntlet: violations per domain, engine and scorer.
SELECT run_id, domain, engine, scorer,
       count(*) AS turns,
       count(*) FILTER (WHERE violated::BOOLEAN) AS violations,
       round(count(*) FILTER (WHERE violated::BOOLEAN) / count(*), 3) AS violation_rate
FROM turn_scores
GROUP BY 1, 2, 3, 4
ORDER BY run_id, domain, scorer, engine;
