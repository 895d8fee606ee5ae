"""The report's data: one SQL per part over the run's read models (DuckDB, read-only),
shaped into the records of `records.py`. Rendering never touches the store.

Decision rows travel whole (`SELECT *`): a column a later revision adds reaches the page
as a decision's `more`, without a change here. A section a store has no rows for is left out.
"""

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from ironbench.analysis.gate_verdict import GateVerdict
from ironbench.analysis.query import connect
from ironbench.core.events import RunAborted, VariantShortfall, event_from_dict
from ironbench.core.kinds import COMPLEXITIES, DIFFERED, JUDGED, MATERIAL
from ironbench.core.labels import group_path_sql, natural_key
from ironbench.core.outcome_codes import OUTCOME_CODE_SQL, OUTCOME_CODES, SUPERSEDED
from ironbench.report.records import (
    AdversarialCase,
    AdversarialSection,
    AttemptsRow,
    BaselineCase,
    BaselineSection,
    ChecksSection,
    CompareSection,
    ComplexityRow,
    ConversationCell,
    CostSection,
    Decision,
    EngineTotal,
    GauntletSection,
    GeneratorSensitivity,
    Group,
    Imported,
    Ladder,
    LadderLevel,
    ModelSection,
    NotEvidence,
    OutcomeRow,
    Rejection,
    ReportData,
    RobustnessSection,
    RunMeta,
    Scenario,
    Score,
    SensitivityCell,
    Shortfall,
    StressSection,
    Thread,
    Turn,
    TurnTally,
    Variant,
    VariantRow,
    from_json,
)
from ironbench.stats import pass_at_k, pass_hat_k, wilson_interval
from ironbench.suite import BaselineCase as SuiteBaselineCase
from ironbench.suite import StressCase as SuiteStressCase
from ironbench.suite import Suite

# Runs that say something about the target: harness faults and infrastructure errors are
# counted and shown, but never in a rate.
EVIDENCE = "harness_error IS NULL AND infra_error IS NULL"
GROUP_PATH = group_path_sql()
# The invocation columns the outcome code reads, typed as the views type them (for store.* tables).
TYPED = "SELECT * REPLACE (success::BOOLEAN AS success, timed_out::BOOLEAN AS timed_out) FROM store.invocations"

SQL = {
    "run": """
        SELECT r.*, e.started, e.aborted
        FROM runs r, (SELECT arg_min(payload, seq) FILTER (WHERE type = 'run_started') AS started,
                             arg_max(payload, seq) FILTER (WHERE type = 'run_aborted') AS aborted
                      FROM events WHERE type IN ('run_started', 'run_aborted')) e""",
    # Live attempts by outcome, and the attempts a re-run superseded (infrastructure errors).
    "outcomes": f"""
        SELECT coalesce(case_mode, mode) AS case_mode, {OUTCOME_CODE_SQL} AS code, count(*) AS runs,
               quantile_cont(duration_ms, 0.5) AS p50_ms, quantile_cont(duration_ms, 0.95) AS p95_ms
        FROM invocations GROUP BY ALL
        UNION ALL
        SELECT coalesce(case_mode, mode), '{SUPERSEDED}', count(*), quantile_cont(duration_ms, 0.5),
               quantile_cont(duration_ms, 0.95)
        FROM superseded_invocations GROUP BY ALL""",
    "groups": f"""
        WITH superseded AS (SELECT {GROUP_PATH} AS group_path, count(*) AS superseded
                            FROM superseded_invocations GROUP BY 1)
        SELECT g.* EXCLUDE (first_seq), coalesce(s.superseded, 0) AS superseded
        FROM (SELECT {GROUP_PATH} AS group_path, coalesce(case_mode, mode) AS case_mode, case_id, variant_id,
                     any_value(generator) AS generator, any_value(level) AS level,
                     any_value(complexity) AS complexity,
                     count(*) FILTER (WHERE {EVIDENCE}) AS n,
                     count(*) FILTER (WHERE {EVIDENCE} AND success) AS successes,
                     count(*) FILTER (WHERE {EVIDENCE} AND (timed_out OR failure_stage = 'timeout')) AS timeouts,
                     count(*) FILTER (WHERE NOT ({EVIDENCE})) AS excluded,
                     count(*) FILTER (WHERE infra_error IS NOT NULL) AS infra_errors,
                     string_agg({OUTCOME_CODE_SQL}, '' ORDER BY run_index) AS codes,
                     avg(attempts) FILTER (WHERE {EVIDENCE}) AS mean_attempts,
                     avg(repairs_triggered) FILTER (WHERE {EVIDENCE}) AS mean_repairs,
                     round(quantile_cont(duration_ms, 0.95)) AS p95_ms, min(seq) AS first_seq
              FROM invocations GROUP BY ALL) g
        LEFT JOIN superseded s USING (group_path)
        ORDER BY g.first_seq""",
    # Which stored baseline group a reference came from is in the decision's event only.
    "decisions": f"""
        SELECT d.* REPLACE ({GROUP_PATH} AS group_path),
               json_extract_string(e.payload, '$.reference_group') AS reference_group,
               -- a baseline that never settled: variants are judged against all of its outcomes
               CASE WHEN e.seq IS NOT NULL THEN coalesce(json_array_length(e.payload, '$.reference_outcomes'), 0) > 0
                    END AS reference_unstable
        FROM decisions d
        -- only reference decisions' payloads are read: scanning every decision's event is the slow part
        LEFT JOIN (SELECT seq, payload FROM events
                   WHERE seq IN (SELECT seq FROM decisions WHERE decision = 'reference')) e
               ON e.seq = d.seq
        ORDER BY d.seq""",
    # The outcomes of each stored baseline group a variant was judged against (another run's).
    "reference_runs": f"""
        WITH refs AS (SELECT DISTINCT d.reference_source AS run_id,
                             json_extract_string(e.payload, '$.reference_group') AS group_path
                      FROM decisions d JOIN (SELECT seq, payload FROM events WHERE type = 'decision_taken') e
                           ON e.seq = d.seq
                      WHERE d.decision = 'reference' AND d.reference_source <> 'this run')
        SELECT refs.run_id, refs.group_path, string_agg({OUTCOME_CODE_SQL}, '' ORDER BY i.run_index) AS codes
        FROM refs JOIN ({TYPED}) i ON i.run_id = refs.run_id AND {group_path_sql("i.")} = refs.group_path
        GROUP BY ALL""",
    "attempts": f"""
        SELECT coalesce(case_mode, mode) AS case_mode, attempts,
               count(*) FILTER (WHERE success) AS successes, count(*) FILTER (WHERE NOT success) AS failures
        FROM invocations WHERE {EVIDENCE} GROUP BY ALL ORDER BY 1, 2""",
    "variants": """
        SELECT v.case_mode, v.case_id, v.generator, v.variant_id, v.instruction, v.seed, v.attempt, v.dropped,
               v.reason, json_extract_string(e.payload, '$.metadata.model') AS model
        FROM variants v
        LEFT JOIN (SELECT seq, payload FROM events WHERE type = 'variant_generated') e ON e.seq = v.seq
        ORDER BY v.seq""",
    "rejections": """
        SELECT case_id, generator, variant_id, attempt, model, ai_output, failure_reasons
        FROM rejections ORDER BY seq""",
    # The gauntlet's unit is the conversation: counts per conversation, then turns as description.
    "conversations": """
        SELECT engine, scenario, any_value(domain) AS domain, scorer, conversation, count(*) AS turns,
               count(*) FILTER (WHERE violated) AS violations
        FROM turn_scores GROUP BY engine, scenario, scorer, conversation""",
    "per_turn": """
        SELECT engine, scorer, turn, count(*) AS conversations, count(*) FILTER (WHERE violated) AS violations
        FROM turn_scores GROUP BY ALL ORDER BY engine, scorer, turn""",
    "transcripts": """
        SELECT t.engine, t.scenario, t.domain, t.conversation, t.turn, t.prompt, t.answer, t.duration_ms,
               list({'scorer': s.scorer, 'violated': s.violated, 'detail': s.detail} ORDER BY s.scorer)
                   FILTER (WHERE s.scorer IS NOT NULL) AS scores
        FROM turns t LEFT JOIN turn_scores s USING (engine, scenario, conversation, turn)
        GROUP BY ALL ORDER BY t.engine, t.scenario, t.conversation, t.turn""",
    # Generators that made fewer variants than asked (recorded when the run was planned).
    "shortfalls": """
        SELECT type, schema_version, payload FROM events WHERE type = 'variant_shortfall' ORDER BY seq""",
    # `run --against`: the gate's design and its looks, as recorded.
    "gate": """
        SELECT type, schema_version, payload FROM events WHERE type IN ('gate_designed', 'gate_looked') ORDER BY seq""",
}
# An imported run's invocations: whether each kept the target's output, and the recorded
# fields its re-derived facts contradict.
IMPORTED_SQL = """
    SELECT coalesce(json_extract_string(payload, '$.stdout'), '') <> '', json_extract(payload, '$.disagrees')
    FROM events WHERE type = 'invocation_completed'"""


@dataclass(frozen=True)
class Rows:
    """A query's column names and rows."""

    names: list[str]
    rows: list[tuple]

    def records(self, cls: type, **read: Callable[[Any], Any]) -> list[Any]:
        """Each row as `cls`, by column name (columns it has no field for are ignored); `read`
        turns a column's stored value into its field's (JSON text into a list, say)."""
        known = {f.name for f in fields(cls)}
        at = [(k, name, read.get(name)) for k, name in enumerate(self.names) if name in known]
        return [cls(**{name: row[k] if f is None else f(row[k]) for k, name, f in at}) for row in self.rows]


@dataclass(frozen=True)
class Raw:
    """Every query of `SQL`, for one run (each view shows that run only)."""

    run: Rows
    outcomes: Rows
    groups: Rows
    decisions: Rows
    reference_runs: Rows
    attempts: Rows
    variants: Rows
    rejections: Rows
    conversations: Rows
    per_turn: Rows
    transcripts: Rows
    gate: Rows
    shortfalls: Rows
    cost: CostSection | None = None  # what its model calls cost (analysis/costs.py reads it)


def query(store_path: Path, run_id: str) -> Raw:
    con = connect(store_path, run_id)
    try:
        found = {}
        for name, sql in SQL.items():
            cursor = con.execute(sql)
            found[name] = Rows([d[0] for d in cursor.description], cursor.fetchall())
        return Raw(**found, cost=_cost(store_path, run_id, con))
    finally:
        con.close()


def gather(store_path: Path, run_id: str, compare_base: str | None = None, alpha: float = 0.05) -> ReportData:
    """The whole page's data for `run_id` (and its comparison against `compare_base`)."""
    from ironbench.analysis.correctness import correctness
    from ironbench.analysis.field import field_numbers
    from ironbench.analysis.model_traffic import model_traffic
    from ironbench.analysis.recorded import run_fences, run_suite

    data = shape(query(store_path, run_id), run_suite(store_path, run_id))
    numbers = field_numbers(store_path, run_id)
    checked = correctness(store_path, run_id) if data.run.mode != "gauntlet" else None
    data = replace(
        data,
        robustness=None if numbers.robustness is None else from_json(RobustnessSection, numbers.robustness),
        survival=numbers.survival,
        checks=None if checked is None else from_json(ChecksSection, checked.to_dict()),
        model=ModelSection.of(model_traffic(store_path, run_id)),
        fence=None if data.run.imported else run_fences(store_path, run_id),
    )
    if data.run.imported:
        data = _imported(store_path, run_id, data)
    if compare_base is None:
        return data
    from ironbench.analysis.compare import compare_runs

    comparison = compare_runs(store_path, compare_base, run_id, alpha)
    return replace(data, compare=CompareSection(comparison, comparison.cases))


def _cost(store_path: Path, run_id: str, con: Any) -> CostSection | None:
    """What the run's calls cost, and its suite's priced runs on the cost–correctness plane (the
    rate on correctness where this run was checked), read on the page's connection (opening one
    costs more than these reads)."""
    from ironbench.analysis.compare.cost import pareto, plane
    from ironbench.analysis.costs import run_cost

    spent = run_cost(store_path, run_id, con)
    if spent is None:
        return None
    on = "correct" if spent.target.correct is not None else "success"
    return CostSection.of(spent, on, pareto(plane(store_path, run_id, on, con)))


def _imported(store_path: Path, run_id: str, data: ReportData) -> ReportData:
    """An imported run's page data with where it came from and what its record gets wrong; a
    run another harness ran has no `ironbench resume` to run its outages again."""
    con = connect(store_path, run_id)
    try:
        rows = con.execute(IMPORTED_SQL).fetchall()
    finally:
        con.close()
    disagreements: Counter[str] = Counter()
    disagreeing = 0
    for _, disagrees in rows:
        named = json.loads(disagrees) if disagrees else []
        disagreements.update(named)
        disagreeing += bool(named)
    run = data.run
    assert run.imported is not None  # an imported run's
    imported = Imported(
        run.imported,
        run.imported_from,
        len(rows),
        sum(1 for kept, _ in rows if kept),
        dict(sorted(disagreements.items())),
        disagreeing,
    )
    data = replace(data, imported=imported)
    if imported.format != "outputs":
        return data
    return replace(
        data,
        baseline=data.baseline and replace(data.baseline, excluded=replace(data.baseline.excluded, rerun=False)),
        adversarial=data.adversarial
        and replace(data.adversarial, excluded=replace(data.adversarial.excluded, rerun=False)),
        stress=data.stress and replace(data.stress, excluded=replace(data.stress.excluded, rerun=False)),
    )


# -- shaping (pure) -------------------------------------------------------------------

_BOOKKEEPING = frozenset({"seq", "run_id", "suite_id", "mode", "timestamp_utc"})
_DECISION_FIELDS = frozenset(f.name for f in fields(Decision)) - {"more"}


def decision(names: list[str], row: tuple) -> Decision:
    """A decisions row: the fields this page names, and any other (a later revision's) as `more`."""
    named, more = {}, []
    for name, value in zip(names, row, strict=True):
        if name in _DECISION_FIELDS:
            named[name] = value
        elif name not in _BOOKKEEPING and value is not None:
            more.append((name, value))
    return Decision(**named, more=tuple(more))


def interval(successes: int, n: int) -> tuple[float, float, float]:
    """The rate and its Wilson 95% interval (0 without runs)."""
    low, high = wilson_interval(successes, n)
    return (successes / n if n else 0.0), low, high


def shape(raw: Raw, recorded: Suite) -> ReportData:
    """The page's data from the run's rows and the suite it recorded (typed)."""
    run, suite = _run_meta(raw.run)
    order = {c.code: k for k, c in enumerate(OUTCOME_CODES)}
    outcomes = sorted(raw.outcomes.records(OutcomeRow), key=lambda r: (r.case_mode, order.get(r.code, 99)))
    decisions = [decision(raw.decisions.names, row) for row in raw.decisions.rows]
    by_group = {d.group_path: d for d in decisions}
    groups = []
    for counted in raw.groups.records(Group):  # its counts; its rate, interval and decision follow from them
        rate, low, high = interval(counted.successes, counted.n)
        groups.append(replace(counted, rate=rate, low=low, high=high, decision=by_group.get(counted.group_path)))
    groups.sort(key=lambda g: natural_key(g.case_id))  # humaneval_2 before humaneval_12; within a case, as run
    baseline_groups = [g for g in groups if g.case_mode == "baseline"]
    adversarial_groups = [g for g in groups if g.case_mode == "adversarial"]
    stress_groups = [g for g in groups if g.case_mode == "stress"]
    variants = raw.variants.records(VariantRow)
    rejections = raw.rejections.records(Rejection, failure_reasons=lambda text: json.loads(text or "[]"))
    baseline = adversarial = stress = gauntlet = None
    if baseline_groups:
        attempts = [a for a in raw.attempts.records(AttemptsRow) if a.case_mode == "baseline"]
        baseline = _baseline(baseline_groups, recorded, attempts)
    adversarial_variants = [v for v in variants if v.case_mode == "adversarial"]
    shortfalls = _shortfalls(raw.shortfalls)
    if adversarial_groups or adversarial_variants or rejections or shortfalls:
        references = [d for d in decisions if d.case_mode == "adversarial" and d.decision == "reference"]
        adversarial = _adversarial(
            adversarial_groups, references, raw.reference_runs, recorded, adversarial_variants, rejections, shortfalls
        )
    stress_decisions = [d for d in decisions if d.case_mode == "stress"]
    if stress_groups or stress_decisions:
        stress_variants = [v for v in variants if v.case_mode == "stress"]
        stress = _stress(stress_groups, stress_decisions, recorded, stress_variants)
    if raw.conversations.rows or raw.transcripts.rows:
        gauntlet = _gauntlet(recorded, raw.conversations, raw.per_turn.records(TurnTally), raw.transcripts)
    gate = GateVerdict.of(
        run.run_id, [event_from_dict(kind, json.loads(payload), version) for kind, version, payload in raw.gate.rows]
    )
    return ReportData(run, suite, outcomes, baseline, adversarial, stress, gauntlet, gate=gate, cost=raw.cost)


def _run_meta(found: Rows) -> tuple[RunMeta, dict[str, Any]]:
    """The runs row plus everything run_started recorded (versions, platform, and any field a
    later ironbench adds), the recorded environment as a mapping; and the suite as recorded."""
    meta = dict(zip(found.names, found.rows[0], strict=True))
    started = json.loads(meta.pop("started") or "{}")
    aborted = json.loads(meta.pop("aborted") or "null")
    suite = started.pop("suite", {}) or {}
    for key, value in started.items():
        meta.setdefault(key, value)
    if isinstance(meta.get("environment"), str):
        try:
            meta["environment"] = json.loads(meta["environment"])
        except ValueError:
            pass  # shown as recorded
    rules = meta.get("rules")
    if isinstance(rules, dict):  # the whole definition stays in the store; the page names it
        del meta["rules"]
        meta["outcome_rules"] = f"{rules.get('name')} ({rules.get('source')}, sha256 {str(rules.get('sha256'))[:12]})"
    if aborted:
        meta["abort_reason"] = RunAborted.from_dict(aborted).reason
    for key in ("imported", "imported_from"):  # a run that was run here: nothing to say
        if meta.get(key) is None:
            meta.pop(key, None)
    named: dict[str, Any] = {f.name: meta.get(f.name) for f in fields(RunMeta) if f.name != "recorded"}
    return RunMeta(**named, recorded=meta), suite


def _parts(group: Group) -> dict[str, Any]:
    """A group's fields by name, to make one of its extensions (a baseline case, a stress level) of it."""
    return {f.name: getattr(group, f.name) for f in fields(Group)}


def _baseline(groups: list[Group], suite: Suite, attempts: list[AttemptsRow]) -> BaselineSection:
    rows = []
    for group in groups:
        case = suite.case(group.case_id)
        # the most runs the case could take: its rule's cap, else its `runs` (not recorded: what it took)
        planned = suite.max_runs(case) if isinstance(case, SuiteBaselineCase) else len(group.codes)
        rows.append(BaselineCase(**_parts(group), instruction=suite.instruction_of(group.case_id), planned=planned))
    return BaselineSection(rows, attempts, NotEvidence.total(groups), _complexities(groups))


def _complexities(groups: list[Group]) -> list[ComplexityRow]:
    """A canonical run's cases by complexity, smallest first (none: the run has no complexity)."""
    by: dict[str, list[Group]] = {}
    for group in groups:
        if group.complexity:
            by.setdefault(group.complexity, []).append(group)
    order: dict[str, int] = {name: k for k, name in enumerate(COMPLEXITIES)}
    rows = []
    for name in sorted(by, key=lambda c: (order.get(c, len(order)), c)):
        cases = by[name]
        n, successes = sum(c.n for c in cases), sum(c.successes for c in cases)
        k = min(c.n for c in cases)
        at = sum(pass_at_k(c.n, c.successes, k) for c in cases) / len(cases) if k else None
        hat = sum(pass_hat_k(c.n, c.successes, k) for c in cases) / len(cases) if k else None
        rows.append(ComplexityRow(name, len(cases), n, successes, *interval(successes, n), k, at, hat))
    return rows


@dataclass
class _Tally:
    """Judged variants of a case and generator (or of a generator across cases), as they add up."""

    variants: int = 0
    material: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    directions: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, direction: str | None) -> None:
        self.variants += 1
        if kind in DIFFERED:
            self.kinds[kind] += 1
        if kind in MATERIAL:
            self.material += 1
            way = direction or "unknown"
            self.directions[way] = self.directions.get(way, 0) + 1

    def merge(self, other: "_Tally") -> None:
        self.variants += other.variants
        self.material += other.material
        self.kinds.update(other.kinds)
        for way, count in other.directions.items():
            self.directions[way] = self.directions.get(way, 0) + count

    def counts(self) -> tuple[int, int, int, int, int, dict[str, int]]:
        """variants, material, structural, stochastic, within noise, directions."""
        structural, stochastic, within_noise = (self.kinds[k] for k in ("structural", "stochastic", "within_noise"))
        return self.variants, self.material, structural, stochastic, within_noise, self.directions


def _shortfalls(rows: Rows) -> dict[str, list[Shortfall]]:
    """Per case, its generators that made fewer variants than asked, read as recorded (typed)."""
    by_case: dict[str, list[Shortfall]] = {}
    for kind, version, payload in rows.rows:
        event = event_from_dict(kind, json.loads(payload), version)
        assert isinstance(event, VariantShortfall)  # (the query reads this type only)
        by_case.setdefault(event.case_id, []).append(
            Shortfall(event.generator, event.asked, event.made, event.reason, event.wordings, event.dropped)
        )
    return by_case


def _adversarial(
    groups: list[Group],
    references: list[Decision],
    reference_runs: Rows,
    suite: Suite,
    variants: list[VariantRow],
    rejections: list[Rejection],
    shortfalls: dict[str, list[Shortfall]],
) -> AdversarialSection:
    by_variant = {(g.case_id, g.variant_id): g for g in groups}
    reference_of = {d.case_id: d for d in references}
    stored = {(run_id, group): codes for run_id, group, codes in reference_runs.rows}  # another run's baselines
    made: dict[str, tuple[list[Variant], list[VariantRow]]] = {}
    for case_id in sorted(
        dict.fromkeys([v.case_id for v in variants] + [g.case_id for g in groups] + list(shortfalls)), key=natural_key
    ):
        made[case_id] = ([], [])
    for row in variants:
        listed, dropped = made[row.case_id]
        if row.dropped:
            dropped.append(row)
            continue
        group = by_variant.get((row.case_id, row.variant_id))
        listed.append(
            Variant(
                row.generator,
                row.variant_id,
                row.instruction,
                row.seed,
                row.attempt,
                row.model,
                group.codes if group else "",
                *((group.n, group.successes, group.timeouts, group.excluded, group.superseded) if group else (0,) * 5),
                group.decision if group else None,
            )
        )
    out_cases = []
    cells: dict[tuple[str, str], _Tally] = {}
    for case_id, (listed, dropped) in made.items():
        reference = reference_of.get(case_id)
        fresh = by_variant.get((case_id, "baseline"))
        codes = fresh.codes if fresh else None
        if reference and reference.reference_source not in (None, "this run"):
            codes = stored.get((reference.reference_source, reference.reference_group))
        instruction = suite.instruction_of(case_id) or ""
        out_cases.append(
            AdversarialCase(
                case_id, instruction, reference, codes, listed, dropped, shortfalls=shortfalls.get(case_id, [])
            )
        )
        for variant in listed:
            if variant.decision is None or variant.decided not in JUDGED:
                continue  # not decided yet: neither material nor not
            cells.setdefault((case_id, variant.generator), _Tally()).add(
                variant.decision.decision, variant.decision.direction
            )
    generators: dict[str, _Tally] = {}
    for (_, generator), tally in cells.items():
        generators.setdefault(generator, _Tally()).merge(tally)
    by_rate = [
        GeneratorSensitivity(name, *tally.counts(), *interval(tally.material, tally.variants))
        for name, tally in generators.items()
    ]
    return AdversarialSection(
        out_cases,
        [SensitivityCell(case_id, generator, *tally.counts()) for (case_id, generator), tally in cells.items()],
        sorted(by_rate, key=lambda g: (-g.rate, g.generator)),
        NotEvidence.total(groups),
        rejections,
    )


@dataclass
class _Climb:
    """A ladder as its groups and decisions arrive."""

    levels: list[LadderLevel] = field(default_factory=list)
    ladder: Decision | None = None
    generator: str | None = None


def _stress(groups: list[Group], decisions: list[Decision], suite: Suite, variants: list[VariantRow]) -> StressSection:
    texts = {(v.case_id, v.variant_id): v.instruction for v in variants if not v.dropped}
    climbs: dict[str, _Climb] = {}
    for group in groups:
        climb = climbs.setdefault(group.case_id, _Climb())
        climb.generator = climb.generator or group.generator
        climb.levels.append(LadderLevel(**_parts(group), instruction=texts.get((group.case_id, group.variant_id))))
    for found in decisions:
        if found.variant_id == "ladder":
            climbs.setdefault(found.case_id, _Climb(generator=found.generator)).ladder = found
    ladders = []
    for case_id, climb in sorted(climbs.items(), key=lambda item: natural_key(item[0])):
        case = suite.case(case_id)
        planned = case.stress_ladder if isinstance(case, SuiteStressCase) else None  # (not recorded: None)
        verdict = climb.ladder
        kind, at = (verdict.decision, verdict.level) if verdict else (None, None)
        ladders.append(
            Ladder(
                case_id,
                sorted(climb.levels, key=lambda level: level.level if level.level is not None else -1),
                verdict,
                climb.generator or ", ".join(dict.fromkeys(level.generator for level in planned or ())) or None,
                suite.instruction_of(case_id) or "",
                None if planned is None else len(planned),
                kind,  # boundary, tentative, fails_at_base (level 0) or no_boundary; None while it climbs
                at,
                at if kind == "boundary" else None,
            )
        )
    return StressSection(ladders, NotEvidence.total(groups))


def _gauntlet(suite: Suite, conversations: Rows, per_turn: list[TurnTally], transcripts: Rows) -> GauntletSection:
    """The run's gauntlet summary as `ironbench.projections.gauntlet_summary` makes it (conversations as
    the unit, every pair of engines compared), plus per-turn counts and the transcripts."""
    from ironbench.projections.gauntlet_summary import PRIMARY_SCORER, summary_from_counts

    names = [s.name for s in suite.scenarios]
    # rows of (engine, scenario, domain, scorer, conversation, turns, violated turns)
    table = summary_from_counts(conversations.rows, suite.engine_names, names)
    threads = _threads(transcripts)
    seen = {row[0] for row in conversations.rows} | {t.engine for t in threads}
    engines = [e for e in table.totals if e in seen] + sorted(seen - set(table.totals))
    seen_scenarios = {row[1] for row in conversations.rows} | {t.scenario for t in threads}
    shown = [n for n in names if n in seen_scenarios] + sorted(seen_scenarios - set(names))
    scenarios = [_scenario(suite, name) for name in shown]
    scorers = sorted(table.scorers, key=lambda s: (s != PRIMARY_SCORER, s))
    cells = [
        ConversationCell(
            engine,
            name,
            scorer,
            counts.num_conversations,
            counts.violated(scorer),
            counts.num_turns,
            counts.turn_violations(scorer),
        )
        for name, row in table.scenarios.items()
        for engine, counts in row.engines.items()
        for scorer in scorers
    ]
    totals = []
    for engine in engines:
        total = table.totals.get(engine)
        if not total or not total.num_conversations:
            continue
        scenarios_run = sum(1 for row in table.scenarios.values() if engine in row.engines)
        for scorer in scorers:
            violated = total.conversations_violated.get(scorer, 0)
            totals.append(
                EngineTotal(
                    engine,
                    scorer,
                    scenarios_run,
                    total.num_conversations,
                    violated,
                    *interval(violated, total.num_conversations),
                    total.num_turns,
                    total.num_violations.get(scorer, 0),
                )
            )
    engine_order = {e: i for i, e in enumerate(engines)}
    scenario_order = {s.name: i for i, s in enumerate(scenarios)}
    ordered = sorted(
        threads,
        key=lambda t: (scenario_order.get(t.scenario, 1e9), t.conversation, engine_order.get(t.engine, 1e9)),
    )
    return GauntletSection(
        "conversation",
        engines,
        scenarios,
        scorers,
        cells,
        per_turn,
        totals,
        {s: table.comparisons.get(s, []) for s in scorers},
        ordered,
    )


def _scenario(suite: Suite, name: str) -> Scenario:
    """A scenario as the suite recorded it (one it does not name: its name only)."""
    found = suite.scenario(name)
    return Scenario(name, "", "") if found is None else Scenario(name, found.domain, found.forbidden_phrase)


def _threads(transcripts: Rows) -> list[Thread]:
    """Each conversation's turns in order (rows are ordered by engine, scenario, conversation, turn)."""
    threads: dict[tuple[str, str, int], Thread] = {}
    for engine, scenario, domain, conversation, turn, prompt, answer, duration_ms, scores in transcripts.rows:
        thread = threads.setdefault(
            (engine, scenario, conversation), Thread(engine, scenario, domain, conversation, [])
        )
        shown = None if scores is None else [Score(**score) for score in scores]
        thread.turns.append(Turn(turn, prompt, answer, duration_ms, shown))
    return list(threads.values())
