"""pyproject.toml's packaging stays true to the tree: every package listed, every shipped
file matched by package-data, the version in one place (the wheel itself: test_wheel.py)."""

import fnmatch
import importlib.metadata
import tomllib

from ironbench.core.shipped import SHIPPED_FOLDERS, shipped
from tests.conftest import REPO, cli

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]


def test_every_package_in_the_tree_and_every_shipped_folder_is_listed():
    tree = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "ironbench").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    mapped = {f"ironbench.shipped.{folder}" for folder in SHIPPED_FOLDERS}
    assert set(SETUPTOOLS["packages"]) == tree | mapped
    assert SETUPTOOLS["package-dir"] == {f"ironbench.shipped.{folder}": folder for folder in SHIPPED_FOLDERS}


def test_every_shipped_file_is_package_data_or_a_module():
    data = SETUPTOOLS["package-data"]
    for folder in SHIPPED_FOLDERS:
        patterns = data.get(f"ironbench.shipped.{folder}", [])
        for path in (REPO / folder).rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(REPO / folder).as_posix()
            top_level_module = "/" not in relative and relative.endswith(".py")
            assert top_level_module or any(fnmatch.fnmatch(relative, p) for p in patterns), f"{folder}/{relative}"


def test_the_editable_install_reads_the_repositorys_own_folders():
    for folder in SHIPPED_FOLDERS:
        assert shipped(folder).resolve() == (REPO / folder).resolve()


def test_the_version_lives_in_one_place():
    from ironbench import __version__

    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert SETUPTOOLS["dynamic"]["version"] == {"attr": "ironbench.__version__"}
    assert importlib.metadata.version("ironbench") == __version__
    assert cli("--version", check=True).stdout.strip() == f"ironbench {__version__}"


def test_a_source_tree_without_its_install_names_itself():
    """ironbench imported from a tree that no install maps: one clear line, not a traceback."""
    import subprocess
    import sys

    code = (
        "import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]\n"
        "from ironbench.core.shipped import shipped\n"
        "try:\n    shipped('queries')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert result.stdout.startswith("IronbenchError ironbench's shipped queries are missing beside ")
    assert str(REPO / "ironbench") in result.stdout and "pip install -e ." in result.stdout
