-- Success rate per suite and case with its Wilson 95% interval.
WITH counts AS (
    SELECT suite_id, case_id, count(*) AS runs, count(*) FILTER (WHERE success) AS successes
    FROM invocations
    WHERE harness_error IS NULL AND infra_error IS NULL  -- the backend failed: no evidence
    GROUP BY 1, 2
), rates AS (
    SELECT *, successes / runs AS p, 1.959963984540054 AS z FROM counts
)
SELECT
    suite_id,
    case_id,
    runs,
    successes,
    round(p, 3) AS success_rate,
    round((p + z * z / (2 * runs) - z * sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))) / (1 + z * z / runs), 3) AS wilson_low,
    round((p + z * z / (2 * runs) + z * sqrt(p * (1 - p) / runs + z * z / (4 * runs * runs))) / (1 + z * z / runs), 3) AS wilson_high
FROM rates
ORDER BY suite_id, case_id;
