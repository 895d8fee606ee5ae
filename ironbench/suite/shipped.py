"""The shipped suites: found by name (`ironbench run demo`), and copied with the examples
into a folder of the user's by `ironbench init`."""

import os
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.errors import SuiteError
from ironbench.core.shipped import shipped

SCHEMA_FILE = "suite.schema.json"
# The outcome-rules example and the toy agent it reads (see the guide on rules files).
EXAMPLE_FILES = ("agent_rules.yaml", "toy_agent.py")


def shipped_suites() -> dict[str, Path]:
    """Every shipped suite by name (`demo`, `baseline`, ...)."""
    return {p.stem: p for p in sorted(shipped("suites").glob("*.yaml"))}


def find_suite(name_or_path: str | Path) -> Path:
    """A suite file: an existing path wins; otherwise the shipped suite of that name
    (`demo` or `demo.yaml`)."""
    path = Path(name_or_path)
    if path.exists():
        return path
    suites = shipped_suites()
    name = path.name.removesuffix(".yaml").removesuffix(".yml")
    if path.parent == Path(".") and name in suites:
        return suites[name]
    raise SuiteError(f"{path}: no such suite file, and no shipped suite of that name ({', '.join(suites)})")


@dataclass(frozen=True)
class InitResult:
    folder: Path
    written: list[Path]


def init_files() -> dict[str, str]:
    """What `ironbench init` writes: file name → text. The suites start with the line that
    points yaml-language-server at the schema beside them; the schema is generated, so it
    lists any generators installed plugins add."""
    from ironbench.suite.schema import schema_text

    files = {p.name: p.read_text(encoding="utf-8") for p in shipped_suites().values()}
    files[SCHEMA_FILE] = schema_text()
    examples = shipped("examples")
    files.update({name: (examples / name).read_text(encoding="utf-8") for name in EXAMPLE_FILES})
    return files


def init_folder(folder: Path, force: bool = False) -> InitResult:
    """Write the example suites, their schema and the rules example into `folder`.

    An existing file is never overwritten without `force`: the whole init is refused,
    naming it, before anything is written."""
    files = init_files()
    if folder.exists() and not folder.is_dir():
        raise SuiteError(f"{folder}: exists and is not a folder")
    existing = [name for name in files if (folder / name).exists()]
    if existing and not force:
        raise SuiteError(
            f"{folder / existing[0]}: already exists ({len(existing)} of the {len(files)} files init writes "
            "do); nothing written (--force overwrites them)"
        )
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        target = folder / name
        partial = folder / f".{name}.ironbench-init"
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)  # whole or not at all
        written.append(target)
    return InitResult(folder, written)
