"""What the check's names and imports resolve to: the judge's own modules, and the brick only
under its own name.

A check's `import random` is the judge's `random`, whatever the brick is called; `import BRICK`
is the brick's module (remote.scoped_import), and only when BRICK is no module the judge has: a
brick saved under such a name is refused before it runs (`tampered` when the check imports that
name: the check would have tested the brick in that module's place). A python check's free
names (old checks call helpers their brick defines) are the brick's, but a standard module's
name is the judge's module.
"""

import ast
import builtins
import importlib
import importlib.util
import sys
from collections.abc import Iterable
from functools import cached_property

from ironbench.targets.boundary.protocol import Fact, Op
from ironbench.targets.boundary.remote import RemoteObject, Session


def has_module(name: str) -> bool:
    """Whether the judge has a module of this name (loaded, standard, or installed)."""
    if name in sys.modules or name in sys.stdlib_module_names:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return True  # a name the import system chokes on is no name of a brick's own


class Imported:
    """What a check's sources import (read, never run; parsed only when asked: most checks never
    need it): the modules by their top-level names, and the names `import` statements bind
    (`import a.b` binds a, `import a as b` binds b)."""

    def __init__(self, sources: Iterable[str]) -> None:
        self.sources = tuple(sources)

    @property
    def modules(self) -> frozenset[str]:
        return self._parsed[0]

    @property
    def bound(self) -> frozenset[str]:
        return self._parsed[1]

    @cached_property
    def _parsed(self) -> tuple[frozenset[str], frozenset[str]]:
        modules: set[str] = set()
        bound: set[str] = set()
        for source in self.sources:
            try:
                tree = ast.parse(source)
            except (SyntaxError, ValueError):
                continue  # a check that does not parse is found broken when it runs
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        modules.add(alias.name.partition(".")[0])
                        bound.add(alias.asname or alias.name.partition(".")[0])
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.partition(".")[0])
                elif isinstance(node, ast.Call) and _imports_by_name(node):
                    modules.add(node.args[0].value.partition(".")[0])  # type: ignore[attr-defined]
        return frozenset(modules), frozenset(bound)


def _imports_by_name(node: ast.Call) -> bool:
    """`importlib.import_module("x")` or `__import__("x")` with the name written out."""
    func = node.func
    named = (isinstance(func, ast.Name) and func.id in ("__import__", "import_module")) or (
        isinstance(func, ast.Attribute) and func.attr == "import_module"
    )
    return named and bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)


def refusal(module: str, imported: Imported) -> Fact | None:
    """Why a brick saved as `module`.py is not checked (None when its name is its own)."""
    if not has_module(module):
        return None
    if module in imported.modules:
        return Fact(
            "tampered",
            f"the brick is saved as {module}.py, the name of a module the check imports ({module}): "
            "the check would have tested the brick in that module's place",
            "judge",
        )
    return Fact(
        "no_brick",
        f"the brick is saved as {module}.py, the name of a module the check's process has ({module}): "
        "a brick is checked only under a name of its own",
        "judge",
    )


class CheckBuiltins(dict):
    """A python check's builtins: the real ones; a name found nowhere is the brick module's (a
    standard module's name is the judge's module)."""

    def __init__(self, session: Session, module: RemoteObject) -> None:
        super().__init__(vars(builtins))  # after scoped_import: its __import__
        self.session = session
        self.module = module

    def __missing__(self, name: str) -> object:
        if name in sys.stdlib_module_names:
            return importlib.import_module(name)
        try:
            return self.session.request(Op.GETATTR, self.module, (name,))
        except AttributeError:
            raise KeyError(name) from None
