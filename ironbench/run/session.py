"""One run's execution: its tracks' outcomes and decisions, and the events they make.

The coordinator (the calling thread) is the only writer and the only place decisions
are taken; an executor (local threads, a Dask cluster) only invokes the target.
Decisions read outcomes in run-index order, never completion order, and the runs a
decision needs start together (scheduling.py), so any number of jobs, here or on a
cluster, runs the same invocations and reaches the same decisions as one job.
"""

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from typing import Any

from ironbench.core import events, waits
from ironbench.core.errors import BudgetExhausted, IronbenchError, RunInterrupted, RunStopped, StoreError, StoreFull
from ironbench.core.events import RecordedEvent
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.core.kinds import FENCE_CAUSE
from ironbench.core.labels import group_of, group_path
from ironbench.core.model_calls import CallTotals, by_hash, retry_after
from ironbench.core.outcome import Outcome
from ironbench.core.prices import TARGET, PriceBook
from ironbench.core.spending import Spending
from ironbench.gateway import REPLAY_MODEL, GatewayProcess
from ironbench.projections.tree import OutputTree
from ironbench.run.checking import CheckPlan, check_event, prove_checks
from ironbench.run.executors import DEBUG_DIR, InvocationExecutor, InvocationSetup, Ran, Work, run_invocation
from ironbench.run.gated_run import GateState
from ironbench.run.guards import Backoff, RunGuard, resume_command
from ironbench.run.options import RunOptions
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
    baseline_horizon,
    capability_boundary,
    evidence,
    reference_decision,
    stress_level_decision,
    variant_decision,
)
from ironbench.sandbox import fence_for
from ironbench.store import EventStore, Pending
from ironbench.suite import Suite
from ironbench.targets import TargetSpec, cap_output, containment

RUN_STREAM = "run"
# Appends events (None entries skipped), projects them, and returns them as recorded.
Append = Callable[[Sequence[Pending | None]], list[RecordedEvent]]
Running = dict["Future[Ran]", tuple["_TrackState", Work]]
# Recorded model calls that answer a replayed run's invocations, by (group, run index).
Replays = dict[tuple[str, int], list[dict]]


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
    # What scheduling learnt of a group's rule, kept while outcomes arrive: the prefix length
    # it was asked about without deciding, and the horizon it found (scheduling.schedule).
    asked: dict[str, tuple[int, int]] = field(default_factory=dict)
    reference: Reference | None = None

    def ordered(self, group: Group) -> list[Outcome]:
        return list(prefix_of(self.outcomes.get(group.path, {})))


def invocation_env(run_id: str, suite: Suite, group: Group, run_index: int, rerun: int = 0) -> dict[str, str]:
    """What an invocation's environment gets besides the harness's own (`rerun`: how many earlier
    attempts of its slot hit infrastructure errors; a fenced target keeps no memory of them)."""
    env = {
        "IRONBENCH_RUN_ID": run_id,
        "IRONBENCH_CASE_ID": group.case_id,
        "IRONBENCH_VARIANT_ID": group.variant_id,
        "IRONBENCH_RUN_INDEX": str(run_index),
        "IRONBENCH_RERUN": str(rerun),
        "IRONBENCH_REPAIR_ENABLED": "1" if suite.repair_enabled else "0",
        # A Python target killed at its timeout would lose its block-buffered
        # output; unbuffered, what it printed up to the kill is counted.
        "PYTHONUNBUFFERED": os.environ.get("PYTHONUNBUFFERED", "1"),
    }
    if suite.debug_enabled:
        env["IRONCLAD_DEBUG"] = "1"
    return env


@dataclass(frozen=True, slots=True)
class RunIO:
    """One run's I/O on this coordinator: its id and paths, its store and output tree, the
    appender that writes to both, and the reporter that shows what happens."""

    run_id: str
    paths: RunPaths
    store: EventStore
    tree: OutputTree
    append: Append
    reporter: Reporter


@dataclass(frozen=True, slots=True)
class ModelSide:
    """A run's model side: the wait after an infrastructure error, the model gateway (None: no
    model served) and, replaying, the recorded calls that answer its invocations."""

    backoff: Backoff
    gateway: GatewayProcess | None = None
    replays: Replays | None = None


class Session:
    """One run's execution state: its store, projections, plan and per-group outcomes."""

    def __init__(
        self,
        io: RunIO,
        started: events.RunStarted,
        suite: Suite,
        options: RunOptions,
        model_side: ModelSide,
        gate: GateState | None = None,
        ai_variants: AiVariants | None = None,
        spending: Spending | None = None,
    ) -> None:
        self.io = io
        self.started = started
        self.suite = suite
        self.options = options  # a resumed run's: as it recorded them (RunOptions.resumed)
        self.target = TargetSpec("recorded", tuple(started.target_argv))  # the command it recorded
        self.model_side = model_side
        self.gate = gate
        # what the run has spent on model calls, and may (every call is priced as it is recorded)
        self.spending = spending if spending is not None else Spending(PriceBook())
        tracks = plan_tracks(suite, ai_variants)
        if gate is not None:  # every case runs the gate's rounds, up to where it must decide
            tracks = [replace(t, groups=tuple(replace(g, max_runs=gate.design.end) for g in t.groups)) for t in tracks]
        self.tracks = [_TrackState(track, k) for k, track in enumerate(tracks)]
        self.check_plan = CheckPlan.of(suite)  # each case's check and timeout, shared with its proofs
        self.proofs: dict[str, events.CheckProven] = {}  # each check's proof on its reference, by digest
        # What each track waits to start, in turns; only a track whose outcomes changed is
        # planned again (`_due`), so the loop costs what the suite runs, not tracks x runs.
        self.turns: Turns[Work] = Turns(len(self.tracks))
        self._due = set(range(len(self.tracks)))
        self.guard = RunGuard(
            io.run_id,
            resume_command(io.run_id, io.paths.out_dir, io.paths.store_path),
            io.paths.out_dir / "workdirs",
            options.limits.max_infra_errors,
            options.limits.max_outage,
            model_side.backoff,
        )
        self._started_at: dict[Future[Ran], float] = {}

    @property
    def max_invocations(self) -> int:
        return sum(g.max_runs for t in self.tracks for g in t.track.groups)

    @property
    def done_invocations(self) -> int:
        return sum(len(v) for t in self.tracks for v in t.outcomes.values())

    def _env(self, group: Group, run_index: int, rerun: int = 0) -> dict[str, str]:
        return invocation_env(self.io.run_id, self.suite, group, run_index, rerun)

    # -- planning events ------------------------------------------------------

    def planning_events(self) -> list[Pending]:
        """Variants, drops and known references: recorded once, before any invocation."""
        pending: list[Pending] = []
        if self.gate is not None:
            pending.append(Pending(RUN_STREAM, self.gate.designed(), idempotency_key=f"gate:{self.io.run_id}"))
        for state in self.tracks:
            track = state.track
            case: dict[str, Any] = {"mode": track.mode, "case_id": track.case_id}  # whose variants these are
            for v in track.variants:
                if v.metadata.get("source") == "ai":
                    continue  # recorded, with its model and prompt, when it was generated
                made = events.VariantGenerated(
                    **case,
                    generator=v.generator,
                    variant_id=v.variant_id,
                    instruction=v.instruction,
                    base_instruction=v.base_instruction,
                    seed=v.seed,
                    params=v.params,
                    attempt=v.attempt,
                )
                key = f"variant:{self.io.run_id}/{track.path}/{v.variant_id}"
                pending.append(Pending(f"{track.path}/{v.variant_id}", made, idempotency_key=key))
            for drop in track.drops:
                dropped = events.VariantDropped(
                    **case, generator=drop.generator, attempt=drop.attempt, candidate=drop.candidate, reason=drop.reason
                )
                key = f"drop:{self.io.run_id}/{track.path}/{drop.generator}/{drop.attempt}"
                pending.append(Pending(f"{track.path}/{drop.generator}", dropped, idempotency_key=key))
            for short in track.shortfalls:
                fell = events.VariantShortfall(
                    **case,
                    generator=short.generator,
                    asked=short.asked,
                    made=short.made,
                    reason=short.reason,
                    wordings=short.wordings,
                    dropped=short.dropped,
                )
                key = f"shortfall:{self.io.run_id}/{track.path}/{short.generator}"
                pending.append(Pending(f"{track.path}/{short.generator}", fell, idempotency_key=key))
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
        if self._compares_correct(state.track.groups[0]):
            return None  # a stored baseline's correctness was its own run's check: run it fresh, checked here
        found = latest_baseline(
            self.io.store,
            state.track.instruction,
            self.started.target_argv,
            self.started.ironclad_version,
            self.started.environment,
            exclude_run=self.io.run_id,
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
        self.io.reporter.decision(group.path, decision, group.max_runs - decision.n if skipped is None else skipped)
        return Pending(
            group.path,
            events.DecisionTaken(
                **group.where,
                generator=group.generator,
                level=group.level,
                **asdict(decision),
                reference=list(reference.signature) if reference is not None else None,
                reference_source=source,
                reference_outcomes=[list(o) for o in reference.outcomes] if reference and reference.unstable else None,
                reference_group=source_group,
                surplus_runs=surplus_runs or None,
                complexity=group.complexity,
            ),
            idempotency_key=f"decision:{self.io.run_id}/{group.path}",
        )

    def _rule(self, state: _TrackState, group: Group) -> tuple[Callable, list[Outcome], Callable | None]:
        """A group's decision rule as a function of its outcomes, the outcomes it compares
        with (what a hypothetical run may equal), and, for rules that can say so themselves,
        when it can next decide."""
        if group.policy == "baseline":
            if self.gate is not None:
                decide, earliest = self.gate.rule()
                return decide, [], earliest
            return (
                partial(baseline_decision, max_runs=group.max_runs, rule=group.stop),
                [],
                partial(baseline_horizon, max_runs=group.max_runs, rule=group.stop),
            )
        if group.policy == "reference":
            return reference_decision, [], None
        if group.policy == "variant":
            reference = state.reference
            assert reference is not None  # a variant group starts after its track's reference decision
            behaviours = dict.fromkeys(reference.outcomes or (reference.signature,))
            decide = partial(variant_decision, reference=reference, repeats=group.max_runs - 1)
            return decide, [Outcome.of_signature(s) for s in behaviours], None
        base = state.track.groups[0]
        # Level 0 is decided before level 1 starts: every level is judged against it.
        level_0 = next(
            (state.ordered(g) for g in state.track.groups if g.level == 0 and g.path in state.decisions), None
        )
        return (
            partial(stress_level_decision, max_runs=group.max_runs, level=group.level, base=level_0),
            state.ordered(base),
            None,
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
        self.io.reporter.decision(track.path, decision, 0)
        return Pending(
            track.path,
            events.DecisionTaken(
                mode="stress",
                group=track.path,
                generator=track.groups[0].generator if track.groups else None,
                level=level,
                case_id=track.case_id,
                variant_id="ladder",
                **asdict(decision),
            ),
            idempotency_key=f"decision:{self.io.run_id}/{track.path}",
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
                    decide, known, earliest = self._rule(state, group)
                    undecided, floor = state.asked.get(group.path, (0, 0))
                    slots = schedule(
                        decide,
                        state.outcomes.get(group.path, {}),
                        state.running.get(group.path, ()),
                        group.max_runs,
                        known,
                        self.options.speculate,
                        earliest,
                        undecided,
                        floor,
                    )
                    state.slots[group.path] = slots
                    if slots.decision is None:
                        state.asked[group.path] = (len(slots.prefix), slots.horizon)
                if slots.decision is not None:
                    pending.append(self._taken(state, group, slots))
                else:
                    plans.append((group, slots))
            if len(plans) == len(groups):
                return pending, plans

    def _work(self, state: _TrackState, group: Group, run_index: int) -> Work:
        key = invocation_key(self.io.run_id, self.suite.suite_id, group.case_id, group.variant_id, run_index)
        rerun = state.tries.get(group.path, {}).get(run_index, 0)
        return Work(group, run_index, key, f"{self.io.run_id}/{group.path}/run_{run_index:03d}", rerun)

    def plan(self) -> list[Pending]:
        """Decisions due, in track order; and what each track planned again waits to start:
        every run a decision needs, in run order, and, speculating, runs past that. A track
        none of whose outcomes changed since it was planned has no decision due, and still
        waits for what it did (less what started since)."""
        pending: list[Pending] = self._gate_look()
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

    def _gate_look(self) -> list[Pending]:
        """The gate's look, once every case has the outcomes of the round it looks at; when
        it decides, every case is planned again (its rule now decides at that round)."""
        if self.gate is None:
            return []
        prefixes = [state.ordered(state.track.groups[0]) for state in self.tracks]
        due = self.gate.due(min(len(p) for p in prefixes))
        if due is None:
            return []
        looked = self.gate.take_look(prefixes, due)
        self.io.reporter.note(
            f"  gate look {looked.look} after round {due}: z = {looked.z:.2f} "
            f"(boundaries {looked.lower:.2f} / {looked.upper:.2f}): {looked.decision}"
        )
        if looked.decision != "continue":
            for state in self.tracks:
                state.slots.clear()
                state.asked.clear()
                self._due.add(state.position)
        return [Pending(RUN_STREAM, looked, idempotency_key=f"gate-look:{self.io.run_id}/{due}")]

    def _start(self, executor: InvocationExecutor, running: Running, lane: int, free: int) -> list[Pending]:
        """Start up to `free` of the waiting invocations of `lane` (0: needed, 1: speculative),
        tracks taking turns."""
        return [
            self._submit(executor, running, self.tracks[position], work)
            for position, work in self.turns.take(lane, free)
        ]

    # -- invocations ------------------------------------------------------------

    def _setup(self, executor: InvocationExecutor) -> InvocationSetup:
        """What the run's invocations run with on `executor`, the gateway's address as it is now
        (a gateway that died is started again, elsewhere)."""
        gateway = self.model_side.gateway
        return InvocationSetup(
            self.options,
            self.started.rules,
            self.suite.debug_enabled,
            self.io.store.redactor,
            executor.root,
            gateway.link() if gateway is not None else None,
        )

    def _submit(self, executor: InvocationExecutor, running: Running, state: _TrackState, work: Work) -> Pending:
        group = work.group
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        replays = self.model_side.replays
        future = executor.submit(
            work.key + suffix,
            run_invocation,
            work,
            self._setup(executor),
            self.target.argv(group.instruction),
            self._env(group, work.run_index, work.rerun),
            replays.get((group.path, work.run_index), []) if replays is not None else None,
            self.check_plan.of_group(group),
        )
        running[future] = (state, work)
        self._started_at[future] = self.guard.clock()
        state.running.setdefault(group.path, set()).add(work.run_index)
        return Pending(
            group.stream(work.run_index),
            events.InvocationStarted(
                key=work.key,
                **group.where,
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
        totals = CallTotals.of(ran.calls) if ran.calls is not None else None
        completed = events.InvocationCompleted(
            key=work.key,
            **group.where,
            generator=group.generator,
            level=group.level,
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
            brick_refused=ran.refused,
            stdout=stdout,
            stderr=stderr,
            output_truncated=cut_out or cut_err,
            infra_error=outcome.infra_error,
            rerun=work.rerun,
            stdout_path=result.stdout_path,
            stderr_path=result.stderr_path,
            surplus=surplus_run,
            model_calls=totals.calls if totals else None,
            prompt_tokens=totals.prompt_tokens if totals else None,
            completion_tokens=totals.completion_tokens if totals else None,
            model_seconds=totals.model_seconds if totals else None,
            complexity=group.complexity,
            failure_causes=[c.to_dict() for c in ran.causes] if ran.causes else None,
            failure_cause=FENCE_CAUSE
            if ran.fenced_out
            else (ran.causes[-1].cause if ran.causes and not outcome.success else None),
        )
        # Recorded exactly once per attempt of the slot: the first attempt keeps the
        # slot's key, a re-run adds its number.
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        return Pending(group.stream(work.run_index), completed, idempotency_key=f"completed:{work.key}{suffix}")

    def _call_events(self, work: Work, ran: Ran) -> list[Pending]:
        """An invocation's model calls, each an event on its stream with its price after it, and
        the long texts they hold, each recorded once per run (the store keeps one whatever appends
        it again)."""
        group = work.group
        stream = group.stream(work.run_index)
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        pending: list[Pending] = []
        where = {  # whose calls these are
            "key": work.key,
            "rerun": work.rerun,
            "case_id": group.case_id,
            "variant_id": group.variant_id,
            "run_index": work.run_index,
        }
        for call in ran.calls or ():
            held, texts = by_hash(call)
            for sha256, text in texts.items():
                pending.append(
                    Pending(
                        "model_texts",
                        events.ModelText(sha256=sha256, text=text),
                        f"model_text:{self.io.run_id}/{sha256}",
                    )
                )
            pending.append(
                Pending(
                    stream,
                    events.ModelCalled.from_dict({**held, **where}),
                    idempotency_key=f"model_call:{work.key}{suffix}/{call['index']}",
                )
            )
            if call.get("served_model"):  # (none: refused before any model was asked)
                priced = self._priced(call, where)
                pending.append(Pending(stream, priced, idempotency_key=f"priced:{work.key}{suffix}/{call['index']}"))
        return pending

    def _priced(self, call: dict, where: dict[str, Any]) -> events.ModelCallPriced:
        """A call's price: its served model's, from its tokens (none reported: unpriced); a call
        the recording answered paid for nothing."""
        estimated = call.get("estimated_tokens")  # abandoned before its model counted: the gateway's estimate
        priced = self.spending.priced(
            TARGET,
            call["served_model"],
            call.get("prompt_tokens") if not estimated else estimated[0],
            call.get("completion_tokens") if not estimated else estimated[1],
            call.get("cached_tokens"),
            call.get("latency_ms", 0.0) / 1000,
            replayed=call["served_model"] == REPLAY_MODEL,
            index=call["index"],
            **where,
        )
        if estimated and priced.table:
            priced = replace(priced, table=f"{priced.table}; tokens estimated (the invocation ended before the answer)")
        return priced

    def _denied_event(self, work: Work, ran: Ran) -> Pending | None:
        """What the invocation's fence withheld, recorded right after it (None: nothing)."""
        if not ran.denied:
            return None
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        return Pending(
            work.group.stream(work.run_index),
            events.FenceDenied(
                key=work.key,
                rerun=work.rerun,
                group=work.group.path,
                case_id=work.group.case_id,
                variant_id=work.group.variant_id,
                run_index=work.run_index,
                denials=[d.to_dict() for d in ran.denied],
                caused=ran.fenced_out,
            ),
            idempotency_key=f"fence_denied:{work.key}{suffix}",
        )

    def _check_event(self, work: Work, ran: Ran, completed: events.InvocationCompleted) -> Pending | None:
        """The check of the brick the invocation saved, recorded right after it (None: none ran)."""
        planned, result = self.check_plan.of_group(work.group), ran.check
        if planned is None or result is None or completed.brick_path is None:
            return None
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        return Pending(
            work.group.stream(work.run_index),
            check_event(completed, work.group.path, planned.material, result),
            idempotency_key=f"check:{work.key}{suffix}",
        )

    def _proven(self, jobs: int) -> list[Pending]:
        """Each check of the plan with a reference run on it here, fenced like any check (a resumed
        run keeps the proofs it recorded): the plan carries what the proofs found, and each broken
        check is named. Returns the new proofs' events."""
        fence = fence_for(self.options.sandbox)
        jobs = max(1, min(jobs, os.cpu_count() or 1))  # here, on the coordinator
        made = []
        for proof in prove_checks(self.check_plan, fence, self.io.store.redactor, jobs=jobs, proven=self.proofs):
            self.proofs[proof.check_sha256] = proof
            key = f"proof:{self.io.run_id}/{proof.check_sha256}"
            made.append(Pending(RUN_STREAM, proof, idempotency_key=key))
        self.check_plan = self.check_plan.with_proofs(self.proofs)
        for proof in self.proofs.values():
            if proof.broken:
                self.io.reporter.note(f"broken check: {proof.line()}")
        return made

    def _compares_correct(self, group: Group) -> bool:
        """Whether the group's rule compares correctness: a baseline whose suite adds `correct`
        to its `equivalence`, any adversarial group (a correctness flip is material); each only
        with a check."""
        if self.check_plan.of_group(group) is None:
            return False
        return group.policy in ("reference", "variant") or (
            group.policy == "baseline" and "correct" in self.suite.equivalence
        )

    def _completed(self, state: _TrackState, work: Work, ran: Ran) -> Pending:
        path, index = work.group.path, work.run_index
        if ran.result.harness_error:
            raise IronbenchError(f"{path} run {index}: {ran.result.harness_error}")
        state.tries.setdefault(path, {})[index] = work.rerun + 1
        past = path in state.decisions  # decided while it ran: it lies past the decision, no evidence
        if not past and ran.outcome.infra_error is None:
            outcome = ran.outcome
            if self._compares_correct(work.group):
                outcome = replace(outcome, correctness=(_correct(ran.check.verdict if ran.check else None),))
            state.outcomes.setdefault(path, {})[index] = outcome
        state.slots.pop(path, None)
        self._due.add(state.position)
        return self._completed_event(work, ran, past)

    def execute(self, executor: InvocationExecutor, first: list[Pending] | None = None) -> str:
        """Run every track to its end; returns the run's final status.

        Invocations are submitted as soon as a decision needs them, up to the executor's
        capacity; the events and files are written while they run.
        """
        running: Running = {}
        try:
            for state in self.tracks:  # a verdict resting on fewer wordings than asked says so first
                for short in state.track.shortfalls:
                    self.io.reporter.note(short.line(state.track.path))
            proofs = self._proven(executor.capacity())  # before any brick is checked: a broken one is named first
            self.io.reporter.started(self.io.run_id, len(self.tracks), self.max_invocations, self.done_invocations)
            pending: list[Pending | None] = [*(first or []), *proofs, *self.planning_events()]
            reports: list[tuple[Work, events.InvocationCompleted]] = []
            while True:
                # one transaction: what completed, the decisions it allows, what starts next
                decided = self.plan()
                hold = self.guard.hold()  # the backend is failing: nothing starts until it has waited
                # the budget is spent: nothing starts; what runs finishes and is recorded
                closed = hold or self.spending.reached
                started = [] if closed else self._start(executor, running, 0, executor.capacity() - len(running))
                started += [] if closed else self._start(executor, running, 1, executor.capacity() - len(running))
                self.io.append([*pending, *decided, *started])
                pending = []
                self._report(reports)
                reports = []
                if not running:
                    if hold and self.turns.waiting():
                        waits.sleep(hold)
                        continue
                    break
                # woken every fraction of a second: a Ctrl-C never waits for a held target (core/waits.py)
                done = waits.first_done(running, timeout=hold or None)
                for future in sorted(done, key=lambda f: (running[f][1].group.path, running[f][1].run_index)):
                    started_at = self._started_at.pop(future, None)
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
                                f"{self.io.run_id} stopped: {reason}. Once it is back: "
                                f"{self.guard.resume} --scheduler ADDRESS (or --jobs N, "
                                "to continue here)"
                            ) from None
                        self.io.reporter.note(
                            f"  {work.group.path} run {work.run_index}: {type(exc).__name__} "
                            "(the workers running it died); submitted again"
                        )
                        pending.append(self._submit(executor, running, state, work))
                        continue
                    completed = self._completed(state, work, ran)
                    assert isinstance(completed.event, events.InvocationCompleted)
                    if ran.fence is not None:  # a worker that joined after the run started: its fence
                        pending.append(Pending(RUN_STREAM, events.SandboxApplied(**ran.fence)))
                    pending += [
                        *self._call_events(work, ran),
                        completed,
                        self._denied_event(work, ran),
                        self._check_event(work, ran, completed.event),
                    ]
                    reports.append((work, completed.event))
                    where = f"{work.group.path} run {work.run_index}"
                    stop = self.guard.after(
                        where,
                        work.group.case_id,
                        self.target.argv(work.group.instruction),
                        ran.result,
                        ran.outcome,
                        started_at,
                        retry_after(ran.calls or ()),
                        fenced_out=tuple(d for d in ran.denied if d.explains) if ran.fenced_out else (),
                    )
                    if stop is not None:
                        self.io.append(pending)
                        self._report(reports)
                        raise stop
                    if ran.outcome.infra_error is not None:
                        self.io.reporter.note(
                            f"  {where}: infrastructure error ({ran.outcome.infra_error}); the slot runs again"
                        )
                        waiting = self.guard.waiting()
                        if waiting is not None:
                            self.io.reporter.note(waiting)
                if self.model_side.gateway is not None and self.model_side.gateway.restart_if_gone():
                    self.io.reporter.note("  the model gateway had stopped; a new one answers from here")
        finally:
            for future in running:
                future.cancel()
            self._started_at.clear()
        unfinished = [s.track.path for s in self.tracks if active_groups(s.track, s.decisions) is not None]
        if unfinished and self.spending.reached:
            self._budget_reached()
        if unfinished:
            raise IronbenchError(f"{self.io.run_id}: nothing left to run, but {', '.join(unfinished)} undecided")
        outcomes = [o for t in self.tracks for v in t.outcomes.values() for o in v.values()]
        self.io.append(
            [
                Pending(
                    RUN_STREAM,
                    events.RunFinished(invocations=len(outcomes), successes=sum(1 for o in outcomes if o.success)),
                    idempotency_key=f"finished:{self.io.run_id}",
                )
            ]
        )
        self.io.tree.flush()
        self.io.reporter.finished(self.io.run_id, "finished")
        return "finished"

    def _budget_reached(self) -> None:
        """The run's recorded cost reached its budget with work left: recorded, and the run stops."""
        done = self.done_invocations
        self.io.append([Pending(RUN_STREAM, self.spending.reached_event(done))])
        raise BudgetExhausted(self.spending.line(self.io.run_id, done))

    def _report(self, reports: list[tuple[Work, events.InvocationCompleted]]) -> None:
        for work, event in reports:
            self.io.reporter.invocation(work.group.path, work.run_index, event)

    def restore(self, history: list[RecordedEvent]) -> None:
        """Load what a run already recorded (for resume)."""
        by_path = {g.path: (state, g) for state in self.tracks for g in state.track.groups}
        by_track = {state.track.path: state for state in self.tracks}
        for recorded in history:
            match recorded.event:
                case events.GateLooked() as event if self.gate is not None:
                    self.gate.looks[event.round] = event  # never looked at again
                case events.InvocationCompleted() as event:
                    path = group_of(recorded.stream)
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
                                # a brick's check, recorded right after it, says otherwise
                                correctness=(False,) if self._compares_correct(by_path[path][1]) else (),
                            )
                case events.CheckProven() as event if not event.recheck:
                    self.proofs[event.check_sha256] = event
                case events.CheckCompleted() as event if not event.recheck:
                    path = event.group or group_of(recorded.stream)
                    latest = by_path[path][0].tries.get(path, {}).get(event.run_index) if path in by_path else None
                    if latest == event.rerun + 1 and self._compares_correct(by_path[path][1]):
                        found = by_path[path][0].outcomes.get(path, {}).get(event.run_index)
                        if found is not None:
                            by_path[path][0].outcomes[path][event.run_index] = replace(
                                found, correctness=(_correct(event.verdict),)
                            )
                case events.DecisionTaken() as event:
                    path = group_path(event.group, event.case_id)
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


def _correct(verdict: str | None) -> bool | None:
    """A run's correctness as a rule compares it: no check (no brick saved) is not correct; a
    check the harness could not run is unknown."""
    return None if verdict == "harness_fault" else verdict == "correct"


def appender(store: EventStore, tree: OutputTree, run_id: str) -> Append:
    """Append events (None entries skipped) and project them into the tree at once."""

    def append(pending: Sequence[Pending | None]) -> list[RecordedEvent]:
        positions = {tree.name: tree.applied_seq} if tree.applied_seq else None
        recorded = store.append(run_id, [p for p in pending if p is not None], positions)
        tree.apply(recorded)
        return recorded

    return append


@contextmanager
def aborts_run(tree: OutputTree, reporter: Reporter, run_id: str, resume: str) -> Iterator[None]:
    """A run's life once its id is claimed: whatever stops it (once it has started) is recorded
    as its abort, then re-raised. When the disk is full, whichever write hit it (the store, the
    output tree, a target's working directory, or the abort's own record), the store's reserve
    makes room for that record, and the error names the run, what it keeps and the command that
    continues it (`resume`)."""
    try:
        yield
    except BaseException as exc:
        # Whatever stopped it, what still runs would be dropped: stopped first, not waited for
        # (the executor's close waits for its threads), before anything can fail.
        containment.stop_all()
        store = tree.store
        if not store.has_run(run_id):
            raise  # its id was claimed, but it never started: there is no run to stop or continue
        redactor = store.redactor
        if redactor is not None and isinstance(exc, IronbenchError):
            exc.args = (redactor.text(str(exc)),)  # the CLI prints it
        interrupted = isinstance(exc, KeyboardInterrupt)
        reason = "interrupted" if interrupted else (str(exc) or type(exc).__name__)
        full = exc if isinstance(exc, StoreFull) else None
        try:
            if not any(store.read(run_id, types=("run_finished",), limit=1)):  # else only its files lag
                full = _record_abort(tree, run_id, reason, full)
        except StoreFull as failed:
            full = full or failed
        except StoreError:
            if not isinstance(exc, StoreError):
                raise
        # Not even the abort could be recorded: the run stays as it was, and its lease goes
        # stale when this process ends, so `resume` takes it over.
        reporter.finished(run_id, "aborted")
        if interrupted:
            raise RunInterrupted(run_id) from exc
        if full is not None:
            raise stopped_on_full_disk(full, store, run_id, resume) from None
        raise


def _record_abort(tree: OutputTree, run_id: str, reason: str, full: StoreFull | None) -> StoreFull | None:
    """Record why the run stopped; on a full disk (`full`, or found now) with the room the store's
    reserve keeps for it. Returns the full disk's error, if there is one."""
    store = tree.store
    abort = [Pending(RUN_STREAM, events.RunAborted(reason=reason))]
    recorded = None
    if full is None:
        try:
            recorded = store.append(run_id, abort)
        except StoreFull as failed:  # another write filled the disk first (a target's files, say)
            full = failed
    if recorded is None:
        store.free_reserves()
        recorded = store.append(run_id, abort, free_reserve=True)
    tree.apply(recorded)
    tree.flush()
    return full


def stopped_on_full_disk(full: StoreFull, store: EventStore, run_id: str, resume: str) -> StoreFull:
    """A full disk's error naming the run, what it keeps, and the command that continues it."""
    return StoreFull(f"{full}: {run_id} keeps its {_kept(store, run_id)}; free space, then: {resume}")


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
