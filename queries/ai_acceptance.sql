-- AI rewrites: per generator and case, how many answers the model gave, how many
-- were accepted as variants (and run against the target), and the acceptance rate
-- (accepted / attempts). Rejection reasons are in the rejections view.
WITH attempts AS (
    SELECT
        run_id,
        json_extract_string(payload, '$.case_id') AS case_id,
        json_extract_string(payload, '$.generator') AS generator,
        json_extract_string(payload, '$.variant_id') AS variant_id,
        type = 'variant_generated' AS accepted
    FROM events
    WHERE type = 'ai_output_rejected'
       OR (type = 'variant_generated' AND json_extract_string(payload, '$.metadata.source') = 'ai')
),
ran AS (
    SELECT DISTINCT run_id, case_id, variant_id FROM invocations
)
SELECT
    r.suite_id,
    a.case_id,
    a.generator,
    count(*) AS attempts,
    count(*) FILTER (WHERE a.accepted) AS accepted,
    count(*) FILTER (WHERE NOT a.accepted) AS rejected,
    round(count(*) FILTER (WHERE a.accepted) / count(*), 3) AS acceptance_rate,
    count(ran.variant_id) FILTER (WHERE a.accepted) AS accepted_and_run
FROM attempts a
JOIN runs r USING (run_id)
LEFT JOIN ran ON ran.run_id = a.run_id AND ran.case_id = a.case_id AND ran.variant_id = a.variant_id
GROUP BY 1, 2, 3
ORDER BY 1, 2, 3;
