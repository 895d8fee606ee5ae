"""Where the data ironbench ships lives: migrations, queries, suites and examples.

Everything is found through `importlib.resources`, so a wheel installed anywhere works
from any directory, and an editable install reads the repository's own folders.
"""

from importlib import resources
from pathlib import Path

from ironbench.core.errors import IronbenchError

SHIPPED_FOLDERS = ("migrations", "queries", "suites", "examples")


def shipped(folder: str) -> Path:
    """A shipped folder (`migrations`, `queries`, `suites`, `examples`) as a directory on disk."""
    if folder not in SHIPPED_FOLDERS:
        raise ValueError(f"no shipped folder {folder!r}")
    try:
        found = resources.files(f"ironbench.shipped.{folder}")
    except ModuleNotFoundError:
        # ironbench imported from a source tree that is not the installed one: the mapping
        # of the top-level folders into the package lives in the install
        import ironbench

        raise IronbenchError(
            f"ironbench's shipped {folder} are missing beside {Path(ironbench.__file__).parent}: "
            "install ironbench from that tree (pip install -e .) or run it from elsewhere"
        ) from None
    # alembic and the suite loader need real files; a package pip installed always is one
    if not isinstance(found, Path) or not found.is_dir():
        raise IronbenchError(f"ironbench's shipped {folder} are not on disk ({found}): install ironbench with pip")
    return found
