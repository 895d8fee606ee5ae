-- Gauntlet scorers side by side: for every pair of scorers that judged the same
-- turns, how often they agree, and where they differ which one saw a violation.
-- (e.g. after `ironbench rescore RUN --scorer judge`: judge against literal.)
SELECT
    a.scorer AS scorer_a,
    b.scorer AS scorer_b,
    count(*) AS turns,
    count(*) FILTER (WHERE a.violated = b.violated) AS agree,
    round(count(*) FILTER (WHERE a.violated = b.violated) / count(*), 3) AS agreement,
    count(*) FILTER (WHERE a.violated AND b.violated) AS both_violated,
    count(*) FILTER (WHERE a.violated AND NOT b.violated) AS only_a_violated,
    count(*) FILTER (WHERE b.violated AND NOT a.violated) AS only_b_violated
FROM turn_scores a
JOIN turn_scores b
  ON a.run_id = b.run_id AND a.engine = b.engine AND a.scenario = b.scenario AND a.turn = b.turn
 AND a.scorer < b.scorer
GROUP BY 1, 2
ORDER BY 1, 2;
