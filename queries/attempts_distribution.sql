-- How many validation cycles runs needed, per suite and case.
SELECT
    suite_id,
    case_id,
    attempts,
    count(*) AS runs,
    count(*) FILTER (WHERE success) AS successes,
    round(count(*) / sum(count(*)) OVER (PARTITION BY suite_id, case_id), 3) AS share
FROM invocations
WHERE harness_error IS NULL AND infra_error IS NULL  -- the backend failed: no evidence
GROUP BY 1, 2, 3
ORDER BY suite_id, case_id, attempts;
