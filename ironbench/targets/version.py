"""ironclad_version: the git commit of the target's source, else its package version."""

import importlib.util
import subprocess
from pathlib import Path

from ironbench.targets.registry import TargetSpec


def _git(directory: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=directory, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _git_commit(source: Path) -> str | None:
    """The commit of the checkout `source` belongs to, if git tracks it there (a
    package installed into a virtualenv inside some other checkout does not count)."""
    tracked = _git(source.parent, "ls-files", "--error-unmatch", source.name)
    if tracked is None or tracked.returncode != 0:
        return None
    result = _git(source.parent, "rev-parse", "HEAD")
    commit = result.stdout.strip() if result else ""
    return commit if result and result.returncode == 0 and len(commit) == 40 else None


def _source_of(target: TargetSpec) -> tuple[Path | None, str | None]:
    """The target's source file and top-level package name, where they can be told."""
    argv = target.argv_template
    if len(argv) >= 3 and argv[1] == "-m":
        try:
            spec = importlib.util.find_spec(argv[2])
        except (ModuleNotFoundError, ValueError):
            spec = None
        top = argv[2].split(".")[0]
        if spec and spec.origin:
            return Path(spec.origin), top
        return None, top
    for part in argv[1:]:
        candidate = Path(part)
        if "{instruction}" not in part and candidate.suffix and candidate.is_file():
            return candidate.resolve(), None
    return None, None


def target_version(target: TargetSpec) -> str:
    source, package = _source_of(target)
    if source is not None:
        commit = _git_commit(source)
        if commit:
            return commit
    if package:
        from importlib.metadata import PackageNotFoundError, packages_distributions, version

        for distribution in packages_distributions().get(package, []):
            try:
                return version(distribution)
            except PackageNotFoundError:
                continue
    return "unknown"
