"""ironclad_version (`git:<short sha>`, else the package version) and module probes,
asked of the interpreter the target will actually run."""

import json
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ironbench.targets.registry import TargetSpec

SHORT_SHA = 7  # the seed's format: git:3fa91bc
PROBE_TIMEOUT_S = 60

# Run by the target's interpreter: where the module is, which distribution version
# it belongs to, and why it cannot be found, as that interpreter (venv) sees them.
_PROBE = r"""
import json, sys
name = sys.argv[1]
out = {"found": False, "origin": None, "version": None, "error": None}
try:
    import importlib.util
    spec = importlib.util.find_spec(name)
    out["found"] = spec is not None
    out["origin"] = getattr(spec, "origin", None)
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
try:
    from importlib.metadata import packages_distributions, version
    for dist in packages_distributions().get(name.split(".")[0], []):
        try:
            out["version"] = version(dist)
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


@cache
def probe_module(interpreter: str, module: str) -> ModuleProbe:
    """Ask `interpreter` about `module`, from an empty directory as the target's fresh
    working directory would be; cached per process."""
    with tempfile.TemporaryDirectory(prefix="ironbench-probe-") as cwd:
        try:
            result = subprocess.run(
                [interpreter, "-c", _PROBE, module],
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
    return ModuleProbe(True, bool(data.get("found")), data.get("origin"), data.get("version"), data.get("error"))


def python_module(argv: tuple[str, ...] | list[str]) -> tuple[str, str] | None:
    """(interpreter, module) for a `PYTHON -m MODULE ...` target."""
    if len(argv) >= 3 and argv[1] == "-m":
        return argv[0], argv[2]
    return None


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


def _script_of(target: TargetSpec) -> Path | None:
    for part in target.argv_template[1:]:
        candidate = Path(part)
        if "{instruction}" not in part and candidate.suffix and candidate.is_file():
            return candidate.resolve()
    return None


def target_version(target: TargetSpec) -> str:
    """`git:<short sha>` of the target's source when it is a git checkout, else the
    installed distribution's version as the target's interpreter sees it, else `unknown`."""
    module = python_module(target.argv_template)
    if module is not None:
        probe = probe_module(*module)
        commit = _git_commit(Path(probe.origin)) if probe.origin else None
        if commit:
            return f"git:{commit[:SHORT_SHA]}"
        return probe.version or "unknown"
    script = _script_of(target)
    commit = _git_commit(script) if script else None
    return f"git:{commit[:SHORT_SHA]}" if commit else "unknown"
