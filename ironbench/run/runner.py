"""Starting and resuming runs: checks before anything is written, then a session.

The session (session.py) executes a run's plan; executors (executors.py) say where
its invocations run: local threads, or a Dask cluster.
"""

import itertools
import os
import platform
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ironbench import __version__
from ironbench.core.errors import IronbenchError, RunNotFound, StoreFull
from ironbench.core.events import GateDesigned, RecordedEvent, RunFinished, RunImported, RunStarted, run_started
from ironbench.core.outcome import DEFAULT_RULES, RuleSet, load_rules
from ironbench.core.redact import Redactor
from ironbench.gateway import GatewayConfig, GatewayProcess
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.run.checking import suite_checks
from ironbench.run.executors import open_executor
from ironbench.run.gate import Against, AgainstError, GateState, reference_counts
from ironbench.run.guards import MAX_OUTAGE_SECONDS, Backoff, resume_command
from ironbench.run.paths import RunPaths
from ironbench.run.planner import AiVariants, ai_entries
from ironbench.run.reporters import RedactingReporter, Reporter, SilentReporter
from ironbench.run.session import RUN_STREAM, Append, Replays, Session, aborts_run, appender, stopped_on_full_disk
from ironbench.store.eventstore import EventStore, Pending, open_store
from ironbench.store.leases import Lease
from ironbench.suite.models import Suite
from ironbench.targets.registry import TargetSpec, resolve_target
from ironbench.targets.version import TargetVersion


def new_run_id(store: EventStore, now: datetime | None = None) -> str:
    """A new run's id (its start time, suffixed when taken), claimed with its lease at once."""
    stamp = (now or datetime.now(UTC)).strftime("run_%Y%m%d_%H%M%S")
    return store.claim_new_run(itertools.chain([stamp], (f"{stamp}_{n}" for n in itertools.count(2))))


def _begin(
    append: Append,
    suite: Suite,
    suite_path: str | None,
    target_argv: list[str],
    version: TargetVersion,
    jobs: int,
    label: str | None = None,
    redact: Sequence[str] = (),
    speculate: bool = False,
    scheduler: str | None = None,
    rules: RuleSet | None = None,
    against: Against | None = None,
    serve_model: dict | None = None,
    replay_of: str | None = None,
) -> RunStarted:
    started = RunStarted(
        suite_id=suite.suite_id,
        mode=suite.mode,
        suite=suite.to_dict(),
        suite_path=suite_path,
        target_argv=target_argv,
        ironclad_version=version.value,
        ironclad_version_source=version.source,
        harness_version=__version__,
        python_version=sys.version.split()[0],
        platform=f"{platform.system()}-{platform.machine()}",
        jobs=jobs,
        label=label,
        environment={name: os.environ.get(name) for name in suite.record_env},
        redact=sorted(set(redact)),
        speculate=speculate,
        scheduler=scheduler,
        rules=rules.record() if rules is not None else None,
        against=against.to_dict() if against is not None else None,
        serve_model=serve_model,
        replay_of=replay_of,
    )
    append([Pending(RUN_STREAM, started)])
    return started


@contextmanager
def _running(
    store: EventStore, paths: RunPaths, run_id: str, reporter: Reporter
) -> Iterator[tuple[OutputTree, Append]]:
    """The run's output tree and its appender, for the run's whole life on this coordinator:
    whatever stops it is recorded, and a full disk names it and how to continue (`aborts_run`)."""
    tree = OutputTree(store, paths.out_dir)
    with aborts_run(tree, reporter, run_id, resume_command(run_id, paths.out_dir, paths.store_path)):
        yield tree, appender(store, tree, run_id)


@contextmanager
def _claimed(store: EventStore, run_id: str, resume: str) -> Iterator[Lease | None]:
    """The lease of a run that exists (`store.leased`); a disk too full to claim it names the run."""
    held = ExitStack()
    try:
        taken_over = held.enter_context(store.leased(run_id, resume))
    except StoreFull as full:
        raise stopped_on_full_disk(full, store, run_id, resume) from None
    with held:
        yield taken_over


@dataclass(frozen=True, slots=True)
class _Serving:
    """A run's model side: how long its backend may fail before the run stops, the wait after an
    infrastructure error, the model gateway (None: no model served) and, replaying, the recorded calls."""

    max_outage: float
    backoff: Backoff
    gateway: GatewayProcess | None
    replays: Replays | None


def _session(
    paths: RunPaths,
    run_id: str,
    started: RunStarted,
    suite: Suite,
    target: TargetSpec,
    running: tuple[EventStore, OutputTree, Append],
    reporter: Reporter,
    max_failures: int | None,
    max_infra_errors: int | None,
    gate: GateState | None,
    serving: _Serving,
) -> Session:
    """The run's session, its AI variants made first (here, on the coordinator, whatever executes
    the invocations)."""
    store, tree, append = running
    ai_variants: AiVariants = {}
    if ai_entries(suite):
        from ironbench.run.ai_generation import generate_ai_variants

        reporter.note(f"{run_id}: generating AI variants")
        ai_variants = generate_ai_variants(suite, run_id, store, append, max_failures, reporter.note)
    return Session(
        paths,
        run_id,
        started,
        suite,
        target,
        store,
        tree,
        reporter,
        append,
        ai_variants,
        max_infra_errors,
        started.speculate,
        gate,
        serving.max_outage,
        serving.backoff,
        serving.gateway,
        serving.replays,
    )


def _redacting(reporter: Reporter | None, names: Sequence[str]) -> tuple[Reporter, Redactor]:
    redactor = Redactor.from_environ(names)
    reporter = reporter or SilentReporter()
    return (RedactingReporter(reporter, redactor) if redactor else reporter), redactor


def _gateway(
    serving: dict | None, replay_of: str | None, redact: Sequence[str], paths: RunPaths
) -> GatewayProcess | None:
    """The run's model gateway, started (its models are checked meanwhile: `ready`), when
    the run serves a model or replays one; None otherwise."""
    if serving is None and replay_of is None:
        return None
    log = paths.out_dir / "workdirs" / f"gateway-{os.getpid()}.log"
    return GatewayProcess(
        GatewayConfig(serving if replay_of is None else None, tuple(sorted(set(redact)))), log
    ).start()


def start_run(
    suite: Suite,
    paths: RunPaths,
    target_override: str | None = None,
    jobs: int | None = None,
    suite_path: str | None = None,
    reporter: Reporter | None = None,
    executor_factory: Callable[[int], Executor] | None = None,
    max_failures: int | None = None,
    max_infra_errors: int | None = None,
    label: str | None = None,
    redact: Sequence[str] = (),
    speculate: bool = False,
    scheduler: str | None = None,
    rules: str | None = None,
    against: Against | None = None,
    serve_model: dict | None = None,
    replay_of: str | None = None,
    max_outage: float = MAX_OUTAGE_SECONDS,
) -> str:
    """Start a new run of `suite`; returns its run id once every case is decided.

    Invocations run on `jobs` local threads (default 1), or on the Dask cluster whose
    scheduler is at `scheduler` (or $IRONBENCH_SCHEDULER; `jobs` then defaults to its
    worker threads). Values of secret-looking environment variables, and of those named
    in `redact`, are replaced before anything is stored or printed. `rules` (a shipped
    name or a file) overrides the suite's outcome rules; a suite's relative path is read
    from the suite's folder. `against`: the cases run in rounds under a sequential
    regression gate against that stored run of the same suite (run/gate.py).
    `serve_model` ({"model": ..., "models": {...}}; else the suite's) serves the target's
    model calls through the model gateway, and records them; `replay_of` answers them from
    that run's recorded calls instead. After an infrastructure error nothing starts until a
    backoff has passed; the run stops once its backend has failed for `max_outage` seconds
    (or `max_infra_errors` times in a row).
    """
    reporter, redactor = _redacting(reporter, redact)
    if suite.mode == "gauntlet":
        if against is not None:
            raise AgainstError(f"--against {against.run}: a gauntlet run is compared with `compare`, not gated")
        return _start_gauntlet(suite, paths, suite_path, reporter, redactor, redact, label)
    target = resolve_target(target_override if target_override is not None else suite.target)
    ruleset = (
        load_rules(rules)
        if rules is not None
        else load_rules(
            suite.rules or DEFAULT_RULES, str(Path(suite_path).parent) if suite_path and suite.rules else None
        )
    )
    backoff = Backoff.from_environ()
    serving = serve_model if serve_model is not None else suite.serving()
    if serving is not None and replay_of is not None:
        raise IronbenchError("--replay answers the target's model calls from a recording: give no --serve-model too")
    # Started first: it checks the served models while the rest is prepared. Before anything
    # is written: an unreachable scheduler, a target that cannot start where it will run,
    # an unknown model id, a recording that is not there, a check that cannot be read are each one
    # clear error.
    suite_checks(suite)
    gateway = _gateway(serving, replay_of, redact, paths)
    try:
        executor = open_executor(jobs, scheduler, paths.out_dir / "workdirs", executor_factory)
        try:
            version = executor.preflight(target)
            if ai_entries(suite):
                from ironbench.run.ai_generation import preflight_models

                preflight_models(suite, suite_path or "suite")
            if gateway is not None:
                gateway.ready()  # an unknown model id: one line, and no store created
            store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
            with store:
                gate = _gate(store, suite, against)
                serving_run = _Serving(max_outage, backoff, gateway, _replays(store, replay_of))
                run_id = new_run_id(store)  # the first write: a store that cannot take one stops here
                with store.leased(run_id), _running(store, paths, run_id, reporter) as (tree, append):
                    tree.catch_up()
                    started = _begin(
                        append,
                        suite,
                        suite_path,
                        list(target.argv_template),
                        version,
                        executor.capacity(),
                        label,
                        redact,
                        speculate,
                        executor.scheduler,
                        ruleset,
                        against,
                        serving if replay_of is None else None,
                        replay_of,
                    )
                    session = _session(
                        paths,
                        run_id,
                        started,
                        suite,
                        target,
                        (store, tree, append),
                        reporter,
                        max_failures,
                        max_infra_errors,
                        gate,
                        serving_run,
                    )
                    session.execute(executor)
        finally:
            executor.close()
    finally:
        if gateway is not None:
            gateway.stop()
    return run_id


def _replays(store: EventStore, replay_of: str | None) -> Replays | None:
    if replay_of is None:
        return None
    from ironbench.run.replay import recorded_calls

    return recorded_calls(store, replay_of)


def _gate(store: EventStore, suite: Suite, against: Against | None) -> GateState | None:
    if against is None:
        return None
    counts = reference_counts(store, against.run, suite)
    return GateState(against, [case.id for case in suite.cases], counts)


def _recorded_gate(
    store: EventStore, suite: Suite, events: list[RecordedEvent], started: RunStarted
) -> GateState | None:
    """A resumed run's gate, as designed when it started (A's counts as recorded then; read
    again only when the run stopped before recording its design)."""
    if not started.against:
        return None
    against = Against.from_dict(started.against)
    designed = next((e.event for e in events if isinstance(e.event, GateDesigned)), None)
    if designed is None:
        return _gate(store, suite, against)
    return GateState(against, list(designed.cases), list(zip(designed.a_successes, designed.a_runs, strict=True)))


def _start_gauntlet(
    suite: Suite,
    paths: RunPaths,
    suite_path: str | None,
    reporter: Reporter,
    redactor: Redactor,
    redact: Sequence[str],
    label: str | None = None,
) -> str:
    from ironbench.gauntlet.engines import preflight_engines

    # unknown models, classes and commands: before anything is written
    preflight_engines(suite.engines, suite_path or "suite")
    store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
    with store:
        run_id = new_run_id(store)  # the first write: a store that cannot take one stops here
        with store.leased(run_id), _running(store, paths, run_id, reporter) as (tree, append):
            tree.catch_up()
            _begin(append, suite, suite_path, [], TargetVersion("n/a", "a gauntlet has no target"), 1, label, redact)
            _gauntlet(suite, run_id, tree, append, reporter, [])
    return run_id


def _gauntlet(
    suite: Suite, run_id: str, tree: OutputTree, append: Append, reporter: Reporter, history: list[RecordedEvent]
) -> str:
    """Gauntlet engines are model conversations: they run here, on the coordinator."""
    from ironbench.gauntlet.rounds import run_gauntlet

    status = run_gauntlet(suite, run_id, append, reporter.note, history)
    tree.flush()
    reporter.finished(run_id, status)
    return status


def resume_run(
    run_id: str,
    paths: RunPaths,
    jobs: int | None = None,
    reporter: Reporter | None = None,
    executor_factory: Callable[[int], Executor] | None = None,
    max_failures: int | None = None,
    max_infra_errors: int | None = None,
    redact: Sequence[str] = (),
    scheduler: str | None = None,
    max_outage: float = MAX_OUTAGE_SECONDS,
) -> str:
    """Continue an interrupted run: completed invocations are kept, the rest run (here, or
    on the cluster at `scheduler`). The names the run was started with --redact stay
    redacted, with `redact` added; --speculate stays as the run was started."""
    store = open_store(paths.store_path, [ReadModel()], create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {paths.store_path}")
        # One coordinator per run: claimed before anything is read, so nothing can be
        # appended between what this resume reads and what it writes.
        with _claimed(store, run_id, resume_command(run_id, paths.out_dir, paths.store_path)) as taken_over:
            if taken_over is not None and reporter is not None:
                reporter.note(f"{run_id}: taking over from {taken_over.describe(datetime.now(UTC))}, which is gone")
            return _resume(
                run_id,
                paths,
                store,
                jobs,
                reporter,
                executor_factory,
                max_failures,
                max_infra_errors,
                redact,
                scheduler,
                max_outage,
            )


def _resume(
    run_id: str,
    paths: RunPaths,
    store: EventStore,
    jobs: int | None,
    reporter: Reporter | None,
    executor_factory: Callable[[int], Executor] | None,
    max_failures: int | None,
    max_infra_errors: int | None,
    redact: Sequence[str],
    scheduler: str | None,
    max_outage: float,
) -> str:
    history = list(store.read(run_id))
    started = run_started(history[0])
    imported = next((e.event for e in history if isinstance(e.event, RunImported)), None)
    if imported is not None and imported.format == "outputs":
        raise IronbenchError(
            f"{run_id} was imported from {imported.source}, where another harness ran it: nothing here can resume it"
        )
    reporter, redactor = _redacting(reporter, [*started.redact, *redact])
    store.redactor = redactor or None
    if any(isinstance(e.event, RunFinished) for e in history):
        with _running(store, paths, run_id, reporter) as (tree, _):
            tree.catch_up()  # its files may lag its end (a disk that filled just after it)
        reporter.finished(run_id, "already finished")
        return "already finished"
    suite = Suite.from_dict(started.suite)
    if suite.mode == "gauntlet":
        with _running(store, paths, run_id, reporter) as (tree, append):
            tree.catch_up()
            return _gauntlet(suite, run_id, tree, append, reporter, history)
    target = TargetSpec("recorded", tuple(started.target_argv))
    backoff = Backoff.from_environ()
    # the model the run served (or the recording it replayed), as it was started with
    gateway = _gateway(started.serve_model, started.replay_of, [*started.redact, *redact], paths)
    try:
        executor = open_executor(jobs, scheduler, paths.out_dir / "workdirs", executor_factory)
        try:
            executor.preflight(target)
            serving_run = _Serving(max_outage, backoff, gateway, _replays(store, started.replay_of))
            if gateway is not None:
                gateway.ready()
            with _running(store, paths, run_id, reporter) as (tree, append):
                tree.catch_up()
                session = _session(
                    paths,
                    run_id,
                    started,
                    suite,
                    target,
                    (store, tree, append),
                    reporter,
                    max_failures,
                    max_infra_errors,
                    _recorded_gate(store, suite, history, started),
                    serving_run,
                )
                session.restore(history)
                return session.execute(executor)
        finally:
            executor.close()
    finally:
        if gateway is not None:
            gateway.stop()
