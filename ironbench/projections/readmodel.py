"""Read-model tables (runs, invocations, decisions) kept in step with the events.

Applied inside the append transaction, with its position, so the tables never
disagree with the log they come from.
"""

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import fields

from ironbench.core import events
from ironbench.core.events import RecordedEvent
from ironbench.core.keys import instruction_hash, invocation_key

READ_MODEL_TABLES = (
    "invocations",
    "checks",
    "failure_causes",
    "superseded_invocations",
    "surplus_invocations",
    "decisions",
    "variants",
    "rejections",
    "turns",
    "turn_scores",
    "gateway_calls",
    "gateway_texts",
    "gates",
    "gate_looks",
    "runs",
)

_INVOCATION_COLUMNS = (
    "invocation_key, rerun, run_id, suite_id, mode, case_id, variant_id, run_index, instruction_hash, "
    "instruction_length, success, failure_stage, attempts, repairs_triggered, duration_ms, timed_out, harness_error, "
    "infra_error, exit_code, debug_artifacts_present, timestamp_utc, seq, group_path, generator, level, case_mode, "
    "brick_sha256, correct, check_verdict, failure_cause, complexity, disagrees, model_calls, prompt_tokens, "
    "completion_tokens, model_seconds"
)
# The three tables an invocation's row can live in share one column set (store/tables.py):
# live evidence, attempts a re-run replaced, and runs past their group's decision.
INVOCATION_TABLES = ("invocations", "superseded_invocations", "surplus_invocations")
_INSERT_INVOCATION = {
    table: f"INSERT OR REPLACE INTO {table}({_INVOCATION_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(_INVOCATION_COLUMNS.split(',')))})"
    for table in INVOCATION_TABLES
}
# A re-run of a slot replaces its live row; the attempt it replaces is kept.
_SUPERSEDE = (
    f"INSERT OR REPLACE INTO superseded_invocations({_INVOCATION_COLUMNS}) "
    f"SELECT {_INVOCATION_COLUMNS} FROM invocations WHERE invocation_key = ? AND rerun < ?"
)
# Runs past their group's decision (--speculate) leave `invocations`: they are no evidence.
# Found by their key (the primary key), not by scanning the run's rows for group and index.
_TO_SURPLUS = (
    f"INSERT OR REPLACE INTO surplus_invocations({_INVOCATION_COLUMNS}) SELECT {_INVOCATION_COLUMNS} "
    "FROM invocations WHERE invocation_key = ?"
)
_FROM_INVOCATIONS = "DELETE FROM invocations WHERE invocation_key = ?"
_INSERT_CHECK = (
    "INSERT OR REPLACE INTO checks(invocation_key, rerun, run_id, suite_id, case_id, variant_id, group_path, "
    "run_index, kind, check_sha256, verdict, correct, passed, failed, duration_ms, detail, output, recheck, "
    "brick_path, brick_sha256, timestamp_utc, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_CAUSE = (
    "INSERT OR REPLACE INTO failure_causes(invocation_key, attempt, run_id, suite_id, case_id, variant_id, "
    "group_path, run_index, cause, passed, failed, file, timestamp_utc, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
# A decision's row: where it stands, then every field of its evidence (a StopDecision's).
_EVIDENCE = tuple(f.name for f in fields(events.StopDecision))
_DECISION_COLUMNS = (
    "seq, run_id, suite_id, mode, case_id, variant_id, timestamp_utc, group_path, generator, level, case_mode, "
    f"reference_source, {', '.join(_EVIDENCE)}, complexity"
)
_INSERT_DECISION = (
    f"INSERT OR REPLACE INTO decisions({_DECISION_COLUMNS}) "
    f"VALUES ({', '.join('?' * len(_DECISION_COLUMNS.split(',')))})"
)
_INSERT_MODEL_CALL = (
    "INSERT OR REPLACE INTO gateway_calls(seq, run_id, suite_id, invocation_key, rerun, case_id, variant_id, run_index, "
    "group_path, call_index, api, requested_model, served_model, stream, messages, options, answer, answer_sha256, "
    "prompt_tokens, completion_tokens, latency_ms, error, error_kind, status, retry_after, divergence, timestamp_utc) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_VARIANT = (
    "INSERT OR REPLACE INTO variants(seq, run_id, suite_id, case_mode, case_id, generator, variant_id, "
    "instruction, instruction_hash, seed, attempt, dropped, reason, timestamp_utc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


class ReadModel:
    """Applies events to the read-model tables: one handler per event type that has a row."""

    name = "read_model"

    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, str]] = {}

    def _suite_and_mode(self, conn: sqlite3.Connection, run_id: str) -> tuple[str, str]:
        if run_id not in self._runs:
            row = conn.execute("SELECT suite_id, mode FROM runs WHERE run_id = ?", (run_id,)).fetchone()
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
                case events.GateLooked() as event:
                    self._gate_looked(conn, recorded, event)
                case events.RunFinished() | events.RunAborted() as event:
                    self._run_ended(conn, recorded, event)
                case events.RunImported() as event:
                    self._run_imported(conn, recorded, event)
                case _:
                    pass  # events with no row of their own (invocation started, ...)

    def clear_run(self, conn: sqlite3.Connection, run_id: str) -> None:
        for table in READ_MODEL_TABLES:
            conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        self._runs.pop(run_id, None)

    # -- one handler per event type ------------------------------------------------------

    def _run_started(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunStarted) -> None:
        self._runs[recorded.run_id] = (event.suite_id, event.mode)
        conn.execute(
            "INSERT OR REPLACE INTO runs(run_id, suite_id, mode, status, started_utc, finished_utc, "
            "target, ironclad_version, label, environment, ironclad_version_source) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.run_id,
                event.suite_id,
                event.mode,
                "running",
                recorded.timestamp_utc,
                None,
                " ".join(event.target_argv),
                event.ironclad_version,
                event.label,
                json.dumps(event.environment, sort_keys=True),
                event.ironclad_version_source,
            ),
        )

    def _invocation_completed(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.InvocationCompleted
    ) -> None:
        suite_id, mode = self._suite_and_mode(conn, recorded.run_id)
        if event.rerun:
            conn.execute(_SUPERSEDE, (event.key, event.rerun))
        table = "invocations"
        if event.surplus:
            conn.execute("DELETE FROM invocations WHERE invocation_key = ?", (event.key,))
            table = "surplus_invocations"
        conn.execute(
            _INSERT_INVOCATION[table],
            (
                event.key,
                event.rerun,
                recorded.run_id,
                suite_id,
                mode,
                event.case_id,
                event.variant_id,
                event.run_index,
                event.instruction_hash,
                event.instruction_length,
                event.success,
                event.failure_stage,
                event.attempts,
                event.repairs_triggered,
                event.duration_ms,
                event.timed_out,
                event.harness_error,
                event.infra_error,
                event.exit_code,
                event.debug_artifacts_present,
                recorded.timestamp_utc,
                recorded.seq,
                event.group,
                event.generator,
                event.level,
                event.mode,
                event.brick_sha256,
                None,
                None,
                event.failure_cause,
                event.complexity,
                ",".join(event.disagrees) if event.disagrees else None,
                event.model_calls,
                event.prompt_tokens,
                event.completion_tokens,
                event.model_seconds,
            ),
        )
        for cause in event.failure_causes or ():
            conn.execute(
                _INSERT_CAUSE,
                (
                    event.key,
                    cause["attempt"],
                    recorded.run_id,
                    suite_id,
                    event.case_id,
                    event.variant_id,
                    event.group,
                    event.run_index,
                    cause["cause"],
                    cause.get("passed"),
                    cause.get("failed"),
                    cause.get("file", ""),
                    recorded.timestamp_utc,
                    recorded.seq,
                ),
            )

    def _check_completed(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.CheckCompleted) -> None:
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        correct = None if event.verdict == "harness_fault" else event.verdict == "correct"
        conn.execute(
            _INSERT_CHECK,
            (
                event.key,
                event.rerun,
                recorded.run_id,
                suite_id,
                event.case_id,
                event.variant_id,
                event.group,
                event.run_index,
                event.kind,
                event.check_sha256,
                event.verdict,
                correct,
                event.passed,
                event.failed,
                event.duration_ms,
                event.detail,
                event.output,
                event.recheck,
                event.brick_path,
                event.brick_sha256,
                recorded.timestamp_utc,
                recorded.seq,
            ),
        )
        for table in INVOCATION_TABLES:  # the row of the attempt that saved the brick, wherever it lives now
            conn.execute(
                f"UPDATE {table} SET correct = ?, check_verdict = ? WHERE invocation_key = ? AND rerun = ?",
                (correct, event.verdict, event.key, event.rerun),
            )

    def _decision_taken(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.DecisionTaken) -> None:
        suite_id, mode = self._suite_and_mode(conn, recorded.run_id)
        conn.execute(
            _INSERT_DECISION,
            (
                recorded.seq,
                recorded.run_id,
                suite_id,
                mode,
                event.case_id,
                event.variant_id,
                recorded.timestamp_utc,
                event.group,
                event.generator,
                event.level,
                event.mode,
                event.reference_source,
                *(getattr(event, name) for name in _EVIDENCE),
                event.complexity,
            ),
        )
        for index in event.surplus_runs or ():
            key = invocation_key(recorded.run_id, suite_id, event.case_id, event.variant_id, index)
            conn.execute(_TO_SURPLUS, (key,))
            conn.execute(_FROM_INVOCATIONS, (key,))

    def _scenario_started(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ScenarioStarted
    ) -> None:
        for table in ("turns", "turn_scores"):  # a new attempt replaces an interrupted one
            conn.execute(
                f"DELETE FROM {table} WHERE run_id = ? AND engine = ? AND scenario = ? AND conversation = ?",
                (recorded.run_id, event.engine, event.scenario, event.conversation),
            )

    def _turn_answered(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.TurnAnswered) -> None:
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        conn.execute(
            "INSERT OR REPLACE INTO turns(run_id, engine, scenario, conversation, turn, suite_id, domain, "
            "attempt, prompt, answer, duration_ms, timestamp_utc, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.run_id,
                event.engine,
                event.scenario,
                event.conversation,
                event.turn,
                suite_id,
                event.domain,
                event.attempt,
                event.prompt,
                event.answer,
                event.duration_ms,
                recorded.timestamp_utc,
                recorded.seq,
            ),
        )

    def _turn_scored(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.TurnScored) -> None:
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        conn.execute(
            "INSERT OR REPLACE INTO turn_scores(run_id, engine, scenario, conversation, turn, scorer, suite_id, "
            "domain, violated, detail, timestamp_utc, seq) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.run_id,
                event.engine,
                event.scenario,
                event.conversation,
                event.turn,
                event.scorer,
                suite_id,
                event.domain,
                event.violated,
                event.detail,
                recorded.timestamp_utc,
                recorded.seq,
            ),
        )

    def _ai_output_rejected(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.AiOutputRejected
    ) -> None:
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        conn.execute(
            "INSERT OR REPLACE INTO rejections(seq, run_id, suite_id, case_id, generator, variant_id, attempt, "
            "model, ai_output, failure_reasons, reason_count, timestamp_utc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.seq,
                recorded.run_id,
                suite_id,
                event.case_id,
                event.generator,
                event.variant_id,
                event.attempt,
                event.model,
                event.ai_output,
                json.dumps(event.failure_reasons),
                len(event.failure_reasons),
                recorded.timestamp_utc,
            ),
        )

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
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        row = (event.mode, event.case_id, event.generator, variant_id, instruction, instruction_hash(instruction))
        conn.execute(
            _INSERT_VARIANT,
            (
                recorded.seq,
                recorded.run_id,
                suite_id,
                *row,
                seed,
                event.attempt,
                dropped is not None,
                dropped,
                recorded.timestamp_utc,
            ),
        )

    def _gate_designed(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.GateDesigned) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO gates(run_id, seq, against, margin, alpha, power, rate, cap, cases, end_round, met) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.run_id,
                recorded.seq,
                event.against,
                event.margin,
                event.alpha,
                event.power,
                event.rate,
                event.cap,
                len(event.cases),
                event.looks[-1],
                event.met,
            ),
        )

    def _gate_looked(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.GateLooked) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO gate_looks(seq, run_id, round, look, invocations, success_drop, se, z, upper, lower, "
            "low, high, decision, p_fixed, failed, timestamp_utc) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                recorded.seq,
                recorded.run_id,
                event.round,
                event.look,
                event.invocations,
                event.drop,
                event.se,
                event.z,
                event.upper,
                event.lower,
                event.low,
                event.high,
                event.decision,
                event.p_fixed,
                event.failed,
                recorded.timestamp_utc,
            ),
        )

    def _model_called(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ModelCalled) -> None:
        suite_id, _ = self._suite_and_mode(conn, recorded.run_id)
        answer = event.answer
        conn.execute(
            _INSERT_MODEL_CALL,
            (
                recorded.seq,
                recorded.run_id,
                suite_id,
                event.key,
                event.rerun,
                event.case_id,
                event.variant_id,
                event.run_index,
                recorded.stream.rsplit("/", 1)[0],  # the invocation's group
                event.index,
                event.api,
                event.requested_model,
                event.served_model,
                event.stream,
                json.dumps(event.messages, ensure_ascii=False),
                json.dumps(event.options, ensure_ascii=False, sort_keys=True),
                answer if isinstance(answer, str) else None,
                answer["sha256"] if isinstance(answer, dict) else None,
                event.prompt_tokens,
                event.completion_tokens,
                event.latency_ms,
                event.error,
                event.error_kind,
                event.status,
                event.retry_after,
                event.divergence,
                recorded.timestamp_utc,
            ),
        )

    def _model_text(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.ModelText) -> None:
        conn.execute(
            "INSERT OR REPLACE INTO gateway_texts(run_id, sha256, text, chars) VALUES (?,?,?,?)",
            (recorded.run_id, event.sha256, event.text, len(event.text)),
        )

    def _run_ended(
        self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunFinished | events.RunAborted
    ) -> None:
        status = "finished" if isinstance(event, events.RunFinished) else "aborted"
        conn.execute(
            "UPDATE runs SET status = ?, finished_utc = ? WHERE run_id = ?",
            (status, recorded.timestamp_utc, recorded.run_id),
        )

    def _run_imported(self, conn: sqlite3.Connection, recorded: RecordedEvent, event: events.RunImported) -> None:
        conn.execute(
            "UPDATE runs SET imported = ?, imported_from = ? WHERE run_id = ?",
            (event.format, event.source, recorded.run_id),
        )
