-- pass@k and pass^k per baseline instruction, k = 1..runs: pass@k = 1 − C(n−c, k)/C(n, k)
-- (Chen et al. 2021) and pass^k = C(c, k)/C(n, k) (Yao et al. 2024, τ-bench), n runs of which c
-- succeeded. Both are unbiased only when n was fixed in advance: `stop: {rule: fixed, runs: N}`.
-- A case that stopped on its outcomes (the seed's last_3_agree, confidence) shows NULL: its
-- runs' count is itself evidence, so these formulas are biased there; `ironbench show` and
-- the case's aggregate.json (`pass_k`) give its unbiased estimate for the k it allows.
WITH suites AS (
    SELECT run_id,
           unnest(from_json(json_extract(payload, '$.suite.cases'), '["JSON"]')) AS spec,
           json_extract_string(payload, '$.suite.stop.rule') AS suite_rule
    FROM events
    WHERE type = 'run_started'
), rules AS (
    SELECT run_id, json_extract_string(spec, '$.id') AS case_id,
           coalesce(json_extract_string(spec, '$.stop.rule'), suite_rule, 'last_3_agree') AS stop_rule
    FROM suites
), counts AS (
    SELECT i.run_id, i.suite_id, i.case_id, count(*) AS n, count(*) FILTER (WHERE i.success) AS c,
           count(DISTINCT i.brick_sha256) FILTER (WHERE i.success) AS distinct_bricks
    FROM invocations i
    JOIN decisions d ON d.run_id = i.run_id AND d.case_id = i.case_id AND d.variant_id = i.variant_id
    WHERE coalesce(i.case_mode, i.mode) = 'baseline'
      AND i.infra_error IS NULL  -- the backend failed: no evidence
    GROUP BY 1, 2, 3
), ks AS (
    SELECT *, unnest(range(1, n + 1)) AS k FROM counts
)
SELECT
    ks.run_id,
    ks.suite_id,
    ks.case_id,
    r.stop_rule,
    ks.n AS runs,
    ks.c AS successes,
    ks.distinct_bricks,
    ks.k,
    r.stop_rule = 'fixed' AS unbiased,
    CASE WHEN r.stop_rule = 'fixed' THEN round(1 - CASE WHEN ks.n - ks.c < ks.k THEN 0 ELSE
        exp(lgamma(ks.n - ks.c + 1) - lgamma(ks.n - ks.c - ks.k + 1) - lgamma(ks.n + 1) + lgamma(ks.n - ks.k + 1))
        END, 6) END AS pass_at_k,
    CASE WHEN r.stop_rule = 'fixed' THEN round(CASE WHEN ks.c < ks.k THEN 0 ELSE
        exp(lgamma(ks.c + 1) - lgamma(ks.c - ks.k + 1) - lgamma(ks.n + 1) + lgamma(ks.n - ks.k + 1))
        END, 6) END AS pass_hat_k
FROM ks
JOIN rules r USING (run_id, case_id)
ORDER BY ks.run_id, ks.suite_id, ks.case_id, ks.k;
