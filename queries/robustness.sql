-- Robustness to rewording per adversarial case and generator (ReCode, Wang et al. 2023; HELM's
-- worst case): the base outcome the variants were judged against, each variant's first run
-- (later runs are the verdict's adaptive repeats and would bias these rates), robust pass
-- (the base and every variant succeeded), the worst case over the variants, and flips in
-- both directions over the variants that could flip, with Wilson 95% intervals. Across cases
-- (the case as cluster) these are in `ironbench show` and the report.
WITH reference AS (
    SELECT run_id, json_extract_string(payload, '$.case_id') AS case_id,
           json_extract(payload, '$.reference[0]')::BOOLEAN AS base_success,
           json_extract(payload, '$.successes')::INTEGER AS base_successes,
           json_extract(payload, '$.n')::INTEGER AS base_runs
    FROM events
    WHERE type = 'decision_taken' AND json_extract_string(payload, '$.decision') = 'reference'
), firsts AS (
    SELECT i.run_id, i.case_id, i.generator, i.variant_id, arg_min(i.success, i.run_index) AS first_success
    FROM invocations i
    JOIN decisions d ON d.run_id = i.run_id AND d.case_id = i.case_id AND d.variant_id = i.variant_id
    JOIN decision_kinds k ON k.decision = d.decision
    WHERE i.case_mode = 'adversarial' AND i.generator IS NOT NULL AND i.infra_error IS NULL AND k.judged
    GROUP BY 1, 2, 3, 4
), cells AS (
    SELECT f.run_id, f.case_id, f.generator, any_value(r.base_success) AS base_success,
           any_value(r.base_successes) AS base_successes, any_value(r.base_runs) AS base_runs,
           count(*) AS variants, count(*) FILTER (WHERE f.first_success) AS variants_succeeded,
           count(*) FILTER (WHERE f.first_success <> r.base_success) AS flipped
    FROM firsts f JOIN reference r USING (run_id, case_id)
    GROUP BY 1, 2, 3
), rates AS (
    SELECT *, flipped / variants AS p, variants AS n, 1.959963984540054 AS z FROM cells
)
SELECT run_id, case_id, generator, base_success, base_successes, base_runs, variants, variants_succeeded,
       base_success AND variants_succeeded = variants AS robust_pass,
       CASE WHEN variants_succeeded = variants THEN 1.0 ELSE 0.0 END AS worst_case_success_rate,
       CASE WHEN base_successes > 0 THEN round((base_successes / base_runs
            - CASE WHEN variants_succeeded = variants THEN 1.0 ELSE 0.0 END) / (base_successes / base_runs), 6)
            END AS robust_drop,
       CASE WHEN base_success THEN 'success_to_failure' ELSE 'failure_to_success' END AS flip_direction,
       flipped,
       round(p, 3) AS flip_rate,
       round((p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n), 3) AS flip_wilson_low,
       round((p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n), 3) AS flip_wilson_high
FROM rates
ORDER BY run_id, case_id, generator;
