"""The package's layout holds: light layers import nothing heavy, and no layer imports one above it."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HEAVY = ("duckdb", "sqlalchemy", "sqlmodel", "alembic", "llm", "llama_cpp", "distributed", "typer")
UPPER = ("ironbench.cli", "ironbench.report", "ironbench.analysis")


def loaded_by(module: str) -> set[str]:
    """The top-level packages and ironbench subpackages a fresh interpreter holds after `import module`."""
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    names = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return {n for n in names if "." not in n} | {
        ".".join(n.split(".")[:2]) for n in names if n.startswith("ironbench.")
    }


def test_importing_ironbench_loads_nothing_else():
    assert loaded_by("ironbench") & {*HEAVY, "numpy", "pydantic", "rich", *UPPER} == set()


@pytest.mark.parametrize("module", ["ironbench.core", "ironbench.stats", "ironbench.console", "ironbench.suite"])
def test_the_pure_layers_load_no_database_model_or_cli(module):
    assert loaded_by(module) & {*HEAVY, *UPPER} == set()


def test_running_a_suite_needs_no_duckdb_report_or_cli():
    assert loaded_by("ironbench.run") & {"duckdb", "typer", *UPPER} == set()


def test_lower_layers_never_import_upper_ones():
    """import-linter's layers contract (pyproject.toml), checked as CI checks it."""
    command = Path(sys.executable).parent / "lint-imports"
    if not command.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    result = subprocess.run([str(command), "--no-cache"], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "1 kept, 0 broken" in result.stdout


def test_the_package_top_level_holds_only_its_entry_points():
    """Every module lives in the layer it belongs to (core, suite, run, ... cli)."""
    top = sorted(p.name for p in (REPO / "ironbench").glob("*.py"))
    assert top == ["__init__.py", "__main__.py"]
