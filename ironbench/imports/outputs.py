"""One run of an outputs tree another harness wrote, read into ironbench's events.

Each `summary.json` is an invocation, kept with its instruction (`instruction.txt`),
timestamp and duration as recorded. Where the summary keeps what the target printed, the
outcome is derived from it again by the same rules a live run uses (an outage is an
infrastructure error, as live), and the recorded fields stay beside it; where the two
disagree, the invocation says which fields do.
"""

import errno
import json
import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ironbench.core.events import (
    InvocationCompleted,
    RunAborted,
    RunFinished,
    RunImported,
    RunStarted,
)
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.core.outcome import Outcome, RuleSet, parse_outcome
from ironbench.imports.placement import MODES, Place, invocation_folders, place
from ironbench.store import Foreign
from ironbench.targets import cap_output

MAX_FILE_BYTES = 64 * 1024 * 1024  # a summary that keeps a whole transcript stays far below
OUTCOME_FIELDS = ("success", "failure_stage", "attempts", "repairs_triggered")
STREAMS = {"stdout": ("stdout.txt", "ironbench_stdout.txt"), "stderr": ("stderr.txt", "ironbench_stderr.txt")}
RUN_STREAM = "run"


class Damaged(ValueError):
    """A file of a run that cannot be read as what it should be; the message names it."""


@dataclass
class ReadRun:
    """A run folder as read: everything its events need, nothing written yet."""

    run_id: str
    folder: Path
    started: RunStarted
    started_utc: str
    metadata: dict | None
    invocations: list[tuple[Place, InvocationCompleted, str, Path]] = field(default_factory=list)
    status: str = "finished"  # finished | aborted | running (as its metadata records it)
    abort_reason: str | None = None
    finished_utc: str | None = None


def _read_bytes(path: Path) -> bytes:
    """A regular file's bytes: a link (it may point anywhere), a device or a pipe is refused,
    and so is a file too large to be a summary."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise Damaged(f"{path}: not a regular file")
            if status.st_size > MAX_FILE_BYTES:
                raise Damaged(f"{path}: {status.st_size:,} bytes, more than {MAX_FILE_BYTES:,}")
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Damaged(f"{path}: a symbolic link (an outputs tree holds files, not links)") from None
        raise Damaged(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_text(path: Path) -> str:
    try:
        return _read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Damaged(f"{path}: not UTF-8 (byte {exc.start})") from None


def read_json(path: Path) -> dict:
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Damaged(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from None
    except RecursionError:
        raise Damaged(f"{path}: invalid JSON: nested too deep") from None
    if not isinstance(data, dict):
        raise Damaged(f"{path}: a JSON object was expected, not {type(data).__name__}")
    return data


def utc(value: object, where: str) -> str:
    """A recorded time in the store's format (UTC, microseconds); naive times are UTC."""
    if not isinstance(value, str):
        raise Damaged(f"{where}: {value!r} is not a time")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise Damaged(f"{where}: {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _field(summary: dict, name: str, kinds: tuple[type, ...], where: Path, default: Any = None) -> Any:
    """A recorded field of one of `kinds` (a bool is no number), `default` when it is absent."""
    if name not in summary:
        return default
    value = summary[name]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        names = {bool: "true or false", int: "a whole number", float: "a number", str: "text", type(None): "null"}
        raise Damaged(f"{where}: {name}: {value!r} is not {' or '.join(names[k] for k in kinds)}")
    return value


def _stream(folder: Path, summary: dict, name: str, where: Path) -> str | None:
    """What the target printed on `name`, when the tree kept it: in its summary, or beside it."""
    value = _field(summary, name, (str, type(None)), where)
    if value is not None:
        return value
    for file in STREAMS[name]:
        if (folder / file).is_file():
            return read_text(folder / file)
    return None


def markers_only(rules: RuleSet) -> RuleSet:
    """The rules without their exit-code condition on success: a summary that recorded no
    exit code is judged by what the target printed alone."""
    success = rules.rules.success.model_copy(update={"exit_code": None})
    return RuleSet(rules.rules.model_copy(update={"success": success}), rules.patterns, rules.source)


def _recorded_outcome(summary: dict, where: Path) -> Outcome:
    missing = [name for name in OUTCOME_FIELDS if name not in summary and name != "failure_stage"]
    if missing:
        raise Damaged(f"{where}: no {missing[0]}, and no recorded output to derive it from")
    return Outcome(
        _field(summary, "success", (bool,), where),
        _field(summary, "failure_stage", (str, type(None)), where),
        _field(summary, "attempts", (int,), where),
        _field(summary, "repairs_triggered", (int,), where),
        infra_error=_field(summary, "infra_error", (str, type(None)), where),
    )


def _same_stage(outcome: Outcome, recorded: object) -> bool:
    # a stage only means something for a failure; a success's recorded stage is left be
    if outcome.success:
        return True
    return outcome.failure_stage == (recorded or None)


def disagreements(outcome: Outcome, summary: dict, instruction: str) -> list[str]:
    """The recorded fields the re-derived facts contradict."""
    found = []
    for name in ("success", "attempts", "repairs_triggered"):
        if name in summary and summary[name] != getattr(outcome, name):
            found.append(name)
    if "failure_stage" in summary and not _same_stage(outcome, summary["failure_stage"]):
        found.append("failure_stage")
    recorded_hash = summary.get("instruction_hash")
    if isinstance(recorded_hash, str) and recorded_hash.removeprefix("sha256:") != instruction_hash(instruction):
        found.append("instruction_hash")
    if "instruction_length" in summary and summary["instruction_length"] != len(instruction):
        found.append("instruction_length")
    return found


def _instruction(folder: Path, summary: dict, where: Path) -> str:
    if (folder / "instruction.txt").is_file():
        return read_text(folder / "instruction.txt")
    recorded = _field(summary, "instruction", (str, type(None)), where)
    if recorded is None:
        raise Damaged(f"{folder}: no instruction.txt, and no instruction in summary.json")
    return recorded


def read_invocation(
    run_id: str, suite_id: str, here: Place, folder: Path, rules: RuleSet
) -> tuple[InvocationCompleted, str | None]:
    """One invocation folder as its completion event, and when it was recorded (if it says)."""
    where = folder / "summary.json"
    summary = read_json(where) if where.is_file() else {}
    if not summary and not (folder / "instruction.txt").is_file():
        raise Damaged(f"{folder}: neither summary.json nor instruction.txt")
    instruction = _instruction(folder, summary, where)
    stdout = _stream(folder, summary, "stdout", where)
    stderr = _stream(folder, summary, "stderr", where) or ""
    exit_code = _field(summary, "exit_code", (int, type(None)), where)
    if exit_code is None:
        exit_code = _field(summary, "returncode", (int, type(None)), where)
    timed_out = _field(summary, "timed_out", (bool,), where, False) or summary.get("failure_stage") == "timeout"
    if stdout is not None:
        outcome = parse_outcome(exit_code, stdout, rules if exit_code is not None else markers_only(rules), timed_out)
        disagree = disagreements(outcome, summary, instruction)
    else:
        outcome = _recorded_outcome(summary, where)
        disagree = [d for d in disagreements(outcome, summary, instruction) if d.startswith("instruction")]
    timestamp = utc(summary["timestamp_utc"], f"{where}: timestamp_utc") if "timestamp_utc" in summary else None
    duration = _field(summary, "duration_ms", (int, float), where, 0)
    debug_ref = folder / "debug_ref.txt"
    debug_path = _field(summary, "debug_path", (str, type(None)), where) or (
        read_text(debug_ref).strip() if debug_ref.is_file() else ""
    )
    captured_out, cut_out = cap_output(stdout or "")
    captured_err, cut_err = cap_output(stderr)
    recorded = {k: v for k, v in summary.items() if k not in ("stdout", "stderr")}
    event = InvocationCompleted(
        key=invocation_key(run_id, suite_id, here.case_id, here.variant_id, here.run_index),
        mode=here.mode,
        group=here.group,
        generator=here.generator,
        level=here.level,
        case_id=here.case_id,
        variant_id=here.variant_id,
        run_index=here.run_index,
        instruction=instruction,
        instruction_hash=instruction_hash(instruction),
        instruction_length=len(instruction),
        exit_code=exit_code,
        success=outcome.success,
        failure_stage=outcome.failure_stage,
        attempts=outcome.attempts,
        repairs_triggered=outcome.repairs_triggered,
        duration_ms=round(duration),
        timed_out=timed_out,
        harness_error=_field(summary, "harness_error", (str, type(None)), where),
        infra_error=outcome.infra_error,
        debug_enabled=bool(_field(summary, "debug_enabled", (bool,), where, False)),
        debug_artifacts_present=bool(_field(summary, "debug_artifacts_present", (bool,), where, False)),
        debug_path=debug_path,
        brick_path=outcome.brick_path,
        stdout=captured_out,
        stderr=captured_err,
        output_truncated=cut_out or cut_err,
        complexity=here.complexity,
        recorded=recorded or None,
        disagrees=disagree or None,
    )
    return event, timestamp


def _first(metadata: dict, *names: str) -> Any:
    return next((metadata[n] for n in names if metadata.get(n) not in (None, "")), None)


def _start_time(folder: Path, metadata: dict, where: Path, summaries: list[str]) -> str:
    recorded = _first(metadata, "started_utc", "timestamp_utc", "started_at", "start_time")
    if recorded is not None:
        return utc(recorded, f"{where}: started_utc")
    if summaries:
        return min(summaries)
    try:  # run_20260110_091533: its name is its start
        stamp = datetime.strptime(folder.name[4:19], "%Y%m%d_%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        stamp = datetime.fromtimestamp(folder.stat().st_mtime, UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def read_run(folder: Path, rules: RuleSet, source: str) -> ReadRun:
    """Read a whole run folder (nothing is written): its metadata, every invocation."""
    where = folder / "metadata.json"
    metadata = read_json(where) if where.is_file() else None
    meta = metadata or {}
    run_id = folder.name
    recorded_mode = _first(meta, "mode", "category")
    folders = list(invocation_folders(folder))
    places = [place(folder, f, recorded_mode) for f in folders]
    tops = {p.top for p in places}
    suite_id = str(
        _first(meta, "suite_id", "suite")
        or next((t for t in sorted(tops) if t not in MODES and t != "canonical"), None)
        or "imported"
    )
    found = [
        (here, *read_invocation(run_id, suite_id, here, invocation, rules), invocation)
        for here, invocation in zip(places, folders, strict=True)
    ]
    started_utc = _start_time(folder, meta, where, [t for _, _, t, _ in found if t is not None])
    # a summary without a time of its own was recorded during its run: its start stands in
    read = [(h, e, t or started_utc, f) for h, e, t, f in found]
    modes = {"canonical" if h.complexity else h.mode for h, *_ in read}
    mode = recorded_mode if recorded_mode in (*MODES, "canonical", "mixed") else None
    mode = mode or (modes.pop() if len(modes) == 1 else "mixed" if modes else "baseline")
    versions = Counter(e.recorded.get("ironclad_version") for _, e, *_ in read if e.recorded)
    version = _first(meta, "ironclad_version") or next((v for v, _ in versions.most_common() if v), None)
    suite = {"suite_id": suite_id, "mode": mode}
    for key in ("timeout_seconds", "repair_enabled", "debug_enabled", "runs_per_variant"):
        if key in meta:
            suite[key] = meta[key]
    target = meta.get("target")
    started = RunStarted(
        suite_id=suite_id,
        mode=mode,
        suite={**suite, "cases": []},
        suite_path=None,
        target_argv=[str(t) for t in target]
        if isinstance(target, list)
        else [target]
        if isinstance(target, str)
        else [],
        ironclad_version=str(version or "unknown"),
        ironclad_version_source=(
            f"as recorded by the harness that wrote {source}" if version else f"{source} records no version"
        ),
        harness_version=str(meta.get("harness_version") or "unknown"),
        python_version=str(meta.get("python_version") or "unknown"),
        platform=str(meta.get("platform") or "unknown"),
        label=meta.get("label") if isinstance(meta.get("label"), str) else None,
        environment=meta["environment"] if isinstance(meta.get("environment"), dict) else {},
        rules=rules.record(),
    )
    status = meta.get("status") if meta.get("status") in ("finished", "aborted", "running") else "finished"
    finished = _first(meta, "finished_utc", "finished_at", "end_time")
    return ReadRun(
        run_id,
        folder,
        started,
        started_utc,
        metadata,
        sorted(read, key=lambda r: (r[0].group, r[0].run_index)),
        str(status),
        str(meta.get("abort_reason") or "aborted (as its metadata records)"),
        utc(finished, f"{where}: finished_utc") if finished is not None else None,
    )


def run_events(run: ReadRun, source: str, known: dict[str, dict | None] | None) -> list[Foreign]:
    """The events of a run read from a tree, less what this store already has of it (`known`:
    the recorded summary of each invocation key it holds; None: it holds no such run). A key it
    holds with another record is a different run under the same id: refused, naming the file."""
    new = []
    for here, event, timestamp, folder in run.invocations:
        if known is not None and event.key in known:
            if known[event.key] != event.recorded:
                raise Damaged(
                    f"{folder}: differs from what this store imported as {run.run_id}/{here.stream} "
                    "(another run with the same id?); nothing of this run was imported"
                )
            continue
        new.append(Foreign(here.stream, event, timestamp, f"completed:{event.key}"))
    if known is not None and not new:
        return []
    counted = [e for _, e, _, _ in run.invocations if e.infra_error is None]
    disagreements = Counter(d for f in new for d in (f.event.disagrees or []))  # type: ignore[union-attr]
    events = [] if known is not None else [Foreign(RUN_STREAM, run.started, run.started_utc)]
    imported = RunImported(
        format="outputs",
        source=source,
        invocations=len(new),
        disagreements=dict(sorted(disagreements.items())),
        metadata=run.metadata,
    )
    last = max([run.started_utc, *(f.timestamp_utc for f in new)])
    events.append(Foreign(RUN_STREAM, imported, run.started_utc if known is None else last))
    events += new
    ending_utc = run.finished_utc or last
    if run.status == "aborted":
        events.append(Foreign(RUN_STREAM, RunAborted(reason=run.abort_reason or "aborted"), ending_utc))
    elif run.status == "finished":
        end = RunFinished(invocations=len(counted), successes=sum(1 for e in counted if e.success))
        events.append(Foreign(RUN_STREAM, end, ending_utc, f"imported-end:{run.run_id}:{len(counted)}"))
    return events


def recorded_summaries(rows: list[tuple[str]]) -> dict[str, dict | None]:
    """Invocation key -> its recorded summary, from the payloads of a run's completions."""
    known = {}
    for (payload,) in rows:
        data = json.loads(payload)
        known[data["key"]] = data.get("recorded")
    return known
