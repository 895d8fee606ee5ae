"""Command targets: one subprocess per invocation, in its own directory and process group."""

import os
import selectors
import shutil
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.errors import StoreFull, TargetError
from ironbench.core.files import file_failure
from ironbench.core.redact import Redactor
from ironbench.sandbox import Fence
from ironbench.targets import containment
from ironbench.targets.capture import OutputCapture
from ironbench.targets.registry import PLACEHOLDER, TargetSpec
from ironbench.targets.version import probe_module, python_module

OUTPUT_CAP = 64 * 1024  # characters of each stream kept in the event
STDOUT_FILE = "ironbench_stdout.txt"
STDERR_FILE = "ironbench_stderr.txt"
READ_SIZE = 256 * 1024
AFTER_EXIT_SECONDS = 0.5  # the target has ended; output still arriving from what it left
DRAIN_SECONDS = 2.0  # after the kill: what is left in the pipes


@dataclass(frozen=True, slots=True)
class ProcessResult:
    exit_code: int | None
    stdout: str  # redacted; head and tail when the stream was longer than capture.TEXT_HEAD + TEXT_TAIL
    stderr: str
    duration_ms: int
    timed_out: bool
    harness_error: str | None
    stdout_path: str | None = None  # the whole stream (up to capture.FILE_CAP), redacted
    stderr_path: str | None = None
    fence_seen: tuple = ()  # what its fence saw it try and refused (sandbox.watch.Seen)


def cap_output(text: str, cap: int = OUTPUT_CAP) -> tuple[str, bool]:
    if len(text) <= cap:
        return text, False
    keep = cap // 2
    dropped = len(text) - 2 * keep
    return f"{text[:keep]}\n...[{dropped} characters dropped by ironbench]...\n{text[-keep:]}", True


SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".mjs", ".rb", ".pl")


def _refuse_relative_file(part: str, target: str) -> None:
    """A relative file path in a target cannot work: every invocation runs in a fresh
    working directory. Refused when it names a file here or looks like a script."""
    if PLACEHOLDER in part or part.startswith("-") or os.path.isabs(part) or "\n" in part:
        return
    here = Path(part)
    if here.is_file() or (part.endswith(SCRIPT_SUFFIXES) and " " not in part):
        where = f"give it as {str(here.resolve())!r}" if here.is_file() else "give its absolute path"
        raise TargetError(
            f"target file {part!r} is a relative path, but each invocation runs in a fresh "
            f"working directory, where it would not be found: {where} (target {target})"
        )


def preflight(target: TargetSpec) -> None:
    """Fail once, clearly, when the target cannot possibly start.

    A `PYTHON -m MODULE` target's module is looked up by that interpreter itself,
    so Ironclad installed in its own virtualenv is found where it lives.
    """
    executable = target.argv_template[0]
    if shutil.which(executable) is None:
        raise TargetError(f"target executable not found: {executable!r} (target {target.name})")
    for part in target.argv_template:
        _refuse_relative_file(part, target.name)
    module = python_module(target.argv_template)
    if module is None:
        return
    probe = probe_module(*module)
    if probe.ran and not probe.found:
        why = f" (importing it failed: {probe.error})" if probe.error else ""
        raise TargetError(
            f"target module {module[1]!r} is not installed for {' '.join(module[0])}{why} (target {target.name}); "
            f'if it lives in another virtualenv, pass --target "/path/to/venv/bin/python -m {module[1]} '
            f'{PLACEHOLDER}"'
        )


def invoke(
    argv: list[str],
    workdir: Path,
    timeout_s: float,
    env_extra: dict[str, str],
    redactor: Redactor | None = None,
    fence: Fence | None = None,
) -> ProcessResult:
    """Run argv in workdir, never through a shell, under `fence` (None: unfenced, with the
    harness's environment), and return by its deadline.

    stdout and stderr stream, redacted, into capped files in workdir; nothing the
    target spawned outlives the call (see containment); a target that ignores
    SIGTERM or a descendant that holds the pipes open cannot delay the return by
    more than AFTER_EXIT_SECONDS + DRAIN_SECONDS.
    """
    mark = containment.new_mark()
    extra = {**env_extra, containment.CONTAINMENT_VAR: mark}
    env = fence.environment(extra) if fence is not None else {**os.environ, **extra}
    try:
        captures = (OutputCapture(workdir / STDOUT_FILE, redactor), OutputCapture(workdir / STDERR_FILE, redactor))
    except OSError as exc:
        _raise_if_full(workdir, exc)
        return ProcessResult(None, "", "", 0, False, f"cannot write output files in {workdir}: {exc.strerror}")
    paths = (str(captures[0].path), str(captures[1].path))
    containment.enter()
    started = time.perf_counter()
    release = _nothing
    fenced = None
    try:
        pipes = subprocess.DEVNULL, subprocess.PIPE, subprocess.PIPE
        if fence is not None:
            fenced = fence.start(argv, workdir, env, pipes)
            process, release = fenced.process, fenced.release
        else:
            process = subprocess.Popen(
                argv, cwd=workdir, env=env, stdin=pipes[0], stdout=pipes[1], stderr=pipes[2], start_new_session=True
            )
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
        containment.abandoned()
        for capture in captures:
            capture.finish()
        message = f"cannot start target: {getattr(exc, 'strerror', None) or exc}"
        return ProcessResult(None, "", "", 0, False, redactor.text(message) if redactor else message, *paths)
    except BaseException:
        containment.abandoned()
        raise
    containment.started(process.pid, mark)
    selector = selectors.DefaultSelector()
    try:
        timed_out, ended = _pump(process, captures, selector, started + timeout_s)
    finally:
        containment.finish(process.pid)  # the target too, when it is still running
        release()  # its fence's network goes with it
        _drain(selector, time.perf_counter() + DRAIN_SECONDS)
        for pipe in (process.stdout, process.stderr):
            assert pipe is not None  # both are PIPEs
            pipe.close()
        try:
            process.wait(timeout=DRAIN_SECONDS)
            containment.reaped(process.pid)
        except subprocess.TimeoutExpired:
            pass  # killed but not yet gone (uninterruptible I/O): nothing left to wait for
    out, err = (capture.finish() for capture in captures)
    exit_code = None if timed_out else process.returncode
    seen = fenced.seen.items() if fenced is not None else ()
    duration_ms = int((ended - started) * 1000)
    return ProcessResult(exit_code, out, err, duration_ms, timed_out, None, *paths, seen)


def _nothing() -> None:
    pass


def _exited(pid: int) -> bool:
    """Whether the child has ended, without reaping it: until reaped, its pid (which is
    its session and group id) cannot be recycled while descendants are swept."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _pump(
    process: subprocess.Popen[bytes],
    captures: tuple[OutputCapture, OutputCapture],
    selector: selectors.BaseSelector,
    deadline: float,
) -> tuple[bool, float]:
    """Read both pipes until the target has ended and they are closed, or the deadline
    passes; returns (timed out, when it ended)."""
    for pipe, capture in zip((process.stdout, process.stderr), captures, strict=True):
        assert pipe is not None  # both are PIPEs
        os.set_blocking(pipe.fileno(), False)
        selector.register(pipe, selectors.EVENT_READ, capture)
    try:
        pidfd = os.pidfd_open(process.pid)  # readable once the target ends: no polling
    except (AttributeError, OSError):
        pidfd = None
    exited_at = None
    try:
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ, None)
        while True:
            now = time.perf_counter()
            if exited_at is None and pidfd is None and _exited(process.pid):
                exited_at = now
            if exited_at is not None:
                pipes_open = any(key.data is not None for key in selector.get_map().values())
                if not pipes_open or now >= exited_at + AFTER_EXIT_SECONDS:
                    return False, exited_at
            if now >= deadline:
                return True, now
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + AFTER_EXIT_SECONDS - now)
            if pidfd is None:
                wait = min(wait, 0.05)
            for key, _ in selector.select(wait):
                if key.data is None:
                    assert pidfd is not None  # the pidfd is the one key registered without data
                    selector.unregister(pidfd)
                    exited_at = time.perf_counter()
                else:
                    _read(selector, key)
    finally:
        if pidfd is not None:
            if pidfd in selector.get_map():
                selector.unregister(pidfd)
            os.close(pidfd)


def _read(selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
    try:
        chunk = os.read(key.fd, READ_SIZE)
    except BlockingIOError:
        return
    if chunk:
        key.data.write(chunk)
    else:
        selector.unregister(key.fileobj)


def _drain(selector: selectors.BaseSelector, deadline: float) -> None:
    """What the target wrote before it ended, read until the pipes close or the deadline."""
    while selector.get_map() and time.perf_counter() < deadline:
        for key, _ in selector.select(deadline - time.perf_counter()):
            _read(selector, key)
    selector.close()


def ensure_fresh_dir(path: Path) -> None:
    """A fresh, empty working directory: leftovers of an interrupted attempt are removed.

    They are first moved aside, so that a process of that attempt still writing there
    (a target orphaned by a worker that died) writes into the old directory, never into
    the new one, and cannot make the removal fail."""
    if path.exists():
        aside = path.with_name(f".{path.name}.stale-{uuid.uuid4().hex[:8]}")
        try:
            os.rename(path, aside)
        except OSError:
            aside = path
        shutil.rmtree(aside, ignore_errors=aside != path)
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        _raise_if_full(path, exc)
        raise TargetError(f"cannot create working directory {path}: {exc.strerror}") from None


def _raise_if_full(path: Path, exc: OSError) -> None:
    """A full disk under a target's working directory stops the run as a full store does (the
    disk is often the same one): named, with the command that continues the run once freed."""
    failure = file_failure(path, exc, "the working directory")
    if isinstance(failure, StoreFull):
        raise failure from None
