"""ironclad_version (`git:<short sha>`, else the package version) and module probes,
asked of the interpreter the target will actually run, and how the version was found."""

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ironbench.targets.registry import PLACEHOLDER, TargetSpec

SHORT_SHA = 7  # the seed's format: git:3fa91bc
PROBE_TIMEOUT_S = 60
UNKNOWN = "unknown"

# Run by the target's interpreter: where the module is, which distribution it belongs to,
# its version and how it was installed (PEP 610's direct_url.json: a VCS commit, an
# editable checkout), and why it cannot be found, as that interpreter (venv) sees them.
_PROBE = r"""
import json, sys
name = sys.argv[1]
out = {"found": False, "origin": None, "version": None, "distribution": None, "direct_url": None,
       "error": None, "executable": sys.executable}
try:
    import importlib.util
    spec = importlib.util.find_spec(name)
    out["found"] = spec is not None
    out["origin"] = getattr(spec, "origin", None)
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
try:
    from importlib.metadata import distribution, packages_distributions
    for dist in packages_distributions().get(name.split(".")[0], []):
        try:
            found = distribution(dist)
            out["distribution"] = found.metadata["Name"]
            out["version"] = found.version
            text = found.read_text("direct_url.json")
            out["direct_url"] = json.loads(text) if text else None
            break
        except Exception:
            pass
except Exception:
    pass
print(json.dumps(out))
"""


@dataclass(frozen=True)
class ModuleProbe:
    ran: bool  # False: the interpreter could not run the probe (not Python, broken)
    found: bool = False
    origin: str | None = None
    version: str | None = None
    error: str | None = None
    distribution: str | None = None
    direct_url: dict | None = None
    executable: str | None = None


@dataclass(frozen=True)
class TargetVersion:
    """The target's version as a run records it (`ironclad_version`), and how it was found."""

    value: str
    source: str


@cache
def probe_module(interpreter: tuple[str, ...] | str, module: str) -> ModuleProbe:
    """Ask the target's interpreter (its argv up to `-m`, e.g. `env VAR=1 /venv/bin/python`)
    about `module`, from an empty directory as the target's fresh working directory would
    be; cached per process."""
    prefix = [interpreter] if isinstance(interpreter, str) else list(interpreter)
    with tempfile.TemporaryDirectory(prefix="ironbench-probe-") as cwd:
        try:
            result = subprocess.run(
                [*prefix, "-c", _PROBE, module],
                cwd=cwd,
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return ModuleProbe(False, error=str(exc))
    try:
        data = json.loads(result.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return ModuleProbe(False, error=(result.stderr.strip().splitlines() or ["no output"])[-1])
    direct_url = data.get("direct_url")
    return ModuleProbe(
        True,
        bool(data.get("found")),
        data.get("origin"),
        data.get("version"),
        data.get("error"),
        data.get("distribution"),
        direct_url if isinstance(direct_url, dict) else None,
        data.get("executable"),
    )


_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)?)?$")
_ENV_WITH_VALUE = ("-u", "--unset", "-C", "--chdir")
_RUNNERS = ("uv", "poetry", "pipenv", "pdm", "hatch", "rye")
# A console script pip wrote: `#!/venv/bin/python` then `from package.module import main`.
_LAUNCHER = re.compile(r"^from ([A-Za-z_][\w.]*) import \w+\s*$", re.MULTILINE)


def _interpreter_at(argv: tuple[str, ...] | list[str]) -> int | None:
    """The index of the Python interpreter in a target's argv: first, or behind `env` (its
    options and NAME=VALUE assignments) or a runner (`uv run`, `poetry run`, ...)."""
    index = 0
    if index < len(argv) and os.path.basename(argv[index]) == "env":
        index += 1
        while index < len(argv) and (argv[index].startswith("-") or "=" in argv[index]):
            index += 2 if argv[index] in _ENV_WITH_VALUE else 1
    if index < len(argv) and os.path.basename(argv[index]) in _RUNNERS:
        found = next((k for k in range(index + 1, len(argv)) if _PYTHON.match(os.path.basename(argv[k]))), None)
        if found is None or any(PLACEHOLDER in part for part in argv[index:found]):
            return None
        index = found
    if index < len(argv) and _PYTHON.match(os.path.basename(argv[index])):
        return index
    return None


def python_module(argv: tuple[str, ...] | list[str]) -> tuple[tuple[str, ...], str] | None:
    """(the argv that starts the target's Python, with its options; the module it runs) for a
    target that names a module: `PYTHON [options] -m MODULE ...`, also behind `env VAR=1` or
    `uv run`, or a console script pip wrote for a module's function."""
    start = _interpreter_at(argv)
    if start is None:
        return _launcher(argv)
    index = start + 1
    while index < len(argv):
        part = argv[index]
        if part == "-m" and index + 1 < len(argv) and PLACEHOLDER not in argv[index + 1]:
            return tuple(argv[:index]), argv[index + 1]
        if part.startswith("-m") and len(part) > 2:
            return tuple(argv[:index]), part[2:]
        if not part.startswith("-") or part == "-c" or PLACEHOLDER in part:
            return None  # a script, code, or the instruction: no module named
        index += 2 if part in ("-W", "-X") else 1
    return None


def _launcher(argv: tuple[str, ...] | list[str]) -> tuple[tuple[str, ...], str] | None:
    """A console script (e.g. `/venv/bin/ironclad`): its shebang's interpreter and the module
    whose function it calls."""
    if not argv or not os.path.isabs(argv[0]):
        return None
    try:
        with open(argv[0], "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    first, _, rest = head.partition("\n")
    interpreter = first[2:].strip() if first.startswith("#!") else ""
    match = _LAUNCHER.search(rest)
    if not interpreter or " " in interpreter or not _PYTHON.match(os.path.basename(interpreter)) or not match:
        return None
    return (interpreter,), match.group(1)


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _git_commit(source: Path) -> str | None:
    """The commit of the checkout `source` belongs to, if git tracks it there (a
    package installed into a virtualenv inside some other checkout does not count)."""
    if not source.parent.is_dir():
        return None
    tracked = _git(source.parent, "ls-files", "--error-unmatch", source.name)
    if tracked is None or tracked.returncode != 0:
        return None
    result = _git(source.parent, "rev-parse", "HEAD")
    commit = result.stdout.strip() if result else ""
    return commit if result and result.returncode == 0 and len(commit) == 40 else None


def _checkout(source: Path, commit: str) -> str:
    """Where a tracked file's checkout is, and whether its folder has uncommitted changes."""
    top = _git(source.parent, "rev-parse", "--show-toplevel")
    where = top.stdout.strip() if top and top.returncode == 0 else str(source.parent)
    status = _git(source.parent, "status", "--porcelain", "--", ".")
    dirty = bool(status and status.returncode == 0 and status.stdout.strip())
    changes = f"; uncommitted changes under {source.parent}" if dirty else ""
    return f"git checkout {where} at commit {commit} (it holds {source}){changes}"


def _module_version(interpreter: tuple[str, ...], module: str) -> TargetVersion:
    probe = probe_module(interpreter, module)
    python = probe.executable or " ".join(interpreter)
    if not probe.ran:
        return TargetVersion(UNKNOWN, f"{' '.join(interpreter)} could not be asked about {module}: {probe.error}")
    commit = _git_commit(Path(probe.origin)) if probe.origin else None
    if commit:
        return TargetVersion(
            f"git:{commit[:SHORT_SHA]}",
            f"{python} imports {module} from a {_checkout(Path(probe.origin or ''), commit)}",
        )
    named = f"distribution {probe.distribution} {probe.version}"
    vcs = (probe.direct_url or {}).get("vcs_info") or {}
    if isinstance(vcs.get("commit_id"), str) and len(vcs["commit_id"]) >= SHORT_SHA:
        url = (probe.direct_url or {}).get("url", "?")
        return TargetVersion(
            f"git:{vcs['commit_id'][:SHORT_SHA]}",
            f"{python} imports {module} from {named}, installed from {url} at commit {vcs['commit_id']} (direct_url.json)",
        )
    if probe.version:
        how = (probe.direct_url or {}).get("url")
        origin = f", installed from {how} (not a commit)" if how else ""
        return TargetVersion(probe.version, f"{python} imports {module} from {named} (its metadata){origin}")
    if not probe.found:
        why = f": {probe.error}" if probe.error else ""
        return TargetVersion(UNKNOWN, f"{python} cannot import {module}{why}")
    return TargetVersion(
        UNKNOWN, f"{python} imports {module} from {probe.origin}: no git checkout holds it and no distribution names it"
    )


def _script_of(target: TargetSpec) -> Path | None:
    for part in target.argv_template[1:]:
        candidate = Path(part)
        if PLACEHOLDER not in part and candidate.suffix and candidate.is_file():
            return candidate.resolve()
    return None


def target_version(target: TargetSpec) -> TargetVersion:
    """`git:<short sha>` of the target's source when a git checkout holds it (the module its
    interpreter imports, or its script), else the version of the distribution that module
    comes from as the target's own interpreter sees it (a VCS install's commit first), else
    `unknown`; with how it was found."""
    module = python_module(target.argv_template)
    if module is not None:
        return _module_version(*module)
    script = _script_of(target)
    commit = _git_commit(script) if script else None
    if script is not None and commit:
        return TargetVersion(f"git:{commit[:SHORT_SHA]}", f"the script {script} is in a {_checkout(script, commit)}")
    what = f"the script {script} is in no git checkout" if script else "the target names no Python module or script"
    return TargetVersion(UNKNOWN, what)
