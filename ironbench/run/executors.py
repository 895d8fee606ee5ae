"""Where invocations run: local threads, or the workers of a Dask distributed cluster.

Both are one interface to the session: `submit` an invocation under its key and get a
concurrent.futures Future, `capacity` (how many may run at once), `preflight` (can the
target start where it will run?). Only invocations travel: the coordinator keeps the
store, the decisions, and the model calls of AI generators and gauntlet engines.
"""

import logging
import os
import re
import socket
import time
import uuid
from collections.abc import Callable
from concurrent.futures import CancelledError, Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from ironbench.core.causes import AttemptCause, read_causes
from ironbench.core.errors import IronbenchError
from ironbench.core.model_calls import backend_failure
from ironbench.core.outcome import INFRA_STAGE, UNKNOWN, Outcome, parse_outcome, recorded_rules
from ironbench.core.redact import Redactor
from ironbench.gateway import GatewayError, GatewayLink, new_token, worker_link
from ironbench.run.checking import PlannedCheck
from ironbench.run.options import RunOptions
from ironbench.run.planner import Group
from ironbench.sandbox import Denial, Endpoint, Fence, fence_caused, fence_for
from ironbench.targets import (
    Brick,
    CheckMaterial,
    CheckResult,
    NoBrick,
    ProcessResult,
    TargetSpec,
    TargetVersion,
    as_recorded,
    ensure_fresh_dir,
    invoke,
    preflight,
    run_check,
    take_brick,
    target_version,
)

SCHEDULER_ENV = "IRONBENCH_SCHEDULER"
WORKDIRS_ENV = "IRONBENCH_WORKDIRS"  # on a worker: where its working directories go
WORKER_WORKDIRS = "ironbench-workdirs"  # otherwise under the worker's current directory
DEBUG_DIR = Path("build") / ".ironclad_debug"
TIMEOUT_ENV = "IRONBENCH_SCHEDULER_TIMEOUT"  # seconds to reach the scheduler, and then a first worker
TIMEOUT_SECONDS = 10
RESUBMITS = 3  # a task whose workers kept dying (Dask's KilledWorker) is submitted again this often
_ADDRESS = re.compile(r"(tcp|tls)://(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-_]+)(:\d{1,5})?")


class SchedulerError(IronbenchError):
    """The Dask scheduler cannot be reached or used (bad address, no workers)."""


@dataclass(frozen=True, slots=True)
class Work:
    """One invocation: a run of a group, with its key and where its directory goes."""

    group: Group
    run_index: int
    key: str
    workdir: str  # relative to the working directories' root
    rerun: int = 0  # how many earlier attempts of this slot hit infrastructure errors


@dataclass(frozen=True, slots=True)
class Ran:
    result: ProcessResult
    outcome: Outcome
    debug_present: bool
    workdir: str  # where it ran: a path, `host:/path` on a cluster
    brick_sha256: str | None = None  # of the file the outcome's brick_path names, read where it ran
    calls: tuple[dict[str, Any], ...] | None = None  # its model calls, in order (None: no gateway)
    causes: tuple[AttemptCause, ...] = ()  # why its failed validation attempts failed (debug files)
    check: CheckResult | None = None  # the harness's check of the brick it saved, run where it ran
    # The fence it ran under, the first time a worker's fence is used (a sandbox_applied event's fields)
    fence: dict[str, Any] | None = None
    refused: str | None = None  # why the brick its outcome names was not taken (targets/brick.py)
    denied: tuple[Denial, ...] = ()  # what its fence withheld, with the flag that allows each

    @property
    def fenced_out(self) -> bool:
        """It failed, and its fence is the cause (sandbox/denials.py)."""
        return not self.outcome.success and fence_caused(self.denied)


@dataclass(frozen=True, slots=True)
class InvocationSetup:
    """What every invocation of one run is run with, wherever it runs: sent whole with each task."""

    options: RunOptions
    """The run's options (a worker also redacts its own values of the names in `options.redact`)."""
    rules: dict | None
    """The outcome rules the run recorded (`RuleSet.record`; None: Ironclad's): every output is read by them."""
    debug_enabled: bool
    """The suite's debug_enabled: the target writes its debug files, and the run notes them."""
    redactor: Redactor | None
    """The coordinator's secrets, replaced in whatever the target prints."""
    root: str | None
    """Where working directories go; None: a worker's own (IRONBENCH_WORKDIRS or ./ironbench-workdirs)."""
    gateway: GatewayLink | None = None
    """The run's model gateway (None: the target reaches its own backend)."""


def run_invocation(
    work: Work,
    setup: InvocationSetup,
    argv: list[str],
    env: dict[str, str],
    replay: list[dict[str, Any]] | None = None,
    check: PlannedCheck | None = None,
) -> Ran:
    """One invocation, wherever it runs: a fresh directory, the target contained and timed
    out there, its outcome parsed, the causes of its failed validations read from its debug
    files and, when it saved a brick, `check` run on a copy of it. `setup.root` None: a worker's
    own root (IRONBENCH_WORKDIRS or ./ironbench-workdirs); then the worker's own secrets are
    redacted too, and the directory is named with the worker's host.

    An infrastructure error is the harness's own evidence, never what the target printed
    alone. With a `setup.gateway` the target's environment points its model clients at an
    address of this invocation's own, and its calls come back with it: a backend error the
    gateway saw makes the invocation an infrastructure error, whatever the target printed, and
    a printed one makes none (a refusal of the request's own content is the target's). `replay`
    (the recorded calls, in order) answers them instead of a model: then no backend can fail.
    Without a gateway, a line the rules call a backend failure counts only when the harness
    cannot reach the target's backend either as the invocation ends (`backend_unreachable`);
    otherwise, and when the fence kept the target from it, the failure is the target's, by its
    stage."""
    remote = setup.root is None
    root, redactor = setup.root, setup.redactor
    if root is None:
        root, redactor = worker_root(), _worker_redactor(setup)
    workdir = (Path(root) / work.workdir).resolve()
    ensure_fresh_dir(workdir)
    token = new_token()
    lost: str | None = None
    gateway = setup.gateway
    if gateway is not None:
        try:
            gateway = worker_link(gateway) if remote else gateway
            gateway.open(token, replay)
        except GatewayError as exc:  # gone before the target started: nothing to run it against
            return Ran(ProcessResult(None, "", "", 0, False, None), _lost(str(exc)), False, str(workdir), calls=())
        env = {**env, **gateway.env(token)}
    fence = invocation_fence(setup, gateway, root if remote else None)
    result = invoke(argv, workdir, work.group.timeout_seconds, env, redactor, fence)
    calls: tuple[dict[str, Any], ...] | None = None
    if gateway is not None:
        try:
            calls = tuple(gateway.close(token))
        except GatewayError as exc:
            calls, lost = (), f"{exc}: the calls of this invocation are lost"
        if redactor:
            calls = tuple(redactor.value(call) for call in calls)
    ruleset = recorded_rules(setup.rules)
    denied: tuple[Denial, ...] = ()
    if result.harness_error:
        outcome = UNKNOWN
    else:  # a timed-out run keeps what it printed before the kill
        outcome = parse_outcome(
            result.exit_code, result.stdout, ruleset, timed_out=result.timed_out, backend=gateway is None
        )
        output = f"{result.stdout}\n{result.stderr}"
        denied = fence.denials(output, work.group.instruction, not outcome.success, workdir, env, result.fence_seen)
        if outcome.infra_error is not None and (fence_caused(denied) or backend_unreachable(fence) is None):
            # its fence kept it from its backend, or ironbench reaches that backend: its own failure
            outcome = parse_outcome(result.exit_code, result.stdout, ruleset, timed_out=result.timed_out, backend=False)
        observed = lost or (backend_failure(calls or ()) if replay is None else None)
        if observed is not None:
            outcome = replace(outcome, success=False, failure_stage=INFRA_STAGE, brick_path=None, infra_error=observed)
    debug_present = setup.debug_enabled and (workdir / DEBUG_DIR).is_dir()
    taken = take_brick(workdir, outcome.brick_path, fence.policy.hidden) if outcome.brick_path else None
    brick = taken.sha256 if isinstance(taken, Brick) else None
    refused = taken.reason if isinstance(taken, NoBrick) else None
    causes = ruleset.rules.failure_causes
    found = tuple(read_causes(causes, workdir)) if causes is not None and not result.harness_error else ()
    checked = None
    if check is not None and taken is not None:
        checked = run_check(check.material, taken, check.timeout_s, redactor, fence=fence)
    if not remote:
        return Ran(result, outcome, debug_present, str(workdir), brick, calls, found, checked, None, refused, denied)
    host = socket.gethostname()
    named = replace(result, stdout_path=f"{host}:{result.stdout_path}", stderr_path=f"{host}:{result.stderr_path}")
    told = _first_use(fence, argv)
    return Ran(named, outcome, debug_present, f"{host}:{workdir}", brick, calls, found, checked, told, refused, denied)


OLLAMA_HOST = "OLLAMA_HOST"  # where Ollama's clients find it (default OLLAMA_DEFAULT)
OLLAMA_DEFAULT = Endpoint("127.0.0.1", 11434)
PROBE_SECONDS = 2.0


def backend_endpoints(fence: Fence) -> tuple[Endpoint, ...]:
    """Where a target without the gateway finds its backend: the endpoints the run allows it,
    else Ollama's (this process's OLLAMA_HOST, else its default port on this machine)."""
    if fence.policy.allow_net:
        return fence.policy.allow_net
    named = os.environ.get(OLLAMA_HOST, "").strip()
    try:
        return (Endpoint.of_url(named if "://" in named else f"http://{named}") if named else OLLAMA_DEFAULT,)
    except IronbenchError:
        return (OLLAMA_DEFAULT,)


def backend_unreachable(fence: Fence) -> str | None:
    """The harness's own evidence that the target's backend was down as its invocation ended:
    the first of `backend_endpoints` it cannot connect to either, said (None: every one answers)."""
    for endpoint in backend_endpoints(fence):
        try:
            socket.create_connection((endpoint.host, endpoint.port), timeout=PROBE_SECONDS).close()
        except OSError as exc:
            return f"ironbench could not reach {endpoint} either: {exc.strerror or type(exc).__name__}"
    return None


def worker_root() -> str:
    """On a worker: where its working directories go (IRONBENCH_WORKDIRS, else ./ironbench-workdirs)."""
    return os.environ.get(WORKDIRS_ENV) or str(Path.cwd() / WORKER_WORKDIRS)


def _worker_redactor(setup: InvocationSetup) -> Redactor | None:
    """On a worker: the coordinator's secrets and the worker's own values of the run's names."""
    local, redactor = Redactor.from_environ(setup.options.redact), setup.redactor
    if not local:
        return redactor
    return Redactor({**local.names, **(redactor.names if redactor else {})})


def check_saved_brick(
    setup: InvocationSetup,
    material: CheckMaterial,
    workdir: str,
    brick_path: str,
    timeout_s: float,
    brick_sha256: str | None = None,
) -> CheckResult:
    """On a worker: the check of a brick an earlier invocation saved on this machine (`ironbench
    check RUN --scheduler`), taken from its working folder as the run took it (only with the
    bytes the run recorded: `as_recorded`), in the run's fence as this worker makes it for its
    invocations, the worker's own secrets redacted too."""
    fence = invocation_fence(setup, None, worker_root())
    taken = as_recorded(take_brick(workdir, brick_path, fence.policy.hidden), brick_sha256)
    return run_check(material, taken, timeout_s, _worker_redactor(setup), fence=fence)


def _host() -> str:
    return socket.gethostname()


def invocation_fence(setup: InvocationSetup, gateway: GatewayLink | None, worker_root: str | None) -> Fence:
    """The fence an invocation runs under, on this machine: the run's policy, with the model
    gateway it reaches and, on a worker, the worker's own working directories hidden."""
    policy = setup.options.sandbox
    if worker_root is not None:
        policy = policy.with_run((worker_root,), policy.gateway)
    if gateway is not None:
        policy = replace(policy, gateway=Endpoint.of_url(gateway.url))
    return fence_for(policy)


_told: set[int] = set()  # the fences this worker has told its coordinator about (by id)


def _first_use(fence: Fence, argv: list[str]) -> dict[str, Any] | None:
    """What a worker's fence is, the first time one of its invocations ends (else None)."""
    if id(fence) in _told:
        return None
    _told.add(id(fence))
    return {"worker": worker_name(), **fence.describe(argv)}


def worker_name() -> str:
    """This Dask worker as a run names it: its host and address."""
    try:
        from distributed import get_worker

        return f"{socket.gethostname()} ({get_worker().address})"
    except (ImportError, ValueError):
        return socket.gethostname()


def _lost(reason: str) -> Outcome:
    return Outcome(False, INFRA_STAGE, 0, 0, infra_error=f"{reason}: the target was not started")


def _check_target(target: TargetSpec) -> tuple[str, TargetVersion]:
    """On a worker: the target can start there; its version and the worker's host."""
    preflight(target)
    return socket.gethostname(), target_version(target)


def _worker_fence(setup: InvocationSetup, argv: list[str], dask_worker: Any = None) -> dict[str, Any]:
    """On a worker: the fence its invocations will run under (SandboxError: not the one asked for).
    (`client.run` hands the worker in as `dask_worker`: outside a task it is not found otherwise.)"""
    root = worker_root()
    gateway = worker_link(setup.gateway) if setup.gateway is not None else None
    fence = invocation_fence(setup, gateway, root)
    _told.add(id(fence))
    name = worker_name() if dask_worker is None else f"{socket.gethostname()} ({dask_worker.address})"
    return {"worker": name, **fence.describe(argv)}


class InvocationExecutor(Protocol):
    """Where a session's invocations run: what the coordinator asks of local threads and of a cluster."""

    scheduler: str | None  # the cluster's address; None: this process's threads
    root: str | None  # where working directories live (None: each worker's own)

    def capacity(self) -> int: ...
    def may_resubmit(self, key: str, exc: BaseException) -> bool: ...
    def lost(self, exc: BaseException) -> str | None: ...
    def preflight(self, target: TargetSpec) -> TargetVersion: ...
    def fences(self, setup: InvocationSetup, argv: list[str]) -> list[dict[str, Any]]: ...
    def submit(self, key: str, fn: Callable[..., Ran], *args: object) -> Future[Ran]: ...
    def workdir(self, relative: str) -> str: ...
    def close(self) -> None: ...


class LocalThreads:
    """Invocations on threads of this process: `jobs` at once."""

    scheduler: str | None = None

    def __init__(self, jobs: int, pool: Executor | None = None, workdirs: Path | None = None) -> None:
        self.jobs = jobs
        self.pool = pool or ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="ironbench-invoke")
        self.root: str | None = str(workdirs.resolve()) if workdirs else None

    def capacity(self) -> int:
        return self.jobs

    def may_resubmit(self, key: str, exc: BaseException) -> bool:
        return False  # an exception in a local thread is a bug: the run aborts

    def lost(self, exc: BaseException) -> str | None:
        return None

    def preflight(self, target: TargetSpec) -> TargetVersion:
        preflight(target)
        return target_version(target)

    def fences(self, setup: InvocationSetup, argv: list[str]) -> list[dict[str, Any]]:
        """The fence this process puts around the run's targets (SandboxError: not the one asked for)."""
        fence = invocation_fence(setup, setup.gateway, None)
        return [{"worker": "coordinator", **fence.describe(argv)}]

    def submit(self, key: str, fn: Callable[..., Ran], *args: object) -> Future[Ran]:
        return self.pool.submit(fn, *args)

    def workdir(self, relative: str) -> str:
        return str(Path(self.root) / relative) if self.root else relative

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskCluster:
    """Invocations as tasks on an existing Dask distributed cluster.

    Tasks are impure (Dask never merges two repeats of one instruction) and keyed by the
    invocation key, this coordinator's session and a resubmission count, so they are
    never confused with a task of another run, or of an earlier coordinator of this one.
    A worker that dies mid-task: Dask runs the task again on another worker and only one
    result comes back; the store records each attempt of a slot once whatever happens.
    """

    def __init__(self, address: str, jobs: int | None = None) -> None:
        if not _ADDRESS.fullmatch(address):
            raise SchedulerError(f"--scheduler {address!r}: expected tcp://HOST:PORT (or tls://HOST:PORT)")
        try:
            from distributed import Client
        except ImportError:
            raise SchedulerError("--scheduler needs the `distributed` package: pip install distributed") from None
        # distributed logs every lost connection and restarted task, and its event loop
        # (asyncio, tornado) what it drops when the scheduler goes: the run reports what matters
        for name in ["distributed", "asyncio", "tornado", *logging.Logger.manager.loggerDict]:
            if name.split(".")[0] in ("distributed", "asyncio", "tornado"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            self.timeout = float(os.environ.get(TIMEOUT_ENV) or TIMEOUT_SECONDS)
        except ValueError:
            raise SchedulerError(f"{TIMEOUT_ENV}={os.environ[TIMEOUT_ENV]!r}: expected a number of seconds") from None
        try:
            self.client = Client(address, timeout=self.timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        self.scheduler: str | None = address
        self.jobs = jobs
        self.session = uuid.uuid4().hex[:8]
        self.root: str | None = None  # each worker's own (run_invocation)
        self._threads_at = (0.0, 0)
        self.executor = self.client.get_executor(pure=False)
        self.resubmitted: dict[str, int] = {}

    def _threads(self) -> int:
        """Worker threads now (asked of the scheduler at most once a second)."""
        when, threads = self._threads_at
        if time.monotonic() - when > 1.0:
            workers = self.client.scheduler_info(n_workers=-1).get("workers", {})
            threads = sum(w.get("nthreads", 1) for w in workers.values())
            self._threads_at = (time.monotonic(), threads)
        return threads

    def capacity(self) -> int:
        """--jobs, or every worker thread the cluster has now (workers come and go)."""
        return self.jobs or max(1, self._threads())

    def _wait_for_workers(self) -> None:
        try:
            self.client.wait_for_workers(1, timeout=self.timeout)
        except (TimeoutError, OSError):
            raise SchedulerError(
                f"the Dask scheduler at {self.scheduler} has no workers (waited "
                f"{self.timeout:g} s): start some with `dask worker {self.scheduler}`"
            ) from None

    def hosts(self) -> dict[str, list[str]]:
        """The cluster's workers (addresses) by the host each runs on, named as a worker names its
        own in the paths a run records (SchedulerError: no workers)."""
        self._wait_for_workers()
        found: dict[str, list[str]] = {}
        for worker, host in sorted(self.client.run(_host, on_error="return").items()):
            if isinstance(host, str):  # a worker that cannot answer now gets no task
                found.setdefault(host, []).append(worker)
        return found

    def submit_on(self, workers: list[str], key: str, fn: Callable[..., Any], *args: object) -> Future[Any]:
        """A task that runs only on one of `workers` (addresses): where what it reads is."""
        return self.executor.submit(
            fn, *args, key=f"ironbench-{key}@{self.session}", workers=workers, allow_other_workers=False
        )

    def preflight(self, target: TargetSpec) -> TargetVersion:
        """Check the target on every worker before anything is written; returns its version,
        which every worker must agree on (a run records one)."""
        self._wait_for_workers()
        found = self.client.run(_check_target, target, on_error="return")
        versions: dict[str, list[str]] = {}
        sources: dict[str, TargetVersion] = {}
        for worker, answer in sorted(found.items()):
            if isinstance(answer, IronbenchError):
                raise type(answer)(f"on worker {worker}: {answer}")
            if isinstance(answer, BaseException):
                raise SchedulerError(f"on worker {worker}: checking the target failed: {answer!r}")
            versions.setdefault(answer[1].value, []).append(f"{answer[0]} ({worker})")
            sources.setdefault(answer[1].value, answer[1])
        if len(versions) > 1:
            detail = "; ".join(f"{version} on {', '.join(where)}" for version, where in versions.items())
            raise SchedulerError(f"the workers run different versions of the target: {detail}")
        found_version = sources[next(iter(versions))]
        where = ", ".join(versions[found_version.value])
        return TargetVersion(found_version.value, f"on {where}: {found_version.source}")

    def fences(self, setup: InvocationSetup, argv: list[str]) -> list[dict[str, Any]]:
        """The fence each worker puts around the run's targets (a worker that joins later tells
        its own with its first invocation); SandboxError naming a worker that cannot have the
        fence asked for."""
        found = self.client.run(_worker_fence, setup, argv, on_error="return")
        fences = []
        for worker, answer in sorted(found.items()):
            if isinstance(answer, IronbenchError):
                raise type(answer)(f"on worker {worker}: {answer}")
            if isinstance(answer, BaseException):
                raise SchedulerError(f"on worker {worker}: making its fence failed: {answer!r}")
            fences.append(answer)
        return fences

    def submit(self, key: str, fn: Callable[..., Ran], *args: object) -> Future[Ran]:
        count = self.resubmitted.get(key, 0)
        return self.executor.submit(fn, *args, key=f"ironbench-{key}@{self.session}.{count}")

    def may_resubmit(self, key: str, exc: BaseException) -> bool:
        """A task whose workers kept dying: once more, up to RESUBMITS times."""
        if type(exc).__name__ != "KilledWorker" or self.resubmitted.get(key, 0) >= RESUBMITS:
            return False
        self.resubmitted[key] = self.resubmitted.get(key, 0) + 1
        return True

    def lost(self, exc: BaseException) -> str | None:
        """Why a task came back without a result, when the cluster (not the task) failed."""
        if isinstance(exc, (CancelledError, OSError)) or type(exc).__name__ in ("KilledWorker", "CommClosedError"):
            return f"lost its task on the Dask cluster at {self.scheduler} ({type(exc).__name__}: {exc})".replace(
                " ()", ""
            ).replace(": )", ")")
        return None

    def workdir(self, relative: str) -> str:
        return f"worker:{relative}"  # each worker puts it under its own root

    def close(self) -> None:
        self.executor.shutdown(wait=False)
        try:
            self.client.close(timeout=5)
        except (OSError, TimeoutError):
            pass


def open_executor(options: RunOptions, workdirs: Path) -> InvocationExecutor:
    """Local threads, or the Dask cluster at `options.scheduler` (or $IRONBENCH_SCHEDULER)."""
    scheduler = options.scheduler or os.environ.get(SCHEDULER_ENV) or None
    if scheduler:
        return DaskCluster(scheduler, options.jobs)
    jobs = options.jobs or 1
    return LocalThreads(jobs, options.pool(jobs) if options.pool else None, workdirs)
