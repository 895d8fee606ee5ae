"""One run's execution: its tracks' outcomes and decisions, and the events they make.

The coordinator (the calling thread) is the only writer and the only place decisions
are taken; an executor (local threads, a Dask cluster) only invokes the target.
Decisions read outcomes in run-index order, never completion order, and the runs a
decision needs start together (scheduling.py), so any number of jobs, here or on a
cluster, runs the same invocations and reaches the same decisions as one job.
"""

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from functools import partial

from ironbench.core.errors import IronbenchError, RunInterrupted, RunStopped, StoreError, StoreFull
from ironbench.core.events import (
    DecisionTaken,
    InvocationCompleted,
    InvocationStarted,
    RecordedEvent,
    RunAborted,
    RunFinished,
    RunStarted,
    VariantDropped,
    VariantGenerated,
)
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.core.outcome import Outcome
from ironbench.projections.tree import OutputTree, group_of
from ironbench.run.executors import DEBUG_DIR, InvocationExecutor, Ran, Work, run_invocation
from ironbench.run.guards import MAX_INFRA_ERRORS, RunGuard, resume_command
from ironbench.run.paths import RunPaths
from ironbench.run.planner import AiVariants, Group, Track
from ironbench.run.planner import plan as plan_tracks
from ironbench.run.references import latest_baseline
from ironbench.run.reporters import Reporter
from ironbench.run.scheduling import Slots, Turns, active_groups, prefix_of, schedule, surplus
from ironbench.run.stopping import (
    Reference,
    StopDecision,
    baseline_decision,
    capability_boundary,
    evidence,
    reference_decision,
    stress_level_decision,
    variant_decision,
)
from ironbench.store.eventstore import EventStore, Pending
from ironbench.suite.models import Suite
from ironbench.targets import containment
from ironbench.targets.command import cap_output
from ironbench.targets.registry import TargetSpec

RUN_STREAM = "run"
# Appends events (None entries skipped), projects them, and returns them as recorded.
Append = Callable[[Sequence[Pending | None]], list[RecordedEvent]]
Running = dict["Future[Ran]", tuple["_TrackState", Work]]


@dataclass
class _TrackState:
    """What the coordinator knows of one track, per group."""

    track: Track
    position: int  # in the session's tracks: its turn among them
    # The live outcome of each run index; infrastructure errors are never outcomes:
    # their slot stays open and is run again. Runs past a decision leave it.
    outcomes: dict[str, dict[int, Outcome]] = field(default_factory=dict)
    tries: dict[str, dict[int, int]] = field(default_factory=dict)  # recorded attempts per slot
    running: dict[str, set[int]] = field(default_factory=dict)
    decisions: dict[str, str] = field(default_factory=dict)
    slots: dict[str, Slots] = field(default_factory=dict)  # what a group needs, until its outcomes change
    reference: Reference | None = None

    def ordered(self, group: Group) -> list[Outcome]:
        return list(prefix_of(self.outcomes.get(group.path, {})))


class Session:
    """One run's execution state: its store, projections, plan and per-group outcomes."""

    def __init__(
        self,
        paths: RunPaths,
        run_id: str,
        started: RunStarted,
        suite: Suite,
        target: TargetSpec,
        store: EventStore,
        tree: OutputTree,
        reporter: Reporter,
        append: Append,
        ai_variants: AiVariants | None = None,
        max_infra_errors: int = MAX_INFRA_ERRORS,
        speculate: bool = False,
    ) -> None:
        self.paths = paths
        self.run_id = run_id
        self.started = started
        self.suite = suite
        self.target = target
        self.store = store
        self.tree = tree
        self.reporter = reporter
        self.speculate = speculate
        self.tracks = [_TrackState(track, k) for k, track in enumerate(plan_tracks(suite, ai_variants))]
        self.append = append
        # What each track waits to start, in turns; only a track whose outcomes changed is
        # planned again (`_due`), so the loop costs what the suite runs, not tracks x runs.
        self.turns: Turns[Work] = Turns(len(self.tracks))
        self._due = set(range(len(self.tracks)))
        self.guard = RunGuard(
            run_id,
            resume_command(run_id, paths.out_dir, paths.store_path),
            paths.out_dir / "workdirs",
            max_infra_errors,
        )

    @property
    def max_invocations(self) -> int:
        return sum(g.max_runs for t in self.tracks for g in t.track.groups)

    @property
    def done_invocations(self) -> int:
        return sum(len(v) for t in self.tracks for v in t.outcomes.values())

    def _env(self, group: Group, run_index: int) -> dict[str, str]:
        env = {
            "IRONBENCH_RUN_ID": self.run_id,
            "IRONBENCH_CASE_ID": group.case_id,
            "IRONBENCH_VARIANT_ID": group.variant_id,
            "IRONBENCH_RUN_INDEX": str(run_index),
            "IRONBENCH_REPAIR_ENABLED": "1" if self.suite.repair_enabled else "0",
            # A Python target killed at its timeout would lose its block-buffered
            # output; unbuffered, what it printed up to the kill is counted.
            "PYTHONUNBUFFERED": os.environ.get("PYTHONUNBUFFERED", "1"),
        }
        if self.suite.debug_enabled:
            env["IRONCLAD_DEBUG"] = "1"
        return env

    # -- planning events ------------------------------------------------------

    def planning_events(self) -> list[Pending]:
        """Variants, drops and known references: recorded once, before any invocation."""
        pending: list[Pending] = []
        for state in self.tracks:
            track = state.track
            for variant in track.variants:
                if variant.metadata.get("source") == "ai":
                    continue  # recorded, with its model and prompt, when it was generated
                pending.append(
                    Pending(
                        f"{track.path}/{variant.variant_id}",
                        VariantGenerated(
                            mode=track.mode,
                            case_id=track.case_id,
                            generator=variant.generator,
                            variant_id=variant.variant_id,
                            instruction=variant.instruction,
                            base_instruction=variant.base_instruction,
                            seed=variant.seed,
                            params=variant.params,
                            attempt=variant.attempt,
                        ),
                        idempotency_key=f"variant:{self.run_id}/{track.path}/{variant.variant_id}",
                    )
                )
            for drop in track.drops:
                pending.append(
                    Pending(
                        f"{track.path}/{drop.generator}",
                        VariantDropped(
                            mode=track.mode,
                            case_id=track.case_id,
                            generator=drop.generator,
                            attempt=drop.attempt,
                            candidate=drop.candidate,
                            reason=drop.reason,
                        ),
                        idempotency_key=f"drop:{self.run_id}/{track.path}/{drop.generator}/{drop.attempt}",
                    )
                )
            if track.mode == "adversarial":
                reference = self._stored_reference(state)
                if reference is not None:
                    pending.append(reference)
        return pending

    def _stored_reference(self, state: _TrackState) -> Pending | None:
        """The latest baseline of the same instruction, target, target version and
        recorded environment in the store, if any (a resumed run keeps the reference it
        started with)."""
        if state.track.groups[0].path in state.decisions:
            return None
        found = latest_baseline(
            self.store,
            state.track.instruction,
            self.started.target_argv,
            self.started.ironclad_version,
            self.started.environment,
            exclude_run=self.run_id,
            rules=self.started.rules,
            case_id=state.track.base_case,
        )
        if found is None:
            return None
        reference_group = state.track.groups[0]
        decision = evidence(
            found.outcomes,
            "reference",
            f"baseline {found.group} of run {found.run_id} ({found.decision}; same instruction, "
            "target, version and environment)",
        )
        # None of the reference group's runs happen in this run.
        return self._decision(
            state,
            reference_group,
            decision,
            reference=Reference.of(found.outcomes, found.stable),
            source=found.run_id,
            source_group=found.group,
            skipped=reference_group.max_runs,
        )

    # -- decisions --------------------------------------------------------------

    def _decision(
        self,
        state: _TrackState,
        group: Group,
        decision: StopDecision,
        reference: Reference | None = None,
        source: str | None = None,
        source_group: str | None = None,
        skipped: int | None = None,
        surplus_runs: list[int] | None = None,
    ) -> Pending:
        state.decisions[group.path] = decision.decision
        if reference is not None:
            state.reference = reference
        elif group.policy == "variant":
            reference = state.reference
        self.reporter.decision(group.path, decision, group.max_runs - decision.n if skipped is None else skipped)
        return Pending(
            group.path,
            DecisionTaken(
                mode=group.mode,
                group=group.path,
                generator=group.generator,
                level=group.level,
                case_id=group.case_id,
                variant_id=group.variant_id,
                **asdict(decision),
                reference=list(reference.signature) if reference is not None else None,
                reference_source=source,
                reference_outcomes=[list(o) for o in reference.outcomes] if reference and reference.unstable else None,
                reference_group=source_group,
                surplus_runs=surplus_runs or None,
                complexity=group.complexity,
            ),
            idempotency_key=f"decision:{self.run_id}/{group.path}",
        )

    def _rule(self, state: _TrackState, group: Group) -> tuple[Callable, list[Outcome]]:
        """A group's decision rule as a function of its outcomes, and the outcomes it
        compares with (what a hypothetical run may equal)."""
        if group.policy == "baseline":
            return partial(baseline_decision, max_runs=group.max_runs, rule=group.stop), []
        if group.policy == "reference":
            return reference_decision, []
        if group.policy == "variant":
            reference = state.reference
            assert reference is not None  # a variant group starts after its track's reference decision
            behaviours = dict.fromkeys(reference.outcomes or (reference.signature,))
            return partial(variant_decision, reference=reference), [Outcome(*s) for s in behaviours]
        base = state.track.groups[0]
        # Level 0 is decided before level 1 starts: every level is judged against it.
        level_0 = next(
            (state.ordered(g) for g in state.track.groups if g.level == 0 and g.path in state.decisions), None
        )
        return (
            partial(stress_level_decision, max_runs=group.max_runs, level=group.level, base=level_0),
            state.ordered(base),
        )

    def _taken(self, state: _TrackState, group: Group, slots: Slots) -> Pending:
        """Record a group's decision; runs that completed past it (speculation) leave
        its outcomes and are named in the decision as surplus."""
        decision = slots.decision
        assert decision is not None  # called for a group whose rule decided
        outcomes = state.outcomes.setdefault(group.path, {})
        recorded = {**state.tries.get(group.path, {}), **outcomes}  # with slots that only had infra errors
        extra = surplus(recorded, len(slots.prefix))
        for index in extra:
            outcomes.pop(index, None)
        state.slots.pop(group.path, None)
        if group.policy == "reference":
            return self._decision(
                state,
                group,
                decision,
                reference=Reference.of(slots.prefix, True),
                source="this run",
                surplus_runs=extra,
            )
        return self._decision(state, group, decision, surplus_runs=extra)

    def _boundary(self, state: _TrackState) -> Pending:
        track = state.track
        found = capability_boundary(
            [(g.level, state.ordered(g)) for g in track.groups if g.path in state.decisions and g.level is not None]
        )
        level, decision = found.level, found.decision
        state.decisions[track.path] = decision.decision
        self.reporter.decision(track.path, decision, 0)
        return Pending(
            track.path,
            DecisionTaken(
                mode="stress",
                group=track.path,
                generator=track.groups[0].generator if track.groups else None,
                level=level,
                case_id=track.case_id,
                variant_id="ladder",
                **asdict(decision),
            ),
            idempotency_key=f"decision:{self.run_id}/{track.path}",
        )

    def _step(self, state: _TrackState) -> tuple[list[Pending], list[tuple[Group, Slots]]]:
        """Take every decision the outcomes so far allow; then what each group still running needs."""
        pending: list[Pending] = []
        while True:
            groups = active_groups(state.track, state.decisions)
            if groups is None:
                if state.track.mode == "stress" and state.track.path not in state.decisions:
                    pending.append(self._boundary(state))
                return pending, []
            plans: list[tuple[Group, Slots]] = []
            for group in groups:
                slots = state.slots.get(group.path)
                if slots is None:
                    decide, known = self._rule(state, group)
                    slots = schedule(
                        decide,
                        state.outcomes.get(group.path, {}),
                        state.running.get(group.path, ()),
                        group.max_runs,
                        known,
                        self.speculate,
                    )
                    state.slots[group.path] = slots
                if slots.decision is not None:
                    pending.append(self._taken(state, group, slots))
                else:
                    plans.append((group, slots))
            if len(plans) == len(groups):
                return pending, plans

    def _work(self, state: _TrackState, group: Group, run_index: int) -> Work:
        key = invocation_key(self.run_id, self.suite.suite_id, group.case_id, group.variant_id, run_index)
        rerun = state.tries.get(group.path, {}).get(run_index, 0)
        return Work(group, run_index, key, f"{self.run_id}/{group.path}/run_{run_index:03d}", rerun)

    def plan(self) -> list[Pending]:
        """Decisions due, in track order; and what each track planned again waits to start:
        every run a decision needs, in run order, and, speculating, runs past that. A track
        none of whose outcomes changed since it was planned has no decision due, and still
        waits for what it did (less what started since)."""
        pending: list[Pending] = []
        for position in sorted(self._due):
            state = self.tracks[position]
            decided, plans = self._step(state)
            pending += decided
            needed: list[Work] = []
            extra: list[Work] = []
            for group, slots in plans:
                busy = state.running.get(group.path, set()) | state.outcomes.get(group.path, {}).keys()
                needed += [self._work(state, group, i) for i in slots.needed if i not in busy]
                extra += [self._work(state, group, i) for i in slots.speculative if i not in busy]
            self.turns.wait(position, needed, extra)
        self._due.clear()
        return pending

    def _start(self, executor: InvocationExecutor, running: Running, lane: int, free: int) -> list[Pending]:
        """Start up to `free` of the waiting invocations of `lane` (0: needed, 1: speculative),
        tracks taking turns."""
        return [
            self._submit(executor, running, self.tracks[position], work)
            for position, work in self.turns.take(lane, free)
        ]

    # -- invocations ------------------------------------------------------------

    def _submit(self, executor: InvocationExecutor, running: Running, state: _TrackState, work: Work) -> Pending:
        group = work.group
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        future = executor.submit(
            work.key + suffix,
            run_invocation,
            work,
            self.target.argv(group.instruction),
            self._env(group, work.run_index),
            self.suite.debug_enabled,
            self.store.redactor,
            executor.root,
            tuple(self.started.redact),
            self.started.rules,
        )
        running[future] = (state, work)
        state.running.setdefault(group.path, set()).add(work.run_index)
        return Pending(
            group.stream(work.run_index),
            InvocationStarted(
                key=work.key,
                mode=group.mode,
                group=group.path,
                case_id=group.case_id,
                variant_id=group.variant_id,
                run_index=work.run_index,
                instruction=group.instruction,
                workdir=executor.workdir(work.workdir),
                complexity=group.complexity,
            ),
        )

    def _completed_event(self, work: Work, ran: Ran, surplus_run: bool) -> Pending:
        result, outcome = ran.result, ran.outcome
        stdout, cut_out = cap_output(result.stdout)
        stderr, cut_err = cap_output(result.stderr)
        group = work.group
        completed = InvocationCompleted(
            key=work.key,
            mode=group.mode,
            group=group.path,
            generator=group.generator,
            level=group.level,
            case_id=group.case_id,
            variant_id=group.variant_id,
            run_index=work.run_index,
            instruction=group.instruction,
            instruction_hash=instruction_hash(group.instruction),
            instruction_length=len(group.instruction),
            exit_code=result.exit_code,
            success=outcome.success,
            failure_stage=outcome.failure_stage,
            attempts=outcome.attempts,
            repairs_triggered=outcome.repairs_triggered,
            duration_ms=result.duration_ms,
            timed_out=result.timed_out,
            harness_error=result.harness_error,
            debug_enabled=self.suite.debug_enabled,
            debug_artifacts_present=ran.debug_present,
            debug_path=f"{ran.workdir}/{DEBUG_DIR}",
            brick_path=outcome.brick_path,
            brick_sha256=ran.brick_sha256,
            stdout=stdout,
            stderr=stderr,
            output_truncated=cut_out or cut_err,
            infra_error=outcome.infra_error,
            rerun=work.rerun,
            stdout_path=result.stdout_path,
            stderr_path=result.stderr_path,
            surplus=surplus_run,
            complexity=group.complexity,
        )
        # Recorded exactly once per attempt of the slot: the first attempt keeps the
        # slot's key, a re-run adds its number.
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        return Pending(group.stream(work.run_index), completed, idempotency_key=f"completed:{work.key}{suffix}")

    def _completed(self, state: _TrackState, work: Work, ran: Ran) -> Pending:
        path, index = work.group.path, work.run_index
        if ran.result.harness_error:
            raise IronbenchError(f"{path} run {index}: {ran.result.harness_error}")
        state.tries.setdefault(path, {})[index] = work.rerun + 1
        past = path in state.decisions  # decided while it ran: it lies past the decision, no evidence
        if past or ran.outcome.infra_error is None:
            if not past:
                state.outcomes.setdefault(path, {})[index] = ran.outcome
        else:
            self.reporter.note(
                f"  {path} run {index}: infrastructure error ({ran.outcome.infra_error}); the slot runs again"
            )
        state.slots.pop(path, None)
        self._due.add(state.position)
        return self._completed_event(work, ran, past)

    def execute(self, executor: InvocationExecutor, first: list[Pending] | None = None) -> str:
        """Run every track to its end; returns the run's final status.

        Invocations are submitted as soon as a decision needs them, up to the executor's
        capacity; the events and files are written while they run.
        """
        running: Running = {}
        with aborts_run(self.append, self.tree, self.reporter, self.run_id, self.guard.resume):
            try:
                self.reporter.started(self.run_id, len(self.tracks), self.max_invocations, self.done_invocations)
                pending: list[Pending | None] = [*(first or []), *self.planning_events()]
                reports: list[tuple[Work, InvocationCompleted]] = []
                while True:
                    # one transaction: what completed, the decisions it allows, what starts next
                    decided = self.plan()
                    started = self._start(executor, running, 0, executor.capacity() - len(running))
                    started += self._start(executor, running, 1, executor.capacity() - len(running))
                    self.append([*pending, *decided, *started])
                    pending = []
                    self._report(reports)
                    reports = []
                    if not running:
                        break
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: (running[f][1].group.path, running[f][1].run_index)):
                        state, work = running.pop(future)
                        state.running[work.group.path].discard(work.run_index)
                        try:
                            ran = future.result()
                        except Exception as exc:
                            if not executor.may_resubmit(work.key, exc):
                                reason = executor.lost(exc)
                                if reason is None:
                                    raise
                                raise RunStopped(
                                    f"{self.run_id} stopped: {reason}. Once it is back: "
                                    f"{self.guard.resume} --scheduler ADDRESS (or --jobs N, "
                                    "to continue here)"
                                ) from None
                            self.reporter.note(
                                f"  {work.group.path} run {work.run_index}: {type(exc).__name__} "
                                "(the workers running it died); submitted again"
                            )
                            pending.append(self._submit(executor, running, state, work))
                            continue
                        completed = self._completed(state, work, ran)
                        pending.append(completed)
                        assert isinstance(completed.event, InvocationCompleted)
                        reports.append((work, completed.event))
                        stop = self.guard.after(
                            f"{work.group.path} run {work.run_index}",
                            work.group.case_id,
                            self.target.argv(work.group.instruction),
                            ran.result,
                            ran.outcome,
                        )
                        if stop is not None:
                            self.append(pending)
                            self._report(reports)
                            raise stop
            finally:
                for future in running:
                    future.cancel()
        unfinished = [s.track.path for s in self.tracks if active_groups(s.track, s.decisions) is not None]
        if unfinished:
            raise IronbenchError(f"{self.run_id}: nothing left to run, but {', '.join(unfinished)} undecided")
        outcomes = [o for t in self.tracks for v in t.outcomes.values() for o in v.values()]
        self.append(
            [
                Pending(
                    RUN_STREAM,
                    RunFinished(invocations=len(outcomes), successes=sum(1 for o in outcomes if o.success)),
                    idempotency_key=f"finished:{self.run_id}",
                )
            ]
        )
        self.tree.flush()
        self.reporter.finished(self.run_id, "finished")
        return "finished"

    def _report(self, reports: list[tuple[Work, InvocationCompleted]]) -> None:
        for work, event in reports:
            self.reporter.invocation(work.group.path, work.run_index, event)

    def restore(self, events: list[RecordedEvent]) -> None:
        """Load what a run already recorded (for resume)."""
        by_path = {g.path: (state, g) for state in self.tracks for g in state.track.groups}
        by_track = {state.track.path: state for state in self.tracks}
        for recorded in events:
            event = recorded.event
            if isinstance(event, InvocationCompleted):
                path = group_of(recorded)
                if path in by_path and not event.surplus:
                    state = by_path[path][0]
                    tries = state.tries.setdefault(path, {})
                    tries[event.run_index] = max(tries.get(event.run_index, 0), event.rerun + 1)
                    if event.infra_error is None:
                        state.outcomes.setdefault(path, {})[event.run_index] = Outcome(
                            event.success,
                            event.failure_stage,
                            event.attempts,
                            event.repairs_triggered,
                            event.brick_path,
                        )
            elif isinstance(event, DecisionTaken):
                path = event.group or f"baseline/{event.case_id}"
                decided = by_path[path][0] if path in by_path else by_track.get(path)
                if decided is None:
                    continue
                decided.decisions[path] = event.decision
                for index in event.surplus_runs or ():
                    decided.outcomes.get(path, {}).pop(index, None)
                if event.reference is not None and event.decision == "reference":
                    outcomes = tuple(tuple(o) for o in event.reference_outcomes or ())
                    decided.reference = Reference(
                        tuple(event.reference), outcomes or (tuple(event.reference),), stable=not outcomes
                    )


def appender(store: EventStore, tree: OutputTree, run_id: str) -> Append:
    """Append events (None entries skipped) and project them into the tree at once."""

    def append(pending: Sequence[Pending | None]) -> list[RecordedEvent]:
        positions = {tree.name: tree.applied_seq} if tree.applied_seq else None
        recorded = store.append(run_id, [p for p in pending if p is not None], positions)
        tree.apply(recorded)
        return recorded

    return append


@contextmanager
def aborts_run(append: Append, tree: OutputTree, reporter: Reporter, run_id: str, resume: str) -> Iterator[None]:
    """Whatever stops a run early is recorded as its abort, then re-raised. When the disk is
    full, the store's reserve makes room for that record, and the error says what the run
    keeps and how to continue it (`resume`: the command)."""
    try:
        yield
    except BaseException as exc:
        store = tree.store
        redactor = store.redactor
        if redactor is not None and isinstance(exc, IronbenchError):
            exc.args = (redactor.text(str(exc)),)  # the CLI prints it
        interrupted = isinstance(exc, KeyboardInterrupt)
        if interrupted:
            containment.stop_all()  # their results would be dropped: do not wait for them
        reason = "interrupted" if interrupted else (str(exc) or type(exc).__name__)
        abort = [Pending(RUN_STREAM, RunAborted(reason=reason))]
        try:
            if isinstance(exc, StoreFull):
                store.free_reserves()
                tree.apply(store.append(run_id, abort, free_reserve=True))
            else:
                append(abort)
            tree.flush()
        except StoreError:
            if not isinstance(exc, StoreError):
                raise
            # The store cannot take even the abort: the run stays as it was, and its
            # lease goes stale when this process ends, so `resume` takes it over.
        reporter.finished(run_id, "aborted")
        if interrupted:
            raise RunInterrupted(run_id) from exc
        if isinstance(exc, StoreFull):
            raise StoreFull(f"{exc}: {run_id} keeps its {_kept(store, run_id)}; free space, then: {resume}") from None
        raise


def _kept(store: EventStore, run_id: str) -> str:
    """What a stopped run has recorded, in the words of its mode (reading works on a full disk)."""
    counts = dict(
        store.conn.execute(
            "SELECT type, count(*) FROM events WHERE run_id = ? AND type IN ('invocation_completed', 'turn_answered') "
            "GROUP BY type",
            (run_id,),
        ).fetchall()
    )
    if counts.get("turn_answered") and not counts.get("invocation_completed"):
        return f"{counts['turn_answered']} answered turns"
    n = counts.get("invocation_completed", 0)
    return f"{n} invocation{'' if n == 1 else 's'}"
