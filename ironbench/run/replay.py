"""Replaying recorded model calls: what a run's invocations were answered (its recording),
and `ironbench replay`: the target run again against it, its stdout and exit code compared.

A replay answers call k of an invocation with the recorded call k, whatever was asked; a
request that differs from the recorded one is a divergence (which call, and a diff), a
call past the recording is refused. The target runs in a fresh directory under
OUT/replays/RUN/, exactly as the run ran it: same command, same environment, same timeout.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.events import InvocationCompleted, ModelCalled, ModelText, RunStarted, run_started
from ironbench.core.labels import natural_key
from ironbench.core.model_calls import REPLAY, resolved
from ironbench.core.redact import Redactor
from ironbench.gateway import GatewayConfig, GatewayProcess
from ironbench.run.executors import InvocationSetup, Ran, Work, run_invocation
from ironbench.run.fencing import fenced
from ironbench.run.options import DEFAULT_OPTIONS
from ironbench.run.paths import RunPaths
from ironbench.run.planner import Group
from ironbench.run.session import Replays, invocation_env
from ironbench.store import EventStore, open_store
from ironbench.suite import Suite
from ironbench.targets import TargetSpec, cap_output

DIFF_LINES = 40  # of a divergence's diff, shown


def _group_of(stream: str) -> str:
    return stream.rsplit("/", 1)[0]


def _recording(store: EventStore, run_id: str) -> tuple[RunStarted, dict[str, InvocationCompleted], Replays]:
    """A run's start, the live attempt of each of its invocations (by stream), and the calls
    each made, texts in place, by (group, run index)."""
    if not store.has_run(run_id):
        raise RunNotFound(f"run {run_id!r} not found in {store.path}")
    events = store.read(run_id, types=("run_started", "invocation_completed", "model_called", "model_text"))
    started: RunStarted | None = None
    live: dict[str, InvocationCompleted] = {}
    calls: dict[tuple[str, int], list[dict[str, Any]]] = {}
    texts: dict[str, str] = {}
    for recorded in events:
        match recorded.event:
            case RunStarted():
                started = run_started(recorded)
            case InvocationCompleted() as event:
                if recorded.stream not in live or event.rerun >= live[recorded.stream].rerun:
                    live[recorded.stream] = event
            case ModelCalled() as event:
                calls.setdefault((recorded.stream, event.rerun), []).append(event.to_dict())
            case ModelText() as event:
                texts[event.sha256] = event.text
    assert started is not None  # has_run: the run's first event is its RunStarted
    if started.serve_model is None and started.replay_of is None:
        raise IronbenchError(
            f"run {run_id} served no model (it ran without --serve-model): it recorded no model calls to replay"
        )
    replays: Replays = {}
    for stream, event in live.items():
        made = sorted(calls.get((stream, event.rerun), []), key=lambda c: c["index"])
        replays[(_group_of(stream), event.run_index)] = [resolved(c, texts) for c in made]
    return started, live, replays


def recorded_calls(store: EventStore, run_id: str) -> Replays:
    """What each invocation of `run_id` was answered, for `run --replay`."""
    return _recording(store, run_id)[2]


@dataclass(frozen=True)
class Replayed:
    """One invocation replayed: whether its stdout and exit code came out as recorded, and why not."""

    stream: str
    identical: bool
    calls: int  # the replay made
    lines: list[str]  # what differs, and where it ran

    def heading(self, run_id: str) -> str:
        calls = f"{self.calls} model call{'s' if self.calls != 1 else ''} answered from the recording"
        if self.identical:
            return f"{run_id} {self.stream}: identical stdout and exit code ({calls})"
        return f"{run_id} {self.stream}: differs from the recording ({calls})"


def _stdout_difference(recorded: str, replayed: str) -> str:
    old, new = recorded.splitlines(), replayed.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"stdout differs at line {number}: recorded {a!r}, replayed {b!r}"
    if len(old) != len(new):
        return f"stdout differs: recorded {len(old)} lines, replayed {len(new)}"
    return "stdout differs (in its line endings)"


def compare(completed: InvocationCompleted, ran: Ran, recorded_calls: list[dict[str, Any]]) -> Replayed:
    """The replayed invocation against its record: stdout and exit code, and the calls."""
    result = ran.result
    stdout = cap_output(result.stdout)[0]
    lines: list[str] = []
    same_exit = result.exit_code == completed.exit_code and result.timed_out == completed.timed_out
    same_stdout = stdout == completed.stdout
    calls = list(ran.calls or ())
    for call in calls:
        if call.get("divergence"):
            diff = call["divergence"].splitlines()
            shown = diff[:DIFF_LINES] + (
                [f"... ({len(diff) - DIFF_LINES} more lines)"] if len(diff) > DIFF_LINES else []
            )
            lines.append(f"  call {call['index']} diverged: it asked otherwise than the recorded call")
            lines += [f"    {line}" for line in shown]
        elif call.get("error_kind") == REPLAY:
            lines.append(f"  call {call['index']}: {call.get('error')}")
    if len(calls) < len(recorded_calls):
        lines.append(f"  the recording has {len(recorded_calls)} call(s); the replay made {len(calls)}")
    if result.harness_error:
        lines.insert(0, f"  the target could not run: {result.harness_error}")
    if not same_exit:
        said = "timed out" if result.timed_out else f"exit {result.exit_code}"
        was = "timed out" if completed.timed_out else f"exit {completed.exit_code}"
        lines.insert(0, f"  {said}, recorded {was}")
    if not same_stdout:
        lines.insert(0, f"  {_stdout_difference(completed.stdout, stdout)}")
    return Replayed("", same_exit and same_stdout, len(calls), lines)


def _groups(run: RunStarted) -> Callable[[str, InvocationCompleted], Group]:
    suite = Suite.from_dict(run.suite)
    timeouts = {case.id: suite.case_timeout(case) for case in suite.cases}

    def group(path: str, event: InvocationCompleted) -> Group:
        timeout = timeouts.get(event.case_id, suite.timeout_seconds)
        return Group(event.mode, "baseline", event.case_id, event.variant_id, event.instruction, timeout, 1, path)  # type: ignore[arg-type]

    return group


def replay_invocations(
    paths: RunPaths,
    run_id: str,
    case_id: str | None = None,
    variant_id: str | None = None,
    run_index: int | None = None,
) -> Iterator[Replayed]:
    """Run the target again for each chosen invocation of `run_id` (its live attempt; all of
    them without a case), answered from its recorded calls; yields each comparison."""
    with open_store(paths.store_path, create=False) as store:
        started, live, replays = _recording(store, run_id)
    chosen = sorted(
        (stream, event)
        for stream, event in live.items()
        if (case_id is None or event.case_id == case_id)
        and (variant_id is None or event.variant_id == variant_id)
        and (run_index is None or event.run_index == run_index)
    )
    if not chosen:
        cases = ", ".join(sorted({e.case_id for e in live.values()}, key=natural_key)) or "none"
        wanted = f"case {case_id!r}" if case_id else "any case"
        raise RunNotFound(
            f"run {run_id}: no invocation of {wanted} matching variant {variant_id or 'any'}, "
            f"run {run_index or 'any'} (cases: {cases})"
        )
    suite = Suite.from_dict(started.suite)
    target = TargetSpec("recorded", tuple(started.target_argv))
    options = fenced(DEFAULT_OPTIONS.resumed(started), paths, started.suite_path, suite)  # as the run was started
    redactor = Redactor.from_environ(options.redact)
    group_for = _groups(started)
    root = (paths.out_dir / "replays").resolve()
    with GatewayProcess(GatewayConfig(None, options.redact), _log(paths)).start() as gateway:
        gateway.ready()
        setup = InvocationSetup(
            options, started.rules, suite.debug_enabled, redactor or None, str(root), gateway.link()
        )
        for stream, event in chosen:
            group = group_for(_group_of(stream), event)
            calls = replays.get((group.path, event.run_index), [])
            work = Work(group, event.run_index, event.key, f"{run_id}/{stream}")
            env = invocation_env(run_id, suite, group, event.run_index)
            ran = run_invocation(work, setup, target.argv(event.instruction), env, calls)
            replayed = compare(event, ran, calls)
            yield Replayed(stream, replayed.identical, replayed.calls, [*replayed.lines, f"  ran in {ran.workdir}"])


def _log(paths: RunPaths) -> Path:
    return paths.out_dir / "replays" / "gateway.log"
