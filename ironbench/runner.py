"""The executor: runs a plan against a target, appending every fact as an event.

The coordinator (the calling thread) is the only writer; workers only invoke the
target. Decisions depend on outcomes ordered by run index, never on completion
order, so any number of jobs reaches the same decisions.
"""

import os
import platform
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from ironbench import __version__
from ironbench.errors import IronbenchError, RunNotFound
from ironbench.events import (
    DecisionTaken, InvocationCompleted, InvocationStarted, RecordedEvent, RunAborted, RunFinished, RunStarted,
)
from ironbench.outcome import UNKNOWN, Outcome, parse_outcome
from ironbench.planner import PlannedCase, instruction_hash, invocation_key, plan_baseline
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.stopping import StopDecision, baseline_decision
from ironbench.store.eventstore import EventStore, Pending, open_store
from ironbench.suite import Suite
from ironbench.targets.command import ProcessResult, cap_output, ensure_fresh_dir, invoke, preflight
from ironbench.targets.registry import TargetSpec, resolve_target
from ironbench.targets.version import target_version

RUN_STREAM = "run"
DEBUG_DIR = Path("build") / ".ironclad_debug"


class Reporter(Protocol):
    def started(self, run_id: str, cases: int, max_invocations: int, done: int) -> None: ...
    def invocation(self, case_id: str, run_index: int, completed: InvocationCompleted) -> None: ...
    def decision(self, case_id: str, decision: StopDecision, skipped_runs: int) -> None: ...
    def finished(self, run_id: str, status: str) -> None: ...


class SilentReporter:
    def started(self, run_id, cases, max_invocations, done): pass
    def invocation(self, case_id, run_index, completed): pass
    def decision(self, case_id, decision, skipped_runs): pass
    def finished(self, run_id, status): pass


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
    case: PlannedCase
    run_index: int
    key: str
    workdir: Path


def new_run_id(store: EventStore, now: datetime | None = None) -> str:
    stamp = (now or datetime.now(timezone.utc)).strftime("run_%Y%m%d_%H%M%S")
    run_id, suffix = stamp, 1
    while store.has_run(run_id):
        suffix += 1
        run_id = f"{stamp}_{suffix}"
    return run_id


def _execute_one(work: _Work, argv: list[str], env: dict[str, str], debug_enabled: bool) -> tuple[ProcessResult, Outcome, bool]:
    ensure_fresh_dir(work.workdir)
    result = invoke(argv, work.workdir, work.case.timeout_seconds, env)
    if result.timed_out or result.harness_error:
        outcome = UNKNOWN
    else:
        outcome = parse_outcome(result.exit_code, result.stdout)
    debug_present = debug_enabled and (work.workdir / DEBUG_DIR).is_dir()
    return result, outcome, debug_present


class Session:
    """One run's execution state: its store, projections, plan and per-case outcomes."""

    def __init__(self, paths: RunPaths, run_id: str, suite: Suite, target: TargetSpec,
                 store: EventStore, tree: OutputTree, reporter: Reporter) -> None:
        self.paths = paths
        self.run_id = run_id
        self.suite = suite
        self.target = target
        self.store = store
        self.tree = tree
        self.reporter = reporter
        self.plan = plan_baseline(suite)
        self.outcomes: dict[str, dict[int, Outcome]] = {c.case_id: {} for c in self.plan}
        self.decided: set[str] = set()

    def append(self, pending: list[Pending]) -> list[RecordedEvent]:
        positions = {self.tree.name: self.tree.applied_seq} if self.tree.applied_seq else None
        recorded = self.store.append(self.run_id, pending, positions)
        self.tree.apply(recorded)
        return recorded

    def _env(self, case: PlannedCase, run_index: int) -> dict[str, str]:
        env = {
            "IRONBENCH_RUN_ID": self.run_id,
            "IRONBENCH_CASE_ID": case.case_id,
            "IRONBENCH_VARIANT_ID": case.variant_id,
            "IRONBENCH_RUN_INDEX": str(run_index),
            "IRONBENCH_REPAIR_ENABLED": "1" if self.suite.repair_enabled else "0",
        }
        if self.suite.debug_enabled:
            env["IRONCLAD_DEBUG"] = "1"
        return env

    def _next_work(self, case: PlannedCase) -> _Work | None:
        if case.case_id in self.decided:
            return None
        run_index = len(self.outcomes[case.case_id]) + 1
        key = invocation_key(self.run_id, self.suite.suite_id, case.case_id, case.variant_id, run_index)
        workdir = self.paths.out_dir / "workdirs" / self.run_id / case.case_id / f"run_{run_index:03d}"
        return _Work(case, run_index, key, workdir.resolve())

    def _decision_event(self, case: PlannedCase) -> Pending | None:
        """The stopping decision for `case`, if its outcomes so far justify one."""
        by_index = self.outcomes[case.case_id]
        decision = baseline_decision([by_index[i] for i in sorted(by_index)], case.max_runs)
        if decision is None:
            return None
        self.decided.add(case.case_id)
        self.reporter.decision(case.case_id, decision, case.max_runs - decision.n)
        return Pending(
            case.decision_stream,
            DecisionTaken(case_id=case.case_id, variant_id=case.variant_id, **asdict(decision)),
            idempotency_key=f"decision:{self.run_id}/{case.case_id}/{case.variant_id}",
        )

    def _completed_event(self, work: _Work, result: ProcessResult, outcome: Outcome,
                         debug_present: bool) -> Pending:
        stdout, cut_out = cap_output(result.stdout)
        stderr, cut_err = cap_output(result.stderr)
        completed = InvocationCompleted(
            key=work.key, case_id=work.case.case_id, variant_id=work.case.variant_id,
            run_index=work.run_index, instruction=work.case.instruction,
            instruction_hash=instruction_hash(work.case.instruction),
            instruction_length=len(work.case.instruction), exit_code=result.exit_code,
            success=outcome.success, failure_stage=outcome.failure_stage, attempts=outcome.attempts,
            repairs_triggered=outcome.repairs_triggered, duration_ms=result.duration_ms,
            timed_out=result.timed_out, harness_error=result.harness_error,
            debug_enabled=self.suite.debug_enabled, debug_artifacts_present=debug_present,
            debug_path=str(work.workdir / DEBUG_DIR), brick_path=outcome.brick_path,
            stdout=stdout, stderr=stderr, output_truncated=cut_out or cut_err,
        )
        return Pending(work.case.stream(work.run_index), completed, idempotency_key=f"completed:{work.key}")

    def execute(self, executor: Executor) -> str:
        """Run every undecided case to its decision; returns the run's final status.

        The next invocation of a case is submitted as soon as the previous outcome
        is known and decided on; the events and files are written while it runs.
        """
        running: dict[Future, _Work] = {}

        def submit(case: PlannedCase) -> Pending | None:
            work = self._next_work(case)
            if work is None:
                return None
            future = executor.submit(_execute_one, work, self.target.argv(case.instruction),
                                     self._env(case, work.run_index), self.suite.debug_enabled)
            running[future] = work
            return Pending(case.stream(work.run_index), InvocationStarted(
                key=work.key, case_id=case.case_id, variant_id=case.variant_id, run_index=work.run_index,
                instruction=case.instruction, workdir=str(work.workdir),
            ))

        try:
            pending: list[Pending] = []
            for case in self.plan:
                # A resumed run may hold outcomes whose decision was never recorded.
                if case.case_id not in self.decided and self.outcomes[case.case_id]:
                    pending.append(self._decision_event(case))
                pending.append(submit(case))
            self.append([p for p in pending if p is not None])
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: (running[f].case.case_id, running[f].run_index)):
                    work = running.pop(future)
                    result, outcome, debug_present = future.result()
                    if result.harness_error:
                        raise IronbenchError(f"case {work.case.case_id} run {work.run_index}: {result.harness_error}")
                    self.outcomes[work.case.case_id][work.run_index] = outcome
                    completed = self._completed_event(work, result, outcome, debug_present)
                    batch = [completed, self._decision_event(work.case), submit(work.case)]
                    self.append([p for p in batch if p is not None])
                    self.reporter.invocation(work.case.case_id, work.run_index, completed.event)
        except BaseException as exc:
            for future in running:
                future.cancel()
            reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else str(exc)
            self.append([Pending(RUN_STREAM, RunAborted(reason=reason))])
            self.tree.flush()
            self.reporter.finished(self.run_id, "aborted")
            raise
        invocations = sum(len(v) for v in self.outcomes.values())
        successes = sum(1 for v in self.outcomes.values() for o in v.values() if o.success)
        self.append([Pending(RUN_STREAM, RunFinished(invocations=invocations, successes=successes),
                             idempotency_key=f"finished:{self.run_id}")])
        self.tree.flush()
        self.reporter.finished(self.run_id, "finished")
        return "finished"


def _executor(jobs: int) -> Executor:
    return ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ironbench-invoke")


def start_run(suite: Suite, paths: RunPaths, target_override: str | None = None, jobs: int = 1,
              suite_path: str | None = None, reporter: Reporter | None = None,
              executor_factory: Callable[[int], Executor] = _executor) -> str:
    """Start a new run of `suite`; returns its run id once every case is decided."""
    reporter = reporter or SilentReporter()
    target = resolve_target(target_override if target_override is not None else suite.target)
    preflight(target)  # before anything is written: a missing target is one clear error
    store = open_store(paths.store_path, [ReadModel()])
    with store:
        tree = OutputTree(store, paths.out_dir)
        tree.catch_up()
        run_id = new_run_id(store)
        session = Session(paths, run_id, suite, target, store, tree, reporter)
        session.append([Pending(RUN_STREAM, RunStarted(
            suite_id=suite.suite_id, mode=suite.mode, suite=suite.to_dict(), suite_path=suite_path,
            target_argv=list(target.argv_template), ironclad_version=target_version(target),
            harness_version=__version__, python_version=sys.version.split()[0],
            platform=f"{platform.system()}-{platform.machine()}", jobs=jobs,
        ))])
        reporter.started(run_id, len(session.plan), sum(c.max_runs for c in session.plan), 0)
        with executor_factory(jobs) as executor:
            session.execute(executor)
    return run_id


def resume_run(run_id: str, paths: RunPaths, jobs: int = 1, reporter: Reporter | None = None,
               executor_factory: Callable[[int], Executor] = _executor) -> str:
    """Continue an interrupted run: completed invocations are kept, the rest run."""
    reporter = reporter or SilentReporter()
    store = open_store(paths.store_path, [ReadModel()], create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {paths.store_path}")
        events = list(store.read(run_id))
        started: RunStarted = events[0].event
        if any(isinstance(e.event, RunFinished) for e in events):
            reporter.finished(run_id, "already finished")
            return "already finished"
        suite = Suite.from_dict(started.suite)
        target = TargetSpec("recorded", tuple(started.target_argv))
        preflight(target)
        tree = OutputTree(store, paths.out_dir)
        tree.catch_up()
        session = Session(paths, run_id, suite, target, store, tree, reporter)
        for recorded in events:
            event = recorded.event
            if isinstance(event, InvocationCompleted) and event.case_id in session.outcomes:
                session.outcomes[event.case_id][event.run_index] = Outcome(
                    event.success, event.failure_stage, event.attempts, event.repairs_triggered, event.brick_path)
            elif isinstance(event, DecisionTaken):
                session.decided.add(event.case_id)
        done = sum(len(v) for v in session.outcomes.values())
        reporter.started(run_id, len(session.plan), sum(c.max_runs for c in session.plan), done)
        with executor_factory(jobs) as executor:
            return session.execute(executor)
