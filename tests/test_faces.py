"""Packages the rest of ironbench reaches only through their faces (`__init__`).

A package below the run stack (the store, suites, targets, generators, models, the gateway,
the gauntlet, statistics) says in its `__init__` what it offers; every other package imports
those names from there, never from its modules. The check reads the source, so it holds for
imports inside functions too.
"""

import ast
import sys
from pathlib import Path

import pytest

import ironbench

ROOT = Path(ironbench.__file__).parent
FACED = ("gateway", "gauntlet", "generators", "llms", "sandbox", "stats", "store", "suite", "targets")


def _imports_from(package: str) -> list[tuple[str, int, str]]:
    """Every `from ironbench.<package>.<module> import ...` outside the package."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0] == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"ironbench.{package}."):
                found.append((str(path.relative_to(ROOT)), node.lineno, node.module or ""))
    return found


@pytest.mark.parametrize("package", FACED)
def test_other_packages_import_a_faced_package_through_its_face(package):
    assert _imports_from(package) == []


@pytest.mark.parametrize("package", FACED)
def test_a_face_offers_every_name_it_lists(package):
    face = __import__(f"ironbench.{package}", fromlist=["__all__"])
    assert face.__doc__ and face.__all__
    missing = [name for name in face.__all__ if not hasattr(face, name)]
    assert missing == []


def test_the_check_sees_a_bypass(tmp_path, monkeypatch):
    """The scan finds a module import that skips the face (so an empty list means none)."""
    fake = tmp_path / "ironbench"
    (fake / "view").mkdir(parents=True)
    (fake / "view" / "x.py").write_text("def f():\n    from ironbench.store.eventstore import EventStore\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", fake)
    assert _imports_from("store") == [("view/x.py", 2, "ironbench.store.eventstore")]
