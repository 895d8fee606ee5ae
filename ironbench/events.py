"""Event value classes: one small frozen class per fact, and their discriminated union.

Storage identity (sequence, event id, timestamp) is assigned by the store at append
time and lives on RecordedEvent, never on the event value itself.
"""

from dataclasses import dataclass
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

SCHEMA_VERSION = 1


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_dict(self) -> dict:
        return self.model_dump(mode="json", exclude={"event"})


class RunStarted(_Event):
    event: Literal["run_started"] = "run_started"
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


class InvocationStarted(_Event):
    event: Literal["invocation_started"] = "invocation_started"
    key: str
    case_id: str
    variant_id: str
    run_index: int
    instruction: str
    workdir: str


class InvocationCompleted(_Event):
    event: Literal["invocation_completed"] = "invocation_completed"
    key: str
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
    debug_enabled: bool
    debug_artifacts_present: bool
    debug_path: str
    brick_path: str | None = None
    stdout: str = ""
    stderr: str = ""
    output_truncated: bool = False


class DecisionTaken(_Event):
    event: Literal["decision_taken"] = "decision_taken"
    case_id: str
    variant_id: str
    decision: Literal["stable", "exhausted"]
    reason: str
    n: int
    successes: int
    success_rate: float
    wilson_low: float
    wilson_high: float
    chance_agreement: float


class RunFinished(_Event):
    event: Literal["run_finished"] = "run_finished"
    invocations: int
    successes: int


class RunAborted(_Event):
    event: Literal["run_aborted"] = "run_aborted"
    reason: str


Event = Annotated[
    Union[RunStarted, InvocationStarted, InvocationCompleted, DecisionTaken, RunFinished, RunAborted],
    Field(discriminator="event"),
]
_ADAPTER: TypeAdapter = TypeAdapter(Event)


def event_from_dict(type_: str, payload: dict) -> _Event:
    return _ADAPTER.validate_python({**payload, "event": type_})


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """An event as the store holds it: the value plus the identity given at append."""

    seq: int
    event_id: str
    run_id: str
    stream: str
    timestamp_utc: str
    event: _Event

    @property
    def type(self) -> str:
        return self.event.event
