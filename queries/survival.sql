-- When a gauntlet conversation breaks, per engine and scorer: the Kaplan–Meier estimate of
-- "still holding" (no violation yet) after each turn, the turn of first violation being the
-- time and a conversation without one censored at its last turn (SYCON-Bench's Turn of Flip),
-- with Greenwood's variance on the log-log scale (pointwise 95%). Flips, recovery and the
-- log-rank comparison of engines are in gauntlet/summary.json, `ironbench show` and the report.
WITH conversations AS (
    SELECT run_id, engine, scorer, scenario, conversation,
           min(turn) FILTER (WHERE violated) AS first_violation, max(turn) AS last_turn
    FROM turn_scores
    GROUP BY ALL
), times AS (
    SELECT run_id, engine, scorer, coalesce(first_violation, last_turn) AS t,
           first_violation IS NOT NULL AS event
    FROM conversations
), turns AS (
    SELECT DISTINCT run_id, engine, scorer, unnest(range(1, (SELECT max(t) FROM times) + 1)) AS turn
    FROM times
), steps AS (
    SELECT u.run_id, u.engine, u.scorer, u.turn,
           count(*) FILTER (WHERE x.t >= u.turn) AS at_risk,
           count(*) FILTER (WHERE x.t = u.turn AND x.event) AS violated
    FROM turns u JOIN times x USING (run_id, engine, scorer)
    GROUP BY ALL
), curve AS (
    SELECT *,
           exp(sum(CASE WHEN at_risk > 0 AND violated < at_risk THEN ln(1 - violated / at_risk) ELSE 0 END)
               OVER w) * CASE WHEN bool_or(at_risk > 0 AND violated = at_risk) OVER w THEN 0 ELSE 1 END AS s,
           sum(CASE WHEN at_risk > violated THEN violated / (at_risk * (at_risk - violated)) ELSE 0 END) OVER w
               AS greenwood
    FROM steps
    WINDOW w AS (PARTITION BY run_id, engine, scorer ORDER BY turn)
)
SELECT run_id, engine, scorer, turn, at_risk, violated, round(s, 6) AS still_holding,
       -- before any violation: the exact binomial bound for no event among those at risk
       round(CASE WHEN s <= 0 THEN 0 WHEN s >= 1 OR greenwood = 0 THEN 0.025 ** (1 / at_risk)
                  ELSE s ** exp(1.959963984540054 * sqrt(greenwood) / abs(ln(s))) END, 6) AS ci_low,
       round(CASE WHEN s <= 0 THEN 0 WHEN s >= 1 OR greenwood = 0 THEN 1
                  ELSE s ** exp(-1.959963984540054 * sqrt(greenwood) / abs(ln(s))) END, 6) AS ci_high
FROM curve
WHERE at_risk > 0
ORDER BY run_id, scorer, engine, turn;
