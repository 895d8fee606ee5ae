"""SQLModel table definitions: the events log, the read models and projection positions.

The schema itself only ever changes through alembic revisions in `migrations/`;
these classes describe it for code and for DuckDB queries.
"""

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class EventRecord(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_run_stream", "run_id", "stream"),)

    seq: int | None = Field(default=None, primary_key=True)
    event_id: str = Field(unique=True)
    run_id: str = Field(index=True)
    stream: str
    type: str
    schema_version: int
    timestamp_utc: str
    # Set for facts that may be recorded at most once (a completed invocation,
    # a decision); the unique index makes a duplicate impossible, not just unlikely.
    idempotency_key: str | None = Field(default=None, unique=True)
    payload: str
    # sha256 over this event's columns and its predecessor's hash (store/chain.py).
    hash: str | None = None


class RunRow(SQLModel, table=True):
    __tablename__ = "runs"

    run_id: str = Field(primary_key=True)
    suite_id: str
    mode: str
    status: str
    started_utc: str
    finished_utc: str | None = None
    target: str
    ironclad_version: str
    label: str | None = None
    environment: str | None = None  # JSON: the variables the suite's record_env named
    ironclad_version_source: str | None = None  # how the target's version was found
    imported: str | None = None  # outputs | store: where an imported run's events came from (else null)
    imported_from: str | None = None  # the folder or store file it was imported from


class _InvocationColumns(SQLModel):
    """What one invocation attempt recorded: the columns of the three tables below."""

    invocation_key: str = Field(primary_key=True)
    run_id: str = Field(index=True)
    suite_id: str
    mode: str
    case_id: str
    variant_id: str
    run_index: int
    instruction_hash: str
    instruction_length: int
    success: bool
    failure_stage: str | None = None
    attempts: int
    repairs_triggered: int
    duration_ms: int
    timed_out: bool
    harness_error: str | None = None
    infra_error: str | None = None
    exit_code: int | None = None
    debug_artifacts_present: bool
    timestamp_utc: str
    seq: int
    group_path: str | None = None
    generator: str | None = None
    level: int | None = None
    case_mode: str | None = None
    brick_sha256: str | None = None  # of the brick the run saved (never a copy)
    correct: bool | None = None  # the harness's check of its brick said correct (None: not checked)
    check_verdict: str | None = None  # that check's verdict (core/kinds.py CheckVerdict)
    failure_cause: str | None = None  # why the last failed validation attempt of a failed run failed
    complexity: str | None = None  # a canonical case's group: small, mid or large
    # imported: the outcome fields the recorded summary gives otherwise (comma-separated)
    disagrees: str | None = None
    # What it asked of the model gateway (NULL: the run served no model).
    model_calls: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model_seconds: float | None = None


class InvocationRow(_InvocationColumns, table=True):
    __tablename__ = "invocations"

    rerun: int = 0  # 0: the slot's first attempt; k: its k-th re-run


class SupersededInvocationRow(_InvocationColumns, table=True):
    """An attempt of an invocation slot that a later attempt replaced (it hit an
    infrastructure error and was run again); `invocations` holds only the live one."""

    __tablename__ = "superseded_invocations"

    rerun: int = Field(primary_key=True)


class SurplusInvocationRow(_InvocationColumns, table=True):
    """A run that lies past its group's decision (started by --speculate): kept, never
    evidence; `invocations` holds none of them."""

    __tablename__ = "surplus_invocations"
    rerun: int = 0


class CheckRow(SQLModel, table=True):
    """The latest check of the brick an invocation saved (a re-check replaces it)."""

    __tablename__ = "checks"

    invocation_key: str = Field(primary_key=True)
    rerun: int
    run_id: str = Field(index=True)
    suite_id: str
    case_id: str
    variant_id: str
    group_path: str
    run_index: int
    kind: str  # pytest | python | command
    check_sha256: str
    verdict: str
    correct: bool | None = None  # None: the harness could not run it (harness_fault)
    passed: int | None = None
    failed: int | None = None
    duration_ms: int
    detail: str
    output: str
    recheck: bool
    brick_path: str
    brick_sha256: str | None = None
    timestamp_utc: str
    seq: int


class FailureCauseRow(SQLModel, table=True):
    """Why one failed validation attempt of an invocation failed, read from its debug file."""

    __tablename__ = "failure_causes"

    invocation_key: str = Field(primary_key=True)
    attempt: int = Field(primary_key=True)
    run_id: str = Field(index=True)
    suite_id: str
    case_id: str
    variant_id: str
    group_path: str | None = None
    run_index: int
    cause: str
    passed: int | None = None
    failed: int | None = None
    file: str
    timestamp_utc: str
    seq: int


class DecisionRow(SQLModel, table=True):
    __tablename__ = "decisions"

    seq: int = Field(primary_key=True)
    run_id: str = Field(index=True)
    suite_id: str
    mode: str
    case_id: str
    variant_id: str
    decision: str
    reason: str
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    chance_agreement: float
    timestamp_utc: str
    group_path: str | None = None
    generator: str | None = None
    level: int | None = None
    case_mode: str | None = None
    reference_source: str | None = None
    success_lower_95: float | None = None
    success_upper_95: float | None = None
    reproduce_lower_95: float | None = None
    direction: str | None = None
    p_value: float | None = None
    complexity: str | None = None


class VariantRow(SQLModel, table=True):
    __tablename__ = "variants"

    seq: int = Field(primary_key=True)
    run_id: str = Field(index=True)
    suite_id: str
    case_mode: str
    case_id: str
    generator: str
    variant_id: str | None = None
    instruction: str
    instruction_hash: str
    seed: int | None = None
    attempt: int
    dropped: bool
    reason: str | None = None
    timestamp_utc: str


class ProjectionPosition(SQLModel, table=True):
    __tablename__ = "projection_positions"

    name: str = Field(primary_key=True)
    last_seq: int


class RejectionRow(SQLModel, table=True):
    __tablename__ = "rejections"

    seq: int = Field(primary_key=True)
    run_id: str = Field(index=True)
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


class ModelCall(SQLModel, table=True):
    __tablename__ = "model_calls"

    key: str = Field(primary_key=True)
    model: str
    prompt: str
    system: str | None = None
    options: str
    attempt: int
    response: str
    duration_ms: int
    created_utc: str


class GatewayCallRow(SQLModel, table=True):
    """One call a target made to the run's model gateway (every attempt of a slot: `rerun`).
    `ironbench query` shows it as the view `model_calls` (the table of that name caches the
    coordinator's own model answers)."""

    __tablename__ = "gateway_calls"

    seq: int = Field(primary_key=True)
    run_id: str = Field(index=True)
    suite_id: str
    invocation_key: str = Field(index=True)
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
    answer: str | None = None  # NULL when held by hash (answer_sha256) or when the call failed
    answer_sha256: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float
    error: str | None = None
    error_kind: str | None = None
    status: int
    retry_after: float | None = None
    divergence: str | None = None
    timestamp_utc: str


class GatewayTextRow(SQLModel, table=True):
    """The long texts of a run's model calls, once each, by sha256."""

    __tablename__ = "gateway_texts"

    run_id: str = Field(primary_key=True)
    sha256: str = Field(primary_key=True)
    text: str
    chars: int


class _TurnColumns(SQLModel):
    """One turn of a gauntlet conversation, as the two tables below key and date it."""

    run_id: str = Field(primary_key=True)
    engine: str = Field(primary_key=True)
    scenario: str = Field(primary_key=True)
    conversation: int = Field(primary_key=True)
    turn: int = Field(primary_key=True)
    suite_id: str
    domain: str
    timestamp_utc: str
    seq: int


class TurnRow(_TurnColumns, table=True):
    __tablename__ = "turns"

    attempt: int
    prompt: str
    answer: str
    duration_ms: int


class TurnScoreRow(_TurnColumns, table=True):
    """One scorer's verdict on a turn."""

    __tablename__ = "turn_scores"

    scorer: str = Field(primary_key=True)
    violated: bool
    detail: str


class RunLease(SQLModel, table=True):
    """The coordinator writing a run; not an event (it changes, and goes when the run stops)."""

    __tablename__ = "run_leases"

    run_id: str = Field(primary_key=True)
    host: str
    pid: int
    process_started: float
    acquired_utc: str
    heartbeat_utc: str


class StoreReserve(SQLModel, table=True):
    """Filler freed when the disk fills, so a run can still record why it stopped."""

    __tablename__ = "store_reserve"

    id: int = Field(primary_key=True)
    filler: bytes


class GateRow(SQLModel, table=True):
    """`run --against`: the sequential gate a run ran under (one row per run)."""

    __tablename__ = "gates"

    run_id: str = Field(primary_key=True)
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


class GateLookRow(SQLModel, table=True):
    """Each look of a run's sequential gate, in order."""

    __tablename__ = "gate_looks"

    seq: int = Field(primary_key=True)
    run_id: str = Field(index=True)
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
    p_fixed: float | None = None
    failed: bool
    timestamp_utc: str
