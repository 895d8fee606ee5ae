-- Adaptive-stopping decisions: did each case converge, after how many runs, how likely
-- was the agreement by chance alone (p^3 + (1-p)^3), and what do the runs support: the
-- one-sided 95% lower bound on the chance of reproducing the agreed outcome.
SELECT
    run_id,
    suite_id,
    case_id,
    variant_id,
    decision,
    n AS runs,
    successes,
    round(success_rate, 3) AS success_rate,
    round(wilson_low, 3) AS wilson_low,
    round(wilson_high, 3) AS wilson_high,
    round(chance_agreement, 3) AS chance_agreement,
    round(reproduce_lower_95, 3) AS reproduce_lower_95,
    reason
FROM decisions
ORDER BY run_id, suite_id, case_id, variant_id;
