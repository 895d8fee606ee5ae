"""Checks: the harness's own test of a saved brick, run contained like a target.

A check runs in a fresh temporary folder holding copies of the brick's saved files (the
target's working directory is never touched), through `command.invoke`: its timeout, every
descendant killed, output streamed capped and redacted. What it concludes is a verdict:
correct, wrong, no_entry_point, import_error, timeout, or harness_fault (the harness could not
run it: no evidence about the brick). The check travels with everything it reads inline
(`CheckMaterial`), so it runs wherever the brick is, a Dask worker included.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from ironbench.core.errors import SuiteError
from ironbench.core.kinds import CHECK_VERDICTS
from ironbench.core.redact import Redactor
from ironbench.sandbox import Fence
from ironbench.targets.command import cap_output, invoke

CHECK_OUTPUT_CAP = 16 * 1024  # characters of a check's output kept in its event
MAX_CHECK_FILE_BYTES = 1024 * 1024
MAX_BRICK_BYTES = 64 * 1024 * 1024
CHECK_FOLDER = "ironbench_check"  # a pytest check's files, beside the brick's copies
DRIVER = "ironbench_check_driver.py"
_PYTEST_SUMMARY = re.compile(r"^=*\s*\d+ (passed|failed|errors?)\b.*\bin \d+(\.\d+)?s\b.*$", re.MULTILINE)
_NO_ENTRY = re.compile(r"cannot import name '|has no attribute '|NameError: name '")
_IMPORT = re.compile(r"ImportError while importing|\b(ModuleNotFoundError|ImportError|SyntaxError|IndentationError)\b")

# What a python check runs in its folder (a copy: the check never imports ironbench).
_DRIVER_SOURCE = (resources.files("ironbench.targets") / "check_driver.py").read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class CheckMaterial:
    """A check with everything it reads inline: `kind` pytest (`files`: relative path ->
    text), python (`source`, `entry_point`) or command (`command`)."""

    kind: str
    sha256: str  # of what it reads: two runs checked by the same digest were checked alike
    files: dict[str, str] = field(default_factory=dict)
    source: str = ""
    entry_point: str = ""
    command: str = ""

    @classmethod
    def of(cls, spec: dict) -> "CheckMaterial":
        """From a suite's check (as recorded: `pytest`, `python` + `entry_point`, or `command`);
        a pytest path's files are read now (SuiteError when they cannot be)."""
        if "pytest" in spec:
            files = _read_tests(Path(spec["pytest"]))
            digest = _digest({"pytest": files})
            return cls("pytest", digest, files=files)
        if "python" in spec:
            return cls("python", _digest(spec), source=spec["python"], entry_point=spec["entry_point"])
        return cls("command", _digest(spec), command=spec["command"])


def _digest(data: dict) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode("utf-8")).hexdigest()


def _read_tests(path: Path) -> dict[str, str]:
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*.py") if p.is_file())
    if not files:
        raise SuiteError(f"check.pytest: {path}: no test files")
    found = {}
    for file in files:
        try:
            if file.stat().st_size > MAX_CHECK_FILE_BYTES:
                raise SuiteError(f"check.pytest: {file}: larger than {MAX_CHECK_FILE_BYTES:,} bytes")
            found[str(file.relative_to(path)) if file != path else file.name] = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SuiteError(f"check.pytest: {file}: cannot read: {exc}") from None
    return found


@dataclass(frozen=True, slots=True)
class CheckResult:
    verdict: str
    duration_ms: int
    output: str = ""
    output_truncated: bool = False
    passed: int | None = None
    failed: int | None = None
    detail: str = ""  # one line: why (the exception that made it wrong, what the harness could not do)


def _copy_brick(brick: Path, folder: Path) -> Path | str:
    """Copies of the brick and the test file saved beside it (`test_<name>.py`), or why not."""
    try:
        info = brick.stat()
    except OSError:
        return f"the saved brick {brick} is gone"
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BRICK_BYTES:
        return f"the saved brick {brick} is not a regular file of at most {MAX_BRICK_BYTES:,} bytes"
    copied = folder / brick.name
    try:
        shutil.copyfile(brick, copied)
        own_test = brick.with_name(f"test_{brick.name}")
        if own_test.is_file() and own_test.stat().st_size <= MAX_BRICK_BYTES:
            shutil.copyfile(own_test, folder / own_test.name)
    except OSError as exc:
        return f"cannot copy the saved brick {brick}: {exc.strerror or exc}"
    return copied


def _counts(output: str) -> tuple[int | None, int | None]:
    lines = [m.group(0) for m in _PYTEST_SUMMARY.finditer(output)]
    if not lines:
        return None, None
    numbers = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed)", lines[-1])}
    return numbers.get("passed", 0), numbers.get("failed", 0)


def _pytest_verdict(exit_code: int | None, output: str) -> tuple[str, str]:
    if exit_code == 0:
        return "correct", ""
    if exit_code in (1, 2):
        if _NO_ENTRY.search(output):
            return "no_entry_point", "the tests cannot reach the function by its name"
        if exit_code == 2 or _IMPORT.search(output):
            return ("import_error", "the brick does not import") if _IMPORT.search(output) else ("wrong", "")
        return "wrong", ""
    if exit_code == 5:
        return "harness_fault", "the check collected no tests"
    return "harness_fault", f"pytest ended with exit code {exit_code}"


def run_check(
    material: CheckMaterial,
    brick: Path,
    timeout_s: float,
    redactor: Redactor | None = None,
    root: str | None = None,
    fence: Fence | None = None,
) -> CheckResult:
    """Check one saved brick (an absolute path) in a fresh folder under `root` (the system's
    temporary folder by default), contained like a target; the folder is removed after."""
    folder = Path(tempfile.mkdtemp(prefix="ironbench-check-", dir=root))
    try:
        copied = _copy_brick(brick, folder)
        if isinstance(copied, str):
            return CheckResult("harness_fault", 0, detail=copied)
        env = {
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONPATH": _site_path(),
        }
        mark = ""
        if material.kind == "pytest":
            for name, text in material.files.items():
                path = folder / CHECK_FOLDER / name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            argv = [sys.executable, "-S", "-m", "pytest", "-q", "-p", "no:cacheprovider", CHECK_FOLDER]
        elif material.kind == "python":
            mark = f"IRONBENCH-CHECK-{uuid.uuid4().hex}"
            (folder / DRIVER).write_text(_DRIVER_SOURCE, encoding="utf-8")
            (folder / "ironbench_check_source.py.txt").write_text(material.source, encoding="utf-8")
            module = copied.name.removesuffix(".py")
            argv = [sys.executable, "-S", DRIVER, mark, module, material.entry_point, "ironbench_check_source.py.txt"]
        else:
            argv = [part.replace("{brick}", str(copied)) for part in shlex.split(material.command)]
        result = invoke(argv, folder, timeout_s, env, redactor, fence)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    output = result.stdout + (f"\n{result.stderr}" if result.stderr.strip() else "")
    kept, truncated = cap_output(output.strip("\n"), CHECK_OUTPUT_CAP)
    if result.harness_error:
        return CheckResult("harness_fault", result.duration_ms, kept, truncated, detail=result.harness_error)
    if result.timed_out:
        return CheckResult("timeout", result.duration_ms, kept, truncated, detail=f"killed after {timeout_s:g} s")
    if material.kind == "pytest":
        verdict, detail = _pytest_verdict(result.exit_code, result.stdout)
        passed, failed = _counts(result.stdout)
        return CheckResult(verdict, result.duration_ms, kept, truncated, passed, failed, detail)
    if material.kind == "python":
        line = next((ln for ln in reversed(result.stdout.splitlines()) if ln.startswith(mark + " ")), None)
        if line is None:
            detail = f"the check ended without a verdict (exit code {result.exit_code})"
            return CheckResult("wrong", result.duration_ms, kept, truncated, detail=detail)
        name, _, detail = line[len(mark) + 1 :].partition(" ")
        shown = "\n".join(ln for ln in kept.splitlines() if not ln.startswith(mark)).strip("\n")
        if name not in CHECK_VERDICTS:
            return CheckResult("wrong", result.duration_ms, shown, truncated, detail=f"an unknown verdict {name!r}")
        return CheckResult(name, result.duration_ms, shown, truncated, detail=detail)
    verdict = "correct" if result.exit_code == 0 else "wrong"
    return CheckResult(verdict, result.duration_ms, kept, truncated, detail=f"exit code {result.exit_code}")


@cache
def _site_path() -> str:
    """This interpreter's packages, for a check run without `site` (-S): a check's Python starts
    in a third of the time when the .pth files of a large environment are not read, and still
    imports what is installed (bricks import numpy; pytest checks import pytest)."""
    import site

    # never the user's own site-packages: a target running as the same user could write there
    folders = [*site.getsitepackages(), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(f for f in folders if f and os.path.isdir(f))


def check_timeout(invocation_timeout: float) -> float:
    """A check's timeout: the invocation's, at most a minute (a check is a test run, not a build)."""
    return min(float(invocation_timeout), float(os.environ.get("IRONBENCH_CHECK_TIMEOUT") or 60))
