"""ironbench: a benchmark harness for LLM-driven systems, built on an event store."""

from collections.abc import Callable, Mapping
from importlib import import_module

__version__ = "0.1.0"


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], object]:
    """A package's `__getattr__` that imports each public name from its module on first use.

    `exports` maps a name to the submodule (relative to `package`) that defines it. A
    package whose API spans heavy modules (the run stack, DuckDB) stays cheap to import
    for code that needs one light submodule of it.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{module}"), name)

    return __getattr__
