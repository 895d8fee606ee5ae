"""The report's data, typed: what `gather` reads from the store, `listing` cuts, `verdict`
judges and the sections draw. Frozen records, one per thing a page shows.

A record's fields are in the order the page embeds them (`embedded.py` says what each
leaves out). What `ironbench show` computes for the page (robustness, checks) is read from
its JSON once, by `from_json`, into records of the JSON's own shape.
"""

import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, is_dataclass
from typing import Any, Self, TypeVar, Union, get_args, get_origin, get_type_hints

from ironbench.analysis.compare import CaseComparison, Comparison
from ironbench.analysis.compare.cost import CostPoint
from ironbench.analysis.costs import CaseCost, RunCost
from ironbench.analysis.field import Survival
from ironbench.analysis.gate_verdict import GateVerdict
from ironbench.analysis.model_traffic import ModelTraffic, Traffic
from ironbench.analysis.recorded import FenceSeen
from ironbench.core.events import GroupDecision
from ironbench.core.outcome_codes import EXCLUDED_CODES
from ironbench.projections.costs import money
from ironbench.projections.gauntlet_summary import EngineComparison


@dataclass(frozen=True, slots=True)
class LeftOut:
    """What a section of a run too large to list whole leaves out, and where to see it."""

    listed: int
    """How many of its items the page lists."""
    of: int
    """How many there are."""
    which: str
    """Which ones it lists, in words."""
    see: str
    """The commands (in `backquotes`) that show the others."""


@dataclass(frozen=True, slots=True)
class NotEvidence:
    """A section's runs that no rate counts (harness faults, infrastructure errors, attempts a
    re-run superseded), and its timeouts, which count as failures of their own kind."""

    timeouts: int = 0
    """Runs that timed out (evidence: a failure, stage timeout)."""
    excluded: int = 0
    """Runs that are not evidence: harness errors and infrastructure errors not yet re-run."""
    infra_errors: int = 0
    """Of the excluded, those whose backend failed (`ironbench resume` runs them again)."""
    superseded: int = 0
    """Attempts an infrastructure error made run again (the re-run counts)."""
    rerun: bool = True
    """Whether `ironbench resume` can run its infrastructure errors again (not a run another harness ran)."""

    @classmethod
    def total(cls, groups: "Sequence[Group]") -> Self:
        return cls(
            sum(g.timeouts for g in groups),
            sum(g.excluded for g in groups),
            sum(g.infra_errors for g in groups),
            sum(g.superseded for g in groups),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision(GroupDecision):
    """A stopping decision with its evidence as the decisions view holds it, and what its event
    adds: the stored baseline group a reference came from, and whether it settled."""

    reference_unstable: bool | None = None
    """A reference whose baseline never settled (variants are judged against all of its outcomes)."""
    group_path: str = ""
    """The group it decides (a stress ladder: its track)."""
    case_mode: str | None = None
    """The mode of its case."""
    more: tuple[tuple[str, Any], ...] = ()
    """Fields a later ironbench records that this page does not name yet, shown as they are."""


@dataclass(frozen=True, slots=True)
class Group:
    """One group's runs as the invocations view counts them: a baseline case, a variant, a
    stress level, or the fresh baseline of an adversarial case."""

    group_path: str
    """Its path in the run (`baseline/<case>`, `adversarial/<case>/<variant>`, ...)."""
    case_mode: str
    """The mode of its case."""
    case_id: str
    """Its case."""
    variant_id: str | None
    """Its variant (`base` for a baseline case)."""
    generator: str | None
    """The generator that made its instruction."""
    level: int | None
    """A stress level's number."""
    n: int
    """Runs that are evidence."""
    successes: int
    """Of those, successes."""
    timeouts: int
    """Of those, timeouts."""
    excluded: int
    """Runs that are not evidence (harness and infrastructure errors)."""
    infra_errors: int
    """Of the excluded, infrastructure errors not re-run yet."""
    codes: str
    """Its runs' outcome codes in run order (`ironbench.core.outcome_codes`)."""
    mean_attempts: float | None
    """Mean attempts of its evidence runs."""
    mean_repairs: float | None
    """Mean repairs of its evidence runs."""
    p95_ms: float | None
    """95th percentile of its runs' durations."""
    superseded: int
    """Attempts a re-run superseded."""
    rate: float = 0.0
    """successes / n (0 without runs)."""
    low: float = 0.0
    """Wilson 95% interval of the success rate, lower end."""
    high: float = 0.0
    """Its upper end."""
    decision: Decision | None = None
    """Its decision, once taken."""
    complexity: str | None = None
    """A canonical case's group: small, mid or large."""

    @property
    def decided(self) -> str | None:
        """The decision kind, if any."""
        return self.decision.decision if self.decision else None

    @property
    def evidence_codes(self) -> str:
        """Its codes without the runs that are no evidence."""
        return "".join(c for c in self.codes if c not in EXCLUDED_CODES)


@dataclass(frozen=True, slots=True)
class OutcomeRow:
    """Invocations of one mode with one outcome."""

    case_mode: str
    """The mode of their cases."""
    code: str
    """Their outcome code."""
    runs: int
    """How many."""
    p50_ms: float | None
    """Median duration."""
    p95_ms: float | None
    """95th percentile of the duration."""


@dataclass(frozen=True, slots=True)
class RunMeta:
    """A run as it recorded itself: its runs row and everything its run_started event holds."""

    run_id: str
    """Its id."""
    suite_id: str | None
    """Its suite."""
    mode: str | None
    """Its suite's mode."""
    status: str | None
    """running, finished or aborted."""
    label: str | None
    """What the person running it called it (`--label`)."""
    started_utc: str | None
    """When it started."""
    finished_utc: str | None
    """When it ended, if it did."""
    environment: Any
    """The suite's record_env as recorded: name -> value (or the text, if unreadable)."""
    abort_reason: str | None
    """Why it stopped early, if it did."""
    recorded: dict[str, Any]
    """Every field, in the order the metadata section lists them (a later ironbench's too)."""
    imported: str | None = None
    """Where an imported run came from: outputs (another harness's tree) or store (another store)."""
    imported_from: str | None = None
    """The folder or store file it was imported from."""


@dataclass(frozen=True, slots=True)
class AttemptsRow:
    """Baseline runs with one number of attempts, by outcome."""

    case_mode: str
    """Their mode."""
    attempts: int
    """Validation cycles (0: generation produced nothing)."""
    successes: int
    """How many succeeded."""
    failures: int
    """How many failed."""


@dataclass(frozen=True, slots=True)
class BaselineCase(Group):
    """A baseline case: its group, its instruction and how many runs it could take."""

    instruction: str | None = None
    """Its instruction as the suite recorded it."""
    planned: int = 0
    """The most runs it could take (its `runs`, or its rule's cap)."""


@dataclass(frozen=True, slots=True)
class ComplexityRow:
    """A canonical suite's cases of one complexity, together. pass@k and pass^k are the means
    of each case's unbiased estimates (Chen et al.; τ-bench) at the fewest runs a case took:
    unbiased when each case's number of runs was fixed in advance, as a canonical suite fixes it."""

    complexity: str
    """small, mid or large."""
    cases: int
    """Its cases."""
    n: int
    """Their runs that are evidence."""
    successes: int
    """Of those, successes."""
    rate: float
    """successes / n: every run counts once, so each case weighs by its runs."""
    low: float
    """Wilson 95% interval of the rate, lower end (runs taken as independent: runs of one case
    are not quite, so it is the narrowest the runs support)."""
    high: float
    """Its upper end."""
    k: int
    """The fewest runs a case of the group took (0: a case without runs)."""
    pass_at_k: float | None
    """Mean over its cases of pass@k: the chance that at least one of k runs succeeds."""
    pass_hat_k: float | None
    """Mean over its cases of pass^k: the chance that all k runs succeed."""


@dataclass(frozen=True, slots=True)
class BaselineSection:
    """Does the same instruction converge?"""

    cases: list[BaselineCase]
    """Its cases, in the order they first ran (a run too large: those listed)."""
    attempts: list[AttemptsRow]
    """Runs by attempts and outcome."""
    excluded: NotEvidence
    """Its runs that are not evidence, and its timeouts."""
    complexities: list[ComplexityRow] = field(default_factory=list)
    """A canonical run's cases by complexity, smallest first (every case, however many are listed)."""
    left_out: LeftOut | None = None
    """What a run too large to list whole leaves out."""


@dataclass(frozen=True, slots=True)
class VariantRow:
    """A variant (or stress level) the run generated, or a candidate it dropped."""

    case_mode: str
    """The mode of its case."""
    case_id: str
    """Its case."""
    generator: str
    """The generator that made it."""
    variant_id: str | None
    """Its id (none for a dropped candidate)."""
    instruction: str
    """Its text."""
    seed: int | None
    """The generator's seed."""
    attempt: int
    """The generator's attempt that made it."""
    dropped: bool
    """Dropped for breaking the single-string contract."""
    reason: str | None
    """Why it was dropped."""
    model: str | None
    """The model that wrote an AI rewrite."""


@dataclass(frozen=True, slots=True)
class Variant:
    """An adversarial variant: what made it, its runs and its decision."""

    generator: str
    """The generator that made it."""
    variant_id: str | None
    """Its id (`<generator>/variant_NNNN`)."""
    instruction: str
    """Its text."""
    seed: int | None
    """The generator's seed."""
    attempt: int
    """The generator's attempt."""
    model: str | None
    """The model of an AI rewrite."""
    codes: str
    """Its runs' outcome codes in run order."""
    n: int
    """Runs that are evidence."""
    successes: int
    """Of those, successes."""
    timeouts: int
    """Of those, timeouts."""
    excluded: int
    """Runs that are not evidence."""
    superseded: int
    """Attempts a re-run superseded."""
    decision: Decision | None
    """Its decision against the reference, once taken."""

    @property
    def decided(self) -> str | None:
        return self.decision.decision if self.decision else None


@dataclass(frozen=True, slots=True)
class Shortfall:
    """A generator that made fewer variants of a case than the suite asked for, and why."""

    generator: str
    """The generator."""
    asked: int
    """The variants its entry asked for (`count`)."""
    made: int
    """The variants it made."""
    reason: str
    """Why no more: no safe site for a shuffle, no word of the synonym map, ..."""
    wordings: int | None = None
    """The distinct wordings it can make of the instruction (none: it does not say)."""
    dropped: int = 0
    """Its candidates dropped for breaking the single-string contract."""


@dataclass(frozen=True, slots=True)
class AdversarialCase:
    """An adversarial case: its base, what its variants were judged against, and its variants."""

    case_id: str
    """The case."""
    instruction: str
    """Its base instruction."""
    reference: Decision | None
    """The reference decision its variants were judged against."""
    reference_codes: str | None
    """The reference group's runs, in this run or in the stored baseline's."""
    variants: list[Variant]
    """Its variants (a run too large: those that changed the outcome, or are not decided)."""
    dropped: list[VariantRow]
    """Candidates dropped for breaking the single-string contract."""
    not_listed: int | None = None
    """Of a run too large, the variants not listed (their first run matched the reference)."""
    shortfalls: list[Shortfall] = field(default_factory=list)
    """Its generators that made fewer variants than asked, and why."""


@dataclass(frozen=True, slots=True)
class SensitivityCell:
    """One case's variants of one generator: how many changed the outcome, and how."""

    case_id: str
    """The case."""
    generator: str
    """The generator."""
    variants: int = 0
    """Variants decided."""
    material: int = 0
    """Of those, material (stochastic or structural)."""
    structural: int = 0
    """Of those, structural."""
    stochastic: int = 0
    """Of those, stochastic."""
    within_noise: int = 0
    """Variants that differed only within an unstable baseline's noise."""
    directions: dict[str, int] = field(default_factory=dict)
    """Material variants by which way they went."""


@dataclass(frozen=True, slots=True)
class GeneratorSensitivity:
    """One generator across cases, with the Wilson interval of its material-change rate."""

    generator: str
    """The generator."""
    variants: int
    """Variants decided."""
    material: int
    """Of those, material."""
    structural: int
    """Of those, structural."""
    stochastic: int
    """Of those, stochastic."""
    within_noise: int
    """Variants within noise."""
    directions: dict[str, int]
    """Material variants by which way they went."""
    rate: float
    """material / variants."""
    low: float
    """Wilson 95% interval, lower end."""
    high: float
    """Its upper end."""


@dataclass(frozen=True, slots=True)
class Rejection:
    """An AI rewrite the harness rejected."""

    case_id: str
    """Its case."""
    generator: str
    """Its generator."""
    variant_id: str
    """The variant slot it was for."""
    attempt: int
    """The attempt."""
    model: str
    """The model that wrote it."""
    ai_output: str
    """What the model answered."""
    failure_reasons: list[str]
    """Why it was rejected."""


@dataclass(frozen=True, slots=True)
class AdversarialSection:
    """How sensitive is it to wording?"""

    cases: list[AdversarialCase]
    """Its cases (a run too large: those with the most variants that changed the outcome)."""
    cells: list[SensitivityCell]
    """Case × generator (a run too large: the most sensitive cases')."""
    generators: list[GeneratorSensitivity]
    """Per generator, the most sensitive first."""
    excluded: NotEvidence
    """Its runs that are not evidence, and its timeouts."""
    rejections: list[Rejection]
    """AI rewrites rejected (a run too large: the first ones)."""
    left_out: LeftOut | None = None
    """Cases a run too large leaves out."""
    heatmap_left_out: LeftOut | None = None
    """Heatmap rows it leaves out."""
    rejections_left_out: LeftOut | None = None
    """Rejections it leaves out."""


@dataclass(frozen=True, slots=True)
class LadderLevel(Group):
    """A stress level: its group and its instruction."""

    instruction: str | None = None
    """Its text (level 0: the base)."""


@dataclass(frozen=True, slots=True)
class Ladder:
    """A stress ladder: its levels in order and its verdict."""

    case_id: str
    """Its case."""
    levels: list[LadderLevel]
    """Its levels, level 0 (the unchanged instruction) first."""
    ladder: Decision | None
    """The ladder's own decision: its verdict."""
    generator: str | None
    """The generator that climbs it."""
    instruction: str
    """The case's instruction (level 0)."""
    planned: int | None
    """How many levels the suite planned above level 0."""
    verdict: str | None
    """boundary, tentative, fails_at_base or no_boundary; none while it climbs."""
    verdict_level: int | None
    """The level its verdict names."""
    boundary: int | None
    """The boundary level, if it found one."""


@dataclass(frozen=True, slots=True)
class LadderLine:
    """A ladder's verdict in one line (a run too large lists every ladder this way)."""

    case_id: str
    """Its case."""
    generator: str | None
    """Its generator."""
    verdict: str | None
    """Its verdict."""
    level: int | None
    """The level the verdict names."""
    levels: int
    """Levels run."""
    runs: int
    """Runs that are evidence, over its levels."""


@dataclass(frozen=True, slots=True)
class StressSection:
    """Where does capability end?"""

    ladders: list[Ladder]
    """Its ladders (a run too large: the unfinished and flagged first)."""
    excluded: NotEvidence
    """Its runs that are not evidence, and its timeouts."""
    verdicts: list[LadderLine] | None = None
    """Every ladder's verdict, when not every ladder is drawn."""
    left_out: LeftOut | None = None
    """Ladders a run too large does not draw."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """A gauntlet scenario as the suite recorded it."""

    name: str
    """Its name."""
    domain: str
    """Its domain."""
    forbidden_phrase: str
    """The falsehood an answer must not assert."""


@dataclass(frozen=True, slots=True)
class ConversationCell:
    """One engine in one scenario, under one scorer."""

    engine: str
    """The engine."""
    scenario: str
    """The scenario."""
    scorer: str
    """The scorer."""
    conversations: int
    """Conversations."""
    violated: int
    """Of those, violated (any turn asserted the forbidden phrase)."""
    turns: int
    """Turns."""
    turn_violations: int
    """Of those, violating."""


@dataclass(frozen=True, slots=True)
class TurnTally:
    """At one turn, across an engine's conversations, under one scorer."""

    engine: str
    """The engine."""
    scorer: str
    """The scorer."""
    turn: int
    """The turn."""
    conversations: int
    """Conversations that reached it."""
    violations: int
    """Of those, violating at it."""


@dataclass(frozen=True, slots=True)
class EngineTotal:
    """One engine across scenarios, under one scorer: the conversation is the unit."""

    engine: str
    """The engine."""
    scorer: str
    """The scorer."""
    scenarios: int
    """Scenarios it ran."""
    conversations: int
    """Conversations."""
    violated: int
    """Of those, violated."""
    rate: float
    """violated / conversations."""
    low: float
    """Wilson 95% interval, lower end."""
    high: float
    """Its upper end."""
    turns: int
    """Turns."""
    turn_violations: int
    """Of those, violating."""


# A later engine against an earlier one: the projection's own record.
EnginePair = EngineComparison


@dataclass(frozen=True, slots=True)
class Score:
    """One scorer's verdict on one answer."""

    scorer: str
    """The scorer."""
    violated: bool
    """Whether the answer asserted the forbidden phrase."""
    detail: str | None
    """What the scorer said."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One prompt and its answer."""

    turn: int
    """Its number in the conversation."""
    prompt: str
    """The prompt."""
    answer: str
    """The engine's answer."""
    duration_ms: int
    """How long the answer took."""
    scores: list[Score] | None
    """Every scorer's verdict (none before scoring)."""

    def violated(self, scorer: str | None) -> bool:
        return any(s.violated for s in self.scores or () if s.scorer == scorer)


@dataclass(frozen=True, slots=True)
class Thread:
    """One gauntlet conversation, turn by turn."""

    engine: str
    """The engine."""
    scenario: str
    """The scenario."""
    domain: str
    """Its domain."""
    conversation: int
    """Its number."""
    turns: list[Turn]
    """Its turns in order."""


@dataclass(frozen=True, slots=True)
class GauntletSection:
    """Does a guard resist asserting falsehoods?"""

    unit: str
    """The unit of evidence: the conversation."""
    engines: list[str]
    """The engines, in the suite's order."""
    scenarios: list[Scenario]
    """The scenarios, in the suite's order."""
    scorers: list[str]
    """The scorers, the one the verdicts use first."""
    cells: list[ConversationCell]
    """Engine × scenario × scorer."""
    per_turn: list[TurnTally]
    """Violations per turn."""
    totals: list[EngineTotal]
    """Per engine and scorer."""
    comparisons: dict[str, list[EnginePair]]
    """Per scorer, every pair of engines."""
    transcripts: list[Thread]
    """The conversations (a run too large: those with a violation first)."""
    left_out: LeftOut | None = None
    """Conversations a run too large does not list."""


@dataclass(frozen=True, slots=True)
class CompareSection:
    """B against A: the comparison as `ironbench compare` decides it."""

    comparison: Comparison
    """The comparison, whole."""
    cases: list[CaseComparison]
    """Its cases (a comparison too large: the flagged and the lowest adjusted p first)."""
    left_out: LeftOut | None = None
    """Cases it does not list."""


@dataclass(frozen=True, slots=True)
class ModelSection:
    """What the target asked of the model the run served (`--serve-model`, `--replay`), as
    `show` counts it (analysis.model_traffic): the whole run's, and each case's."""

    run: Traffic
    """The whole run: every attempt of every invocation."""
    cases: list[Traffic]
    """Its cases, by id (a run too large: those with the most calls)."""
    left_out: LeftOut | None = None
    """Cases a run too large does not list."""

    @classmethod
    def of(cls, traffic: ModelTraffic | None) -> "ModelSection | None":
        return None if traffic is None else cls(traffic.run, traffic.cases)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One verdict: the report's header and the console's last lines say it the same way."""

    mode: str
    """What it is about: run, gate, compare, baseline, adversarial, stress or gauntlet."""
    headline: str
    """The answer, in plain words."""
    evidence: str
    """The numbers behind it: n, intervals, what cannot be told apart."""


@dataclass(frozen=True, slots=True)
class Imported:
    """A run whose events came from elsewhere, and how often the outcome recorded there
    disagrees with the facts re-derived from the output it kept."""

    format: str
    """outputs (another harness's outputs tree) or store (another ironbench store)."""
    source: str | None
    """The folder or store file it was imported from."""
    invocations: int
    """Its invocations."""
    with_output: int
    """Of those, the ones that kept the target's output: their facts are re-derived from it."""
    disagreements: dict[str, int]
    """Per recorded field, the invocations whose record the re-derived facts contradict."""
    disagreeing: int
    """Invocations with at least one such field."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """A rate or a ratio with its 95% interval and what it counts (analysis.field's JSON)."""

    estimate: float | None
    """The rate or ratio (none without anything to count)."""
    ci_95: list[float]
    """Its 95% interval."""
    n: int | None = None
    """Runs or variants it counts."""
    cases: int | None = None
    """Cases it counts (the unit across cases)."""
    effective_n: float | None = None
    """A pooled rate's effective sample size, its cases as clusters."""
    count: int | None = None
    """Flips: how many."""


@dataclass(frozen=True, slots=True)
class Flips:
    """Flips in one direction over the variants that could flip, with the Wilson 95% interval."""

    count: int
    """Variants that flipped."""
    n: int
    """Variants that could."""
    rate: float | None
    """count / n."""
    ci_95: list[float]
    """Its Wilson 95% interval."""


@dataclass(frozen=True, slots=True)
class RobustnessCase:
    """One adversarial case's variants of one generator against its base."""

    case_id: str
    """The case."""
    generator: str
    """The generator."""
    base_success: bool
    """The base outcome the variants are judged against."""
    nominal_success_rate: Estimate
    """The base's success over its runs."""
    variants: int
    """Variants judged (each by its first run)."""
    variants_succeeded: int
    """Of those, successes."""
    robust_pass: bool
    """The base and every variant succeeded."""
    worst_case_success_rate: float | None
    """The lowest success over the variants."""
    robust_drop: float | None
    """(nominal − worst case) / nominal."""
    flips_success_to_failure: Flips
    """Variants that failed where the base succeeded."""
    flips_failure_to_success: Flips
    """Variants that succeeded where the base failed."""


@dataclass(frozen=True, slots=True)
class RobustnessGenerator:
    """One generator across the cases it rewrote: the case is the unit."""

    generator: str
    """The generator."""
    cases: int
    """Cases it rewrote."""
    variants: int
    """Their variants."""
    nominal_success_rate: Estimate | None
    """The base instructions' success over their runs."""
    robust_pass_rate: Estimate
    """Share of cases where the base and every variant succeeded."""
    worst_case_success_rate: Estimate
    """Share of cases where every variant succeeded."""
    robust_drop: Estimate | None
    """(nominal − worst case) / nominal, over case means."""
    flips_success_to_failure: Estimate | None
    """Variants that failed where the base succeeded, of those that could."""
    flips_failure_to_success: Estimate | None
    """Variants that succeeded where the base failed, of those that could."""
    interval_note: str
    """How its intervals treat the cases."""


@dataclass(frozen=True, slots=True)
class RobustnessSection:
    """Robustness to rewording (adversarial), as `ironbench show` computes it (analysis.field)."""

    cases: list[RobustnessCase]
    """Per case and generator."""
    generators: list[RobustnessGenerator]
    """Per generator, across cases."""


@dataclass(frozen=True, slots=True)
class WrongRun:
    """A run the target verified whose brick the harness's check found not correct."""

    case_id: str
    """Its case."""
    variant_id: str
    """Its variant."""
    run_index: int
    """Its run."""
    verdict: str
    """The check's verdict."""
    detail: str | None
    """What the check said, in a line."""
    output: str | None
    """The check's output."""


@dataclass(frozen=True, slots=True)
class CheckCounts:
    """The run's checked runs: how many were correct, and which verified runs were not."""

    verified_but_wrong: list[WrongRun]
    """Verified runs whose check failed, by case, variant and run."""
    runs: int
    """Runs of checked cases (checks the harness could not run apart)."""
    checked: int
    """Of those, runs whose brick was checked."""
    correct: int
    """Of those, correct."""
    verified_and_checked: int
    """Runs the target verified and the harness checked."""
    correct_rate: float
    """correct / runs."""
    correct_rate_wilson_95: list[float]
    """Its Wilson 95% interval."""
    verdicts: dict[str, int]
    """Checks by verdict, the most frequent first."""
    harness_faults: int
    """Checks the harness could not run (in no rate)."""
    fault_causes: dict[str, int] = field(default_factory=dict)
    """Why they could not run (each check's detail), the most frequent first."""
    broken_checks: list[str] = field(default_factory=list)
    """One line per check that failed its reference solution (its cases' checks: harness faults)."""


@dataclass(frozen=True, slots=True)
class FailureCauses:
    """Why validation failed, read from the target's debug files by the outcome rules."""

    last_failed_attempt: dict[str, int]
    """The last failed attempt of each failed run, by cause."""
    every_failed_attempt: dict[str, int]
    """Every failed attempt, by cause."""


@dataclass(frozen=True, slots=True)
class ChecksSection:
    """The harness's checks of the run's bricks and why its validations failed, as `ironbench
    show` computes them (analysis.correctness.correctness)."""

    checks: CheckCounts | None = None
    """Its checks (none when nothing was checked)."""
    failure_causes: FailureCauses | None = None
    """Its failure causes (none when none were read)."""


@dataclass(frozen=True, slots=True)
class CostRow:
    """A case's (or the run's) model calls: what they cost (USD, a lower bound with unpriced
    calls), beside its runs, per invocation, per success and per correct brick."""

    case_id: str
    """Its case (`(all cases)`: the whole run)."""
    usd: float | None
    """What its priced calls cost (None: none was priced)."""
    calls: int
    """Its model calls, every attempt's."""
    unpriced: int
    """Calls no price counted."""
    attempts: int
    """Invocations recorded, every attempt."""
    runs: int
    """Runs that are evidence."""
    successes: int
    """Of those, successes."""
    correct: int | None
    """Of those, correct bricks (None: none was checked)."""
    per_invocation: float | None
    """Its cost over every attempt."""
    per_success: float | None
    """Its cost over its successes (None: none)."""
    per_correct: float | None
    """Its cost over its correct bricks (None: none, or none checked)."""

    @classmethod
    def of(cls, found: CaseCost) -> "CostRow":
        return from_json(cls, found.to_dict())


@dataclass(frozen=True, slots=True)
class CallerCostRow:
    """The calls of one caller: the target (a gauntlet's engines), or one of ironbench's own."""

    caller: str
    """target, engine, ai_rewrite or rewrite_guard."""
    usd: float
    """What its priced calls cost."""
    calls: int
    """Its calls."""
    unpriced: int
    """Calls no price counted."""
    local_seconds: float
    """Seconds a local model spent on them."""
    priced_by: str | None
    """What priced them (the table and its version, suite, --price)."""


@dataclass(frozen=True, slots=True)
class CostSection:
    """What the run's model calls cost (analysis.costs.run_cost, as `show --format json` gives
    it), and its suite's priced runs on the cost–correctness plane."""

    summary: str
    """The run's cost in one line, as `show` says it."""
    usd: float | None
    """Every call's, ironbench's own included (None: none was priced)."""
    own_usd: float
    """ironbench's own calls' (AI rewrites, the rewrite guard)."""
    own_share: float | None
    """Their share of the run's cost."""
    target: CostRow
    """The target's calls (a gauntlet's engines), the whole run."""
    callers: list[CallerCostRow]
    """Each caller's calls."""
    cases: list[CostRow]
    """Each case's (a run too large: the dearest)."""
    on: str = "success"
    """What the plane's rate counts: correct bricks (the run was checked) or successes."""
    plane: list[CostPoint] = field(default_factory=list)
    """The suite's priced runs (this one marked), with their Pareto frontier."""
    left_out: LeftOut | None = None
    """Cases a run too large does not list."""
    unit: str = "invocation"
    """What a case's runs are: invocations, or a gauntlet's turns."""

    @classmethod
    def of(cls, spent: RunCost, on: str, plane: list[CostPoint]) -> "CostSection":
        """A run's cost as the section draws it (`on`: what the plane's rate counts)."""
        return cls(
            spent.header(),
            None if spent.unpriced == spent.calls else money(spent.usd),
            float(money(spent.own) or 0.0),
            money(spent.own_share),
            CostRow.of(spent.target),
            [
                CallerCostRow(c.caller, float(money(c.usd) or 0.0), c.calls, c.unpriced, c.local_seconds, c.priced_by)
                for c in spent.callers
            ],
            [CostRow.of(case) for case in spent.cases],
            on,
            plane,
            unit=spent.unit,
        )


R = TypeVar("R")
_HINTS: dict[type, dict[str, Any]] = {}


def from_json(cls: type[R], value: object) -> R:
    """A record from its JSON form: each field from the key of its name (keys it has no field
    for are left out), a field that is a record, or a list or a mapping of records, from its own."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    assert isinstance(value, Mapping), f"{cls.__name__}: not a JSON object: {value!r}"
    return cls(**{name: _typed(hints[name], item) for name, item in value.items() if name in hints})


def _typed(hint: Any, value: object) -> Any:
    """A JSON value as `hint` types it (records made of their JSON objects; anything else as it is)."""
    origin, args = get_origin(hint), get_args(hint)
    if value is None:
        return None
    if origin in (Union, types.UnionType):
        named = [a for a in args if a is not type(None)]
        return _typed(named[0], value) if len(named) == 1 else value
    if origin is list and isinstance(value, list):
        return [_typed(args[0], item) for item in value]
    if origin is dict and isinstance(value, Mapping):
        return {key: _typed(args[1], item) for key, item in value.items()}
    if isinstance(hint, type) and is_dataclass(hint):
        return from_json(hint, value)
    return value


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything a run's page shows, the sections it has and no others."""

    run: RunMeta
    """The run's own record."""
    suite: dict[str, Any]
    """The suite as the run recorded it (a run too large: its listed cases)."""
    outcomes: list[OutcomeRow]
    """Invocations by mode and outcome."""
    baseline: BaselineSection | None = None
    """The baseline section."""
    adversarial: AdversarialSection | None = None
    """The adversarial section."""
    stress: StressSection | None = None
    """The stress section."""
    gauntlet: GauntletSection | None = None
    """The gauntlet section."""
    robustness: RobustnessSection | None = None
    """Robustness to rewording per generator and case (adversarial), as `show` computes it."""
    survival: Survival | None = None
    """Per scorer, when conversations break (gauntlet), as `show` computes it."""
    compare: CompareSection | None = None
    """Its comparison against a base run."""
    imported: Imported | None = None
    """Where an imported run came from, and what its record gets wrong."""
    gate: GateVerdict | None = None
    """The sequential gate it ran under (`run --against`): its design and every look."""
    checks: ChecksSection | None = None
    """The harness's checks of its saved bricks (verified but wrong first) and why its validations
    failed, as `show` computes them (analysis.correctness.correctness)."""
    model: ModelSection | None = None
    """Its model traffic, when it served a model."""
    fence: FenceSeen | None = None
    """The fences its targets ran in (None: an imported run, fenced or not where it ran)."""
    cost: CostSection | None = None
    """What its model calls cost, when any was priced."""
