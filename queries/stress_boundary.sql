-- Stress ladders: success rate per level and the capability boundary (the first
-- level whose failure is systematic), per run and case. Level 0 is the unchanged
-- instruction; when it already fails systematically the ladder "fails_at_base"
-- (boundary_level 0) and names no boundary.
WITH levels AS (
    SELECT run_id, suite_id, case_id, generator, level, decision, n AS runs, successes,
           round(success_rate, 3) AS success_rate, round(wilson_low, 3) AS wilson_low,
           round(wilson_high, 3) AS wilson_high
    FROM decisions
    WHERE case_mode = 'stress' AND variant_id <> 'ladder'
), boundaries AS (
    SELECT run_id, case_id, level AS boundary_level, decision AS ladder_decision
    FROM decisions
    WHERE case_mode = 'stress' AND variant_id = 'ladder'
)
SELECT l.run_id, l.suite_id, l.case_id, l.generator, l.level, l.runs, l.successes, l.success_rate,
       l.wilson_low, l.wilson_high, l.decision, b.boundary_level,
       coalesce(l.level = b.boundary_level, false) AS is_boundary
FROM levels l
LEFT JOIN boundaries b USING (run_id, case_id)
ORDER BY l.run_id, l.suite_id, l.case_id, l.level;
