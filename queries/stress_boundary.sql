-- Stress ladders: success rate per level (Wilson 95% interval and the one-sided exact 95%
-- upper bound: 0/3 still allows 63%), and the ladder's verdict: `boundary` (the first level
-- failing systematically and significantly worse than level 0), `tentative`, `no_boundary`
-- or `fails_at_base` (level 0, the unchanged instruction, already fails), per run and case.
WITH levels AS (
    SELECT run_id, suite_id, case_id, generator, level, decision, n AS runs, successes,
           round(success_rate, 3) AS success_rate, round(wilson_low, 3) AS wilson_low,
           round(wilson_high, 3) AS wilson_high, round(success_upper_95, 3) AS success_upper_95
    FROM decisions
    WHERE case_mode = 'stress' AND variant_id <> 'ladder'
), boundaries AS (
    SELECT run_id, case_id, level AS boundary_level, decision AS ladder_decision, p_value AS boundary_p_value
    FROM decisions
    WHERE case_mode = 'stress' AND variant_id = 'ladder'
)
SELECT l.run_id, l.suite_id, l.case_id, l.generator, l.level, l.runs, l.successes, l.success_rate,
       l.wilson_low, l.wilson_high, l.success_upper_95, l.decision, b.boundary_level, b.ladder_decision,
       b.boundary_p_value,
       coalesce(l.level = b.boundary_level AND b.ladder_decision IN ('boundary', 'fails_at_base'), false)
           AS is_boundary
FROM levels l
LEFT JOIN boundaries b USING (run_id, case_id)
ORDER BY l.run_id, l.suite_id, l.case_id, l.level;
