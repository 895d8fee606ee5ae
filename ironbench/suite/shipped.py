"""The shipped suites: found by name (`ironbench run demo`), and copied with the examples
into a folder of the user's by `ironbench init`."""

import os
import random
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.errors import SuiteError
from ironbench.core.shipped import shipped
from ironbench.suite.models import Suite, load_suite

SCHEMA_FILE = "suite.schema.json"
# The outcome-rules example and the toy agent it reads (see the guide on rules files).
EXAMPLE_FILES = ("agent_rules.yaml", "toy_agent.py")


def shipped_suites() -> dict[str, Path]:
    """Every shipped suite by name (`demo`, `baseline`, ...)."""
    return {p.stem: p for p in sorted(shipped("suites").glob("*.yaml"))}


def open_suite(
    name_or_path: str, sample: int | None = None, seed: int = 0, complexity: str = "all"
) -> tuple[Suite, str]:
    """A suite and what names it (its file, or a shipped name): a file, a shipped YAML suite,
    or a suite made from a package's data (humaneval, humaneval-adversarial). A canonical
    suite keeps only its cases of `complexity` (`all`: every case); with `sample`, a seeded
    sample of that many of the cases kept, in the suite's order."""
    from ironbench.suite.humaneval import SUITES, humaneval_suite

    if not Path(name_or_path).exists() and name_or_path in SUITES:
        suite, source = humaneval_suite(name_or_path), name_or_path
    else:
        path = find_suite(name_or_path)
        suite, source = load_suite(path), str(path)
    suite = suite.with_complexity(complexity)
    return (suite if sample is None else sample_cases(suite, sample, seed, source)), source


def sample_cases(suite: Suite, n: int, seed: int, source: str) -> Suite:
    """`n` of the suite's cases drawn with `seed` (the same seed, the same cases), in suite order."""
    if not suite.cases:
        raise SuiteError(f"{source}: --sample: a gauntlet suite has no cases to sample")
    if not 1 <= n <= len(suite.cases):
        raise SuiteError(
            f"{source}: --sample {n}: the suite has {len(suite.cases)} cases; sample 1 to {len(suite.cases)}"
        )
    keep = set(random.Random(seed).sample(range(len(suite.cases)), n))
    return suite.model_copy(update={"cases": [c for i, c in enumerate(suite.cases) if i in keep]})


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
