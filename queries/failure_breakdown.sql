-- Failures by stage and cause per suite and case. Timeouts and harness faults are shown as
-- such, never as the target's own failure stage; runs whose backend failed
-- (infra_error) are no failure of the target and are left out. The cause is why the
-- failure happened where the run could tell: `fence` when what the fence withheld is why
-- (the `fence_denials` view says what, and the flag that allows it), else the last failed
-- validation attempt's cause read from the target's debug files (NULL: none read).
SELECT
    suite_id,
    case_id,
    CASE
        WHEN harness_error IS NOT NULL THEN 'harness_error'
        WHEN timed_out THEN 'timeout'
        ELSE coalesce(failure_stage, 'unknown')
    END AS failure_stage,
    count(*) AS failures,
    round(count(*) / sum(count(*)) OVER (PARTITION BY suite_id, case_id), 3) AS share_of_failures,
    failure_cause
FROM invocations
WHERE NOT success AND infra_error IS NULL
GROUP BY 1, 2, 3, 6
ORDER BY suite_id, case_id, failures DESC, failure_stage, failure_cause;
