"""Gauntlet results: per engine and scenario, conversations, turns and violations per scorer,
and within the run every pair of engines compared. Pure.

The unit of evidence is the conversation, not the turn: a conversation's turns answer
the same pressure in one context and are not independent. An engine "violated" a
conversation when it asserted the forbidden phrase at least once in it.
"""

from dataclasses import dataclass, field

from ironbench.console.numbers import number, points
from ironbench.stats import holm_adjust, significant, stratified_difference, stratified_exact_test, wilson_interval

ALPHA = 0.05

PRIMARY_SCORER = "negation_aware"


@dataclass
class TurnRecord:
    turn: int
    prompt: str
    answer: str
    violated: dict[str, bool] = field(default_factory=dict)


@dataclass
class ScenarioRecord:
    engine: str
    scenario: str
    domain: str
    forbidden_phrase: str
    conversation: int = 1
    turns: dict[int, TurnRecord] = field(default_factory=dict)


def results(records: list[ScenarioRecord], engines: list[str], scorers: list[str]) -> dict:
    """The run's JSON artifact: engine -> scenario -> turns of every conversation, plus counts."""
    out: dict = {"engines": {}, "summary": {}}
    for engine in engines:
        scenarios: dict = {}
        for record in sorted((r for r in records if r.engine == engine), key=lambda r: r.conversation):
            entry = scenarios.setdefault(
                record.scenario,
                {
                    "domain": record.domain,
                    "forbidden_phrase": record.forbidden_phrase,
                    "turns": [],
                    "num_conversations": 0,
                    "conversations_violated": {s: 0 for s in scorers},
                },
            )
            turns = [record.turns[t] for t in sorted(record.turns)]
            entry["num_conversations"] += 1
            for s in scorers:
                entry["conversations_violated"][s] += any(t.violated.get(s) for t in turns)
            entry["turns"] += [
                {
                    "conversation": record.conversation,
                    "turn": t.turn,
                    "prompt": t.prompt,
                    "answer": t.answer,
                    "violated": {s: t.violated[s] for s in scorers if s in t.violated},
                }
                for t in turns
            ]
        for entry in scenarios.values():
            counts = {s: sum(1 for t in entry["turns"] if t["violated"].get(s)) for s in scorers}
            entry["num_turns"] = len(entry["turns"])
            entry["num_violations"] = counts
            entry["violation_rate"] = {
                s: round(counts[s] / entry["num_turns"], 6) if entry["num_turns"] else 0.0 for s in scorers
            }
        out["engines"][engine] = scenarios
    out["summary"] = summary(out["engines"], scorers)
    return out


def summary(engines: dict, scorers: list[str]) -> dict:
    """Per scenario per engine: conversations violated and turns violated; totals per engine
    with the Wilson interval of the conversation violation rate; every pair of engines compared."""
    table: dict = {"scorers": scorers, "unit": "conversation", "scenarios": {}, "totals": {}, "comparisons": {}}
    for engine, scenarios in engines.items():
        turns = conversations = 0
        violations = {s: 0 for s in scorers}
        violated = {s: 0 for s in scorers}
        for name, data in scenarios.items():
            row = table["scenarios"].setdefault(name, {"domain": data["domain"], "engines": {}})
            row["engines"][engine] = {
                key: data[key] for key in ("num_conversations", "conversations_violated", "num_turns", "num_violations")
            }
            turns += data["num_turns"]
            conversations += data["num_conversations"]
            for s in scorers:
                violations[s] += data["num_violations"].get(s, 0)
                violated[s] += data["conversations_violated"].get(s, 0)
        table["totals"][engine] = {
            "num_conversations": conversations,
            "conversations_violated": violated,
            "conversation_violation_rate": {
                s: round(violated[s] / conversations, 6) if conversations else 0.0 for s in scorers
            },
            "conversation_violation_wilson_95": {
                s: [round(x, 6) for x in wilson_interval(violated[s], conversations)] for s in scorers
            },
            "num_turns": turns,
            "num_violations": violations,
            "violation_rate": {s: round(violations[s] / turns, 6) if turns else 0.0 for s in scorers},
        }
    for s in scorers:
        table["comparisons"][s] = engine_comparisons(table, s)
    return table


def engine_comparisons(table: dict, scorer: str, alpha: float = ALPHA) -> list[dict]:
    """Every later engine against every earlier one (the first listed is usually the plain
    model): the difference in conversation violation rate, stratified by scenario
    (Mantel-Haenszel, stratified Newcombe 95% CI), the two-sided exact test stratified by
    scenario, Holm-adjusted over the pairs, and one plain sentence."""
    engines = list(table["totals"])
    pairs = []
    for i, reference in enumerate(engines):
        for other in engines[i + 1 :]:
            strata = []
            for row in table["scenarios"].values():
                a, b = row["engines"].get(reference), row["engines"].get(other)
                if a and b and a["num_conversations"] and b["num_conversations"]:
                    # success = a conversation without a violation, so B − A < 0 means more violations
                    strata.append(
                        (
                            a["num_conversations"] - a["conversations_violated"].get(scorer, 0),
                            a["num_conversations"],
                            b["num_conversations"] - b["conversations_violated"].get(scorer, 0),
                            b["num_conversations"],
                        )
                    )
            if strata:
                pairs.append((reference, other, strata))
    adjusted = holm_adjust([stratified_exact_test(s).p_two_sided for _, _, s in pairs])
    out = []
    for (reference, other, strata), p_adjusted in zip(pairs, adjusted, strict=True):
        test = stratified_exact_test(strata)
        clean = stratified_difference(strata)
        delta, low, high = -clean.delta, -clean.high, -clean.low  # in violation rate: other − reference
        verdict = "cannot be told apart" if not significant(p_adjusted, alpha) else "helped" if delta < 0 else "hurt"
        v_ref = sum(n_a - s_a for s_a, n_a, _, _ in strata)
        v_other = sum(n_b - s_b for _, _, s_b, n_b in strata)
        n_ref, n_other = sum(s[1] for s in strata), sum(s[3] for s in strata)
        evidence = (
            f"violated {v_other}/{n_other} conversations against {v_ref}/{n_ref}; difference "
            f"{points(delta)} (95% CI {points(low, unit='')} to {points(high)}), "
            f"p = {number(p_adjusted, '.2g')} (exact, stratified by {len(strata)} scenario(s), "
            f"Holm over {len(pairs)} pair(s))"
        )
        if verdict == "cannot be told apart":
            sentence = f"{other} vs {reference}: cannot be told apart: {other} {evidence}"
        else:
            sentence = (
                f"{other} vs {reference}: {other} {verdict} ("
                f"{'fewer' if verdict == 'helped' else 'more'} violations): {other} {evidence}"
            )
        out.append(
            {
                "engine": other,
                "reference": reference,
                "verdict": verdict,
                "delta": round(delta, 6),
                "delta_ci_95": [round(low, 6), round(high, 6)],
                "p_value": test.p_two_sided,
                "p_adjusted": p_adjusted,
                "conversations": [n_ref, n_other],
                "violated": [v_ref, v_other],
                "scenarios": len(strata),
                "sentence": sentence,
            }
        )
    return out


def verdict_sentences(table: dict) -> list[str]:
    """The plain sentences a run ends with: does each engine help against the earlier ones?"""
    scorer = (
        PRIMARY_SCORER
        if PRIMARY_SCORER in table.get("comparisons", {})
        else next(iter(table.get("comparisons", {})), None)
    )
    return [c["sentence"] for c in table.get("comparisons", {}).get(scorer, [])] if scorer else []


def summary_from_counts(rows, spec: dict) -> dict:
    """The comparison table from per-conversation counts: rows of (engine, scenario, domain,
    scorer, conversation, turns, violated turns), and the suite as recorded (for its order)."""
    scorers = sorted({r[3] for r in rows})
    engines: dict = {e["name"]: {} for e in spec.get("engines", [])}
    seen: dict = {}
    for engine, scenario, domain, scorer, conversation, turns, violations in sorted(rows, key=lambda r: r[4]):
        entry = engines.setdefault(engine, {}).setdefault(
            scenario,
            {
                "domain": domain,
                "num_conversations": 0,
                "conversations_violated": {s: 0 for s in scorers},
                "num_turns": 0,
                "num_violations": {s: 0 for s in scorers},
            },
        )
        if (engine, scenario, conversation) not in seen:
            seen[(engine, scenario, conversation)] = True
            entry["num_conversations"] += 1
            entry["num_turns"] += turns
        entry["num_violations"][scorer] += violations
        entry["conversations_violated"][scorer] += violations > 0
    order = [s["name"] for s in spec.get("scenarios", [])]
    for engine, scenarios in engines.items():
        engines[engine] = dict(
            sorted(scenarios.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
        )
    return summary(engines, scorers)
