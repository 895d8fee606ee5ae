"""The output tree on disk (run_*/metadata.json, baseline/<case>/...), derived from events.

Files are written atomically and idempotently, so applying an event twice (after a
crash between writing files and recording the position) changes nothing.
"""

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.aggregate import aggregate, summary
from ironbench.errors import StoreError
from ironbench.events import (
    DecisionTaken, InvocationCompleted, RecordedEvent, RunAborted, RunFinished, RunStarted,
)
from ironbench.store.eventstore import EventStore


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass
class _RunState:
    started: RecordedEvent
    status: dict = field(default_factory=dict)
    cases: dict[tuple[str, str], list[InvocationCompleted]] = field(default_factory=dict)
    decisions: dict[tuple[str, str], DecisionTaken] = field(default_factory=dict)


class OutputTree:
    """Projects events into `out_dir/<run_id>/...`; its position is tracked per out dir."""

    def __init__(self, store: EventStore, out_dir: Path) -> None:
        self.store = store
        self.out_dir = out_dir
        self.name = f"output_tree:{out_dir.resolve()}"
        self._runs: dict[str, _RunState] = {}
        self.applied_seq = 0  # recorded in the store with the next append, or by flush()

    def run_dir(self, run_id: str) -> Path:
        return self.out_dir / run_id

    def _state(self, recorded: RecordedEvent) -> _RunState:
        state = self._runs.get(recorded.run_id)
        if state is None:
            # First sight of a run mid-stream (e.g. resuming): rebuild its state from
            # the events before this one, without writing anything.
            history = [e for e in self.store.read(recorded.run_id) if e.seq < recorded.seq]
            if not history or not isinstance(history[0].event, RunStarted):
                raise StoreError(f"run {recorded.run_id}: events do not start with run_started")
            state = _RunState(history[0])
            self._runs[recorded.run_id] = state
            for earlier in history[1:]:
                self._fold(state, earlier)
        return state

    @staticmethod
    def _fold(state: _RunState, recorded: RecordedEvent) -> tuple[str, str] | None:
        event = recorded.event
        if isinstance(event, InvocationCompleted):
            group = (event.case_id, event.variant_id)
            state.cases.setdefault(group, []).append(event)
            return group
        if isinstance(event, DecisionTaken):
            group = (event.case_id, event.variant_id)
            state.decisions[group] = event
            return group
        if isinstance(event, (RunFinished, RunAborted)):
            state.status = {
                "status": "finished" if isinstance(event, RunFinished) else "aborted",
                "finished_utc": recorded.timestamp_utc,
                **({"abort_reason": event.reason} if isinstance(event, RunAborted) else {}),
            }
        return None

    def apply(self, events: Iterable[RecordedEvent]) -> None:
        for recorded in events:
            self._apply_one(recorded)
            self.applied_seq = max(self.applied_seq, recorded.seq)

    def flush(self) -> None:
        """Record how far the tree got (applying an event twice is harmless, so lagging is safe)."""
        if self.applied_seq:
            self.store.set_position(self.name, self.applied_seq)

    def _apply_one(self, recorded: RecordedEvent) -> None:
        event = recorded.event
        if isinstance(event, RunStarted):
            self._runs[recorded.run_id] = _RunState(recorded)
            self._write_metadata(self._runs[recorded.run_id])
            return
        state = self._state(recorded)
        group = self._fold(state, recorded)
        if isinstance(event, InvocationCompleted):
            self._write_invocation(state, recorded, event)
        if group is not None:
            self._write_aggregate(state, group)
        if isinstance(event, (RunFinished, RunAborted)):
            self._write_metadata(state)

    def _write_metadata(self, state: _RunState) -> None:
        started: RunStarted = state.started.event
        metadata = {
            "run_id": state.started.run_id,
            "suite": started.suite_id,
            "mode": started.mode,
            "suite_path": started.suite_path,
            "started_utc": state.started.timestamp_utc,
            "status": "running",
            "finished_utc": None,
            "target": started.target_argv,
            "ironclad_version": started.ironclad_version,
            "harness_version": started.harness_version,
            "python_version": started.python_version,
            "platform": started.platform,
            "jobs": started.jobs,
            "timeout_seconds": started.suite.get("timeout_seconds"),
            "repair_enabled": started.suite.get("repair_enabled"),
            "debug_enabled": started.suite.get("debug_enabled"),
            **state.status,
        }
        _write(self.run_dir(state.started.run_id) / "metadata.json", _json(metadata))

    def _case_dir(self, run_id: str, case_id: str) -> Path:
        return self.run_dir(run_id) / "baseline" / case_id

    def _write_invocation(self, state: _RunState, recorded: RecordedEvent, event: InvocationCompleted) -> None:
        started: RunStarted = state.started.event
        folder = self._case_dir(recorded.run_id, event.case_id) / f"run_{event.run_index:03d}"
        record = summary(recorded.run_id, started.suite_id, started.ironclad_version, event, recorded.timestamp_utc)
        _write(folder / "summary.json", _json(record))
        _write(folder / "instruction.txt", event.instruction)
        _write(folder / "debug_ref.txt", event.debug_path + "\n")

    def _write_aggregate(self, state: _RunState, group: tuple[str, str]) -> None:
        case_id, variant = group
        runs = sorted(state.cases.get(group, []), key=lambda e: e.run_index)
        data = aggregate(state.started.event.suite_id, case_id, variant, runs, state.decisions.get(group))
        _write(self._case_dir(state.started.run_id, case_id) / "aggregate.json", _json(data))

    def catch_up(self) -> int:
        """Apply every event recorded since this tree's position; returns how many."""
        events = list(self.store.read(after=self.store.position(self.name)))
        self.apply(events)
        self.flush()
        return len(events)

    def rebuild(self, run_id: str) -> Path:
        """Regenerate one run's tree from its events alone."""
        target = self.run_dir(run_id)
        if target.exists():
            shutil.rmtree(target)
        self._runs.pop(run_id, None)
        for recorded in self.store.read(run_id):
            self._apply_one(recorded)
        return target
