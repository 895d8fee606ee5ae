"""`ironbench check RUN`: check (or check again) the bricks an existing run saved, invoking no target.

Each verdict is appended to the run's events as a CheckCompleted marked `recheck`; the
latest check of an invocation is the one that counts.
"""

import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.events import InvocationCompleted, run_started
from ironbench.core.labels import group_of
from ironbench.core.redact import Redactor
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.run.checking import check_event, check_material, prove_checks, with_proofs
from ironbench.run.executors import DEBUG_DIR
from ironbench.run.fencing import checks_fence
from ironbench.run.options import DEFAULT_OPTIONS
from ironbench.run.paths import RunPaths
from ironbench.run.session import RUN_STREAM, appender
from ironbench.sandbox import Fence
from ironbench.store import Pending, open_store
from ironbench.suite import Suite
from ironbench.targets import CheckMaterial, check_timeout, prepare_checks, run_check

APPEND_BATCH = 32


@dataclass
class Checked:
    """What `ironbench check` did: verdicts by name, and the bricks it could not reach."""

    run_id: str
    verdicts: dict[str, int] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @property
    def checked(self) -> int:
        return sum(self.verdicts.values())


def _workdir(debug_path: str) -> Path | None:
    """Where an invocation ran, from its recorded debug path; None on another host."""
    where = debug_path.removesuffix(f"/{DEBUG_DIR}")
    if ":" in where.split("/", 1)[0]:
        host, _, path = where.partition(":")
        return Path(path) if host == socket.gethostname() else None
    return Path(where)


def _proven(
    work: list[tuple[str, InvocationCompleted, CheckMaterial, Path, float]],
    fence: Fence,
    redactor: Redactor | None,
    jobs: int,
    append: Callable[[list[Pending]], object],
    run_id: str,
    note: Callable[[str], None],
) -> list[tuple[str, InvocationCompleted, CheckMaterial, Path, float]]:
    """The checks with a reference proven on it first (recorded, each broken one named): a
    broken check gives its bricks no verdict."""
    checks = {m.sha256: m for _, _, m, _, _ in work}
    cases: dict[str, list[str]] = {}
    timeouts: dict[str, float] = {}
    for _, event, material, _, timeout in work:
        if event.case_id not in cases.setdefault(material.sha256, []):
            cases[material.sha256].append(event.case_id)
        timeouts[material.sha256] = max(timeouts.get(material.sha256, 0.0), timeout)
    proofs = prove_checks(checks, cases, timeouts, fence, redactor, recheck=True, jobs=max(1, jobs))
    if not proofs:
        return work
    append([Pending(RUN_STREAM, proof) for proof in proofs])
    for proof in proofs:
        if proof.broken:
            note(f"{run_id}: broken check: {proof.line()}")
    carried = with_proofs(checks, {p.check_sha256: p for p in proofs})
    return [(g, e, carried[m.sha256], brick, t) for g, e, m, brick, t in work]


def check_run(
    run_id: str,
    paths: RunPaths,
    suite: Suite | None = None,
    jobs: int = 1,
    note: Callable[[str], None] = lambda line: None,
) -> Checked:
    """Check the bricks run `run_id` saved, with its recorded suite's checks (or `suite`'s),
    on `jobs` threads here; each verdict is appended as a CheckCompleted (recheck) event
    and projected. No target is invoked."""
    store = open_store(paths.store_path, [ReadModel()], create=False)
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
            for recorded in events:
                event = recorded.event
                if isinstance(event, InvocationCompleted) and not event.surplus:
                    live[event.key] = (group_of(recorded.stream), event)  # a re-run supersedes its slot's attempt
            cache: dict[str, CheckMaterial] = {}
            work = []
            done = Checked(run_id)
            for group, event in live.values():
                if event.brick_path is None or event.infra_error is not None:
                    continue
                material = check_material(suite, event.case_id, event.level if event.mode == "stress" else None, cache)
                if material is None:
                    continue
                workdir = _workdir(event.debug_path)
                if workdir is None:
                    done.skipped.append(f"{group} run {event.run_index}: saved on another host ({event.debug_path})")
                    continue
                timeout = check_timeout(suite.timeout_seconds)
                work.append((group, event, material, workdir / event.brick_path, timeout))
            if not work and not done.skipped:
                note(f"{run_id}: no saved brick has a check (the suite names none, or no run saved a brick)")
            tree = OutputTree(store, paths.out_dir)
            tree.catch_up()
            append = appender(store, tree, run_id)
            pending: list[Pending] = []
            fence = checks_fence(DEFAULT_OPTIONS.resumed(started), paths, started.suite_path, suite)
            prepare_checks(max(1, jobs), None, fence)  # the checks' trusted processes, in the run's fence
            work = _proven(work, fence, redactor or None, jobs, append, run_id, note)
            with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ironbench-check") as pool:
                futures = [
                    pool.submit(run_check, m, brick, t, redactor or None, None, fence) for _, _, m, brick, t in work
                ]
                for (group, event, material, _, _), future in zip(work, futures, strict=True):
                    result = future.result()
                    checked = check_event(event, group, material, result, recheck=True)
                    pending.append(Pending(f"{group}/run_{event.run_index:03d}", checked))
                    done.verdicts[result.verdict] = done.verdicts.get(result.verdict, 0) + 1
                    if len(pending) >= APPEND_BATCH or future is futures[-1]:
                        append(pending)  # a batch per transaction: an interrupted check keeps what it appended
                        pending = []
            tree.flush()
    for line in done.skipped:
        note(f"  skipped: {line}")
    return done
