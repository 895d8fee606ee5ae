"""The output tree on disk (run_*/metadata.json, baseline/<case>/...), derived from events.

Files are written atomically and idempotently, so applying an event twice (after a
crash between writing files and recording the position) changes nothing.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.core.errors import StoreError
from ironbench.core.events import (
    AiOutputRejected,
    DecisionTaken,
    InvocationCompleted,
    RecordedEvent,
    RunAborted,
    RunFinished,
    RunStarted,
    ScenarioFinished,
    ScenarioStarted,
    TurnAnswered,
    TurnScored,
    run_started,
)
from ironbench.core.files import is_partial, write_atomic
from ironbench.projections.field import case_robustness, stopping_rule
from ironbench.projections.gauntlet_summary import ScenarioRecord, TurnRecord
from ironbench.projections.gauntlet_summary import results as gauntlet_results
from ironbench.projections.summaries import aggregate, generator_aggregate, ladder_aggregate, summary
from ironbench.store.eventstore import EventStore


def group_of(recorded: RecordedEvent) -> str:
    """The group folder of an invocation: its stream without the run_NNN leaf."""
    return recorded.stream.rsplit("/", 1)[0]


def _json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass
class _RunState:
    started: RecordedEvent  # the run's first event, as recorded (its id and timestamp)
    status: dict[str, str] = field(default_factory=dict)
    groups: dict[str, dict[int, InvocationCompleted]] = field(default_factory=dict)  # live run per index
    stamps: dict[str, str] = field(default_factory=dict)  # stream -> when its live run was recorded
    surplus: set[str] = field(default_factory=set)  # streams of runs past their group's decision
    moved: dict[int, InvocationCompleted] = field(default_factory=dict)  # by the latest decision, to surplus
    decisions: dict[str, DecisionTaken] = field(default_factory=dict)
    rejections: dict[str, list[tuple[str, AiOutputRejected]]] = field(default_factory=dict)
    gauntlet: dict[tuple[str, str, int], ScenarioRecord] = field(default_factory=dict)
    scorers: list[str] = field(default_factory=list)

    @property
    def run(self) -> RunStarted:
        """What the run was started with."""
        return run_started(self.started)


class OutputTree:
    """Projects events into `out_dir/<run_id>/...`; its position is tracked per out dir."""

    def __init__(self, store: EventStore, out_dir: Path) -> None:
        self.store = store
        self.out_dir = out_dir
        self.name = f"output_tree:{out_dir.resolve()}"
        self._runs: dict[str, _RunState] = {}
        self.applied_seq = 0  # recorded in the store with the next append, or by flush()
        self._pending: dict[Path, str] | None = None  # while rebuilding: each file's final content

    def run_dir(self, run_id: str) -> Path:
        return self.out_dir / run_id

    def _write(self, path: Path, text: str) -> None:
        """Every file is replaced whole (core/files.py): a reader, a kill or a full disk sees
        the old content or the new. Writing it twice (catching up after a crash) changes nothing.
        While rebuilding, only the last content of each file is kept, and written at the end."""
        if self._pending is not None:
            self._pending[path] = text
        else:
            write_atomic(path, text)

    def _state(self, recorded: RecordedEvent) -> _RunState:
        state = self._runs.get(recorded.run_id)
        if state is None:
            # First sight of a run mid-stream (e.g. resuming): rebuild its state from
            # the events before this one, without writing anything.
            history = [e for e in self.store.read(recorded.run_id) if e.seq < recorded.seq]
            if not history:
                raise StoreError(f"run {recorded.run_id}: events do not start with run_started")
            run_started(history[0])  # raises unless it is the run's RunStarted
            state = _RunState(history[0])
            self._runs[recorded.run_id] = state
            for earlier in history[1:]:
                self._fold(state, earlier)
        return state

    @staticmethod
    def _fold(state: _RunState, recorded: RecordedEvent) -> str | None:
        """Fold an event into the run's state; returns the group whose aggregate changed."""
        event = recorded.event
        if isinstance(event, InvocationCompleted):
            group = group_of(recorded)
            if event.surplus:
                state.surplus.add(recorded.stream)
                return None
            state.groups.setdefault(group, {})[event.run_index] = event  # a re-run supersedes its slot's attempt
            state.stamps[recorded.stream] = recorded.timestamp_utc
            return group
        if isinstance(event, AiOutputRejected):
            state.rejections.setdefault(recorded.stream, []).append((recorded.timestamp_utc, event))
            return None
        if isinstance(event, ScenarioStarted):  # a new attempt replaces an interrupted one
            scenario = next(s for s in state.run.suite["scenarios"] if s["name"] == event.scenario)
            state.gauntlet[(event.engine, event.scenario, event.conversation)] = ScenarioRecord(
                event.engine, event.scenario, event.domain, scenario["forbidden_phrase"], event.conversation
            )
            return None
        if isinstance(event, TurnAnswered):
            record = state.gauntlet[(event.engine, event.scenario, event.conversation)]
            record.turns[event.turn] = TurnRecord(event.turn, event.prompt, event.answer)
            return None
        if isinstance(event, TurnScored):
            turn = state.gauntlet[(event.engine, event.scenario, event.conversation)].turns.get(event.turn)
            if turn is not None:
                turn.violated[event.scorer] = event.violated
                if event.scorer not in state.scorers:
                    state.scorers.append(event.scorer)
            return None
        if isinstance(event, DecisionTaken):
            group = event.group or f"baseline/{event.case_id}"
            state.decisions[group] = event
            live = state.groups.get(group, {})
            state.moved = {i: live.pop(i) for i in event.surplus_runs or () if i in live}
            state.surplus.update(f"{group}/run_{i:03d}" for i in event.surplus_runs or ())
            return group if group in state.groups else None
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
            self._write_invocation(state, recorded.stream, event, recorded.timestamp_utc)
        if isinstance(event, DecisionTaken) and event.surplus_runs:
            self._mark_surplus(state, event)
        if isinstance(event, AiOutputRejected):
            self._write_ai_failure(state, recorded.stream)
        if isinstance(event, (TurnScored, ScenarioFinished)):
            self._write_gauntlet(state)
        if group is not None:
            self._write_aggregate(state, group)
        if isinstance(event, DecisionTaken) and event.mode == "stress" and event.variant_id == "ladder":
            self._write_ladder(state, event)
        if isinstance(event, (RunFinished, RunAborted)):
            self._write_metadata(state)

    def _write_metadata(self, state: _RunState) -> None:
        started = state.run
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
            "label": started.label,
            "environment": started.environment,
            **({"outcome_rules": {k: started.rules[k] for k in ("name", "source", "sha256")}} if started.rules else {}),
            **({"scheduler": started.scheduler} if started.scheduler else {}),
            **({"speculate": True} if started.speculate else {}),
            **state.status,
        }
        self._write(self.run_dir(state.started.run_id) / "metadata.json", _json(metadata))

    def _write_invocation(self, state: _RunState, stream: str, event: InvocationCompleted, timestamp: str) -> None:
        started = state.run
        folder = self.run_dir(state.started.run_id) / stream
        record = summary(
            state.started.run_id,
            started.suite_id,
            started.ironclad_version,
            event,
            timestamp,
            surplus=stream in state.surplus,
        )
        self._write_folder(
            folder,
            {
                "summary.json": _json(record),
                "instruction.txt": event.instruction,
                "debug_ref.txt": event.debug_path + "\n",
            },
        )

    def _mark_surplus(self, state: _RunState, decision: DecisionTaken) -> None:
        """Runs that completed before their group's decision turned out to lie past it."""
        started = state.run
        for index, event in sorted(state.moved.items()):
            stream = f"{decision.group}/run_{index:03d}"
            record = summary(
                state.started.run_id,
                started.suite_id,
                started.ironclad_version,
                event,
                state.stamps[stream],
                surplus=True,
            )
            self._write(self.run_dir(state.started.run_id) / stream / "summary.json", _json(record))

    def _write_ai_failure(self, state: _RunState, slot: str) -> None:
        """ai_generation_failure.json: the spec's fields for the latest rejection of
        this variant slot, and every rejected attempt under `rejections`."""
        history = state.rejections[slot]
        timestamp, latest = history[-1]
        data = {
            "generator": latest.generator,
            "attempt": latest.attempt,
            "base_instruction": latest.base_instruction,
            "ai_output": latest.ai_output,
            "normalised_output": latest.normalised_output,
            "failure_reasons": latest.failure_reasons,
            "timestamp_utc": timestamp,
            "model": latest.model,
            "options": latest.options,
            "prompt": latest.prompt,
            "rejections": [
                {
                    "attempt": e.attempt,
                    "ai_output": e.ai_output,
                    "normalised_output": e.normalised_output,
                    "failure_reasons": e.failure_reasons,
                    "timestamp_utc": t,
                    # only where a judge was asked, so trees of older runs rebuild byte for byte
                    **({"judge": e.judge} if e.judge is not None else {}),
                }
                for t, e in history
            ],
        }
        if latest.judge is not None:
            data["judge"] = latest.judge
        self._write(self.run_dir(state.started.run_id) / slot / "ai_generation_failure.json", _json(data))

    def _write_gauntlet(self, state: _RunState) -> None:
        """gauntlet/results.json (engine -> scenario -> turns, with counts) and summary.json."""
        engines = [e["name"] for e in state.run.suite["engines"]]
        data = gauntlet_results(list(state.gauntlet.values()), engines, state.scorers)
        folder = self.run_dir(state.started.run_id) / "gauntlet"
        self._write(folder / "results.json", _json(data))
        self._write(folder / "summary.json", _json(data["summary"]))

    def _write_aggregate(self, state: _RunState, group: str) -> None:
        runs = [state.groups[group][index] for index in sorted(state.groups[group])]
        first = runs[0]
        rule = stopping_rule(state.run.suite, first.case_id) if first.mode == "baseline" else None
        data = aggregate(state.run.suite_id, first.case_id, first.variant_id, runs, state.decisions.get(group), rule)
        self._write(self.run_dir(state.started.run_id) / group / "aggregate.json", _json(data))
        if first.mode == "adversarial" and first.generator is not None:
            self._write_generator(state, first.case_id, first.generator)

    def _write_generator(self, state: _RunState, case_id: str, generator: str) -> None:
        """adversarial/<case>/<generator>/aggregate.json, rewritten as its variants run and are decided."""
        prefix = f"adversarial/{case_id}/{generator}/"
        variants = [
            (state.decisions.get(group), [runs[i] for i in sorted(runs)])
            for group, runs in sorted(state.groups.items())
            if group.startswith(prefix)
        ]
        reference = state.decisions.get(f"adversarial/{case_id}/baseline")
        cell = case_robustness(case_id, generator, reference, variants)
        live = [run for _, runs in variants for run in runs]
        data = generator_aggregate(state.run.suite_id, case_id, generator, live, cell)
        self._write(self.run_dir(state.started.run_id) / prefix / "aggregate.json", _json(data))

    def _write_ladder(self, state: _RunState, verdict: DecisionTaken) -> None:
        prefix = f"{verdict.group}/"
        levels = [d for group, d in state.decisions.items() if group.startswith(prefix) and d.level is not None]
        data = ladder_aggregate(state.run.suite_id, verdict.case_id, levels, verdict)
        self._write(self.run_dir(state.started.run_id) / verdict.group / "aggregate.json", _json(data))

    def catch_up(self) -> int:
        """Apply every event recorded since this tree's position; returns how many."""
        events = list(self.store.read(after=self.store.position(self.name)))
        self.apply(events)
        self.flush()
        return len(events)

    def _write_folder(self, folder: Path, files: dict[str, str]) -> None:
        for name, text in files.items():
            self._write(folder / name, text)

    def rebuild(self, run_id: str, keep: Callable[[Path], bool] = lambda path: False) -> Path:
        """Regenerate one run's tree from its events alone, in place: every file's final
        content is worked out first, then each is written once (whole), then whatever this
        pass did not write goes, unless `keep` says so (pages written by other commands).
        Stopped half-way, the folder holds old files and new ones, each whole; the next
        rebuild finishes the job."""
        target = self.run_dir(run_id)
        self._runs.pop(run_id, None)
        self._pending = {}
        try:
            for recorded in self.store.read(run_id):
                self._apply_one(recorded)
            final = self._pending
        finally:
            self._pending = None
        for path, text in final.items():  # each file once, with its last content
            write_atomic(path, text)
        written = set(final)
        if target.is_dir():
            for path in sorted(target.rglob("*"), reverse=True):  # files before their folders
                if path.is_dir():
                    if not any(path.iterdir()):
                        path.rmdir()
                elif path not in written and (is_partial(path) or not keep(path)):
                    path.unlink()
        return target
