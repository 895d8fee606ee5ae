"""Event value classes: one small frozen class per fact, and their union.

Storage identity (sequence, event id, timestamp) is assigned by the store at append
time and lives on RecordedEvent, never on the event value itself. Plain frozen
dataclasses: one is built for every invocation, so they must cost next to nothing.

Each type's `version` is the shape of its payload, stored with it (`schema_version`); a
payload stored in an older shape is brought to today's when it is read (`event_from_dict`),
by the named upcasters of core/upcasters.py.
"""

from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, Self, TypeAlias, get_args

from ironbench.core.upcasters import upcast, version_of

_FIELD_NAMES: dict[type, frozenset[str]] = {}  # per event class: read once, not per event read


@dataclass(frozen=True, slots=True, kw_only=True)
class _Event:
    event: ClassVar[str]
    version: ClassVar[int] = 1  # the payload's shape (set below from the type's upcasters)

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
    # --serve-model / serve_model: the model gateway's served model and its map of requested
    # names ({"model": ..., "models": {...}}); None: the target reached its own backend.
    serve_model: dict | None = None
    replay_of: str | None = None  # --replay: the run whose recorded model calls answered this one's
    # --against: the sequential regression gate B runs under: {"run": A, "drop", "alpha", "power"}
    against: dict | None = None
    # How ironclad_version was found: which interpreter was asked, and what it answered
    # (a git checkout's commit, a distribution's metadata), or why nothing was.
    ironclad_version_source: str | None = None
    # The fence the run asked for (--sandbox and what it allows: SandboxPolicy.to_dict); None:
    # recorded before runs were fenced. What each machine gave is a sandbox_applied event.
    sandbox: dict | None = None


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
    # Why the brick `brick_path` names was not taken (a link, outside its folder, not a regular
    # file...: targets/brick.py); None when it was, or none was named.
    brick_refused: str | None = None
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False
    # The whole streams, redacted and capped (targets/capture.py): where a person reads them.
    stdout_path: str | None = None
    stderr_path: str | None = None
    # Completed after its group's decision (started by --speculate): not evidence, counted
    # in no decision, aggregate, rate or comparison.
    surplus: bool = False
    # What the invocation asked of the model gateway (None: the run served no model): calls,
    # tokens where the model reported them, and the seconds the gateway spent answering.
    model_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model_seconds: float | None = None
    complexity: str | None = None  # a canonical case's group: small, mid or large
    # Imported from another harness's outputs: its summary.json as recorded (the facts above
    # are re-derived from the recorded output where it was kept), and the fields of the
    # outcome where the record and the re-derived facts disagree.
    recorded: dict | None = None
    disagrees: list[str] | None = None
    # Why each failed validation attempt failed, read from the debug files by the rules'
    # failure_causes (attempt, cause, passed, failed, file); and the last one's cause when
    # the run failed, or `fence` when what its fence withheld is why (a fence_denied event
    # follows it). None: no rules for it (or recorded before causes were read).
    failure_causes: list[dict] | None = None
    failure_cause: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckCompleted(_Event):
    """The harness's own check of the brick an invocation saved (never shown to the target).
    A later check of the same invocation (`ironbench check`) supersedes an earlier one."""

    event: ClassVar[Literal["check_completed"]] = "check_completed"
    key: str  # the invocation's
    rerun: int = 0  # which attempt of the slot saved the brick
    group: str
    case_id: str
    variant_id: str
    run_index: int
    kind: str  # pytest | python | command
    check_sha256: str  # of what the check read
    # correct | wrong | no_brick | no_entry_point | import_error | timeout | tampered | harness_fault (core/kinds.py)
    verdict: str
    passed: int | None = None  # tests that passed and failed, where the checker reports them
    failed: int | None = None
    duration_ms: int
    detail: str = ""
    output: str = ""
    output_truncated: bool = False
    brick_path: str  # the brick checked, where it was saved
    brick_sha256: str | None = None
    recheck: bool = False  # by `ironbench check`, after the run
    # What the check was allowed: the case's check timeout, or CALIBRATION x its reference's time
    # on the machine that checked, when longer (None: recorded before checks said it).
    timeout_ms: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckProven(_Event):
    """A check run on its reference solution before any brick of the run is checked by it,
    fenced like any check: `correct` proves it; any other verdict makes it broken, and its
    verdicts on the run's bricks harness faults (no evidence about the bricks)."""

    event: ClassVar[Literal["check_proven"]] = "check_proven"
    check_sha256: str  # of what the check reads (CheckCompleted's)
    kind: str  # pytest | python | command
    cases: list[str]  # the cases whose runs it checks
    reference_name: str  # the reference's file name (inline code: reference.py)
    reference_sha256: str
    verdict: str
    passed: int | None = None
    failed: int | None = None
    duration_ms: int
    timeout_ms: int  # what the proof was allowed
    calibration: int  # k: its runs' checks time out at max(their timeout, k x duration_ms)
    detail: str = ""
    output: str = ""
    output_truncated: bool = False
    recheck: bool = False  # by `ironbench check`, after the run

    @property
    def broken(self) -> bool:
        return self.verdict != "correct"

    def reason(self) -> str:
        """Why it is broken ("" when it passed): its reference, its verdict, what it said."""
        if not self.broken:
            return ""
        return f"{self.reference_name}: {self.verdict}" + (f": {self.detail}" if self.detail else "")

    def line(self) -> str:
        """One line naming a broken check: its kind, the cases it checks, why."""
        shown = ", ".join(self.cases[:5]) + (f" and {len(self.cases) - 5} more" if len(self.cases) > 5 else "")
        return f"the {self.kind} check of {shown or 'no case'} fails its reference ({self.reason()})"


@dataclass(frozen=True, slots=True)
class StopDecision:
    """What a stopping rule decided, with the evidence its runs give (`DecisionTaken` records it)."""

    decision: str
    """The decision kind (`ironbench.core.kinds.DecisionKind`)."""
    reason: str
    """The rule's own words."""
    n: int
    """Runs it was taken on."""
    successes: int
    """Of those, successes."""
    success_rate: float
    """successes / n."""
    wilson_low: float
    """Wilson 95% interval of the success rate, lower end."""
    wilson_high: float
    """Its upper end."""
    chance_agreement: float
    """p³ + (1 − p)³: how often 3 runs agree by chance at the observed rate."""
    success_lower_95: float | None = None
    """One-sided exact (Clopper–Pearson) 95% lower bound on the success rate."""
    success_upper_95: float | None = None
    """One-sided exact 95% upper bound on the success rate."""
    reproduce_lower_95: float | None = None
    """A stable decision's one-sided 95% lower bound on the chance its outcome recurs."""
    direction: str | None = None
    """Which way a variant differed from its reference (success lost, more attempts, ...)."""
    p_value: float | None = None
    """The test behind it: a stress level against level 0, a variant against an unstable baseline."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupDecision(StopDecision):
    """A stopping decision on one group of runs: which case and variant it decides, and where
    the reference it was judged against came from. The event (`DecisionTaken`) and the report's
    `Decision` are both one."""

    case_id: str
    """The case decided."""
    variant_id: str
    """The variant decided (`base`, a variant's id, a level's, `baseline`, or `ladder`)."""
    generator: str | None = None
    """The generator of a variant or a ladder."""
    level: int | None = None
    """A stress level's number, or the level a ladder's verdict names."""
    reference_source: str | None = None
    """Where a reference came from: `this run`, or the run of a stored baseline."""
    reference_group: str | None = None
    """The stored baseline group a reference came from."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionTaken(_Event, GroupDecision):
    event: ClassVar[Literal["decision_taken"]] = "decision_taken"
    mode: str = "baseline"
    group: str = ""
    # The baseline behaviour an adversarial variant is judged against; with every baseline
    # outcome (signatures in run order) when there was more than one.
    reference: list | None = None
    reference_outcomes: list | None = None
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
class VariantShortfall(_Event):
    """A generator made fewer variants of a case than its suite entry asked for: how many of
    how many, and why no more (no safe site, no word of the map, ...), recorded when the run
    is planned so that a report or a query reads it without running the generator again."""

    event: ClassVar[Literal["variant_shortfall"]] = "variant_shortfall"
    mode: str
    case_id: str
    generator: str
    asked: int  # the entry's count
    made: int
    reason: str
    wordings: int | None = None  # distinct wordings the generator can make of the instruction (None: unknown)
    dropped: int = 0  # candidates dropped for the single-string contract


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
class ModelCalled(_Event):
    """One call a target made to the run's model gateway, attributed to its invocation by the
    address the invocation was given. Texts of TEXT_BY_HASH characters or more are held as
    {"sha256": ..., "chars": ...} and recorded once per run as a ModelText."""

    event: ClassVar[Literal["model_called"]] = "model_called"
    key: str  # the invocation's
    rerun: int = 0  # the attempt of its slot
    case_id: str
    variant_id: str
    run_index: int
    index: int  # 1, 2, ...: the order in which the gateway received the invocation's calls
    api: str  # ollama.chat | ollama.generate | openai.chat
    requested_model: str
    served_model: str  # the llm model id that answered ("replay" when the recording did)
    stream: bool = False
    messages: list  # [{"role": ..., "content": text or reference}]
    options: dict  # the rest of the request, as the target sent it
    applied: dict = field(default_factory=dict)  # the options the served model honoured
    answer: str | dict | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float
    # backend: the model failed (an infrastructure error); request: the target's request was
    # refused; replay: the recording holds no such call; abandoned: the invocation ended first.
    error: str | None = None
    error_kind: str | None = None
    status: int = 200  # the HTTP status the target was answered with
    retry_after: float | None = None  # seconds, from a 429 the backend gave
    divergence: str | None = None  # replaying: how the request differs from the recorded one


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelText(_Event):
    """A long text of model calls (a system prompt, an answer), recorded once per run."""

    event: ClassVar[Literal["model_text"]] = "model_text"
    sha256: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCallPriced(_Event):
    """What one model call cost, priced once when it was recorded (core/prices.py): a call of
    the target's through the gateway (`key`, `rerun` and `index` name its model_called), or one
    of ironbench's own (`caller`: an AI rewrite, the rewrite guard's judge, a gauntlet engine)."""

    event: ClassVar[Literal["model_call_priced"]] = "model_call_priced"
    caller: str  # target | ai_rewrite | rewrite_guard | engine
    model: str  # the model id that answered (the served one)
    key: str | None = None  # the target's invocation
    rerun: int = 0
    index: int | None = None  # the call's, among its invocation's
    case_id: str | None = None  # the case (a gauntlet's: the scenario)
    variant_id: str | None = None  # the variant (a gauntlet's: the engine)
    run_index: int | None = None
    input_tokens: int | None = None  # every input token, cached ones included
    output_tokens: int | None = None
    cached_tokens: int | None = None
    model_seconds: float = 0.0
    pricing: str  # table | given | local | unpriced | replayed | cached
    cost: str | None = None  # in `currency`, exactly (a decimal's text); None: unpriced
    currency: str = "USD"
    table: str | None = None  # what priced it: "genai-prices 0.2.3", "suite", "--price"
    provider: str | None = None  # the table's provider and model for it
    priced_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        # every field a scalar, read as it is: asdict copies each one, and a run records one of
        # these per model call (tests/perf/bench_prices.py)
        return {name: getattr(self, name) for name in _PRICED_FIELDS}


_PRICED_FIELDS = tuple(f.name for f in fields(ModelCallPriced))


@dataclass(frozen=True, slots=True, kw_only=True)
class PricingSet(_Event):
    """The prices (`--price`) and the budget a run was given when it started or was resumed: the
    budget is a cap on the run's total recorded cost (a resume's --budget MORE: what it had spent
    then, and MORE); a resume without either keeps the latest."""

    event: ClassVar[Literal["pricing_set"]] = "pricing_set"
    by: str  # run | resume
    prices: dict = field(default_factory=dict)  # model -> {input, output, cached}: USD per million tokens
    budget: str | None = None  # USD, exactly; None: no budget
    budget_source: str | None = None  # --budget | suite
    spent: str = "0"  # the run's recorded cost when it was set


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetReached(_Event):
    """The run's recorded cost reached its budget: no invocation started after it; those running
    finished and were recorded. `ironbench resume RUN --budget MORE` continues it."""

    event: ClassVar[Literal["budget_reached"]] = "budget_reached"
    budget: str  # USD, exactly
    spent: str
    invocations: int  # recorded by then (every attempt)
    unpriced: int = 0  # calls no price counted: the budget cannot see them


@dataclass(frozen=True, slots=True, kw_only=True)
class GateDesigned(_Event):
    """`run --against A`: the sequential gate B runs under, fixed before B's first run from
    A's runs per case and the margin (stats/regression_gate.py)."""

    event: ClassVar[Literal["gate_designed"]] = "gate_designed"
    against: str  # the reference run A
    margin: float  # --drop: the drop in success the gate must find with `power`
    alpha: float
    power: float
    rate: float  # A's success rate the design is planned with (cases pooled)
    cap: int  # runs per case of the fixed design (`plan` at that rate): B never runs more
    looks: list[int]  # the rounds (B's runs per case) after which the gate looks
    upper: list[float]  # per look: the statistic at or above it says `regressed`
    lower: list[float]  # per look: at or below it says `not regressed`
    met: bool  # the boundaries meet at the last look (else it may end undecided)
    cases: list[str]
    a_successes: list[int]  # A's evidence per case (as `compare` reads it)
    a_runs: list[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class GateLooked(_Event):
    """One look of the sequential gate: B's drop against A after `round` runs of every case,
    its statistic against the boundaries, and what it concluded."""

    event: ClassVar[Literal["gate_looked"]] = "gate_looked"
    round: int
    look: int  # 1-based among the design's looks
    invocations: int  # B's runs that are evidence so far (round x cases)
    drop: float  # A − B success, weighted over cases (positive: B worse)
    se: float
    z: float
    upper: float
    lower: float
    low: float  # the repeated confidence interval of B − A at this look
    high: float
    decision: str  # continue | regressed | not regressed | undecided
    # undecided at the cap: compare's fixed-design test on the data decides the exit
    p_fixed: float | None = None
    failed: bool = False  # the run's exit: 1 when failed


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxApplied(_Event):
    """The fence a process that starts the run's targets and checks put around them (the
    coordinator, or a Dask worker at its first invocation): its level, its mechanism and
    version, each fence missing below full, and what a fenced program can read, write, reach."""

    event: ClassVar[Literal["sandbox_applied"]] = "sandbox_applied"
    worker: str  # "coordinator", or the worker's host and address
    level: str  # full | partial | none
    mechanism: str  # e.g. "bubblewrap 0.11.0", "landlock 7 + seccomp", "none"
    missing: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    readable: list[str] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)
    reachable: list[str] = field(default_factory=list)
    environment: str = ""
    memory_mb: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FenceDenied(_Event):
    """What the fence withheld from one invocation's target, each with the flag that allows it:
    what the fence saw it try (a refused connection, a look-up, a unix socket, an allowed path
    missing) and, when it failed, what its output shows it lacked (a variable not passed, a
    hidden path, an endpoint not allowed). Recorded right after the invocation; its
    `failure_cause` is `fence` when `caused` (sandbox/denials.py)."""

    event: ClassVar[Literal["fence_denied"]] = "fence_denied"
    key: str  # the invocation's
    rerun: int = 0
    group: str
    case_id: str
    variant_id: str
    run_index: int
    # each {kind, what, flag, seen, explains, note}: variable | path | endpoint | missing
    denials: list[dict] = field(default_factory=list)
    caused: bool = False  # its failure is the fence's: a denial explains it


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(_Event):
    event: ClassVar[Literal["run_finished"]] = "run_finished"
    invocations: int
    successes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportWritten(_Event):
    """The run has its HTML report in its folder: `ironbench project --rebuild` writes it again
    from the events, as it writes every other file of the folder."""

    event: ClassVar[Literal["report_written"]] = "report_written"
    name: str = "report.html"  # the page's file in the run's folder


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
    | CheckCompleted
    | CheckProven
    | DecisionTaken
    | VariantGenerated
    | VariantDropped
    | VariantShortfall
    | AiOutputRejected
    | ScenarioStarted
    | TurnAnswered
    | TurnScored
    | ScenarioFinished
    | ModelCalled
    | ModelText
    | ModelCallPriced
    | PricingSet
    | BudgetReached
    | GateDesigned
    | GateLooked
    | RunFinished
    | RunAborted
    | ReportWritten
    | RunImported
    | SandboxApplied
    | FenceDenied
)
EventType = Literal[
    "run_started",
    "invocation_started",
    "invocation_completed",
    "check_completed",
    "check_proven",
    "decision_taken",
    "variant_generated",
    "variant_dropped",
    "variant_shortfall",
    "ai_output_rejected",
    "scenario_started",
    "turn_answered",
    "turn_scored",
    "scenario_finished",
    "model_called",
    "model_text",
    "model_call_priced",
    "pricing_set",
    "budget_reached",
    "gate_designed",
    "gate_looked",
    "run_finished",
    "run_aborted",
    "report_written",
    "run_imported",
    "sandbox_applied",
    "fence_denied",
]
EVENT_TYPES: dict[str, type[Event]] = {cls.event: cls for cls in get_args(Event)}
assert set(EVENT_TYPES) == set(get_args(EventType)), "EventType must name every event class"
for _cls in EVENT_TYPES.values():
    _cls.version = version_of(_cls.event)


def event_from_dict(type_: str, payload: dict[str, Any], version: int) -> Event:
    """The event a payload stored at `version` records, in today's shape (upcast first when it
    is older; a newer payload's unknown keys are left out)."""
    try:
        cls = EVENT_TYPES[type_]
    except KeyError:
        raise ValueError(f"unknown event type {type_!r}") from None
    if version < cls.version:
        payload = upcast(type_, payload, version)
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
