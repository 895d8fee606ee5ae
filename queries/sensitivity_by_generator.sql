-- Adversarial sensitivity: per generator and case, how many variants changed the
-- outcome materially against the baseline (first run differed), and of those how
-- many stayed different on every repeat (structural) or not (stochastic). Against an
-- unstable baseline, a difference its own noise explains is `within_noise` (not material).
-- Which decisions are judged variants, and which of those material: the decision_kinds view.
SELECT
    suite_id,
    case_id,
    generator,
    count(*) AS variants,
    count(*) FILTER (WHERE material) AS material,
    count(*) FILTER (WHERE decision = 'structural') AS structural,
    count(*) FILTER (WHERE decision = 'stochastic') AS stochastic,
    count(*) FILTER (WHERE decision = 'within_noise') AS within_noise,
    round(count(*) FILTER (WHERE material) / count(*), 3) AS material_change_rate,
    round(count(*) FILTER (WHERE decision = 'structural') / count(*), 3) AS structural_rate
FROM decisions JOIN decision_kinds USING (decision)
WHERE case_mode = 'adversarial' AND judged
GROUP BY 1, 2, 3
ORDER BY suite_id, case_id, material_change_rate DESC, generator;
