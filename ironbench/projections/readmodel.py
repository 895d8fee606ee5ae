"""Read-model tables (runs, invocations, decisions, ...) kept in step with the events.

Applied inside the append transaction, with its position, so the tables never
disagree with the log they come from. Every row is written through its table's class
(store/tables.py), with the statements that class made once.
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

from ironbench.core import events
from ironbench.core.events import RecordedEvent
from ironbench.core.files import escaped
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.store import (
    CallCostRow,
    CheckRow,
    DecisionRow,
    FailureCauseRow,
    GateLookRow,
    GateRow,
    GatewayCallRow,
    GatewayTextRow,
    InvocationRow,
    RejectionRow,
    Row,
    RunRow,
    SupersededInvocationRow,
    SurplusInvocationRow,
    TurnRow,
    TurnScoreRow,
    VariantRow,
)

# The tables an invocation's row can live in share one column set (store/tables.py):
# live evidence, attempts a re-run replaced, and runs past their group's decision.
INVOCATION_ROWS: tuple[type[InvocationRow | SupersededInvocationRow | SurplusInvocationRow], ...] = (
    InvocationRow,
    SupersededInvocationRow,
    SurplusInvocationRow,
)
# Every table the read model writes: a run's rows in them are derived from its events alone.
READ_MODEL_ROWS: tuple[type[Row], ...] = (
    *INVOCATION_ROWS,
    CheckRow,
    FailureCauseRow,
    DecisionRow,
    VariantRow,
    RejectionRow,
    TurnRow,
    TurnScoreRow,
    GatewayCallRow,
    GatewayTextRow,
    CallCostRow,
    GateRow,
    GateLookRow,
    RunRow,
)
READ_MODEL_TABLES = tuple(row.__tablename__ for row in READ_MODEL_ROWS)

_CLEAR_RUN = tuple(row.delete("run_id") for row in READ_MODEL_ROWS)
_SUITE_AND_MODE = RunRow.select("suite_id", "mode", where=("run_id",))
_RUN_ENDED = RunRow.update("status", "finished_utc", where=("run_id",))
_RUN_IMPORTED = RunRow.update("imported", "imported_from", where=("run_id",))
# A re-run of a slot replaces its live row; the attempt it replaces is kept.
_SUPERSEDE = SupersededInvocationRow.copy_from(InvocationRow, "invocation_key = ? AND rerun < ?")
# Runs past their group's decision (--speculate) leave `invocations`: they are no evidence.
# Found by their key (the primary key), not by scanning the run's rows for group and index.
_TO_SURPLUS = SurplusInvocationRow.copy_from(InvocationRow, "invocation_key = ?")
_FROM_INVOCATIONS = InvocationRow.delete("invocation_key")
# The check of an attempt's brick, on that attempt's row wherever it lives now.
_CHECKED = tuple(row.update("correct", "check_verdict", where=("invocation_key", "rerun")) for row in INVOCATION_ROWS)
# A new attempt of a conversation replaces an interrupted one.
_RESTARTED = tuple(row.delete("run_id", "engine", "scenario", "conversation") for row in (TurnRow, TurnScoreRow))
# A decision's row holds every field of its evidence (a StopDecision's), as the event has it.
_EVIDENCE = tuple(f.name for f in fields(events.StopDecision))
# A look's row holds every field of its event but `drop` (the row's `success_drop`), where it stands.
_LOOK = tuple(f.name for f in fields(events.GateLooked) if f.name != "drop")


def _put(conn: sqlite3.Connection, statement: str, values: tuple[Any, ...]) -> None:
    """A row written; a text holding a lone surrogate (a brick's exception message may: Python
    keeps it, SQLite stores only UTF-8) written with it escaped, as backslashreplace writes it
    (binding fails before the statement runs: nothing is written twice)."""
    try:
        conn.execute(statement, values)
    except UnicodeEncodeError:
        conn.execute(statement, tuple(escaped(v) if isinstance(v, str) else v for v in values))


def _slot(event: events.InvocationCompleted | events.CheckCompleted) -> dict[str, Any]:
    """The invocation slot a row is about: its key, its case and variant, its group and run index."""
    return {
        "invocation_key": event.key,
        "case_id": event.case_id,
        "variant_id": event.variant_id,
        "group_path": event.group,
        "run_index": event.run_index,
    }


class ReadModel:
    """Applies events to the read-model tables: one handler per event type that has a row."""

    name = "read_model"

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, str]] = {}

    def _suite_and_mode(self, conn: sqlite3.Connection, run_id: str) -> tuple[str, str]:
        if run_id not in self._runs:
            row = conn.execute(_SUITE_AND_MODE, (run_id,)).fetchone()
            self._runs[run_id] = (row[0], row[1]) if row else ("unknown", "unknown")
        return self._runs[run_id]

    def apply(self, conn: sqlite3.Connection, batch: Sequence[RecordedEvent]) -> None:
        for recorded in batch:
            match recorded.event:
                case events.RunStarted() as event:
                    self._run_started(conn, recorded, event)
                case events.InvocationCompleted() as event:
                    self._invocation_completed(conn, recorded, event)
                case events.CheckCompleted() as event:
                    self._check_completed(conn, recorded, event)
                case events.DecisionTaken() as event:
                    self._decision_taken(conn, recorded, event)
                case events.ScenarioStarted() as event:
                    self._scenario_started(conn, recorded, event)
                case events.TurnAnswered() as event:
                    self._turn_answered(conn, recorded, event)
                case events.TurnScored() as event:
                    self._turn_scored(conn, recorded, event)
                case events.AiOutputRejected() as event:
                    self._ai_output_rejected(conn, recorded, event)
                case events.VariantGenerated() as event:
                    self._variant_generated(conn, recorded, event)
                case events.VariantDropped() as event:
                    self._variant_dropped(conn, recorded, event)
                case events.GateDesigned() as event:
                    self._gate_designed(conn, recorded, event)
                case events.ModelCalled() as event:
                    self._model_called(conn, recorded, event)
                case events.ModelText() as event:
                    self._model_text(conn, recorded, event)
                case events.ModelCallPriced() as event:
                    self._model_call_priced(conn, recorded, event)
                case events.GateLooked() as event:
                    self._gate_looked(conn, recorded, event)
                case events.RunFinished() | events.RunAborted() as event:
                    self._run_ended(conn, recorded, event)
                case events.RunImported() as event:
                    self._run_imported(conn, recorded, event)
                case _:
                    pass  # events with no row of their own (invocation started, ...)

    def clear_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        for statement in _CLEAR_RUN:
            conn.execute(statement, (run_id,))
        self._runs.pop(run_id, None)

    # -- one handler per event type ------------------------------------------------------

    def _run_started(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunStarted) -> None:
        self._runs[recorded.run_id] = (event.suite_id, event.mode)
        row = RunRow(
            run_id=recorded.run_id,
            suite_id=event.suite_id,
            mode=event.mode,
            status="running",
            started_utc=recorded.timestamp_utc,
            finished_utc=None,
            target=" ".join(event.target_argv),
            ironclad_version=event.ironclad_version,
            label=event.label,
            environment=json.dumps(event.environment, sort_keys=True),
            ironclad_version_source=event.ironclad_version_source,
            imported=None,  # a run_imported event says where it came from
            imported_from=None,
        )
        _put(conn, RunRow.replace, row.values())

    def _invocation_completed(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.InvocationCompleted
    ) -> None:
        _, mode = self._suite_and_mode(conn, recorded.run_id)
        if event.rerun:
            conn.execute(_SUPERSEDE, (event.key, event.rerun))
        table: type[InvocationRow | SurplusInvocationRow] = InvocationRow
        if event.surplus:
            conn.execute(_FROM_INVOCATIONS, (event.key,))
            table = SurplusInvocationRow
        at = self._at(conn, recorded)
        row = table(
            **at,
            **_slot(event),
            mode=mode,
            instruction_hash=event.instruction_hash,
            instruction_length=event.instruction_length,
            success=event.success,
            failure_stage=event.failure_stage,
            attempts=event.attempts,
            repairs_triggered=event.repairs_triggered,
            duration_ms=event.duration_ms,
            timed_out=event.timed_out,
            harness_error=event.harness_error,
            infra_error=event.infra_error,
            exit_code=event.exit_code,
            debug_artifacts_present=event.debug_artifacts_present,
            generator=event.generator,
            level=event.level,
            case_mode=event.mode,
            brick_sha256=event.brick_sha256,
            correct=None,  # until its check_completed
            check_verdict=None,
            failure_cause=event.failure_cause,
            complexity=event.complexity,
            disagrees=",".join(event.disagrees) if event.disagrees else None,
            model_calls=event.model_calls,
            prompt_tokens=event.prompt_tokens,
            completion_tokens=event.completion_tokens,
            model_seconds=event.model_seconds,
            rerun=event.rerun,
        )
        _put(conn, table.replace, row.values())
        for cause in event.failure_causes or ():  # each as core.causes.AttemptCause records it, every key set
            failed = FailureCauseRow(
                **at,
                **_slot(event),
                attempt=cause["attempt"],
                cause=cause["cause"],
                passed=cause["passed"],
                failed=cause["failed"],
                file=cause["file"],
            )
            _put(conn, FailureCauseRow.replace, failed.values())

    def _check_completed(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.CheckCompleted) -> None:
        correct = None if event.verdict == "harness_fault" else event.verdict == "correct"
        row = CheckRow(
            **self._at(conn, recorded),
            **_slot(event),
            rerun=event.rerun,
            kind=event.kind,
            check_sha256=event.check_sha256,
            verdict=event.verdict,
            correct=correct,
            passed=event.passed,
            failed=event.failed,
            duration_ms=event.duration_ms,
            detail=event.detail,
            output=event.output,
            recheck=event.recheck,
            brick_path=event.brick_path,
            brick_sha256=event.brick_sha256,
        )
        _put(conn, CheckRow.replace, row.values())
        for statement in _CHECKED:  # the row of the attempt that saved the brick, wherever it lives now
            conn.execute(statement, (correct, event.verdict, event.key, event.rerun))

    def _decision_taken(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.DecisionTaken) -> None:
        suite_id, mode = self._suite_and_mode(conn, recorded.run_id)
        row = DecisionRow(
            **{name: getattr(event, name) for name in _EVIDENCE},
            **self._at(conn, recorded),
            mode=mode,
            case_id=event.case_id,
            variant_id=event.variant_id,
            group_path=event.group,
            generator=event.generator,
            level=event.level,
            case_mode=event.mode,
            reference_source=event.reference_source,
            complexity=event.complexity,
        )
        _put(conn, DecisionRow.replace, row.values())
        for index in event.surplus_runs or ():
            key = invocation_key(recorded.run_id, suite_id, event.case_id, event.variant_id, index)
            conn.execute(_TO_SURPLUS, (key,))
            conn.execute(_FROM_INVOCATIONS, (key,))

    def _scenario_started(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ScenarioStarted
    ) -> None:
        for statement in _RESTARTED:
            conn.execute(statement, (recorded.run_id, event.engine, event.scenario, event.conversation))

    def _turn_answered(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.TurnAnswered) -> None:
        row = TurnRow(
            **self._turn(conn, recorded, event),
            attempt=event.attempt,
            prompt=event.prompt,
            answer=event.answer,
            duration_ms=event.duration_ms,
        )
        _put(conn, TurnRow.replace, row.values())

    def _turn_scored(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.TurnScored) -> None:
        row = TurnScoreRow(
            **self._turn(conn, recorded, event), scorer=event.scorer, violated=event.violated, detail=event.detail
        )
        _put(conn, TurnScoreRow.replace, row.values())

    def _turn(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.TurnAnswered | events.TurnScored
    ) -> dict[str, Any]:
        """The columns of a turn's rows in both tables (store/tables.py `_TurnColumns`): which turn
        of which conversation, and when it was recorded."""
        return {
            **self._at(conn, recorded),
            "engine": event.engine,
            "scenario": event.scenario,
            "conversation": event.conversation,
            "turn": event.turn,
            "domain": event.domain,
        }

    def _at(self, conn: sqlite3.Connection, recorded: RecordedEvent) -> dict[str, Any]:
        """Where the event a row comes from stands: its run and the run's suite, its seq and its time."""
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        return {
            "run_id": recorded.run_id,
            "suite_id": suite_id,
            "seq": recorded.seq,
            "timestamp_utc": recorded.timestamp_utc,
        }

    def _ai_output_rejected(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.AiOutputRejected
    ) -> None:
        row = RejectionRow(
            **self._at(conn, recorded),
            case_id=event.case_id,
            generator=event.generator,
            variant_id=event.variant_id,
            attempt=event.attempt,
            model=event.model,
            ai_output=event.ai_output,
            failure_reasons=json.dumps(event.failure_reasons),
            reason_count=len(event.failure_reasons),
        )
        _put(conn, RejectionRow.replace, row.values())

    def _variant_generated(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.VariantGenerated
    ) -> None:
        self._variant(conn, recorded, event, event.variant_id, event.instruction, event.seed, None)

    def _variant_dropped(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.VariantDropped) -> None:
        self._variant(conn, recorded, event, None, event.candidate, None, event.reason)

    def _variant(
        self,
        conn: sqlite3.Connection,
        recorded: RecordedEvent,
        event: events.VariantGenerated | events.VariantDropped,
        variant_id: str | None,
        instruction: str,
        seed: int | None,
        dropped: str | None,
    ) -> None:
        """A variant made (or, with the reason it was `dropped`, a candidate dropped)."""
        row = VariantRow(
            **self._at(conn, recorded),
            case_mode=event.mode,
            case_id=event.case_id,
            generator=event.generator,
            variant_id=variant_id,
            instruction=instruction,
            instruction_hash=instruction_hash(instruction),
            seed=seed,
            attempt=event.attempt,
            dropped=dropped is not None,
            reason=dropped,
        )
        _put(conn, VariantRow.replace, row.values())

    def _gate_designed(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.GateDesigned) -> None:
        row = GateRow(
            run_id=recorded.run_id,
            seq=recorded.seq,
            against=event.against,
            margin=event.margin,
            alpha=event.alpha,
            power=event.power,
            rate=event.rate,
            cap=event.cap,
            cases=len(event.cases),
            end_round=event.looks[-1],
            met=event.met,
        )
        _put(conn, GateRow.replace, row.values())

    def _gate_looked(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.GateLooked) -> None:
        row = GateLookRow(
            **{name: getattr(event, name) for name in _LOOK},
            success_drop=event.drop,
            seq=recorded.seq,
            run_id=recorded.run_id,
            timestamp_utc=recorded.timestamp_utc,
        )
        _put(conn, GateLookRow.replace, row.values())

    def _model_called(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ModelCalled) -> None:
        answer = event.answer
        row = GatewayCallRow(
            **self._at(conn, recorded),
            invocation_key=event.key,
            rerun=event.rerun,
            case_id=event.case_id,
            variant_id=event.variant_id,
            run_index=event.run_index,
            group_path=recorded.stream.rsplit("/", 1)[0],  # the invocation's group
            call_index=event.index,
            api=event.api,
            requested_model=event.requested_model,
            served_model=event.served_model,
            stream=event.stream,
            messages=json.dumps(event.messages, ensure_ascii=False),
            options=json.dumps(event.options, ensure_ascii=False, sort_keys=True),
            answer=answer if isinstance(answer, str) else None,
            answer_sha256=answer["sha256"] if isinstance(answer, dict) else None,
            prompt_tokens=event.prompt_tokens,
            completion_tokens=event.completion_tokens,
            latency_ms=event.latency_ms,
            error=event.error,
            error_kind=event.error_kind,
            status=event.status,
            retry_after=event.retry_after,
            divergence=event.divergence,
        )
        _put(conn, GatewayCallRow.replace, row.values())

    def _model_text(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ModelText) -> None:
        row = GatewayTextRow(run_id=recorded.run_id, sha256=event.sha256, text=event.text, chars=len(event.text))
        _put(conn, GatewayTextRow.replace, row.values())

    def _model_call_priced(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ModelCallPriced
    ) -> None:
        row = CallCostRow(
            **self._at(conn, recorded),
            stream=recorded.stream,
            caller=event.caller,
            model=event.model,
            invocation_key=event.key,
            rerun=event.rerun,
            call_index=event.index,
            case_id=event.case_id,
            variant_id=event.variant_id,
            run_index=event.run_index,
            group_path=recorded.stream.rsplit("/", 1)[0] if event.key is not None else None,
            input_tokens=event.input_tokens,
            output_tokens=event.output_tokens,
            cached_tokens=event.cached_tokens,
            model_seconds=event.model_seconds,
            pricing=event.pricing,
            cost_usd=None if event.cost is None else float(event.cost),
            cost=event.cost,
            currency=event.currency,
            price_table=event.table,
            provider=event.provider,
            priced_model=event.priced_model,
        )
        _put(conn, CallCostRow.replace, row.values())

    def _run_ended(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunFinished | events.RunAborted
    ) -> None:
        status = "finished" if isinstance(event, events.RunFinished) else "aborted"
        conn.execute(_RUN_ENDED, (status, recorded.timestamp_utc, recorded.run_id))

    def _run_imported(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunImported) -> None:
        conn.execute(_RUN_IMPORTED, (event.format, event.source, recorded.run_id))
