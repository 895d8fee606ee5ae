"""Command targets: one subprocess per invocation, in its own directory and process group."""

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ironbench.errors import TargetError
from ironbench.targets.registry import PLACEHOLDER, TargetSpec
from ironbench.targets.version import probe_module, python_module

OUTPUT_CAP = 64 * 1024


@dataclass(frozen=True, slots=True)
class ProcessResult:
    exit_code: int | None
    stdout: str
    stderr: str
    duration_ms: int
    timed_out: bool
    harness_error: str | None


def cap_output(text: str, cap: int = OUTPUT_CAP) -> tuple[str, bool]:
    if len(text) <= cap:
        return text, False
    keep = cap // 2
    dropped = len(text) - 2 * keep
    return f"{text[:keep]}\n...[{dropped} characters dropped by ironbench]...\n{text[-keep:]}", True


def preflight(target: TargetSpec) -> None:
    """Fail once, clearly, when the target cannot possibly start.

    A `PYTHON -m MODULE` target's module is looked up by that interpreter itself,
    so Ironclad installed in its own virtualenv is found where it lives.
    """
    executable = target.argv_template[0]
    if shutil.which(executable) is None:
        raise TargetError(f"target executable not found: {executable!r} (target {target.name})")
    module = python_module(target.argv_template)
    if module is None:
        return
    probe = probe_module(*module)
    if probe.ran and not probe.found:
        why = f" (importing it failed: {probe.error})" if probe.error else ""
        raise TargetError(
            f"target module {module[1]!r} is not installed for {executable}{why} (target {target.name}); "
            f"if it lives in another virtualenv, pass --target \"/path/to/venv/bin/python -m {module[1]} "
            f"{PLACEHOLDER}\""
        )


def invoke(argv: list[str], workdir: Path, timeout_s: float, env_extra: dict[str, str]) -> ProcessResult:
    """Run argv in workdir (never through a shell); a timeout kills its whole process group."""
    env = {**os.environ, **env_extra}
    started = time.perf_counter()
    try:
        process = subprocess.Popen(
            argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(None, "", "", 0, False, f"cannot start target: {exc.strerror or exc}")
    timed_out = False
    try:
        out, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process.pid)
        out, err = process.communicate()
    duration_ms = int((time.perf_counter() - started) * 1000)
    if not timed_out:
        _kill_group(process.pid)  # nothing the target spawned outlives its invocation
    return ProcessResult(
        None if timed_out else process.returncode,
        out.decode("utf-8", "replace"), err.decode("utf-8", "replace"),
        duration_ms, timed_out, None,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def ensure_fresh_dir(path: Path) -> None:
    """A fresh, empty working directory: leftovers of an interrupted attempt are removed."""
    if path.exists():
        shutil.rmtree(path)
    try:
        path.mkdir(parents=True)
    except OSError as exc:
        raise TargetError(f"cannot create working directory {path}: {exc.strerror}") from None
