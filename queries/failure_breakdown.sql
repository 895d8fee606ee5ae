-- Failures by stage per suite and case. Timeouts and harness faults are shown as
-- such, never as the target's own failure stage; runs whose backend failed
-- (infra_error) are no failure of the target and are left out.
SELECT
    suite_id,
    case_id,
    CASE
        WHEN harness_error IS NOT NULL THEN 'harness_error'
        WHEN timed_out THEN 'timeout'
        ELSE coalesce(failure_stage, 'unknown')
    END AS failure_stage,
    count(*) AS failures,
    round(count(*) / sum(count(*)) OVER (PARTITION BY suite_id, case_id), 3) AS share_of_failures
FROM invocations
WHERE NOT success AND infra_error IS NULL
GROUP BY 1, 2, 3
ORDER BY suite_id, case_id, failures DESC, failure_stage;
