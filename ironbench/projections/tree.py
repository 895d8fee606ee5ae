"""The output tree on disk (run_*/metadata.json, baseline/<case>/...), derived from events.

Files are written atomically and idempotently, so applying an event twice (after a
crash between writing files and recording the position) changes nothing. A group's
aggregate is written once per batch of events, however many of them touch it, so a
rebuild costs time linear in the run.
"""

import json
import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path

from ironbench.core import events
from ironbench.core.errors import StoreError
from ironbench.core.events import RecordedEvent, run_started
from ironbench.core.files import is_partial, write_atomic
from ironbench.core.kinds import lowest_fence
from ironbench.core.labels import group_of, track_of
from ironbench.projections.costs import Cost, RunCosts, per_unit
from ironbench.projections.figures import Reference, case_robustness, judged_reference
from ironbench.projections.gauntlet_summary import ScenarioRecord, TurnRecord
from ironbench.projections.gauntlet_summary import results as gauntlet_results
from ironbench.projections.summaries import Checks, aggregate, generator_aggregate, ladder_aggregate, summary
from ironbench.stats import CaseRobustness
from ironbench.store import EventStore
from ironbench.suite import Suite, suite_of_run


def _scalar(value: object) -> str:
    """One value as `json.dumps` writes it (ensure_ascii=False); TypeError if not a scalar."""
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if not isinstance(value, float):
        raise TypeError(type(value).__name__)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _layout(value: object, pad: str) -> str:
    """`value` as `json.dumps(indent=2, ensure_ascii=False)` lays it out `pad` deep; TypeError
    for what it would not lay out this way (keys that are not strings, other types)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = pad + "  "
        parts = []
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError("key")
            parts.append(f"{inner}{encode_basestring(key)}: {_layout(item, inner)}")
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + _layout(item, inner) for item in value) + "\n" + pad + "]"
    return _scalar(value)


def _json(data: dict) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)` and a newline, laid out here: the same
    text, several times sooner than the pure-Python encoder that `indent` otherwise takes
    (a tree holds a few files per invocation)."""
    try:
        return _layout(data, "") + "\n"
    except TypeError:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass
class _RunState:
    started: RecordedEvent  # the run's first event, as recorded (its id and timestamp)
    status: dict[str, str] = field(default_factory=dict)
    imported: dict = field(default_factory=dict)  # where an imported run came from
    groups: dict[str, dict[int, events.InvocationCompleted]] = field(default_factory=dict)  # live run per index
    stamps: dict[str, str] = field(default_factory=dict)  # stream -> when its live run was recorded
    surplus: set[str] = field(default_factory=set)  # streams of runs past their group's decision
    moved: dict[int, events.InvocationCompleted] = field(default_factory=dict)  # by the latest decision, to surplus
    decisions: dict[str, events.DecisionTaken] = field(default_factory=dict)
    levels: dict[str, dict[str, events.DecisionTaken]] = field(default_factory=dict)  # by ladder: its levels' decisions
    rejections: dict[str, list[tuple[str, events.AiOutputRejected]]] = field(default_factory=dict)
    gauntlet: dict[tuple[str, str, int], ScenarioRecord] = field(default_factory=dict)
    scorers: list[str] = field(default_factory=list)
    # by case, by generator: its variants' groups (an adversarial generator's aggregate reads them)
    variants: dict[str, dict[str, dict[str, None]]] = field(default_factory=dict)
    checks: Checks = field(default_factory=Checks)  # the latest check of each brick
    checked_groups: set[str] = field(default_factory=set)  # groups with a check event (a re-check may add one)
    fences: dict[str, events.SandboxApplied] = field(default_factory=dict)  # by worker: the fence it gave
    costs: RunCosts = field(default_factory=RunCosts)  # what its model calls cost
    attempts: dict[str, int] = field(default_factory=dict)  # by group: invocations recorded, every attempt

    @property
    def run(self) -> events.RunStarted:
        """What the run was started with."""
        return run_started(self.started)

    @property
    def suite(self) -> Suite:
        """The suite the run recorded, typed (read once per run)."""
        return suite_of_run(self.started)

    def correct(self, runs: Iterable[events.InvocationCompleted]) -> list[events.InvocationCompleted]:
        """Runs as their checks judged them: success is correctness (a run without a brick, or
        whose brick was not checked, is not correct); a check the harness could not run leaves
        its run out."""
        judged = []
        for run in runs:
            check = self.checks.of(run)
            if check is None or check.verdict != "harness_fault":
                judged.append(replace(run, success=check is not None and check.verdict == "correct"))
        return judged


def _sandbox(started: events.RunStarted, fences: Iterable[events.SandboxApplied]) -> dict:
    """metadata.json's `sandbox`: the mode the run asked for, the lowest level a machine gave
    (None until one fenced a target), and each machine's fence."""
    fences = list(fences)
    level = lowest_fence(fence.level for fence in fences)
    return {
        "mode": (started.sandbox or {}).get("mode"),
        "level": level,
        "machines": [
            {"worker": f.worker, "level": f.level, "mechanism": f.mechanism, "missing": f.missing} for f in fences
        ],
    }


class OutputTree:
    """Projects events into `out_dir/<run_id>/...`; its position is tracked per out dir."""

    def __init__(self, store: EventStore, out_dir: Path) -> None:
        self.store = store
        self.out_dir = out_dir
        self.name = f"output_tree:{out_dir.resolve()}"
        self._runs: dict[str, _RunState] = {}
        self.applied_seq = 0  # recorded in the store with the next append, or by flush()
        self._pending: dict[str, str] | None = None  # while rebuilding: each file's final content
        # Files a batch changed, written once at its end: group aggregates, gauntlet results.
        self._aggregates: dict[tuple[str, str], _RunState] = {}
        self._gauntlets: dict[str, _RunState] = {}
        self._generators: dict[tuple[str, str, str], _RunState] = {}  # (run, case, generator)

    def run_dir(self, run_id: str) -> Path:
        return self.out_dir / run_id

    def _file(self, state: _RunState, *parts: str) -> str:
        """A file of the run's folder, as a string: a rebuild names tens of thousands."""
        return os.path.join(self.out_dir, state.started.run_id, *parts)

    def _write(self, path: str, text: str) -> None:
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
        match recorded.event:
            case events.InvocationCompleted(surplus=True):
                state.surplus.add(recorded.stream)
                group = group_of(recorded.stream)
                state.attempts[group] = state.attempts.get(group, 0) + 1
            case events.InvocationCompleted() as event:
                group = group_of(recorded.stream)
                state.attempts[group] = state.attempts.get(group, 0) + 1
                state.groups.setdefault(group, {})[event.run_index] = event  # a re-run supersedes its slot's attempt
                if event.mode == "adversarial" and event.generator is not None:
                    state.variants.setdefault(event.case_id, {}).setdefault(event.generator, {})[group] = None
                state.stamps[recorded.stream] = recorded.timestamp_utc
                return group
            case events.CheckCompleted() as event:
                state.checks.add(event)
                state.checked_groups.add(event.group)
                return event.group if event.group in state.groups else None
            case events.AiOutputRejected() as event:
                state.rejections.setdefault(recorded.stream, []).append((recorded.timestamp_utc, event))
            case events.ScenarioStarted() as event:  # a new attempt replaces an interrupted one
                scenario = state.suite.scenario(event.scenario)
                if scenario is None:
                    raise StoreError(f"run {recorded.run_id}: scenario {event.scenario!r} is not in its suite")
                state.gauntlet[(event.engine, event.scenario, event.conversation)] = ScenarioRecord(
                    event.engine, event.scenario, event.domain, scenario.forbidden_phrase, event.conversation
                )
            case events.TurnAnswered() as event:
                record = state.gauntlet[(event.engine, event.scenario, event.conversation)]
                record.turns[event.turn] = TurnRecord(event.turn, event.prompt, event.answer)
            case events.TurnScored() as event:
                turn = state.gauntlet[(event.engine, event.scenario, event.conversation)].turns.get(event.turn)
                if turn is not None:
                    turn.violated[event.scorer] = event.violated
                    if event.scorer not in state.scorers:
                        state.scorers.append(event.scorer)
            case events.DecisionTaken() as event:
                group = event.group
                state.decisions[group] = event
                state.levels.setdefault(track_of(group), {})[group] = event
                live = state.groups.get(group, {})
                state.moved = {i: live.pop(i) for i in event.surplus_runs or () if i in live}
                state.surplus.update(f"{group}/run_{i:03d}" for i in event.surplus_runs or ())
                return group if group in state.groups else None
            case events.RunImported() as event:
                state.imported = {
                    "imported": {
                        "format": event.format,
                        "source": event.source,
                        **({"metadata": event.metadata} if event.metadata is not None else {}),
                        **({"renamed_from": event.renamed_from} if event.renamed_from else {}),
                    }
                }
            case events.SandboxApplied() as event:
                state.fences[event.worker] = event
            case events.ModelCallPriced() as event:
                state.costs.add(event, recorded.stream)
            case events.RunFinished():
                state.status = {"status": "finished", "finished_utc": recorded.timestamp_utc}
            case events.RunAborted() as event:
                state.status = {
                    "status": "aborted",
                    "finished_utc": recorded.timestamp_utc,
                    "abort_reason": event.reason,
                }
        return None

    def apply(self, batch: Iterable[RecordedEvent]) -> None:
        for recorded in batch:
            self._apply_one(recorded)
            self.applied_seq = max(self.applied_seq, recorded.seq)
        self._write_touched()

    def _write_touched(self) -> None:
        """The files of groups this batch changed, each once: what it reads is final for the batch."""
        generators = self._generators
        for (run_id, group), state in self._aggregates.items():
            first = self._write_aggregate(state, group)
            if first.mode == "adversarial" and first.generator is not None:
                generators[(run_id, first.case_id, first.generator)] = state
        for (_, case_id, generator), state in generators.items():
            self._write_generator(state, case_id, generator)
        for state in self._gauntlets.values():
            self._write_gauntlet(state)
        self._aggregates, self._gauntlets, self._generators = {}, {}, {}

    def flush(self) -> None:
        """Record how far the tree got (applying an event twice is harmless, so lagging is safe)."""
        if self.applied_seq:
            self.store.set_position(self.name, self.applied_seq)

    def _apply_one(self, recorded: RecordedEvent) -> None:
        if isinstance(recorded.event, events.RunStarted):
            self._runs[recorded.run_id] = _RunState(recorded)
            self._write_metadata(self._runs[recorded.run_id])
            return
        state = self._state(recorded)
        group = self._fold(state, recorded)
        if group is not None:
            self._aggregates[(recorded.run_id, group)] = state
        match recorded.event:
            case events.InvocationCompleted() as event:
                self._write_invocation(state, recorded.stream, event, recorded.timestamp_utc)
            case events.CheckCompleted() as event:
                checked = state.groups.get(event.group, {}).get(event.run_index)
                if checked is not None and checked.key == event.key and checked.rerun == event.rerun:
                    stream = f"{event.group}/run_{event.run_index:03d}"
                    self._write_invocation(state, stream, checked, state.stamps[stream], only_summary=True)
            case events.DecisionTaken() as event:
                if event.surplus_runs:
                    self._mark_surplus(state, event)
                if event.group == f"adversarial/{event.case_id}/baseline":
                    # the case's reference: each of its generators' aggregates judges against it
                    for generator in state.variants.get(event.case_id, {}):
                        self._generators[(recorded.run_id, event.case_id, generator)] = state
                if event.mode == "stress" and event.variant_id == "ladder":
                    self._write_ladder(state, event)
            case events.AiOutputRejected():
                self._write_ai_failure(state, recorded.stream)
            case events.TurnScored() | events.ScenarioFinished():
                self._gauntlets[recorded.run_id] = state
            case events.RunFinished() | events.RunAborted() | events.RunImported() | events.SandboxApplied():
                self._write_metadata(state)

    def _write_metadata(self, state: _RunState) -> None:
        started, settings = state.run, state.suite.settings
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
            "timeout_seconds": settings.timeout_seconds,
            "repair_enabled": settings.repair_enabled,
            "debug_enabled": settings.debug_enabled,
            "label": started.label,
            "environment": started.environment,
            **({"outcome_rules": {k: started.rules[k] for k in ("name", "source", "sha256")}} if started.rules else {}),
            **({"scheduler": started.scheduler} if started.scheduler else {}),
            **({"speculate": True} if started.speculate else {}),
            **({"serve_model": started.serve_model} if started.serve_model else {}),
            **({"replay_of": started.replay_of} if started.replay_of else {}),
            **({"ironclad_version_source": started.ironclad_version_source} if started.ironclad_version_source else {}),
            **({"sandbox": _sandbox(started, state.fences.values())} if started.sandbox or state.fences else {}),
            **state.imported,
            **state.status,
            **({"cost": self._run_cost(state)} if state.costs.priced else {}),
        }
        self._write(self._file(state, "metadata.json"), _json(metadata))

    @staticmethod
    def _run_cost(state: _RunState) -> dict:
        """The run's cost beside its rates (its live runs' successes, and correct bricks where any
        was checked), and the share spent on ironbench's own calls."""
        live = [run for runs in state.groups.values() for run in runs.values() if run.infra_error is None]
        correct = None
        if state.checks.latest:
            correct = sum(1 for run in live if (c := state.checks.of(run)) is not None and c.verdict == "correct")
        return state.costs.run(sum(state.attempts.values()), sum(1 for run in live if run.success), correct)

    def _write_invocation(
        self,
        state: _RunState,
        stream: str,
        event: events.InvocationCompleted,
        timestamp: str,
        only_summary: bool = False,
    ) -> None:
        """A run's folder: summary.json, instruction.txt, debug_ref.txt (only the summary when a
        check of its brick arrives: nothing else changed)."""
        folder = self._file(state, stream)
        cost = state.costs.attempts.get((event.key, event.rerun))
        record = summary(state.started, event, timestamp, stream in state.surplus, state.checks.of(event), cost)
        if only_summary:
            self._write(os.path.join(folder, "summary.json"), _json(record))
            return
        self._write_folder(
            folder,
            {
                "summary.json": _json(record),
                "instruction.txt": event.instruction,
                "debug_ref.txt": event.debug_path + "\n",
            },
        )

    def _mark_surplus(self, state: _RunState, decision: events.DecisionTaken) -> None:
        """Runs that completed before their group's decision turned out to lie past it."""
        for index, event in sorted(state.moved.items()):
            stream = f"{decision.group}/run_{index:03d}"
            cost = state.costs.attempts.get((event.key, event.rerun))
            record = summary(state.started, event, state.stamps[stream], True, state.checks.of(event), cost)
            self._write(self._file(state, stream, "summary.json"), _json(record))

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
        self._write(self._file(state, slot, "ai_generation_failure.json"), _json(data))

    def _write_gauntlet(self, state: _RunState) -> None:
        """gauntlet/results.json (engine -> scenario -> turns, with counts) and summary.json."""
        found = gauntlet_results(list(state.gauntlet.values()), state.suite.engine_names, state.scorers)
        data = found.to_dict()
        folder = self._file(state, "gauntlet")
        self._write(os.path.join(folder, "results.json"), _json(data))
        self._write(os.path.join(folder, "summary.json"), _json(found.summary.to_dict()))

    def _write_aggregate(self, state: _RunState, group: str) -> events.InvocationCompleted:
        """A group's aggregate.json; returns the group's first run."""
        runs = [state.groups[group][index] for index in sorted(state.groups[group])]
        first = runs[0]
        rule = state.suite.stopping_rule(first.case_id) if first.mode == "baseline" else None
        level = first.level if first.mode == "stress" else None
        checked = group in state.checked_groups or state.suite.checked(first.case_id, level)
        data = aggregate(
            state.run.suite_id,
            first.case_id,
            first.variant_id,
            runs,
            state.decisions.get(group),
            rule,
            state.checks if checked else None,
        )
        self._cost(state, data, [group], runs, checked)
        self._write(self._file(state, group, "aggregate.json"), _json(data))
        return first

    @staticmethod
    def _cost(
        state: _RunState, data: dict, groups: list[str], runs: list[events.InvocationCompleted], checked: bool
    ) -> None:
        """An aggregate's `cost`, where its groups' calls were priced: beside its rates."""
        priced = [state.costs.groups[g] for g in groups if g in state.costs.groups]
        if not priced:
            return
        cost = Cost()
        for one in priced:
            cost = cost.merge(one)
        live = [run for run in runs if run.infra_error is None]
        correct = sum(1 for run in live if (c := state.checks.of(run)) is not None and c.verdict == "correct")
        attempts = sum(state.attempts.get(g, 0) for g in groups)
        data["cost"] = per_unit(cost, attempts, sum(1 for run in live if run.success), correct if checked else None)

    def _write_generator(self, state: _RunState, case_id: str, generator: str) -> None:
        """adversarial/<case>/<generator>/aggregate.json, rewritten as its variants run and are decided."""
        prefix = f"adversarial/{case_id}/{generator}/"
        variants = [
            (state.decisions.get(group), [state.groups[group][i] for i in sorted(state.groups[group])])
            for group in sorted(state.variants[case_id][generator])
        ]
        base = f"adversarial/{case_id}/baseline"
        reference = state.decisions.get(base)
        cell = case_robustness(case_id, generator, reference, variants)
        live = [run for _, runs in variants for run in runs]
        on_correctness: CaseRobustness | None = None
        checked = state.suite.checked(case_id) or not state.checked_groups.isdisjoint(
            state.variants[case_id][generator]
        )
        if checked:  # the same base against the same variants, each run correct or not by its check
            judged = [(decided, state.correct(runs)) for decided, runs in variants]
            reference_runs = state.correct(state.groups[base][i] for i in sorted(state.groups.get(base, {})))
            judged_base: Reference | None = reference
            if reference is not None and reference.decision == "reference":
                judged_base = judged_reference(reference, reference_runs) or reference
            on_correctness = case_robustness(case_id, generator, judged_base, judged)
        data = generator_aggregate(state.run.suite_id, case_id, generator, live, cell, checked, on_correctness)
        self._cost(state, data, sorted(state.variants[case_id][generator]), live, checked)
        self._write(self._file(state, prefix, "aggregate.json"), _json(data))

    def _write_ladder(self, state: _RunState, verdict: events.DecisionTaken) -> None:
        levels = [d for d in state.levels.get(verdict.group, {}).values() if d.level is not None]
        data = ladder_aggregate(state.run.suite_id, verdict.case_id, levels, verdict)
        self._write(self._file(state, verdict.group, "aggregate.json"), _json(data))

    def catch_up(self) -> int:
        """Apply every event recorded since this tree's position; returns how many."""
        caught = list(self.store.read(after=self.store.position(self.name)))
        self.apply(caught)
        self.flush()
        return len(caught)

    def _write_folder(self, folder: str, files: dict[str, str]) -> None:
        for name, text in files.items():
            self._write(os.path.join(folder, name), text)

    def rebuild(
        self,
        run_id: str,
        history: Iterable[RecordedEvent] | None = None,
        keep: Callable[[Path], bool] = lambda path: False,
    ) -> Path:
        """Regenerate one run's tree from its events alone (read from the store unless given),
        in place: every file's final content is worked out first, then each is written once
        (whole), then whatever this pass did not write goes, unless `keep` says so (pages
        written by other commands). Stopped half-way, the folder holds old files and new
        ones, each whole; the next rebuild finishes the job."""
        target = self.run_dir(run_id)
        self._runs.pop(run_id, None)
        self._pending = {}
        try:
            for recorded in self.store.read(run_id) if history is None else history:
                self._apply_one(recorded)
            self._write_touched()
            final = self._pending
        finally:
            self._pending = None
        for path, text in final.items():  # each file once, with its last content
            write_atomic(path, text)
        if target.is_dir():
            _remove_strays(str(target), set(final), keep)
        return target


def _remove_strays(top: str, written: set[str], keep: Callable[[Path], bool]) -> bool:
    """Delete every file under `top` that is not in `written` (partial writes always, others
    unless `keep` says so), then the folders left empty; whether `top` is left empty. One
    pass over the folder: a run's tree holds a few files per invocation."""
    empty = True
    with os.scandir(top) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if _remove_strays(entry.path, written, keep):
                    os.rmdir(entry.path)
                else:
                    empty = False
            elif entry.path in written:
                empty = False
            else:
                path = Path(entry.path)
                if is_partial(path) or not keep(path):
                    os.unlink(entry.path)
                else:
                    empty = False
    return empty
