"""Commands for gauntlet runs: `rescore`."""

from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    OutOption,
    StoreOption,
    run_paths,
    say,
)


def rescore(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="A gauntlet run.")],
    scorer: Annotated[
        str,
        typer.Option(
            "--scorer",
            help="Scorer name: literal, negation_aware, judge (the model "
            "in $IRONBENCH_JUDGE_MODEL, default the embedded one) or judge:MODEL.",
        ),
    ],
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Re-score a gauntlet run's stored transcripts (new events; no engine is called)."""
    from ironbench.gauntlet import rescore_run

    paths = run_paths(out, store)
    violations = rescore_run(paths.store_path, paths.out_dir, run_id, scorer)
    for engine, count in violations.items():
        say(f"{engine}: {count} violation(s) by {scorer}")
