"""The executor: runs a plan against a target, appending every fact as an event.

The coordinator (the calling thread) is the only writer; workers only invoke the
target. Decisions depend on outcomes ordered by run index, never on completion
order, so any number of jobs reaches the same decisions.
"""

import os
import platform
import sys
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from ironbench import __version__
from ironbench.errors import IronbenchError, RunInterrupted, RunNotFound
from ironbench.guards import MAX_INFRA_ERRORS, RunGuard, resume_command
from ironbench.events import (
    DecisionTaken, InvocationCompleted, InvocationStarted, RecordedEvent, RunAborted, RunFinished, RunStarted,
    VariantDropped, VariantGenerated,
)
from ironbench.outcome import DEFAULT_RULES, UNKNOWN, Outcome, RuleSet, load_rules, parse_outcome, recorded_rules
from ironbench.keys import instruction_hash, invocation_key
from ironbench.planner import AiVariants, Group, Track, ai_entries
from ironbench.planner import plan as plan_tracks
from ironbench.redact import Redactor
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree, group_of
from ironbench.references import latest_baseline
from ironbench.stopping import (
    Reference, StopDecision, baseline_decision, capability_boundary, evidence, reference_decision,
    stress_level_decision, variant_decision,
)
from ironbench.store.eventstore import EventStore, Pending, open_store
from ironbench.suite import Suite
from ironbench.targets import containment
from ironbench.targets.command import ProcessResult, cap_output, ensure_fresh_dir, invoke, preflight
from ironbench.targets.registry import TargetSpec, resolve_target
from ironbench.targets.version import target_version

RUN_STREAM = "run"
DEBUG_DIR = Path("build") / ".ironclad_debug"


class Reporter(Protocol):
    def note(self, text: str) -> None: ...
    def started(self, run_id: str, cases: int, max_invocations: int, done: int) -> None: ...
    def invocation(self, case_id: str, run_index: int, completed: InvocationCompleted) -> None: ...
    def decision(self, case_id: str, decision: StopDecision, skipped_runs: int) -> None: ...
    def finished(self, run_id: str, status: str) -> None: ...


class SilentReporter:
    def note(self, text): pass
    def started(self, run_id, cases, max_invocations, done): pass
    def invocation(self, case_id, run_index, completed): pass
    def decision(self, case_id, decision, skipped_runs): pass
    def finished(self, run_id, status): pass


class _RedactingReporter:
    """Notes (model answers, rejection reasons) are logs too: no secret reaches them."""

    def __init__(self, reporter: Reporter, redactor: Redactor) -> None:
        self._reporter, self._redactor = reporter, redactor

    def note(self, text):
        self._reporter.note(self._redactor.text(text))

    def __getattr__(self, name):
        return getattr(self._reporter, name)


@dataclass(frozen=True)
class RunPaths:
    out_dir: Path
    store_path: Path

    @classmethod
    def resolve(cls, out: str | Path, store: str | Path | None) -> "RunPaths":
        out_dir = Path(out)
        return cls(out_dir, Path(store) if store else out_dir / "ironbench.db")


@dataclass(frozen=True, slots=True)
class _Work:
    group: Group
    run_index: int
    key: str
    workdir: Path
    rerun: int = 0  # how many earlier attempts of this slot hit infrastructure errors


def new_run_id(store: EventStore, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(timezone.utc)).strftime("run_%Y%m%d_%H%M%S")
    run_id, suffix = stamp, 1
    while store.has_run(run_id):
        suffix += 1
        run_id = f"{stamp}_{suffix}"
    return run_id


def _execute_one(work: _Work, argv: list[str], env: dict[str, str], debug_enabled: bool,
                 redactor: Redactor | None = None, rules: RuleSet | None = None) -> tuple[ProcessResult, Outcome, bool]:
    ensure_fresh_dir(work.workdir)
    result = invoke(argv, work.workdir, work.group.timeout_seconds, env, redactor)
    if result.harness_error:
        outcome = UNKNOWN
    else:  # a timed-out run keeps what it printed before the kill
        outcome = parse_outcome(result.exit_code, result.stdout, rules or DEFAULT_RULES, timed_out=result.timed_out)
    debug_present = debug_enabled and (work.workdir / DEBUG_DIR).is_dir()
    return result, outcome, debug_present


@dataclass
class _TrackState:
    """What the coordinator knows of one track: outcomes and decisions per group."""

    track: Track
    # Per group, the live outcome of each run index; infrastructure errors are
    # never outcomes: their slot stays open and is run again.
    outcomes: dict[str, dict[int, Outcome]] = field(default_factory=dict)
    tries: dict[str, dict[int, int]] = field(default_factory=dict)  # recorded attempts per slot
    decisions: dict[str, str] = field(default_factory=dict)
    reference: Reference | None = None

    def ordered(self, group: Group) -> list[Outcome]:
        by_index = self.outcomes.get(group.path, {})
        return [by_index[i] for i in sorted(by_index)]


class Session:
    """One run's execution state: its store, projections, plan and per-group outcomes."""

    def __init__(self, paths: RunPaths, run_id: str, started: RunStarted, suite: Suite, target: TargetSpec,
                 store: EventStore, tree: OutputTree, reporter: Reporter, ai_variants: AiVariants | None = None,
                 max_infra_errors: int = MAX_INFRA_ERRORS) -> None:
        self.paths = paths
        self.run_id = run_id
        self.started = started
        self.suite = suite
        self.target = target
        self.store = store
        self.tree = tree
        self.reporter = reporter
        self.tracks = [_TrackState(track) for track in plan_tracks(suite, ai_variants)]
        self.rules = recorded_rules(started.rules)  # as the run recorded them, also on resume
        self.append = _appender(store, tree, run_id)
        self.guard = RunGuard(run_id, resume_command(run_id, paths.out_dir, paths.store_path),
                              paths.out_dir / "workdirs", max_infra_errors)

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
                pending.append(Pending(f"{track.path}/{variant.variant_id}", VariantGenerated(
                    mode=track.mode, case_id=track.case_id, generator=variant.generator,
                    variant_id=variant.variant_id, instruction=variant.instruction,
                    base_instruction=variant.base_instruction, seed=variant.seed, params=variant.params,
                    attempt=variant.attempt,
                ), idempotency_key=f"variant:{self.run_id}/{track.path}/{variant.variant_id}"))
            for drop in track.drops:
                pending.append(Pending(f"{track.path}/{drop.generator}", VariantDropped(
                    mode=track.mode, case_id=track.case_id, generator=drop.generator, attempt=drop.attempt,
                    candidate=drop.candidate, reason=drop.reason,
                ), idempotency_key=f"drop:{self.run_id}/{track.path}/{drop.generator}/{drop.attempt}"))
            if track.mode == "adversarial":
                pending.append(self._stored_reference(state))
        return pending

    def _stored_reference(self, state: _TrackState) -> Pending | None:
        """The latest baseline of the same instruction, target, target version and
        recorded environment in the store, if any (a resumed run keeps the reference it
        started with)."""
        if state.track.groups[0].path in state.decisions:
            return None
        found = latest_baseline(self.store, state.track.instruction, self.started.target_argv,
                                self.started.ironclad_version, self.started.environment, exclude_run=self.run_id,
                                rules=self.started.rules)
        if found is None:
            return None
        reference_group = state.track.groups[0]
        decision = evidence(found.outcomes, "reference",
                            f"baseline {found.group} of run {found.run_id} ({found.decision}; same instruction, "
                            "target, version and environment)")
        # None of the reference group's runs happen in this run.
        return self._decision(state, reference_group, decision, reference=Reference.of(found.outcomes, found.stable),
                              source=found.run_id, source_group=found.group, skipped=reference_group.max_runs)

    # -- decisions --------------------------------------------------------------

    def _decision(self, state: _TrackState, group: Group, decision: StopDecision,
                  reference: Reference | None = None, source: str | None = None, source_group: str | None = None,
                  skipped: int | None = None) -> Pending:
        state.decisions[group.path] = decision.decision
        if reference is not None:
            state.reference = reference
        elif group.policy == "variant":
            reference = state.reference
        self.reporter.decision(group.path, decision, group.max_runs - decision.n if skipped is None else skipped)
        return Pending(group.path, DecisionTaken(
            mode=group.mode, group=group.path, generator=group.generator, level=group.level,
            case_id=group.case_id, variant_id=group.variant_id, **asdict(decision),
            reference=list(reference.signature) if reference is not None else None, reference_source=source,
            reference_outcomes=[list(o) for o in reference.outcomes] if reference and reference.unstable else None,
            reference_group=source_group,
        ), idempotency_key=f"decision:{self.run_id}/{group.path}")

    def _decide(self, state: _TrackState, group: Group) -> Pending | None:
        outcomes = state.ordered(group)
        if group.policy == "baseline":
            decision = baseline_decision(outcomes, group.max_runs, group.stop)
        elif group.policy == "reference":
            decision = reference_decision(outcomes)
            if decision is not None:
                return self._decision(state, group, decision, reference=Reference.of(outcomes, True),
                                      source="this run")
        elif group.policy == "variant":
            decision = variant_decision(outcomes, state.reference)
        else:
            # Level 0 is decided before level 1 starts: every level is judged against it.
            base = next((state.ordered(g) for g in state.track.groups
                         if g.level == 0 and g.path in state.decisions), None)
            decision = stress_level_decision(outcomes, group.max_runs, group.level, base)
        return None if decision is None else self._decision(state, group, decision)

    def _boundary(self, state: _TrackState) -> Pending:
        track = state.track
        found = capability_boundary([(g.level, state.ordered(g)) for g in track.groups if g.path in state.decisions])
        level, decision = found.level, found.decision
        state.decisions[track.path] = decision.decision
        self.reporter.decision(track.path, decision, 0)
        return Pending(track.path, DecisionTaken(
            mode="stress", group=track.path, generator=track.groups[0].generator if track.groups else None,
            level=level, case_id=track.case_id, variant_id="ladder", **asdict(decision),
        ), idempotency_key=f"decision:{self.run_id}/{track.path}")

    def advance(self, state: _TrackState) -> tuple[list[Pending], _Work | None]:
        """Decide what the outcomes so far justify, then name the track's next invocation."""
        pending: list[Pending] = []
        for group in state.track.groups:
            if group.path in state.decisions:
                if group.policy == "stress_level" and state.track.stop_at_boundary \
                        and state.decisions[group.path] == "systematic_failure":
                    break
                continue
            if group.policy == "variant" and state.reference is None:
                break  # unreachable: the reference group comes first
            decided = self._decide(state, group)
            if decided is not None:
                pending.append(decided)
                if group.policy == "stress_level" and state.track.stop_at_boundary \
                        and decided.event.decision == "systematic_failure":
                    break
                continue
            run_index = len(state.outcomes.get(group.path, {})) + 1
            rerun = state.tries.get(group.path, {}).get(run_index, 0)
            key = invocation_key(self.run_id, self.suite.suite_id, group.case_id, group.variant_id, run_index)
            workdir = (self.paths.out_dir / "workdirs" / self.run_id / group.path / f"run_{run_index:03d}").resolve()
            return pending, _Work(group, run_index, key, workdir, rerun)
        if state.track.mode == "stress" and state.track.path not in state.decisions:
            pending.append(self._boundary(state))
        return pending, None

    def _completed_event(self, work: _Work, result: ProcessResult, outcome: Outcome,
                         debug_present: bool) -> Pending:
        stdout, cut_out = cap_output(result.stdout)
        stderr, cut_err = cap_output(result.stderr)
        group = work.group
        completed = InvocationCompleted(
            key=work.key, mode=group.mode, group=group.path, generator=group.generator, level=group.level,
            case_id=group.case_id, variant_id=group.variant_id,
            run_index=work.run_index, instruction=group.instruction,
            instruction_hash=instruction_hash(group.instruction),
            instruction_length=len(group.instruction), exit_code=result.exit_code,
            success=outcome.success, failure_stage=outcome.failure_stage, attempts=outcome.attempts,
            repairs_triggered=outcome.repairs_triggered, duration_ms=result.duration_ms,
            timed_out=result.timed_out, harness_error=result.harness_error,
            debug_enabled=self.suite.debug_enabled, debug_artifacts_present=debug_present,
            debug_path=str(work.workdir / DEBUG_DIR), brick_path=outcome.brick_path,
            stdout=stdout, stderr=stderr, output_truncated=cut_out or cut_err,
            infra_error=outcome.infra_error, rerun=work.rerun,
            stdout_path=result.stdout_path, stderr_path=result.stderr_path,
        )
        # Recorded exactly once per attempt of the slot: the first attempt keeps the
        # slot's key, a re-run adds its number.
        suffix = f"/rerun_{work.rerun}" if work.rerun else ""
        return Pending(group.stream(work.run_index), completed, idempotency_key=f"completed:{work.key}{suffix}")

    def execute(self, executor: Executor, first: list[Pending] | None = None) -> str:
        """Run every track to its end; returns the run's final status.

        The next invocation of a track is submitted as soon as the previous outcome
        is known and decided on; the events and files are written while it runs.
        """
        running: dict[Future, tuple[_TrackState, _Work]] = {}

        def submit(state: _TrackState, work: _Work | None) -> Pending | None:
            if work is None:
                return None
            group = work.group
            future = executor.submit(_execute_one, work, self.target.argv(group.instruction),
                                     self._env(group, work.run_index), self.suite.debug_enabled,
                                     self.store.redactor, self.rules)
            running[future] = (state, work)
            return Pending(group.stream(work.run_index), InvocationStarted(
                key=work.key, mode=group.mode, group=group.path, case_id=group.case_id,
                variant_id=group.variant_id, run_index=work.run_index, instruction=group.instruction,
                workdir=str(work.workdir),
            ))

        with _aborts_run(self.append, self.tree, self.reporter, self.run_id):
            try:
                self.reporter.started(self.run_id, len(self.tracks), self.max_invocations, self.done_invocations)
                pending: list[Pending] = list(first or []) + self.planning_events()
                for state in self.tracks:
                    decided, work = self.advance(state)
                    pending += decided + [submit(state, work)]
                self.append(pending)
                while running:
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: (running[f][1].group.path, running[f][1].run_index)):
                        state, work = running.pop(future)
                        result, outcome, debug_present = future.result()
                        if result.harness_error:
                            raise IronbenchError(f"{work.group.path} run {work.run_index}: {result.harness_error}")
                        state.tries.setdefault(work.group.path, {})[work.run_index] = work.rerun + 1
                        if outcome.infra_error is None:
                            state.outcomes.setdefault(work.group.path, {})[work.run_index] = outcome
                        else:
                            self.reporter.note(f"  {work.group.path} run {work.run_index}: infrastructure error "
                                               f"({outcome.infra_error}); the slot runs again")
                        completed = self._completed_event(work, result, outcome, debug_present)
                        stop = self.guard.after(f"{work.group.path} run {work.run_index}", work.group.case_id,
                                                self.target.argv(work.group.instruction), result, outcome)
                        if stop is not None:
                            self.append([completed])
                            self.reporter.invocation(work.group.path, work.run_index, completed.event)
                            raise stop
                        decided, following = self.advance(state)
                        self.append([completed, *decided, submit(state, following)])
                        self.reporter.invocation(work.group.path, work.run_index, completed.event)
            finally:
                for future in running:
                    future.cancel()
        outcomes = [o for t in self.tracks for v in t.outcomes.values() for o in v.values()]
        self.append([Pending(RUN_STREAM, RunFinished(invocations=len(outcomes),
                                                     successes=sum(1 for o in outcomes if o.success)),
                             idempotency_key=f"finished:{self.run_id}")])
        self.tree.flush()
        self.reporter.finished(self.run_id, "finished")
        return "finished"

    def restore(self, events: list[RecordedEvent]) -> None:
        """Load what a run already recorded (for resume)."""
        by_path = {g.path: (state, g) for state in self.tracks for g in state.track.groups}
        by_track = {state.track.path: state for state in self.tracks}
        for recorded in events:
            event = recorded.event
            if isinstance(event, InvocationCompleted):
                path = group_of(recorded)
                if path in by_path:
                    state = by_path[path][0]
                    tries = state.tries.setdefault(path, {})
                    tries[event.run_index] = max(tries.get(event.run_index, 0), event.rerun + 1)
                    if event.infra_error is None:
                        state.outcomes.setdefault(path, {})[event.run_index] = Outcome(
                            event.success, event.failure_stage, event.attempts, event.repairs_triggered,
                            event.brick_path)
            elif isinstance(event, DecisionTaken):
                path = event.group or f"baseline/{event.case_id}"
                state = by_path[path][0] if path in by_path else by_track.get(path)
                if state is None:
                    continue
                state.decisions[path] = event.decision
                if event.reference is not None and event.decision == "reference":
                    outcomes = tuple(tuple(o) for o in event.reference_outcomes or ())
                    state.reference = Reference(tuple(event.reference), outcomes or (tuple(event.reference),),
                                                stable=not outcomes)


def _appender(store: EventStore, tree: OutputTree, run_id: str) -> Callable[[list], list[RecordedEvent]]:
    """Append events (None entries skipped) and project them into the tree at once."""
    def append(pending: list[Pending | None]) -> list[RecordedEvent]:
        positions = {tree.name: tree.applied_seq} if tree.applied_seq else None
        recorded = store.append(run_id, [p for p in pending if p is not None], positions)
        tree.apply(recorded)
        return recorded
    return append


@contextmanager
def _aborts_run(append, tree: OutputTree, reporter: Reporter, run_id: str):
    """Whatever stops a run early is recorded as its abort, then re-raised."""
    try:
        yield
    except BaseException as exc:
        redactor = tree.store.redactor
        if redactor is not None and isinstance(exc, IronbenchError):
            exc.args = (redactor.text(str(exc)),)  # the CLI prints it
        interrupted = isinstance(exc, KeyboardInterrupt)
        if interrupted:
            containment.stop_all()  # their results would be dropped: do not wait for them
        reason = "interrupted" if interrupted else (str(exc) or type(exc).__name__)
        append([Pending(RUN_STREAM, RunAborted(reason=reason))])
        tree.flush()
        reporter.finished(run_id, "aborted")
        if interrupted:
            raise RunInterrupted(run_id) from exc
        raise


def _begin(store: EventStore, tree: OutputTree, suite: Suite, suite_path: str | None, target_argv: list[str],
           ironclad_version: str, jobs: int, label: str | None = None,
           redact: Sequence[str] = (), rules: RuleSet | None = None) -> tuple[str, RunStarted]:
    run_id = new_run_id(store)
    started = RunStarted(
        suite_id=suite.suite_id, mode=suite.mode, suite=suite.to_dict(), suite_path=suite_path,
        target_argv=target_argv, ironclad_version=ironclad_version, harness_version=__version__,
        python_version=sys.version.split()[0], platform=f"{platform.system()}-{platform.machine()}", jobs=jobs,
        label=label, environment={name: os.environ.get(name) for name in suite.record_env},
        redact=sorted(set(redact)), rules=rules.record() if rules is not None else None,
    )
    _appender(store, tree, run_id)([Pending(RUN_STREAM, started)])
    return run_id, started


def _executor(jobs: int) -> Executor:
    return ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ironbench-invoke")


def _generate_ai(suite: Suite, run_id: str, store: EventStore, tree: OutputTree, reporter: Reporter,
                 max_failures: int | None) -> AiVariants:
    if not ai_entries(suite):
        return {}
    from ironbench.ai_generation import generate_ai_variants

    append = _appender(store, tree, run_id)
    reporter.note(f"{run_id}: generating AI variants")
    with _aborts_run(append, tree, reporter, run_id):
        return generate_ai_variants(suite, run_id, store, append, max_failures, reporter.note)


def _redacting(reporter: Reporter | None, names: Sequence[str]) -> tuple[Reporter, Redactor]:
    redactor = Redactor.from_environ(names)
    reporter = reporter or SilentReporter()
    return (_RedactingReporter(reporter, redactor) if redactor else reporter), redactor


def start_run(suite: Suite, paths: RunPaths, target_override: str | None = None, jobs: int = 1,
              suite_path: str | None = None, reporter: Reporter | None = None,
              executor_factory: Callable[[int], Executor] = _executor, max_failures: int | None = None,
              max_infra_errors: int = MAX_INFRA_ERRORS, label: str | None = None,
              redact: Sequence[str] = (), rules: str | None = None) -> str:
    """Start a new run of `suite`; returns its run id once every case is decided.

    Values of secret-looking environment variables, and of those named in `redact`,
    are replaced before anything is stored or printed. `rules` (a shipped name or a
    file) overrides the suite's outcome rules; a suite's relative path is read from
    the suite's folder.
    """
    reporter, redactor = _redacting(reporter, redact)
    if suite.mode == "gauntlet":
        return _start_gauntlet(suite, paths, suite_path, reporter, redactor, redact, label)
    target = resolve_target(target_override if target_override is not None else suite.target)
    preflight(target)  # before anything is written: a missing target is one clear error
    ruleset = load_rules(rules) if rules is not None else load_rules(
        suite.rules or DEFAULT_RULES, str(Path(suite_path).parent) if suite_path and suite.rules else None)
    if ai_entries(suite):
        from ironbench.ai_generation import preflight_models

        preflight_models(suite, suite_path or "suite")  # likewise an unknown model id
    store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
    with store:
        tree = OutputTree(store, paths.out_dir)
        tree.catch_up()
        run_id, started = _begin(store, tree, suite, suite_path, list(target.argv_template), target_version(target),
                                 jobs, label, redact, ruleset)
        ai_variants = _generate_ai(suite, run_id, store, tree, reporter, max_failures)
        session = Session(paths, run_id, started, suite, target, store, tree, reporter, ai_variants, max_infra_errors)
        with executor_factory(jobs) as executor:
            session.execute(executor)
    return run_id


def _start_gauntlet(suite: Suite, paths: RunPaths, suite_path: str | None, reporter: Reporter,
                    redactor: Redactor, redact: Sequence[str], label: str | None = None) -> str:
    from ironbench.gauntlet.engines import preflight_engines

    # unknown models, classes and commands: before anything is written
    preflight_engines(suite.engines, suite_path or "suite")
    store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
    with store:
        tree = OutputTree(store, paths.out_dir)
        tree.catch_up()
        run_id, _ = _begin(store, tree, suite, suite_path, [], "n/a", 1, label, redact)
        _gauntlet(suite, run_id, store, tree, reporter, [])
    return run_id


def _gauntlet(suite: Suite, run_id: str, store: EventStore, tree: OutputTree, reporter: Reporter,
              history: list[RecordedEvent]) -> str:
    from ironbench.gauntlet.runner import run_gauntlet

    append = _appender(store, tree, run_id)
    with _aborts_run(append, tree, reporter, run_id):
        status = run_gauntlet(suite, run_id, append, reporter.note, history)
    tree.flush()
    reporter.finished(run_id, status)
    return status


def resume_run(run_id: str, paths: RunPaths, jobs: int = 1, reporter: Reporter | None = None,
               executor_factory: Callable[[int], Executor] = _executor, max_failures: int | None = None,
               max_infra_errors: int = MAX_INFRA_ERRORS, redact: Sequence[str] = ()) -> str:
    """Continue an interrupted run: completed invocations are kept, the rest run. The
    names the run was started with --redact stay redacted, with `redact` added."""
    store = open_store(paths.store_path, [ReadModel()], create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {paths.store_path}")
        events = list(store.read(run_id))
        started: RunStarted = events[0].event
        reporter, redactor = _redacting(reporter, [*started.redact, *redact])
        store.redactor = redactor or None
        if any(isinstance(e.event, RunFinished) for e in events):
            reporter.finished(run_id, "already finished")
            return "already finished"
        suite = Suite.from_dict(started.suite)
        if suite.mode == "gauntlet":
            tree = OutputTree(store, paths.out_dir)
            tree.catch_up()
            return _gauntlet(suite, run_id, store, tree, reporter, events)
        target = TargetSpec("recorded", tuple(started.target_argv))
        preflight(target)
        tree = OutputTree(store, paths.out_dir)
        tree.catch_up()
        ai_variants = _generate_ai(suite, run_id, store, tree, reporter, max_failures)
        session = Session(paths, run_id, started, suite, target, store, tree, reporter, ai_variants,
                          max_infra_errors)
        session.restore(events)
        with executor_factory(jobs) as executor:
            return session.execute(executor)
