"""The command that brings in history recorded elsewhere: `import`."""

from pathlib import Path
from typing import Annotated

import typer

from ironbench.cli.options import DEFAULT_OUT, OutOption, StoreOption, run_paths, say


def import_(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            help="An outputs folder another harness wrote (run_*/baseline/<case>/run_001/summary.json, "
            "and the shapes found in the wild), one run folder of it, or another ironbench store (.db).",
        ),
    ],
    rules: Annotated[
        str | None,
        typer.Option(
            "--rules",
            metavar="NAME|FILE",
            help="Outcome rules that re-derive each invocation's facts from its recorded output "
            "(outputs trees): ironclad, exit-code, or a rules YAML file.",
            show_default="ironclad",
        ),
    ] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Import runs recorded elsewhere (an outputs tree, another store) into this store; twice adds nothing."""
    from ironbench.imports import import_history

    paths = run_paths(out, store)
    report = import_history(path, paths.store_path, paths.out_dir, rules, note=say)
    say(report.summary())
    report.check()
