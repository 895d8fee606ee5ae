"""Starting and resuming runs: checks before anything is written, then a session.

What a run is asked arrives as one RunOptions (options.py); the session (session.py) executes
its plan; executors (executors.py) say where its invocations run: local threads, or a Dask cluster.
"""

import itertools
import os
import platform
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

from ironbench import __version__
from ironbench.core.errors import IronbenchError, RunNotFound, StoreFull
from ironbench.core.events import (
    GateDesigned,
    PricingSet,
    RecordedEvent,
    RunFinished,
    RunImported,
    RunStarted,
    SandboxApplied,
    run_started,
)
from ironbench.core.outcome import DEFAULT_RULES, RuleSet, load_rules
from ironbench.core.prices import PriceBook
from ironbench.core.redact import Redactor
from ironbench.core.spending import Spending, given_prices
from ironbench.gateway import GatewayConfig, GatewayProcess, Serving
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.run.checking import suite_checks
from ironbench.run.executors import InvocationExecutor, InvocationSetup, open_executor
from ironbench.run.fencing import fenced
from ironbench.run.gated_run import AgainstError, GateState, reference_counts
from ironbench.run.guards import Backoff, resume_command
from ironbench.run.options import DEFAULT_OPTIONS, Against, RunOptions
from ironbench.run.paths import RunPaths
from ironbench.run.planner import AiVariants, ai_entries
from ironbench.run.reporters import RedactingReporter, Reporter, SilentReporter
from ironbench.run.session import (
    RUN_STREAM,
    Append,
    ModelSide,
    Replays,
    RunIO,
    Session,
    aborts_run,
    appender,
    stopped_on_full_disk,
)
from ironbench.sandbox import close_fences, credentials_line, withheld_credentials
from ironbench.store import EventStore, Lease, Pending, open_store
from ironbench.suite import Suite
from ironbench.targets import TargetSpec, TargetVersion, resolve_target


def new_run_id(store: EventStore, now: datetime | None = None) -> str:
    """A new run's id (its start time, suffixed when taken), claimed with its lease at once."""
    stamp = (now or datetime.now(UTC)).strftime("run_%Y%m%d_%H%M%S")
    return store.claim_new_run(itertools.chain([stamp], (f"{stamp}_{n}" for n in itertools.count(2))))


@dataclass(frozen=True, slots=True)
class _Invoked:
    """What a new run invokes, as found before anything is written: the target's command, its
    version where the run's invocations will run, and the rules its outputs are read by."""

    target: TargetSpec
    version: TargetVersion
    rules: RuleSet | None


_NO_TARGET = _Invoked(TargetSpec("none", ()), TargetVersion("n/a", "a gauntlet has no target"), None)


def _begin(
    append: Append,
    suite: Suite,
    suite_path: str | None,
    options: RunOptions,
    invoked: _Invoked,
    executor: InvocationExecutor | None,
) -> RunStarted:
    """Record a run's start: its suite, what it invokes, where (`executor`; None: here, one
    conversation at a time) and with which options."""
    started = RunStarted(
        suite_id=suite.suite_id,
        mode=suite.mode,
        suite=suite.to_dict(),
        suite_path=suite_path,
        target_argv=list(invoked.target.argv_template),
        ironclad_version=invoked.version.value,
        ironclad_version_source=invoked.version.source,
        harness_version=__version__,
        python_version=sys.version.split()[0],
        platform=f"{platform.system()}-{platform.machine()}",
        jobs=executor.capacity() if executor is not None else 1,
        label=options.label,
        environment={name: os.environ.get(name) for name in suite.record_env},
        redact=sorted(set(options.redact)),
        speculate=options.speculate,
        scheduler=executor.scheduler if executor is not None else None,
        rules=invoked.rules.record() if invoked.rules is not None else None,
        against=options.against.to_dict() if options.against is not None else None,
        serve_model=options.serve_model.to_dict() if options.serve_model is not None else None,
        replay_of=options.replay_of,
        sandbox=options.sandbox.to_dict() if executor is not None else None,
    )
    append([Pending(RUN_STREAM, started)])
    return started


def _setup(
    options: RunOptions,
    rules: dict | None,
    suite: Suite,
    redactor: Redactor | None,
    executor: InvocationExecutor,
    gateway: GatewayProcess | None,
) -> InvocationSetup:
    """What the run's invocations will run with (as the session gives it to each)."""
    link = gateway.link() if gateway is not None else None
    return InvocationSetup(options, rules, suite.debug_enabled, redactor or None, executor.root, link)


def _fences(executor: InvocationExecutor, setup: InvocationSetup, target: TargetSpec) -> list[Pending]:
    """The fence each machine puts around the run's targets (SandboxError, before anything is
    written: one cannot have the fence the run asks for), as the events that record them."""
    described = executor.fences(setup, list(target.argv_template))
    return [Pending(RUN_STREAM, SandboxApplied(**fence)) for fence in described]


def _say_withheld(reporter: Reporter, options: RunOptions, fences: list[Pending]) -> None:
    """Before the first invocation: the variables of this environment that look like
    credentials and a fenced target will not get (names only), with what passes them."""
    if all(isinstance(p.event, SandboxApplied) and p.event.level == "none" for p in fences):
        return  # no fence: a target gets the whole environment
    line = credentials_line(withheld_credentials(options.sandbox, os.environ))
    if line is not None:
        reporter.note(line)


@contextmanager
def _running(store: EventStore, paths: RunPaths, run_id: str, reporter: Reporter) -> Iterator[RunIO]:
    """The run's I/O, its output tree and appender with it, for the run's whole life on this
    coordinator: whatever stops it is recorded, and a full disk names it and how to continue
    (`aborts_run`)."""
    tree = OutputTree(store, paths.out_dir)
    with aborts_run(tree, reporter, run_id, resume_command(run_id, paths.out_dir, paths.store_path)):
        yield RunIO(run_id, paths, store, tree, appender(store, tree, run_id), reporter)


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


def _session(
    io: RunIO,
    started: RunStarted,
    suite: Suite,
    options: RunOptions,
    model_side: ModelSide,
    gate: GateState | None,
    spending: Spending,
) -> Session:
    """The run's session, its AI variants made first (here, on the coordinator, whatever executes
    the invocations)."""
    ai_variants: AiVariants = {}
    if ai_entries(suite):
        from ironbench.run.ai_generation import generate_ai_variants

        io.reporter.note(f"{io.run_id}: generating AI variants")
        ai_variants = generate_ai_variants(
            suite, io.run_id, io.store, io.append, options.limits.max_failures, io.reporter.note, spending
        )
    return Session(io, started, suite, options, model_side, gate, ai_variants, spending)


def _local_models() -> tuple[str, ...]:
    """Models that run on this machine: their seconds are their cost."""
    from ironbench.llms import EMBEDDED_MODEL

    return (EMBEDDED_MODEL,)


def _money(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def _given(options: RunOptions) -> dict[str, dict[str, str]]:
    """The --price rates as a pricing_set event records them."""
    return {model: rate.to_dict() for model, rate in options.prices}


def _spending(suite: Suite, options: RunOptions) -> tuple[Spending, Pending | None]:
    """A new run's spending: the suite's prices under --price, its budget (--budget, else the
    suite's), and the pricing_set event that records what the command line gave."""
    book = PriceBook.of(suite.given_prices(), options.prices, _local_models())
    given = options.limits.budget
    limit = given if given is not None else (Decimal(str(suite.budget)) if suite.budget is not None else None)
    spending = Spending(book, limit)
    if not options.prices and limit is None:
        return spending, None
    pricing = PricingSet(
        by="run",
        prices=_given(options),
        budget=_money(limit),
        budget_source=None if limit is None else "--budget" if given is not None else "suite",
    )
    return spending, Pending(RUN_STREAM, pricing)


def _resumed_spending(
    suite: Suite, options: RunOptions, history: list[RecordedEvent]
) -> tuple[Spending, Pending | None]:
    """A resumed run's spending: what it recorded (its prices, its cost so far, its latest cap),
    with this resume's --price added and its --budget MORE on top of what it has spent."""
    book = PriceBook.of(suite.given_prices(), [*given_prices(history), *options.prices], _local_models())
    spending = Spending(book)
    spending.restore(history)
    more = options.limits.budget
    if more is None and not options.prices:
        return spending, None
    if more is not None:
        spending.limit, spending.stopped = spending.spent + more, False
    pricing = PricingSet(
        by="resume",
        prices=_given(options),
        budget=_money(spending.limit),
        budget_source="--budget" if more is not None else None,
        spent=format(spending.spent, "f"),
    )
    return spending, Pending(RUN_STREAM, pricing)


def _unpriced_note(spending: Spending, options: RunOptions, reporter: Reporter) -> None:
    """Say, before anything runs, which served model no price knows (its calls will be unpriced)."""
    if options.serve_model is None or options.replay_of is not None:
        return
    for model in options.serve_model.model_ids():
        if not spending.book.known(model):
            budget = "; the budget cannot count them" if spending.limit is not None else ""
            reporter.note(
                f"note: {model} has no price (not in the price table): its calls are unpriced{budget}; "
                f"give one with --price {model}=IN/OUT (USD per million tokens)"
            )


def _redacting(reporter: Reporter | None, names: Sequence[str]) -> tuple[Reporter, Redactor]:
    redactor = Redactor.from_environ(names)
    reporter = reporter or SilentReporter()
    return (RedactingReporter(reporter, redactor) if redactor else reporter), redactor


def _gateway(options: RunOptions, paths: RunPaths) -> GatewayProcess | None:
    """The run's model gateway, started (its models are checked meanwhile: `ready`), when
    the run serves a model or replays one; None otherwise."""
    if options.serve_model is None and options.replay_of is None:
        return None
    log = paths.out_dir / "workdirs" / f"gateway-{os.getpid()}.log"
    serving = options.serve_model.to_dict() if options.serve_model is not None and options.replay_of is None else None
    return GatewayProcess(GatewayConfig(serving, tuple(sorted(set(options.redact)))), log).start()


def start_run(
    suite: Suite,
    paths: RunPaths,
    options: RunOptions = DEFAULT_OPTIONS,
    reporter: Reporter | None = None,
    suite_path: str | None = None,
) -> str:
    """Start a new run of `suite` with `options`; returns its run id once every case is decided.

    Invocations run on `options.jobs` local threads (default 1), or on the Dask cluster whose
    scheduler is at `options.scheduler` (or $IRONBENCH_SCHEDULER; jobs then default to its
    worker threads). Values of secret-looking environment variables, and of those named in
    `options.redact`, are replaced before anything is stored or printed. `options.rules` (a
    shipped name or a file) overrides the suite's outcome rules; a suite's relative path is
    read from the suite's folder (`suite_path`: where the suite was read from). With
    `options.against` the cases run in rounds under a sequential regression gate against that
    stored run of the same suite (run/gated_run.py). `options.serve_model` (else the suite's) serves
    the target's model calls through the model gateway, and records them; `options.replay_of`
    answers them from that run's recorded calls instead. After an infrastructure error nothing
    starts until a backoff has passed; the run stops once its backend has failed for
    `options.limits.max_outage` seconds (or `max_infra_errors` times in a row).
    """
    reporter, redactor = _redacting(reporter, options.redact)
    if suite.mode == "gauntlet":
        if options.against is not None:
            raise AgainstError(f"--against {options.against.run}: a gauntlet run is compared with `compare`, not gated")
        return _start_gauntlet(suite, paths, suite_path, reporter, redactor, options)
    target = resolve_target(options.target if options.target is not None else suite.target)
    ruleset = (
        load_rules(options.rules)
        if options.rules is not None
        else load_rules(
            suite.rules or DEFAULT_RULES, str(Path(suite_path).parent) if suite_path and suite.rules else None
        )
    )
    backoff = Backoff.from_environ()
    suite_serving = suite.serving()
    if options.serve_model is None and suite_serving is not None:  # the suite's, as if it was given
        options = replace(options, serve_model=Serving.from_dict(suite_serving))
    if options.serve_model is not None and options.replay_of is not None:
        raise IronbenchError("--replay answers the target's model calls from a recording: give no --serve-model too")
    # Started first: it checks the served models while the rest is prepared. Before anything
    # is written: an unreachable scheduler, a target that cannot start where it will run,
    # an unknown model id, a recording that is not there, a check that cannot be read are each one
    # clear error.
    suite_checks(suite)
    spending, pricing = _spending(suite, options)
    _unpriced_note(spending, options, reporter)
    options = fenced(options, paths, suite_path, suite)
    gateway = _gateway(options, paths)
    try:
        executor = open_executor(options, paths.out_dir / "workdirs")
        try:
            version = executor.preflight(target)
            if ai_entries(suite):
                from ironbench.run.ai_generation import preflight_models

                preflight_models(suite, suite_path or "suite")
            if gateway is not None:
                gateway.ready()  # an unknown model id: one line, and no store created
            rules = ruleset.record() if ruleset is not None else None
            fences = _fences(executor, _setup(options, rules, suite, redactor, executor, gateway), target)
            store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
            with store:
                gate = _gate(store, suite, options.against)
                model_side = ModelSide(backoff, gateway, _replays(store, options.replay_of))
                run_id = new_run_id(store)  # the first write: a store that cannot take one stops here
                with store.leased(run_id), _running(store, paths, run_id, reporter) as io:
                    io.tree.catch_up()
                    started = _begin(
                        io.append, suite, suite_path, options, _Invoked(target, version, ruleset), executor
                    )
                    io.append([*fences, pricing])
                    _say_withheld(io.reporter, options, fences)
                    _session(io, started, suite, options, model_side, gate, spending).execute(executor)
        finally:
            executor.close()
    finally:
        close_fences()
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
    store: EventStore, suite: Suite, events: list[RecordedEvent], against: Against | None
) -> GateState | None:
    """A resumed run's gate, as designed when it started (A's counts as recorded then; read
    again only when the run stopped before recording its design)."""
    if against is None:
        return None
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
    options: RunOptions,
) -> str:
    from ironbench.gauntlet import preflight_engines

    # unknown models, classes and commands: before anything is written
    preflight_engines(suite.engines, suite_path or "suite")
    spending, pricing = _spending(suite, options)
    store = open_store(paths.store_path, [ReadModel()], redactor=redactor)
    with store:
        run_id = new_run_id(store)  # the first write: a store that cannot take one stops here
        with store.leased(run_id), _running(store, paths, run_id, reporter) as io:
            io.tree.catch_up()
            # its conversations run here, one at a time: of the options, its label and redactions apply
            gauntlet_options = RunOptions(label=options.label, redact=options.redact)
            _begin(io.append, suite, suite_path, gauntlet_options, _NO_TARGET, None)
            io.append([pricing])
            _gauntlet(suite, io, [], spending)
    return run_id


def _gauntlet(suite: Suite, io: RunIO, history: list[RecordedEvent], spending: Spending) -> str:
    """Gauntlet engines are model conversations: they run here, on the coordinator."""
    from ironbench.gauntlet import run_gauntlet

    status = run_gauntlet(suite, io.run_id, io.append, io.reporter.note, history, spending)
    io.tree.flush()
    io.reporter.finished(io.run_id, status)
    return status


def resume_run(
    run_id: str, paths: RunPaths, options: RunOptions = DEFAULT_OPTIONS, reporter: Reporter | None = None
) -> str:
    """Continue an interrupted run: completed invocations are kept, the rest run (here, or on the
    cluster at `options.scheduler`) with the jobs and limits of `options`. What the run is (its
    target, rules, speculation, served model or replay, gate and label) is as it recorded when it
    started (`RunOptions.resumed`); the names it was started with --redact stay redacted, with
    `options.redact` added."""
    store = open_store(paths.store_path, [ReadModel()], create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {paths.store_path}")
        # One coordinator per run: claimed before anything is read, so nothing can be
        # appended between what this resume reads and what it writes.
        with _claimed(store, run_id, resume_command(run_id, paths.out_dir, paths.store_path)) as taken_over:
            if taken_over is not None and reporter is not None:
                reporter.note(f"{run_id}: taking over from {taken_over.describe(datetime.now(UTC))}, which is gone")
            return _resume(run_id, paths, store, options, reporter)


def _resume(run_id: str, paths: RunPaths, store: EventStore, options: RunOptions, reporter: Reporter | None) -> str:
    history = list(store.read(run_id))
    started = run_started(history[0])
    imported = next((e.event for e in history if isinstance(e.event, RunImported)), None)
    if imported is not None and imported.format == "outputs":
        raise IronbenchError(
            f"{run_id} was imported from {imported.source}, where another harness ran it: nothing here can resume it"
        )
    options = options.resumed(started)
    reporter, redactor = _redacting(reporter, options.redact)
    store.redactor = redactor or None
    if any(isinstance(e.event, RunFinished) for e in history):
        with _running(store, paths, run_id, reporter) as io:
            io.tree.catch_up()  # its files may lag its end (a disk that filled just after it)
        reporter.finished(run_id, "already finished")
        return "already finished"
    suite = Suite.from_dict(started.suite)
    spending, pricing = _resumed_spending(suite, options, history)
    if suite.mode == "gauntlet":
        with _running(store, paths, run_id, reporter) as io:
            io.tree.catch_up()
            io.append([pricing])
            return _gauntlet(suite, io, history, spending)
    target = TargetSpec("recorded", tuple(started.target_argv))
    backoff = Backoff.from_environ()
    _unpriced_note(spending, options, reporter)
    options = fenced(options, paths, started.suite_path, suite)
    # the model the run served (or the recording it replayed), as it was started with
    gateway = _gateway(options, paths)
    try:
        executor = open_executor(options, paths.out_dir / "workdirs")
        try:
            executor.preflight(target)
            model_side = ModelSide(backoff, gateway, _replays(store, options.replay_of))
            if gateway is not None:
                gateway.ready()
            fences = _fences(executor, _setup(options, started.rules, suite, redactor, executor, gateway), target)
            with _running(store, paths, run_id, reporter) as io:
                io.tree.catch_up()
                io.append([*fences, pricing])
                _say_withheld(io.reporter, options, fences)
                gate = _recorded_gate(store, suite, history, options.against)
                session = _session(io, started, suite, options, model_side, gate, spending)
                session.restore(history)
                return session.execute(executor)
        finally:
            executor.close()
    finally:
        close_fences()
        if gateway is not None:
            gateway.stop()
