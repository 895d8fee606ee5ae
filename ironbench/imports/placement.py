"""Where things are in an outputs tree another harness wrote: its runs, and what each
invocation folder's place says (mode, case, generator, variant, level, complexity).

The spec draws `run_*/baseline/<case>/run_001`, `adversarial/<case>/<generator>/variant_0001/run_001`
and `stress/<case>/level_N/run_001`; trees in the wild put the suite id where the mode is,
name a variant `<generator>_0000` under its case, and group canonical cases by complexity
(`<suite>/small/<case>/run_001`). All of them read here. Pure: paths in, places out.
"""

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.kinds import COMPLEXITIES
from ironbench.generators import canonical_name

MODES = ("baseline", "adversarial", "stress")
INVOCATION = re.compile(r"run_(\d{1,6})")
RUN = re.compile(r"run_\d{8}_\d{6}.*")  # a run's folder, named for its start (run_20260110_091533)
LEVEL = re.compile(r"level_(\d{1,3})")
VARIANT = re.compile(r"variant_(\d{1,6})")
NAMED_VARIANT = re.compile(r"(.+?)_(\d{1,6})")
MAX_DEPTH = 6  # run folder / mode / case / generator / variant / run_NNN
INVOCATION_FILES = ("summary.json", "instruction.txt")


class NotATree(ValueError):
    """A path that holds no run of an outputs tree."""


class Unplaced(ValueError):
    """An invocation folder whose place in the tree says nothing ironbench can read."""


@dataclass(frozen=True)
class Place:
    """What an invocation folder's path says."""

    top: str  # the folder under the run: a mode, or the suite id in its place
    mode: str  # baseline | adversarial | stress (a canonical case is a baseline case with a complexity)
    case_id: str
    variant_id: str
    run_index: int
    generator: str | None = None
    level: int | None = None
    complexity: str | None = None

    @property
    def group(self) -> str:
        """The group folder in ironbench's own tree."""
        if self.complexity:
            return f"canonical/{self.complexity}/{self.case_id}"
        if self.mode == "baseline":
            return f"baseline/{self.case_id}"
        return f"{self.mode}/{self.case_id}/{self.variant_id}"

    @property
    def stream(self) -> str:
        return f"{self.group}/run_{self.run_index:03d}"


def _is_invocation(entry: os.DirEntry) -> bool:
    return INVOCATION.fullmatch(entry.name) is not None and any(
        os.path.isfile(os.path.join(entry.path, name)) for name in INVOCATION_FILES
    )


def is_run_folder(path: Path) -> bool:
    """A run of an outputs tree: a folder with its metadata.json, or a run_<date>_<time>
    folder with invocation folders below it."""
    if INVOCATION.fullmatch(path.name) is not None:
        return False
    if (path / "metadata.json").is_file():
        return True
    return RUN.fullmatch(path.name) is not None and next(invocation_folders(path), None) is not None


def find_runs(path: Path) -> list[Path]:
    """The run folders at `path`: itself, when it is one, else its subfolders that are."""
    if not path.is_dir():
        raise NotATree(f"{path}: not a folder")
    if is_run_folder(path):
        return [path]
    runs = sorted(
        Path(entry.path)
        for entry in os.scandir(path)
        if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".") and is_run_folder(Path(entry.path))
    )
    if not runs:
        raise NotATree(
            f"{path}: not an outputs tree (no run folder: a run_* folder with metadata.json or "
            "<mode>/<case>/run_001/summary.json below it)"
        )
    return runs


def invocation_folders(run: Path) -> Iterator[Path]:
    """Every invocation folder (run_NNN holding a summary.json or instruction.txt) under a run,
    in a stable order; symbolic links are not followed."""

    def walk(folder: str, depth: int) -> Iterator[Path]:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
                continue
            if _is_invocation(entry):
                yield Path(entry.path)
            elif depth < MAX_DEPTH:
                yield from walk(entry.path, depth + 1)

    yield from walk(str(run), 1)


def place(run: Path, folder: Path, recorded_mode: str | None = None) -> Place:
    """Read an invocation folder's place from its path under the run (`recorded_mode`: the
    mode its summary or the run's metadata names, for a tree that puts the suite id in its place)."""
    parts = folder.relative_to(run).parts
    match = INVOCATION.fullmatch(parts[-1])
    assert match is not None  # invocation_folders() found it by this name
    index = int(match.group(1))
    top, middle = parts[0], parts[1:-1]
    if len(middle) == 1:
        mode = top if top in MODES else recorded_mode if recorded_mode in MODES else "baseline"
        if mode == "baseline":
            return Place(top, "baseline", middle[0], "base", index)
    elif len(middle) == 2:
        first, second = middle
        level = LEVEL.fullmatch(second)
        if level is not None:
            return Place(top, "stress", first, second, index, level=int(level.group(1)))
        if first in COMPLEXITIES:
            return Place(top, "baseline", second, "base", index, complexity=first)
        named = NAMED_VARIANT.fullmatch(second)
        if named is not None:
            generator = canonical_name(named.group(1))
            return Place(top, "adversarial", first, f"{generator}/variant_{int(named.group(2)):04d}", index, generator)
    elif len(middle) == 3:
        case, generator, variant = middle
        found = VARIANT.fullmatch(variant) or NAMED_VARIANT.fullmatch(variant)
        if found is not None:
            number = int(found.group(found.lastindex or 1))
            generator = canonical_name(generator)
            return Place(top, "adversarial", case, f"{generator}/variant_{number:04d}", index, generator)
    raise Unplaced(
        f"{folder}: an invocation folder ironbench cannot place (expected <mode>/<case>/run_NNN, "
        "<mode>/<case>/level_N/run_NNN, <mode>/<case>/<generator>/variant_NNNN/run_NNN, "
        "<mode>/<case>/<generator>_NNNN/run_NNN or <suite>/<small|mid|large>/<case>/run_NNN)"
    )
