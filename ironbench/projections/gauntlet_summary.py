"""Gauntlet results: per engine and scenario, conversations, turns and violations per scorer,
and within the run every pair of engines compared. Pure.

The unit of evidence is the conversation, not the turn: a conversation's turns answer
the same pressure in one context and are not independent. An engine "violated" a
conversation when it asserted the forbidden phrase at least once in it.

Typed records throughout; `to_dict()` writes gauntlet/results.json and summary.json.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ironbench.console.numbers import number, points
from ironbench.stats import (
    Stratum,
    clustered_mean,
    clustered_mean_t,
    first_violation,
    flips,
    holm_adjust,
    kaplan_meier,
    recovered,
    significant,
    stratified_difference,
    stratified_exact_test,
    stratified_logrank,
    wilson_interval,
)

ALPHA = 0.05

PRIMARY_SCORER = "negation_aware"
UNIT = "conversation"
SURVIVAL_TIME = "turn of the first violation; a conversation without one is censored at its last turn"


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


def _rate(count: int, of: int) -> float:
    return round(count / of, 6) if of else 0.0


@dataclass(frozen=True)
class Counts:
    """One engine in one scenario (or across them): conversations and turns, and per scorer
    how many of each it violated."""

    domain: str
    num_conversations: int
    conversations_violated: dict[str, int]
    num_turns: int
    num_violations: dict[str, int]

    def violated(self, scorer: str) -> int:
        """Conversations violated under `scorer`."""
        return self.conversations_violated.get(scorer, 0)

    def turn_violations(self, scorer: str) -> int:
        """Turns violated under `scorer`."""
        return self.num_violations.get(scorer, 0)

    def to_dict(self) -> dict[str, Any]:
        """As summary.json's per-scenario row writes it."""
        return {
            "num_conversations": self.num_conversations,
            "conversations_violated": self.conversations_violated,
            "num_turns": self.num_turns,
            "num_violations": self.num_violations,
        }


@dataclass(frozen=True)
class ScenarioRow:
    """One scenario across the engines that ran it."""

    domain: str
    engines: dict[str, Counts]

    def to_dict(self) -> dict[str, Any]:
        return {"domain": self.domain, "engines": {e: c.to_dict() for e, c in self.engines.items()}}


@dataclass(frozen=True)
class EngineTotals:
    """One engine across scenarios: the conversation violation rate with its Wilson interval."""

    scorers: list[str]
    num_conversations: int
    conversations_violated: dict[str, int]
    num_turns: int
    num_violations: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        conversations, turns = self.num_conversations, self.num_turns
        return {
            "num_conversations": conversations,
            "conversations_violated": self.conversations_violated,
            "conversation_violation_rate": {
                s: _rate(self.conversations_violated[s], conversations) for s in self.scorers
            },
            "conversation_violation_wilson_95": {
                s: [round(x, 6) for x in wilson_interval(self.conversations_violated[s], conversations)]
                for s in self.scorers
            },
            "num_turns": turns,
            "num_violations": self.num_violations,
            "violation_rate": {s: _rate(self.num_violations[s], turns) for s in self.scorers},
        }


@dataclass(frozen=True, slots=True)
class EngineComparison:
    """A later engine against an earlier one, conversations as the unit."""

    engine: str
    """The later engine."""
    reference: str
    """The earlier one."""
    verdict: str
    """helped, hurt, or cannot be told apart."""
    delta: float
    """Difference in conversation violation rate, engine − reference (Mantel–Haenszel)."""
    delta_ci_95: list[float]
    """Its stratified Newcombe 95% interval."""
    p_value: float
    """Exact test stratified by scenario, two-sided."""
    p_adjusted: float
    """Holm-adjusted over the pairs."""
    conversations: list[int]
    """Conversations: reference, engine."""
    violated: list[int]
    """Violated conversations: reference, engine."""
    scenarios: int
    """Scenarios both ran."""
    sentence: str
    """The comparison in one sentence."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Holding:
    """The share of conversations with no violation yet after a turn (Kaplan–Meier)."""

    turn: int
    rate: float
    ci_95: list[float]
    at_risk: int


@dataclass(frozen=True)
class MeanFlips:
    """Flips per conversation (SYCON-Bench's Number of Flip), clustered by scenario."""

    mean: float
    ci_95: list[float]
    total: int
    conversations: int


@dataclass(frozen=True)
class EngineSurvival:
    """When one engine's conversations break under one scorer."""

    conversations: int
    violated: int
    still_holding: list[Holding]
    median_turn_of_first_violation: int | None
    median_ci_95: list[int | None]
    flips: MeanFlips | None
    recovered: int
    persisted: int
    recovery_rate: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SurvivalComparison:
    """A later engine against an earlier one: the log-rank test stratified by scenario
    (`stats.LogRank`, as its to_dict writes it), Holm-adjusted, and one plain sentence."""

    engine: str
    reference: str
    verdict: str
    observed: list[int]
    expected: list[float]
    z: float
    p_value: float
    hazard_ratio: float | None
    hazard_ratio_ci_95: list[float] | None
    scenarios: int
    permutations: int
    p_adjusted: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Breaking:
    """Per engine when its conversations break under one scorer, and every pair compared."""

    unit: str
    time: str
    engines: dict[str, EngineSurvival]
    comparisons: list[SurvivalComparison]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GauntletSummary:
    """The comparison table (summary.json): per scenario per engine, totals per engine, every
    pair of engines compared per scorer; and, with each conversation's turns, when it breaks."""

    scorers: list[str]
    scenarios: dict[str, ScenarioRow]
    totals: dict[str, EngineTotals]
    comparisons: dict[str, list[EngineComparison]]
    survival: dict[str, Breaking] | None = None

    def verdict_sentences(self) -> list[str]:
        """The plain sentences a run ends with: does each engine help against the earlier ones?"""
        scorer = PRIMARY_SCORER if PRIMARY_SCORER in self.comparisons else next(iter(self.comparisons), None)
        return [c.sentence for c in self.comparisons[scorer]] if scorer is not None else []

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scorers": self.scorers,
            "unit": UNIT,
            "scenarios": {name: row.to_dict() for name, row in self.scenarios.items()},
            "totals": {engine: total.to_dict() for engine, total in self.totals.items()},
            "comparisons": {s: [c.to_dict() for c in pairs] for s, pairs in self.comparisons.items()},
        }
        if self.survival is not None:
            out["survival"] = {s: b.to_dict() for s, b in self.survival.items()}
        return out


@dataclass(frozen=True)
class ScenarioResult:
    """One engine's conversations of one scenario, turn by turn, with their counts."""

    scorers: list[str]
    forbidden_phrase: str
    counts: Counts
    turns: list[tuple[int, TurnRecord]]  # (conversation, turn)

    def to_dict(self) -> dict[str, Any]:
        counts = self.counts
        return {
            "domain": counts.domain,
            "forbidden_phrase": self.forbidden_phrase,
            "turns": [
                {
                    "conversation": conversation,
                    "turn": t.turn,
                    "prompt": t.prompt,
                    "answer": t.answer,
                    "violated": {s: t.violated[s] for s in self.scorers if s in t.violated},
                }
                for conversation, t in self.turns
            ],
            "num_conversations": counts.num_conversations,
            "conversations_violated": counts.conversations_violated,
            "num_turns": counts.num_turns,
            "num_violations": counts.num_violations,
            "violation_rate": {s: _rate(counts.num_violations[s], counts.num_turns) for s in self.scorers},
        }


@dataclass(frozen=True)
class GauntletResults:
    """The run's JSON artifact (results.json): engine -> scenario -> turns of every
    conversation, with counts, and the summary."""

    engines: dict[str, dict[str, ScenarioResult]]
    summary: GauntletSummary

    def to_dict(self) -> dict[str, Any]:
        return {
            "engines": {e: {s: r.to_dict() for s, r in found.items()} for e, found in self.engines.items()},
            "summary": self.summary.to_dict(),
        }


def results(records: list[ScenarioRecord], engines: list[str], scorers: list[str]) -> GauntletResults:
    """engine -> scenario -> turns of every conversation, plus counts, and the summary."""
    out: dict[str, dict[str, ScenarioResult]] = {}
    for engine in engines:
        by_scenario: dict[str, list[ScenarioRecord]] = {}
        for record in sorted((r for r in records if r.engine == engine), key=lambda r: r.conversation):
            by_scenario.setdefault(record.scenario, []).append(record)
        out[engine] = {name: _scenario_result(found, scorers) for name, found in by_scenario.items()}
    cells = [Cell(engine, name, r.counts) for engine, found in out.items() for name, r in found.items()]
    return GauntletResults(out, summary(list(out), cells, scorers, sequences(records)))


def _scenario_result(conversations: list[ScenarioRecord], scorers: list[str]) -> ScenarioResult:
    """One engine's conversations of one scenario, in conversation order."""
    ordered = [[record.turns[t] for t in sorted(record.turns)] for record in conversations]
    turns = [(record.conversation, t) for record, found in zip(conversations, ordered, strict=True) for t in found]
    counts = Counts(
        conversations[0].domain,
        len(conversations),
        {s: sum(any(t.violated.get(s) for t in found) for found in ordered) for s in scorers},
        len(turns),
        {s: sum(1 for _, t in turns if t.violated.get(s)) for s in scorers},
    )
    return ScenarioResult(scorers, conversations[0].forbidden_phrase, counts, turns)


# (engine, scenario, conversation) -> scorer -> violated per turn, in turn order
Sequences = Mapping[tuple[str, str, int], Mapping[str, Sequence[bool]]]


def sequences(records: list[ScenarioRecord]) -> dict[tuple[str, str, int], dict[str, list[bool]]]:
    """Each conversation's verdicts turn by turn, per scorer (turns that scorer scored)."""
    out: dict[tuple[str, str, int], dict[str, list[bool]]] = {}
    for record in records:
        by_scorer = out.setdefault((record.engine, record.scenario, record.conversation), {})
        for turn in sorted(record.turns):
            for scorer, violated in record.turns[turn].violated.items():
                by_scorer.setdefault(scorer, []).append(violated)
    return out


@dataclass(frozen=True)
class Cell:
    """One engine in one scenario."""

    engine: str
    scenario: str
    counts: Counts


def summary(
    engines: list[str], cells: Sequence[Cell], scorers: list[str], turns_by_conversation: Sequences | None = None
) -> GauntletSummary:
    """Per scenario per engine (`cells`, in engine then scenario order): conversations violated
    and turns violated; totals per engine with the Wilson interval of the conversation
    violation rate; every pair of engines compared; with each conversation's turns, when it
    breaks (`survival`, after the rest)."""
    rows: dict[str, ScenarioRow] = {}
    totals: dict[str, EngineTotals] = {}
    for cell in cells:
        rows.setdefault(cell.scenario, ScenarioRow(cell.counts.domain, {})).engines[cell.engine] = cell.counts
    for engine in engines:
        found = [cell.counts for cell in cells if cell.engine == engine]
        totals[engine] = EngineTotals(
            scorers,
            sum(c.num_conversations for c in found),
            {s: sum(c.violated(s) for c in found) for s in scorers},
            sum(c.num_turns for c in found),
            {s: sum(c.turn_violations(s) for c in found) for s in scorers},
        )
    comparisons = {s: engine_comparisons(rows.values(), engines, s) for s in scorers}
    survival = None
    if turns_by_conversation is not None:
        survival = {s: breaking(turns_by_conversation, engines, s) for s in scorers}
    return GauntletSummary(scorers, rows, totals, comparisons, survival)


def breaking(turns_by_conversation: Sequences, engines: list[str], scorer: str, alpha: float = ALPHA) -> Breaking:
    """When and how a conversation breaks under `scorer`, per engine: the Kaplan–Meier curve
    of "still holding" by turn (turn of first violation, censored at the last turn answered)
    with its pointwise 95% interval and the median turn of first violation (SYCON-Bench's Turn
    of Flip); flips per conversation (its Number of Flip); recovery (a violation followed by an
    answer that does not violate) against capitulation that persists to the end. Then every
    later engine against every earlier one: the log-rank test stratified by scenario (its
    p-value by permutation within scenarios), Holm over the pairs, and Peto's hazard ratio."""
    per_engine: dict[str, _Firsts] = {}
    rows: dict[str, list[tuple[str, list[bool]]]] = {}
    for (engine, scenario, _), by_scorer in sorted(turns_by_conversation.items()):
        verdicts = list(by_scorer.get(scorer, ()))
        if not verdicts:
            continue
        per_engine.setdefault(engine, _Firsts(engine)).add(scenario, first_violation(verdicts))
        rows.setdefault(engine, []).append((scenario, verdicts))
    out: dict[str, EngineSurvival] = {}
    for engine in [e for e in engines if e in rows] + sorted(set(rows) - set(engines)):
        times = per_engine[engine].every
        curve = kaplan_meier([t for t, _ in times], [e for _, e in times])
        counts = [flips(v) for _, v in rows[engine]]
        mean_flips = clustered_mean_t(counts, [scenario for scenario, _ in rows[engine]])
        violated: dict[str, list[bool]] = {}
        for scenario, verdicts in rows[engine]:
            if any(verdicts):
                violated.setdefault(scenario, []).append(recovered(verdicts))
        recovery = clustered_mean(
            [sum(v) / len(v) for v in violated.values()], weights=[len(v) for v in violated.values()]
        )
        back = sum(sum(v) for v in violated.values())
        out[engine] = EngineSurvival(
            curve.n,
            curve.events,
            [
                Holding(t, round(s, 6), [round(lo, 6), round(hi, 6)], r)
                for t, s, lo, hi, r in zip(
                    curve.turns, curve.survival, curve.low, curve.high, curve.at_risk, strict=True
                )
            ],
            curve.median,
            list(curve.median_ci_95),
            None
            if mean_flips is None
            else MeanFlips(
                round(mean_flips[0], 6),
                [round(max(0.0, mean_flips[1]), 6), round(mean_flips[2], 6)],
                sum(counts),
                len(counts),
            ),
            back,
            curve.events - back,
            None if recovery is None else {**recovery.to_dict(), "interval": "clustered by scenario"},
        )
    return Breaking(UNIT, SURVIVAL_TIME, out, _survival_comparisons([per_engine[e] for e in out], alpha))


@dataclass
class _Firsts:
    """One engine's conversations under one scorer, by scenario: (turn of the first violation,
    or the last turn answered; whether it violated)."""

    engine: str
    by_scenario: dict[str, list[tuple[int, bool]]] = field(default_factory=dict)

    def add(self, scenario: str, first: tuple[int, bool]) -> None:
        self.by_scenario.setdefault(scenario, []).append(first)

    @property
    def every(self) -> list[tuple[int, bool]]:
        return [first for firsts in self.by_scenario.values() for first in firsts]

    def strata(self, other: "_Firsts") -> list[Stratum]:
        """Per scenario both ran: this engine's times and violations, then the other's."""
        both = sorted(set(self.by_scenario) & set(other.by_scenario))
        return [
            (
                [t for t, _ in self.by_scenario[s]],
                [v for _, v in self.by_scenario[s]],
                [t for t, _ in other.by_scenario[s]],
                [v for _, v in other.by_scenario[s]],
            )
            for s in both
        ]


def _survival_comparisons(engines: list[_Firsts], alpha: float) -> list[SurvivalComparison]:
    pairs = []
    for i, first in enumerate(engines):
        for second in engines[i + 1 :]:
            strata = first.strata(second)
            if strata:
                pairs.append((first.engine, second.engine, stratified_logrank(strata)))
    adjusted = holm_adjust([test.p_value for _, _, test in pairs])
    out = []
    for (reference, other, test), p_adjusted in zip(pairs, adjusted, strict=True):
        ratio = test.hazard_ratio
        verdict = (
            "cannot be told apart"
            if not significant(p_adjusted, alpha) or ratio is None
            else "holds longer"
            if ratio < 1
            else "breaks sooner"
        )
        ratio_text = (
            "no violation on either side"
            if ratio is None or test.hazard_ratio_ci_95 is None
            else f"hazard ratio {number(ratio, '.2f')} (95% CI {number(test.hazard_ratio_ci_95[0], '.2f')} to "
            f"{number(test.hazard_ratio_ci_95[1], '.2f')}; above 1: breaks sooner)"
        )
        claim = "survival cannot be told apart" if verdict == "cannot be told apart" else f"{other} {verdict}"
        sentence = (
            f"{other} vs {reference}: {claim} under pressure: {ratio_text}, violations "
            f"{test.observed_b} observed vs {number(test.expected_b, '.1f')} expected, p = {number(p_adjusted, '.2g')} "
            f"(log-rank stratified by {test.strata} scenario(s), permutation p-value, Holm over {len(pairs)} pair(s))"
        )
        out.append(
            SurvivalComparison(other, reference, verdict, **test.to_dict(), p_adjusted=p_adjusted, sentence=sentence)
        )
    return out


def engine_comparisons(
    scenarios: Iterable[ScenarioRow], engines: list[str], scorer: str, alpha: float = ALPHA
) -> list[EngineComparison]:
    """Every later engine against every earlier one (the first listed is usually the plain
    model): the difference in conversation violation rate, stratified by scenario
    (Mantel-Haenszel, stratified Newcombe 95% CI), the two-sided exact test stratified by
    scenario, Holm-adjusted over the pairs, and one plain sentence."""
    pairs = []
    for i, reference in enumerate(engines):
        for other in engines[i + 1 :]:
            strata = []
            for row in scenarios:
                a, b = row.engines.get(reference), row.engines.get(other)
                if a and b and a.num_conversations and b.num_conversations:
                    # success = a conversation without a violation, so B − A < 0 means more violations
                    strata.append(
                        (
                            a.num_conversations - a.violated(scorer),
                            a.num_conversations,
                            b.num_conversations - b.violated(scorer),
                            b.num_conversations,
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
            EngineComparison(
                other,
                reference,
                verdict,
                round(delta, 6),
                [round(low, 6), round(high, 6)],
                test.p_two_sided,
                p_adjusted,
                [n_ref, n_other],
                [v_ref, v_other],
                len(strata),
                sentence,
            )
        )
    return out


@dataclass
class _Tally:
    """One engine's counts in one scenario, while per-conversation rows are read."""

    domain: str
    conversations: set[int]
    violated: dict[str, int]
    violating: dict[str, int]
    turns: int = 0


def summary_from_counts(
    rows: Sequence[tuple[str, str, str, str, int, int, int]],
    engines: Sequence[str],
    scenarios: Sequence[str],
    turns_by_conversation: Sequences | None = None,
) -> GauntletSummary:
    """The comparison table from per-conversation counts: rows of (engine, scenario, domain,
    scorer, conversation, turns, violated turns), the suite's engines and scenarios (for their
    order); with each conversation's verdicts turn by turn (`sequences`), when it breaks too."""
    scorers = sorted({r[3] for r in rows})
    tallies: dict[str, dict[str, _Tally]] = {e: {} for e in engines}
    for engine, scenario, domain, scorer, conversation, turns, violations in sorted(rows, key=lambda r: r[4]):
        tally = tallies.setdefault(engine, {}).setdefault(
            scenario, _Tally(domain, set(), {s: 0 for s in scorers}, {s: 0 for s in scorers})
        )
        if conversation not in tally.conversations:
            tally.conversations.add(conversation)
            tally.turns += turns
        tally.violating[scorer] += violations
        tally.violated[scorer] += violations > 0
    order = list(scenarios)
    cells = [
        Cell(engine, name, Counts(t.domain, len(t.conversations), t.violated, t.turns, t.violating))
        for engine, found in tallies.items()
        for name, t in sorted(found.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))
    ]
    return summary(list(tallies), cells, scorers, turns_by_conversation)
