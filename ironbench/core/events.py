"""Event value classes: one small frozen class per fact, and their union.

Storage identity (sequence, event id, timestamp) is assigned by the store at append
time and lives on RecordedEvent, never on the event value itself. Plain frozen
dataclasses: one is built for every invocation, so they must cost next to nothing.
"""

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, Self, TypeAlias, get_args

SCHEMA_VERSION = 1
_FIELD_NAMES: dict[type, frozenset[str]] = {}  # per event class: read once, not per event read


@dataclass(frozen=True, slots=True, kw_only=True)
class _Event:
    event: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(_Event):
    event: ClassVar[Literal["run_started"]] = "run_started"
    suite_id: str
    mode: str
    suite: dict
    suite_path: str | None = None
    target_argv: list[str]
    ironclad_version: str
    harness_version: str
    python_version: str
    platform: str
    jobs: int = 1
    label: str | None = None  # --label: what the person running it calls this run
    environment: dict = field(default_factory=dict)  # the suite's record_env: name -> value (None if unset)
    redact: list[str] = field(default_factory=list)  # names given with --redact (never values)
    # The outcome rules every invocation is parsed with: name, source, sha256 and the whole
    # definition (None: recorded before rules were, i.e. Ironclad's).
    rules: dict | None = None
    speculate: bool = False  # --speculate: runs past a group's next decision may start on idle capacity
    scheduler: str | None = None  # --scheduler: the Dask cluster the invocations ran on
    # How ironclad_version was found: which interpreter was asked, and what it answered
    # (a git checkout's commit, a distribution's metadata), or why nothing was.
    ironclad_version_source: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InvocationStarted(_Event):
    event: ClassVar[Literal["invocation_started"]] = "invocation_started"
    key: str
    mode: str = "baseline"
    group: str = ""
    case_id: str
    variant_id: str
    run_index: int
    instruction: str
    workdir: str
    complexity: str | None = None  # a canonical case's group: small, mid or large


@dataclass(frozen=True, slots=True, kw_only=True)
class InvocationCompleted(_Event):
    event: ClassVar[Literal["invocation_completed"]] = "invocation_completed"
    key: str
    mode: str = "baseline"
    group: str = ""
    generator: str | None = None
    level: int | None = None
    case_id: str
    variant_id: str
    run_index: int
    instruction: str
    instruction_hash: str
    instruction_length: int
    exit_code: int | None
    success: bool
    failure_stage: str | None
    attempts: int
    repairs_triggered: int
    duration_ms: int
    timed_out: bool = False
    harness_error: str | None = None
    # The output line that matched an infrastructure-error rule: the backend failed,
    # so this run says nothing about the target.
    infra_error: str | None = None
    # 0 for a slot's first attempt; k when the slot is run again for the k-th time
    # (its earlier attempts hit infrastructure errors and are superseded by this one).
    rerun: int = 0
    debug_enabled: bool
    debug_artifacts_present: bool
    debug_path: str
    brick_path: str | None = None
    # sha256 of the brick's content, read after the run where it ran (never a copy): do
    # successful runs write the same code?
    brick_sha256: str | None = None
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    # The whole streams, redacted and capped (targets/capture.py): where a person reads them.
    stdout_path: str | None = None
    stderr_path: str | None = None
    # Completed after its group's decision (started by --speculate): not evidence, counted
    # in no decision, aggregate, rate or comparison.
    surplus: bool = False
    complexity: str | None = None  # a canonical case's group: small, mid or large
    # Imported from another harness's outputs: its summary.json as recorded (the facts above
    # are re-derived from the recorded output where it was kept), and the fields of the
    # outcome where the record and the re-derived facts disagree.
    recorded: dict | None = None
    disagrees: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionTaken(_Event):
    event: ClassVar[Literal["decision_taken"]] = "decision_taken"
    mode: str = "baseline"
    group: str = ""
    generator: str | None = None
    level: int | None = None
    case_id: str
    variant_id: str
    # baseline: stable | exhausted; adversarial: reference | not_material | stochastic |
    # structural; stress: systematic_failure | systematic_success | mixed, and per
    # ladder boundary | no_boundary.
    decision: str
    reason: str
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    chance_agreement: float
    # The baseline behaviour an adversarial variant is judged against, and where it came from;
    # with every baseline outcome (signatures in run order) when there was more than one.
    reference: list | None = None
    reference_source: str | None = None
    reference_outcomes: list | None = None
    # What the runs support: one-sided exact 95% bounds on the success rate and, for a
    # stable decision, on the chance of reproducing the agreed outcome.
    success_lower_95: float | None = None
    success_upper_95: float | None = None
    reproduce_lower_95: float | None = None
    # Which way a variant differed (success lost/gained, more/fewer attempts, ...).
    direction: str | None = None
    # The test behind the verdict: stress level vs level 0, variant vs an unstable baseline.
    p_value: float | None = None
    reference_group: str | None = None  # the stored baseline group the reference came from
    # Runs of the group that had completed past the decision (--speculate): surplus, not evidence.
    surplus_runs: list[int] | None = None
    complexity: str | None = None  # a canonical case's group: small, mid or large


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantGenerated(_Event):
    event: ClassVar[Literal["variant_generated"]] = "variant_generated"
    mode: str
    case_id: str
    generator: str
    variant_id: str
    instruction: str
    base_instruction: str
    seed: int
    params: dict
    attempt: int
    metadata: dict = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantDropped(_Event):
    event: ClassVar[Literal["variant_dropped"]] = "variant_dropped"
    mode: str
    case_id: str
    generator: str
    attempt: int
    candidate: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AiOutputRejected(_Event):
    event: ClassVar[Literal["ai_output_rejected"]] = "ai_output_rejected"
    case_id: str
    generator: str
    variant_id: str
    attempt: int
    base_instruction: str
    ai_output: str  # the model's raw answer
    failure_reasons: list[str]
    model: str
    prompt: str
    options: dict
    normalised_output: str = ""  # what was validated: ai_output without trivial wrapping
    # The semantic judge's verdict when one was asked (ai_judge): model, same_task, answers
    # by direction. None: no judge (and every rejection recorded before judges existed).
    judge: dict | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioStarted(_Event):
    event: ClassVar[Literal["scenario_started"]] = "scenario_started"
    engine: str
    scenario: str
    domain: str
    attempt: int
    engine_spec: dict
    conversation: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnAnswered(_Event):
    event: ClassVar[Literal["turn_answered"]] = "turn_answered"
    engine: str
    scenario: str
    domain: str
    attempt: int
    turn: int
    prompt: str
    answer: str
    duration_ms: int
    forbidden_phrase: str
    metadata: dict = field(default_factory=dict)
    conversation: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnScored(_Event):
    event: ClassVar[Literal["turn_scored"]] = "turn_scored"
    engine: str
    scenario: str
    domain: str
    turn: int
    scorer: str
    violated: bool
    detail: str = ""
    conversation: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioFinished(_Event):
    event: ClassVar[Literal["scenario_finished"]] = "scenario_finished"
    engine: str
    scenario: str
    attempt: int
    turns: int
    conversation: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(_Event):
    event: ClassVar[Literal["run_finished"]] = "run_finished"
    invocations: int
    successes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RunAborted(_Event):
    event: ClassVar[Literal["run_aborted"]] = "run_aborted"
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunImported(_Event):
    """The events before this one in the run came from elsewhere: another harness's outputs
    tree (`outputs`) or another ironbench store (`store`)."""

    event: ClassVar[Literal["run_imported"]] = "run_imported"
    format: str  # outputs | store
    source: str  # the folder or store file, as given
    invocations: int  # how many this import added
    # outputs: per outcome field, how many recorded values the re-derived facts contradict
    disagreements: dict = field(default_factory=dict)
    metadata: dict | None = None  # outputs: the run's metadata.json as recorded
    renamed_from: str | None = None  # store: the run's id there, when this store had another run of that id


# Every event ironbench records, discriminated by its `event` type field: code that
# checks `event.event == "invocation_completed"` (or isinstance) sees that class's fields.
Event: TypeAlias = (
    RunStarted
    | InvocationStarted
    | InvocationCompleted
    | DecisionTaken
    | VariantGenerated
    | VariantDropped
    | AiOutputRejected
    | ScenarioStarted
    | TurnAnswered
    | TurnScored
    | ScenarioFinished
    | RunFinished
    | RunAborted
    | RunImported
)
EventType = Literal[
    "run_started",
    "invocation_started",
    "invocation_completed",
    "decision_taken",
    "variant_generated",
    "variant_dropped",
    "ai_output_rejected",
    "scenario_started",
    "turn_answered",
    "turn_scored",
    "scenario_finished",
    "run_finished",
    "run_aborted",
    "run_imported",
]
EVENT_TYPES: dict[str, type[Event]] = {cls.event: cls for cls in get_args(Event)}
assert set(EVENT_TYPES) == set(get_args(EventType)), "EventType must name every event class"


def event_from_dict(type_: str, payload: dict[str, Any]) -> Event:
    try:
        cls = EVENT_TYPES[type_]
    except KeyError:
        raise ValueError(f"unknown event type {type_!r}") from None
    return cls.from_dict(payload)


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as the store holds it: the value plus the identity given at append."""

    seq: int
    event_id: str
    run_id: str
    stream: str
    timestamp_utc: str
    event: Event

    @property
    def type(self) -> EventType:
        return self.event.event


def run_started(first: RecordedEvent) -> RunStarted:
    """The event a run's stream begins with: every run's first event is its RunStarted."""
    from ironbench.core.errors import StoreError

    if not isinstance(first.event, RunStarted):
        raise StoreError(f"run {first.run_id}: events do not start with run_started (seq {first.seq})")
    return first.event
