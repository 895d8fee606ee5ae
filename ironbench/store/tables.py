"""The store's tables, declared once: the events log, the read models, projection positions,
leases, the model-call cache and the space reserve.

Each class is a table's row (store/rows.py): the store, the read model and the model cache
write through these classes, and alembic's environment and the drift test read them as
SQLModel tables (store/models.py). The schema itself only ever changes through alembic
revisions in `migrations/`; a test keeps these classes equal to what they build.
"""

from ironbench.core.events import StopDecision
from ironbench.store.rows import Row, column


class EventRecord(Row, table="events", indexes=[("ix_events_run_stream", ("run_id", "stream"))]):
    seq: int = column(primary_key=True)
    event_id: str = column(unique=True)
    run_id: str = column(index=True)
    stream: str
    type: str
    schema_version: int
    timestamp_utc: str
    # Set for facts that may be recorded at most once (a completed invocation,
    # a decision); the unique index makes a duplicate impossible, not just unlikely.
    idempotency_key: str | None = column(unique=True)
    payload: str
    # sha256 over this event's columns and its predecessor's hash (store/chain.py).
    hash: str | None


class RunRow(Row, table="runs"):
    run_id: str = column(primary_key=True)
    suite_id: str
    mode: str
    status: str
    started_utc: str
    finished_utc: str | None
    target: str
    ironclad_version: str
    label: str | None
    environment: str | None  # JSON: the variables the suite's record_env named
    ironclad_version_source: str | None  # how the target's version was found
    imported: str | None  # outputs | store: where an imported run's events came from (else null)
    imported_from: str | None  # the folder or store file it was imported from


class _InvocationColumns(Row):
    """What one invocation attempt recorded: the columns of the three tables below."""

    invocation_key: str = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    mode: str
    case_id: str
    variant_id: str
    run_index: int
    instruction_hash: str
    instruction_length: int
    success: bool
    failure_stage: str | None
    attempts: int
    repairs_triggered: int
    duration_ms: int
    timed_out: bool
    harness_error: str | None
    infra_error: str | None
    exit_code: int | None
    debug_artifacts_present: bool
    timestamp_utc: str
    seq: int
    group_path: str | None
    generator: str | None
    level: int | None
    case_mode: str | None
    brick_sha256: str | None  # of the brick the run saved (never a copy)
    correct: bool | None  # the harness's check of its brick said correct (None: not checked)
    check_verdict: str | None  # that check's verdict (core/kinds.py CheckVerdict)
    failure_cause: str | None  # why the last failed validation attempt of a failed run failed
    complexity: str | None  # a canonical case's group: small, mid or large
    # imported: the outcome fields the recorded summary gives otherwise (comma-separated)
    disagrees: str | None
    # What it asked of the model gateway (NULL: the run served no model).
    model_calls: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    model_seconds: float | None


class InvocationRow(_InvocationColumns, table="invocations"):
    rerun: int  # 0: the slot's first attempt; k: its k-th re-run


class SupersededInvocationRow(_InvocationColumns, table="superseded_invocations"):
    """An attempt of an invocation slot that a later attempt replaced (it hit an
    infrastructure error and was run again); `invocations` holds only the live one."""

    rerun: int = column(primary_key=True)


class SurplusInvocationRow(_InvocationColumns, table="surplus_invocations"):
    """A run that lies past its group's decision (started by --speculate): kept, never
    evidence; `invocations` holds none of them."""

    rerun: int


class CheckRow(Row, table="checks"):
    """The latest check of the brick an invocation saved (a re-check replaces it)."""

    invocation_key: str = column(primary_key=True)
    rerun: int
    run_id: str = column(index=True)
    suite_id: str
    case_id: str
    variant_id: str
    group_path: str
    run_index: int
    kind: str  # pytest | python | command
    check_sha256: str
    verdict: str
    correct: bool | None  # None: the harness could not run it (harness_fault)
    passed: int | None
    failed: int | None
    duration_ms: int
    detail: str
    output: str
    recheck: bool
    brick_path: str
    brick_sha256: str | None
    timestamp_utc: str
    seq: int


class FailureCauseRow(Row, table="failure_causes"):
    """Why one failed validation attempt of an invocation failed, read from its debug file."""

    invocation_key: str = column(primary_key=True)
    attempt: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    case_id: str
    variant_id: str
    group_path: str | None
    run_index: int
    cause: str
    passed: int | None
    failed: int | None
    file: str
    timestamp_utc: str
    seq: int


class DecisionRow(StopDecision, Row, table="decisions", frozen=True):
    """A group's decision: every field of its evidence (a StopDecision's, declared there),
    then where it stands."""

    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    mode: str
    case_id: str
    variant_id: str
    timestamp_utc: str
    group_path: str | None
    generator: str | None
    level: int | None
    case_mode: str | None
    reference_source: str | None
    complexity: str | None


class VariantRow(Row, table="variants"):
    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    case_mode: str
    case_id: str
    generator: str
    variant_id: str | None
    instruction: str
    instruction_hash: str
    seed: int | None
    attempt: int
    dropped: bool
    reason: str | None
    timestamp_utc: str


class ProjectionPosition(Row, table="projection_positions"):
    name: str = column(primary_key=True)
    last_seq: int


class RejectionRow(Row, table="rejections"):
    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    case_id: str
    generator: str
    variant_id: str
    attempt: int
    model: str
    ai_output: str
    failure_reasons: str  # JSON list
    reason_count: int
    timestamp_utc: str


class ModelCall(Row, table="model_calls"):
    key: str = column(primary_key=True)
    model: str
    prompt: str
    system: str | None
    options: str
    attempt: int
    response: str
    duration_ms: int
    created_utc: str


class GatewayCallRow(Row, table="gateway_calls"):
    """One call a target made to the run's model gateway (every attempt of a slot: `rerun`).
    `ironbench query` shows it as the view `model_calls` (the table of that name caches the
    coordinator's own model answers)."""

    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    invocation_key: str = column(index=True)
    rerun: int
    case_id: str
    variant_id: str
    run_index: int
    group_path: str
    call_index: int
    api: str
    requested_model: str
    served_model: str
    stream: bool
    messages: str  # JSON: [{"role", "content"}], long contents as {"sha256", "chars"} (gateway_texts)
    options: str  # JSON: the rest of the request
    answer: str | None  # NULL when held by hash (answer_sha256) or when the call failed
    answer_sha256: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    error: str | None
    error_kind: str | None
    status: int
    retry_after: float | None
    divergence: str | None
    timestamp_utc: str


class CallCostRow(Row, table="call_costs"):
    """What each model call of a run cost (a model_call_priced event): the target's calls through
    the gateway and ironbench's own (`caller`), priced when recorded. `ironbench query` shows it
    as the view `costs`."""

    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    suite_id: str
    stream: str
    caller: str  # target | ai_rewrite | rewrite_guard | engine
    model: str
    invocation_key: str | None = column(index=True)  # the target's invocation
    rerun: int
    call_index: int | None
    case_id: str | None
    variant_id: str | None
    run_index: int | None
    group_path: str | None  # the target's invocation's group
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    model_seconds: float
    pricing: str  # table | given | local | unpriced | replayed | cached
    cost_usd: float | None  # NULL: unpriced
    cost: str | None  # the same, exactly (a decimal's text)
    currency: str
    price_table: str | None  # genai-prices and its version, suite, --price
    provider: str | None
    priced_model: str | None
    timestamp_utc: str


class GatewayTextRow(Row, table="gateway_texts"):
    """The long texts of a run's model calls, once each, by sha256."""

    run_id: str = column(primary_key=True)
    sha256: str = column(primary_key=True)
    text: str
    chars: int


class _TurnColumns(Row):
    """One turn of a gauntlet conversation, as the two tables below key and date it."""

    run_id: str = column(primary_key=True)
    engine: str = column(primary_key=True)
    scenario: str = column(primary_key=True)
    conversation: int = column(primary_key=True)
    turn: int = column(primary_key=True)
    suite_id: str
    domain: str
    timestamp_utc: str
    seq: int


class TurnRow(_TurnColumns, table="turns"):
    attempt: int
    prompt: str
    answer: str
    duration_ms: int


class TurnScoreRow(_TurnColumns, table="turn_scores"):
    """One scorer's verdict on a turn."""

    scorer: str = column(primary_key=True)
    violated: bool
    detail: str


class RunLease(Row, table="run_leases"):
    """The coordinator writing a run; not an event (it changes, and goes when the run stops)."""

    run_id: str = column(primary_key=True)
    host: str
    pid: int
    process_started: float
    acquired_utc: str
    heartbeat_utc: str


class StoreReserve(Row, table="store_reserve"):
    """Filler freed when the disk fills, so a run can still record why it stopped."""

    id: int = column(primary_key=True)
    filler: bytes


class GateRow(Row, table="gates"):
    """`run --against`: the sequential gate a run ran under (one row per run)."""

    run_id: str = column(primary_key=True)
    seq: int
    against: str
    margin: float
    alpha: float
    power: float
    rate: float
    cap: int
    cases: int
    end_round: int
    met: bool


class GateLookRow(Row, table="gate_looks"):
    """Each look of a run's sequential gate, in order."""

    seq: int = column(primary_key=True)
    run_id: str = column(index=True)
    round: int
    look: int
    invocations: int
    success_drop: float  # A − B, weighted over cases
    se: float
    z: float
    upper: float
    lower: float
    low: float
    high: float
    decision: str
    p_fixed: float | None
    failed: bool
    timestamp_utc: str
