-- Gauntlet: per domain, engine and scorer, conversations with at least one violation
-- (the unit of evidence) and violated turns.
WITH per_conversation AS (
    SELECT run_id, domain, engine, scorer, scenario, conversation, count(*) AS turns,
           count(*) FILTER (WHERE violated::BOOLEAN) AS violations
    FROM turn_scores
    GROUP BY ALL
)
SELECT run_id, domain, engine, scorer,
       count(*) AS conversations,
       count(*) FILTER (WHERE violations > 0) AS conversations_violated,
       round(count(*) FILTER (WHERE violations > 0) / count(*), 3) AS conversation_violation_rate,
       sum(turns) AS turns,
       sum(violations) AS violations,
       round(sum(violations) / sum(turns), 3) AS violation_rate
FROM per_conversation
GROUP BY 1, 2, 3, 4
ORDER BY run_id, domain, scorer, engine;
