"""`ironbench check RUN`: check (or check again) the bricks an existing run saved, invoking no target.

Each verdict is appended to the run's events as a CheckCompleted marked `recheck`; the
latest check of an invocation is the one that counts. A brick a Dask worker saved is checked
on the cluster, by a worker on its host (as the run's checks were); without a cluster, here
when its path is on this machine.
"""

import socket
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.events import CheckProven, InvocationCompleted, RunStarted, run_started
from ironbench.core.labels import group_of
from ironbench.core.redact import Redactor
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.run.checking import CheckPlan, PlannedCheck, check_event, prove_checks
from ironbench.run.executors import DEBUG_DIR, DaskCluster, InvocationSetup, SchedulerError, check_saved_brick
from ironbench.run.fencing import fenced
from ironbench.run.options import DEFAULT_OPTIONS
from ironbench.run.paths import RunPaths
from ironbench.run.session import RUN_STREAM, appender
from ironbench.sandbox import Fence, fence_for
from ironbench.store import Pending, open_store
from ironbench.suite import Suite
from ironbench.targets import (
    CheckResult,
    adopt_reference_time,
    as_recorded,
    prepare_checks,
    run_check,
    take_brick,
)

APPEND_BATCH = 32


@dataclass
class Checked:
    """What `ironbench check` did: verdicts by name, how many were given on a cluster, and the
    bricks it could not reach (by why)."""

    run_id: str
    verdicts: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, list[str]] = field(default_factory=dict)
    cluster: str | None = None  # the Dask scheduler whose workers checked the bricks they saved
    on_cluster: int = 0

    @property
    def checked(self) -> int:
        return sum(self.verdicts.values())

    def skipped_lines(self) -> list[str]:
        """One line per reason: how many bricks, why, and the first of them."""
        return [
            f"{len(bricks)} brick{'s' if len(bricks) != 1 else ''} {why} (first: {bricks[0]})"
            for why, bricks in self.skipped.items()
        ]


@dataclass(frozen=True, slots=True)
class _Brick:
    """A saved brick to check: its invocation, its check (with its case's own timeout), and where it is."""

    group: str
    event: InvocationCompleted
    check: PlannedCheck
    workdir: Path  # the working folder it was saved in (its path, event.brick_path, is taken from there)
    host: str | None  # the host of the Dask worker that saved it; None: this machine's threads did

    @property
    def label(self) -> str:
        return f"{self.group} run {self.event.run_index} ({self.event.debug_path.removesuffix(f'/{DEBUG_DIR}')})"


def _saved_at(debug_path: str) -> tuple[str | None, Path]:
    """Where an invocation ran, from its recorded debug path: the host a Dask worker named
    (None: a run on this machine's threads) and the folder there."""
    where = debug_path.removesuffix(f"/{DEBUG_DIR}")
    if ":" in where.split("/", 1)[0]:
        host, _, path = where.partition(":")
        return host, Path(path)
    return None, Path(where)


def _proven(
    work: list[_Brick],
    plan: CheckPlan,
    recorded: dict[str, CheckProven],
    fence: Fence,
    redactor: Redactor | None,
    jobs: int,
    append: Callable[[list[Pending]], object],
    run_id: str,
    note: Callable[[str], None],
) -> list[_Brick]:
    """The checks with a reference proven on it first, here (recorded, each broken one named),
    but for those the run proved as they are now (`recorded`: the same check and reference,
    passed), whose proof and reference time stand: a broken check gives its bricks no verdict,
    and a worker calibrates by the time measured here when the reference does not pass there."""
    reused = {
        digest: proof
        for digest, (material, _timeout) in plan.checks().items()
        if (proof := recorded.get(digest)) is not None
        and not proof.broken
        and material.reference is not None
        and proof.reference_sha256 == material.reference.sha256
    }
    proofs = prove_checks(plan, fence, redactor, recheck=True, jobs=max(1, jobs), proven=reused)
    if proofs:
        append([Pending(RUN_STREAM, proof) for proof in proofs])
    for proof in proofs:
        if proof.broken:
            note(f"{run_id}: broken check: {proof.line()}")
    if reused:
        note(
            f"{run_id}: {len(reused)} check{'s' if len(reused) != 1 else ''} proven by the run as they are now (--prove proves them again)"
        )
    if not proofs and not reused:
        return work
    proven = plan.with_proofs({**reused, **{p.check_sha256: p for p in proofs}})
    checks = [proven.at(b.check.case_id, _level(b.event)) or b.check for b in work]
    for planned in checks:
        if planned.material.sha256 in reused:
            adopt_reference_time(planned.material)
    return [replace(b, check=planned) for b, planned in zip(work, checks, strict=True)]


def _level(event: InvocationCompleted) -> int | None:
    return event.level if event.mode == "stress" else None


def _open_cluster(
    run_id: str, scheduler: str | None, started: RunStarted, saved_on_workers: bool, note: Callable[[str], None]
) -> tuple[DaskCluster, dict[str, list[str]]] | None:
    """The cluster to check workers' bricks on, with its workers by host: `scheduler` (SchedulerError
    when it cannot be used) or, when a worker saved a brick, the one the run recorded if it can be
    used now (else None, said in one line)."""
    address = scheduler or (started.scheduler if saved_on_workers else None)
    if not address:
        return None
    cluster = None
    try:
        cluster = DaskCluster(address)
        return cluster, cluster.hosts()
    except SchedulerError as exc:
        if cluster is not None:
            cluster.close()
        if scheduler:
            raise
        note(f"{run_id}: not on the run's Dask cluster ({exc}): its workers' bricks are checked here if they are here")
        return None


def _placed(
    work: list[_Brick], cluster: tuple[DaskCluster, dict[str, list[str]]] | None, done: Checked
) -> tuple[list[_Brick], list[tuple[_Brick, list[str]]]]:
    """Which bricks are checked here and which on the cluster (with the workers on their host);
    the others are skipped, by why."""
    here: list[_Brick] = []
    there: list[tuple[_Brick, list[str]]] = []
    this_host = socket.gethostname()
    for brick in work:
        if brick.host is None:
            here.append(brick)
        elif cluster is not None:
            workers = cluster[1].get(brick.host)
            if workers:
                there.append((brick, workers))
            else:
                why = f"saved on {brick.host}, where the cluster at {cluster[0].scheduler} has no worker now"
                done.skipped.setdefault(why, []).append(brick.label)
        elif brick.host == this_host and brick.workdir.is_dir():
            here.append(brick)
        else:
            why = (
                "saved on Dask workers' disks that are not on this machine: "
                "check them where they are with --scheduler tcp://HOST:PORT"
            )
            done.skipped.setdefault(why, []).append(brick.label)
    return here, there


def _on_cluster_failed(cluster: DaskCluster, brick: _Brick, exc: Exception) -> str:
    """Why a brick's check came back from the cluster without a verdict, when the cluster failed
    (its worker died, the scheduler went); anything else is raised."""
    lost = cluster.lost(exc)
    if lost is not None:
        return lost.replace("lost its task", "whose check was lost", 1)
    if isinstance(exc, IronbenchError):
        raise type(exc)(f"{brick.label}: on the Dask cluster at {cluster.scheduler}: {exc}") from None
    raise SchedulerError(f"{brick.label}: checking it on the Dask cluster at {cluster.scheduler} failed: {exc!r}")


def check_run(
    run_id: str,
    paths: RunPaths,
    suite: Suite | None = None,
    jobs: int = 1,
    note: Callable[[str], None] = lambda line: None,
    scheduler: str | None = None,
    prove: bool = False,
) -> Checked:
    """Check the bricks run `run_id` saved, with its recorded suite's checks (or `suite`'s),
    on `jobs` threads here and, for the bricks Dask workers saved, on the cluster at `scheduler`
    (default: the run's, when it can be used now) by a worker on the brick's host; each verdict
    is appended as a CheckCompleted (recheck) event and projected. No target is invoked. A
    check the run proved on its reference as it is now is not proven again, unless `prove`."""
    store = open_store(paths.store_path, [ReadModel()], create=False)
    cluster: tuple[DaskCluster, dict[str, list[str]]] | None = None
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {paths.store_path}")
        with store.leased(run_id, f"ironbench check {run_id}"):
            events = list(store.read(run_id))
            started = run_started(events[0])
            redactor = Redactor.from_environ(started.redact)
            store.redactor = redactor or None
            suite = suite or Suite.from_dict(started.suite)
            if suite.mode == "gauntlet":
                raise IronbenchError(f"{run_id} is a gauntlet run: it saved no bricks to check")
            live: dict[str, tuple[str, InvocationCompleted]] = {}
            proofs: dict[str, CheckProven] = {}
            for recorded in events:
                event = recorded.event
                if isinstance(event, InvocationCompleted) and not event.surplus:
                    live[event.key] = (group_of(recorded.stream), event)  # a re-run supersedes its slot's attempt
                elif isinstance(event, CheckProven) and not prove:
                    proofs[event.check_sha256] = event  # the latest proof of a check is the one that stands
            plan = CheckPlan.of(suite)
            work: list[_Brick] = []
            done = Checked(run_id)
            for group, event in live.values():
                if event.brick_path is None or event.infra_error is not None:
                    continue
                planned = plan.at(event.case_id, _level(event))
                if planned is None:
                    continue
                host, workdir = _saved_at(event.debug_path)
                work.append(_Brick(group, event, planned, workdir, host))
            plan = plan.only({plan.slot(b.check.case_id, _level(b.event)) for b in work})
            if not work:
                note(f"{run_id}: no saved brick has a check (the suite names none, or no run saved a brick)")
            tree = OutputTree(store, paths.out_dir)
            tree.catch_up()
            options = fenced(DEFAULT_OPTIONS.resumed(started), paths, started.suite_path, suite)
            fence = fence_for(options.sandbox)  # the run's checks' fence here; a worker makes its own
            setup = InvocationSetup(options, started.rules, suite.debug_enabled, redactor or None, None)
            cluster = _open_cluster(run_id, scheduler or None, started, any(b.host for b in work), note)
            try:
                _check(work, plan, proofs, cluster, setup, fence, jobs, appender(store, tree, run_id), note, done)
            finally:
                if cluster is not None:
                    cluster[0].close()
            tree.flush()
    for line in done.skipped_lines():
        note(f"  skipped: {line}")
    return done


def _check(
    work: list[_Brick],
    plan: CheckPlan,
    recorded: dict[str, CheckProven],
    cluster: tuple[DaskCluster, dict[str, list[str]]] | None,
    setup: InvocationSetup,
    fence: Fence,
    jobs: int,
    append: Callable[[list[Pending]], object],
    note: Callable[[str], None],
    done: Checked,
) -> None:
    """Prove the checks, then check each brick where it is (here, in `fence`, on `jobs` threads;
    on the cluster, in the fence its worker makes from `setup`), appending the verdicts in the
    bricks' order, a batch per transaction (an interrupted check keeps what it appended)."""
    if any(b.host is None or cluster is None for b in work) or any(b.check.material.reference for b in work):
        prepare_checks(max(1, jobs), None, fence)  # the checks' trusted processes here, in the run's fence
    work = _proven(work, plan, recorded, fence, setup.redactor, jobs, append, done.run_id, note)
    here, there = _placed(work, cluster, done)
    futures: dict[int, Future[CheckResult]] = {}
    if cluster is not None and there:
        done.cluster = cluster[0].scheduler
        for brick, workers in there:
            key = f"check-{brick.event.key}.{brick.event.rerun}"
            args = (
                setup,
                brick.check.material,
                str(brick.workdir),
                brick.event.brick_path,
                brick.check.timeout_s,
                brick.event.brick_sha256,
            )
            futures[id(brick)] = cluster[0].submit_on(workers, key, check_saved_brick, *args)
    pending: list[Pending] = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ironbench-check") as pool:
            for brick in here:
                taken = take_brick(brick.workdir, brick.event.brick_path or "", fence.policy.hidden)
                taken = as_recorded(taken, brick.event.brick_sha256)
                futures[id(brick)] = pool.submit(
                    run_check, brick.check.material, taken, brick.check.timeout_s, setup.redactor, None, fence
                )
            for brick in work:
                future = futures.get(id(brick))
                if future is None:
                    continue
                try:
                    result = future.result()
                except Exception as exc:
                    if cluster is None or brick.host is None:
                        raise
                    done.skipped.setdefault(_on_cluster_failed(cluster[0], brick, exc), []).append(brick.label)
                    continue
                if brick.host is not None and cluster is not None:
                    done.on_cluster += 1
                event = check_event(brick.event, brick.group, brick.check.material, result, recheck=True)
                pending.append(Pending(f"{brick.group}/run_{brick.event.run_index:03d}", event))
                done.verdicts[result.verdict] = done.verdicts.get(result.verdict, 0) + 1
                if len(pending) >= APPEND_BATCH:
                    append(pending)
                    pending = []
    finally:
        if pending:
            append(pending)
