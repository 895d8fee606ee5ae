"""Commands that look after the store: `project`, `verify`, `db upgrade`."""

from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    OutOption,
    RunArgument,
    StoreOption,
    run_paths,
    say,
)


def project(
    run_id: RunArgument,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Delete and regenerate from events alone.")] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Rebuild even from events whose hash chain is broken (see `ironbench verify`)."),
    ] = False,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Bring a run's output tree up to date from the event store."""
    from ironbench.projections.rebuild import project_run
    from ironbench.report import write_report

    paths = run_paths(out, store)
    say(str(project_run(paths.store_path, paths.out_dir, run_id, rebuild, force, report_writer=write_report)))


def verify(
    run_id: Annotated[str | None, typer.Argument(metavar="[RUN]", help="Only this run's events and links.")] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
) -> None:
    """Check the events' hash chain; exits 1 naming the first broken link."""
    from ironbench.core.errors import ChainBroken
    from ironbench.projections.rebuild import verify_store

    report = verify_store(run_paths(out, store).store_path, run_id)
    if report.broken is not None:
        raise ChainBroken(f"hash chain broken at {report.broken.describe()} ({report.checked} events before it hold)")
    scope = f"run {run_id}: " if run_id else ""
    say(f"{scope}hash chain holds over {report.checked} events; head {report.head or '-'}")


def db_upgrade(out: OutOption = DEFAULT_OUT, store: StoreOption = None) -> None:
    """Create the store if needed and apply every pending alembic revision."""
    from ironbench.store import upgrade

    path = run_paths(out, store).store_path
    path.parent.mkdir(parents=True, exist_ok=True)
    typer.echo(f"{path}: at revision {upgrade(path)}")
