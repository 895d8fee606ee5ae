-- What each run's cases cost: the target's model calls (every attempt's: re-runs and runs past
-- a decision were paid for), per invocation, per success and per correct brick (where checked),
-- beside the success rate; and ironbench's own calls (AI rewrites, the rewrite guard) apart.
-- cost_usd is a lower bound where calls are unpriced (a model no price knows: give --price).
WITH attempts AS (
    SELECT run_id, case_id, infra_error, success, correct FROM invocations
    UNION ALL SELECT run_id, case_id, 'superseded', false, NULL FROM superseded_invocations
    UNION ALL SELECT run_id, case_id, 'surplus', false, NULL FROM surplus_invocations
), runs AS (
    SELECT run_id, case_id, count(*) AS invocations,
           count(*) FILTER (WHERE infra_error IS NULL) AS evidence,
           count(*) FILTER (WHERE infra_error IS NULL AND success) AS successes,
           CASE WHEN count(correct) > 0 THEN count(*) FILTER (WHERE infra_error IS NULL AND correct) END AS correct
    FROM attempts GROUP BY 1, 2
), spent AS (
    SELECT run_id, case_id, sum(cost_usd) AS cost_usd, count(*) AS calls,
           count(*) FILTER (WHERE pricing = 'unpriced') AS unpriced_calls
    FROM costs WHERE caller = 'target' GROUP BY 1, 2
), own AS (
    SELECT run_id, case_id, sum(cost_usd) AS own_usd FROM costs WHERE caller NOT IN ('target', 'engine') GROUP BY 1, 2
)
SELECT
    r.run_id,
    r.case_id,
    r.invocations,
    round(r.successes / nullif(r.evidence, 0), 3) AS success_rate,
    s.calls,
    s.unpriced_calls,
    s.cost_usd,
    s.cost_usd / r.invocations AS per_invocation,
    s.cost_usd / nullif(r.successes, 0) AS per_success,
    s.cost_usd / nullif(r.correct, 0) AS per_correct,
    coalesce(o.own_usd, 0) AS own_usd
FROM runs r
JOIN spent s USING (run_id, case_id)
LEFT JOIN own o USING (run_id, case_id)
ORDER BY r.run_id, r.case_id;
