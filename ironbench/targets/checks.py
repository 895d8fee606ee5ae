"""Checks: the harness's own test of a saved brick, on copies, in processes the brick cannot forge.

A check runs in a fresh temporary folder holding copies of the brick's saved files (the
target's working directory is never touched). A `python` or `pytest` check's own code runs in a
trusted process (boundary/: a warm zygote forks a judge per check) that never imports what the
target wrote; the brick runs alone in a host process started through the launch seam, and the
two talk in plain data (boundary/codec.py) or handles. The verdict goes from the judge to the
harness on a channel the brick cannot write. A `command` check runs the checker with the brick,
contained like a target (`command.invoke`): its verdict is as trustworthy as the checker.

What it concludes is a verdict: correct, wrong, no_brick, no_entry_point, import_error,
timeout, tampered (evidence that the brick gamed its check), or harness_fault (a fault of the
harness or of the check itself, never one the brick can choose: no evidence about the brick).
Every layer adds what it found as facts, and the verdict is decided once, here, from all of
them (boundary/verdict.py). The check travels with everything it reads inline
(`CheckMaterial`), so it runs wherever the brick is, a Dask worker included.
"""

import hashlib
import json
import os
import shlex
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path

from ironbench.core.errors import SuiteError
from ironbench.core.files import escaped
from ironbench.core.kinds import reference_is_file
from ironbench.core.redact import Redactor
from ironbench.sandbox import Fence
from ironbench.targets.boundary import imports, pool, tamper
from ironbench.targets.boundary.judge import copy_brick
from ironbench.targets.boundary.launch import FENCED
from ironbench.targets.boundary.placing import Folder
from ironbench.targets.boundary.protocol import Answer, CheckOrder, Fact, Setup
from ironbench.targets.boundary.verdict import decide
from ironbench.targets.brick import Brick, NoBrick
from ironbench.targets.command import cap_output, invoke

CHECK_OUTPUT_CAP = 16 * 1024  # characters of a check's output kept in its event
MAX_CHECK_FILE_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Reference:
    """A check's reference solution: its file name (what a pytest check imports) and text."""

    name: str
    text: str
    sha256: str

    @classmethod
    def of(cls, reference: str) -> "Reference":
        """From a suite's `reference`: a .py file's path (read now), or inline code (`reference.py`)."""
        if not reference_is_file(reference):
            name, text = "reference.py", reference
        else:
            path = Path(reference)
            try:
                if path.stat().st_size > MAX_CHECK_FILE_BYTES:
                    raise SuiteError(f"check.reference: {path}: larger than {MAX_CHECK_FILE_BYTES:,} bytes")
                name, text = path.name, path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SuiteError(f"check.reference: {path}: cannot read: {exc}") from None
        return cls(name, text, hashlib.sha256(text.encode("utf-8")).hexdigest())


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
    reference: Reference | None = None  # the known-good solution it must pass (`prove`)
    # Set once the check was proven (the coordinator's proof, carried to wherever bricks are
    # checked): why it failed its reference ("" when it passed), and the reference's time there.
    broken: str = ""
    reference_ms: int | None = None

    @classmethod
    def of(cls, spec: dict) -> "CheckMaterial":
        """From a suite's check (as recorded: `pytest`, `python` + `entry_point`, or `command`);
        a pytest path's files and a reference's file are read now (SuiteError when they cannot be)."""
        reference = Reference.of(spec["reference"]) if spec.get("reference") else None
        spec = {k: v for k, v in spec.items() if k != "reference"}  # not what a brick is checked by
        if "pytest" in spec:
            files = _read_tests(Path(spec["pytest"]))
            digest = _digest({"pytest": files})
            return cls("pytest", digest, files=files, reference=reference)
        if "python" in spec:
            python, entry = spec["python"], spec["entry_point"]
            return cls("python", _digest(spec), source=python, entry_point=entry, reference=reference)
        return cls("command", _digest(spec), command=spec["command"], reference=reference)


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
    timeout_ms: int | None = None  # what it was allowed (calibrated on its reference, when it has one)


def run_check(
    material: CheckMaterial,
    brick: Brick | NoBrick,
    timeout_s: float,
    redactor: Redactor | None = None,
    root: str | None = None,
    fence: Fence | None = None,
) -> CheckResult:
    """Check one brick, as the harness took it from the target's folder (`take_brick`), on
    copies in a fresh folder under `root` (the system's temporary folder by default), removed
    after. A brick that could not be taken is `no_brick` with the reason (`tampered` when its
    path led into the answer key). A brick whose folder holds what a test runner or the
    interpreter would load on its own (conftest.py, a plugin, a .pth) is `tampered` whatever
    its check says. A check with a reference gets at least CALIBRATION times its reference's
    time on this machine (`calibrated_timeout`); a check that failed its reference gives no
    verdict on a brick (harness_fault, saying why)."""
    found: list[Fact] = []
    if isinstance(brick, NoBrick):
        found.append(Fact("tampered" if brick.tampered else "no_brick", brick.reason, "harness"))
    else:
        found += _planted(brick)
    if material.broken:
        why = f"the check is broken: it fails its reference solution ({material.broken})"
        found.append(Fact("harness_fault", why, "harness"))
    if isinstance(brick, NoBrick) or material.broken:
        return _result(Answer(tuple(found)), redactor)
    timeout_s = calibrated_timeout(material, timeout_s, redactor, root, fence)
    return _checked(material, brick, timeout_s, redactor, root, fence)


def _checked(
    material: CheckMaterial,
    brick: Brick,
    timeout_s: float,
    redactor: Redactor | None,
    root: str | None,
    fence: Fence | None,
) -> CheckResult:
    if material.kind == "command":
        answer = _command(material, brick, timeout_s, redactor, root, fence)
    else:
        answer = _judged(material, brick, timeout_s, root, fence)
    return replace(_result(answer.adding(*_planted(brick)), redactor), timeout_ms=round(timeout_s * 1000))


def _planted(brick: Brick) -> list[Fact]:
    planted = tamper.planted(brick.neighbours)
    if not planted:
        return []
    why = f"the brick's folder holds {', '.join(planted)}, which a test runner or Python loads on its own"
    return [Fact("tampered", why, "harness")]


def _result(answer: Answer, redactor: Redactor | None) -> CheckResult:
    """The verdict the facts make (decided here, once), with the check's output and counts: its
    texts as UTF-8 holds them (a brick's message may carry a lone surrogate), where they enter
    the harness's events."""
    decided = decide(answer.facts, answer.notes)
    output, detail = escaped(answer.output), escaped(decided.detail)
    if redactor:
        output, detail = redactor.text(output), redactor.text(detail)
    kept, truncated = cap_output(output.strip("\n"), CHECK_OUTPUT_CAP)
    return CheckResult(decided.verdict, answer.duration_ms or 0, kept, truncated, answer.passed, answer.failed, detail)


def prove(
    material: CheckMaterial,
    timeout_s: float,
    redactor: Redactor | None = None,
    root: str | None = None,
    fence: Fence | None = None,
) -> CheckResult:
    """The check run on its reference solution (as a brick of its own), fenced like any check:
    `correct` proves it. Its time is this machine's reference time."""
    reference = material.reference
    if reference is None:
        raise ValueError("a check without a reference has nothing to be proven on")
    brick = Brick(reference.name, reference.name, reference.text.encode("utf-8"))
    if root is None and _fenced(fence):  # never where bricks' hosts write (a resumed run proves between bricks)
        root = _bricks_root("proofs")
    result = _checked(material, brick, timeout_s, redactor, root, fence)
    if result.verdict == "correct":
        with _timing:
            _reference_ms.setdefault((material.sha256, reference.sha256), result.duration_ms)
    return result


# The k of max(the case's check timeout, k x the reference's time): EvalPlus's rule. A brick may be
# a few times slower than its reference and still be right; a slower machine is slower for both.
CALIBRATION = 4
_reference_ms: dict[tuple[str, str], int | None] = {}  # this process's reference times, by check
_timing = threading.Lock()


def adopt_reference_time(material: CheckMaterial) -> None:
    """Take the reference's time `material` carries (its proof's, recorded by the run) as this
    process's own, so that its check is not run on the reference again here: a recheck of a
    check the run proved as it is now times out as the run did."""
    if material.reference is None or material.reference_ms is None or material.broken:
        return
    with _timing:
        _reference_ms.setdefault((material.sha256, material.reference.sha256), material.reference_ms)


def calibrated_timeout(
    material: CheckMaterial,
    timeout_s: float,
    redactor: Redactor | None = None,
    root: str | None = None,
    fence: Fence | None = None,
) -> float:
    """A check's timeout on this machine: `timeout_s`, or CALIBRATION x its reference's time here
    when that is longer. The reference is run here once per process (a Dask worker times its own);
    where it does not pass, the time the coordinator measured (`material.reference_ms`) counts."""
    reference = material.reference
    if reference is None:
        return timeout_s
    key = (material.sha256, reference.sha256)
    with _timing:
        known = key in _reference_ms
    if not known:
        result = prove(material, timeout_s, redactor, root, fence)
        if result.verdict != "correct":
            with _timing:
                _reference_ms.setdefault(key, None)
    with _timing:
        measured = _reference_ms[key]
    if measured is None:
        measured = material.reference_ms
    return timeout_s if measured is None else max(timeout_s, CALIBRATION * measured / 1000)


def _judged(material: CheckMaterial, brick: Brick, timeout_s: float, root: str | None, fence: Fence | None) -> Answer:
    """A python or pytest check: judged in the trusted process, the brick in its host."""
    order = CheckOrder(
        material.kind,
        brick.to_wire(),
        float(timeout_s),
        _setup(root, fence),
        source=material.source,
        entry_point=material.entry_point,
        files=material.files,
    )
    started = time.monotonic()
    answer = pool.judge(order)
    if answer.duration_ms is None:
        answer = replace(answer, duration_ms=int((time.monotonic() - started) * 1000))
    return answer


def _command(
    material: CheckMaterial,
    brick: Brick,
    timeout_s: float,
    redactor: Redactor | None,
    root: str | None,
    fence: Fence | None,
) -> Answer:
    """A command check: the checker runs with the brick, on copies, contained like a target,
    from a folder of the judge's (the brick's copies in a folder of their own below it: a brick
    saved as `subprocess.py` is never first on the checker's path); a brick saved under the name
    of a module the checker's interpreter has is refused, as for a python check."""
    refused = imports.refusal(brick.module, imports.Imported(_python_of(material.command)))
    if refused is not None:
        return Answer((refused,))
    folder = Path(tempfile.mkdtemp(prefix="ironbench-check-", dir=root))
    try:
        with Folder.open(folder) as made:
            copied = copy_brick(brick, made.fresh())
        env = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "PYTHONPATH": os.pathsep.join(_site_paths())}
        argv = [part.replace("{brick}", str(copied)) for part in shlex.split(material.command)]
        result = invoke(argv, folder, timeout_s, env, redactor, fence)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    output = result.stdout + (f"\n{result.stderr}" if result.stderr.strip() else "")
    if result.harness_error:
        fact = Fact("harness_fault", result.harness_error, "harness")
    elif result.timed_out:
        fact = Fact("timeout", f"killed after {timeout_s:g} s", "check")
    else:
        fact = Fact("correct" if result.exit_code == 0 else "wrong", f"exit code {result.exit_code}", "check")
    return Answer((fact,), duration_ms=result.duration_ms, output=output)


def _python_of(command: str) -> list[str]:
    """The python source a command check runs inline (`python -c SOURCE`), to read its imports."""
    parts = shlex.split(command)
    return [parts[i + 1] for i, part in enumerate(parts[:-1]) if part == "-c"]


@cache
def _site_paths() -> list[str]:
    """This interpreter's packages, for a brick's host run without `site` (-S): it starts in a
    third of the time when the .pth files of a large environment are not read, and a brick
    still imports what is installed (numpy)."""
    import site

    # never the user's own site-packages: a target running as the same user could write there;
    # the site folders a .pth of this environment adds (a virtualenv over another's packages) are its own
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    added = [p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages") and p != user]
    folders = [*site.getsitepackages(), *added, *os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    return [f for f in dict.fromkeys(folders) if f and os.path.isdir(f) and f != user]


def _setup(root: str | None, fence: Fence | None = None) -> Setup:
    """What a check's trusted side needs before the check: where its folder goes, the
    interpreter and site folders of the brick's host, the launcher that starts it (inside the
    run's fence, when it has one: the hosts' folders then in a folder of their own, the only
    one a host writes)."""
    launcher = "plain"
    if _fenced(fence):
        assert fence is not None
        launcher = FENCED + fence.policy.to_wire()
        root = root or _bricks_root("bricks")
    return Setup(root, sys.executable, tuple(_site_paths()), launcher)


def _fenced(fence: Fence | None) -> bool:
    return fence is not None and fence.level != "none"


@cache
def _bricks_root(kind: str) -> str:
    """This process's folder for fenced hosts' folders, one per kind: the bricks', the
    references' (no host of a brick's writes where a reference is copied)."""
    import atexit

    folder = tempfile.mkdtemp(prefix=f"ironbench-{kind}-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def bricks_roots() -> tuple[str, ...]:
    """This process's folders for fenced hosts' folders (made now if they were not): part of
    every run's answer key, as the judges' folder is (a target reading them opened the decoys
    of a brick checked beside it, which was then accused)."""
    return (_bricks_root("bricks"), _bricks_root("proofs"))


def prepare_checks(threads: int, root: str | None = None, fence: Fence | None = None) -> None:
    """Checks are coming on `threads` threads: their trusted processes, and the host server and
    first judge of each, start now, meanwhile."""
    pool.prestart(threads, _setup(root, fence))


def check_timeout(invocation_timeout: float) -> float:
    """A check's timeout: the invocation's, at most a minute (a check is a test run, not a build)."""
    return min(float(invocation_timeout), float(os.environ.get("IRONBENCH_CHECK_TIMEOUT") or 60))
