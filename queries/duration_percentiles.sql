-- Wall-clock duration of invocations per suite and case, in milliseconds.
SELECT
    suite_id,
    case_id,
    count(*) AS runs,
    round(avg(duration_ms), 1) AS avg_ms,
    quantile_cont(duration_ms, 0.5) AS p50_ms,
    quantile_cont(duration_ms, 0.9) AS p90_ms,
    quantile_cont(duration_ms, 0.95) AS p95_ms,
    quantile_cont(duration_ms, 0.99) AS p99_ms,
    max(duration_ms) AS max_ms
FROM invocations
WHERE harness_error IS NULL AND infra_error IS NULL  -- the backend failed: no evidence
GROUP BY 1, 2
ORDER BY suite_id, case_id;
