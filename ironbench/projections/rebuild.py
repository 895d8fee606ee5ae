"""Rebuilding a run's projections from its events alone, once the events are verified."""

from collections.abc import Callable
from pathlib import Path

from ironbench.core.errors import ChainBroken, RunNotFound
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.store import ChainReport, open_store, verify_chain

# Writes a run's HTML report: (store, out dir, run id). The report layer reads projections,
# so a projection cannot import it; whoever rebuilds passes it in (the CLI passes
# `ironbench.report.write_report`).
ReportWriter = Callable[[Path, Path, str], object]


def verify_store(store_path: Path, run_id: str | None = None) -> ChainReport:
    """Check the hash chain of the whole store, or of one run's events and their links."""
    store = open_store(store_path, create=False)
    with store:
        has_events = store.conn.execute("SELECT 1 FROM events WHERE run_id = ? LIMIT 1", (run_id,)).fetchone()
        if run_id is not None and has_events is None:
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        return verify_chain(store.conn, run_id)


def project_run(
    store_path: Path,
    out_dir: Path,
    run_id: str,
    rebuild: bool,
    force: bool = False,
    report_writer: ReportWriter | None = None,
) -> Path:
    """Bring a run's output tree (and with --rebuild, its read-model rows) up to date.

    A rebuild trusts the events completely, so it refuses a run whose chain is
    broken unless `force` says to rebuild from them anyway. With a `report_writer`, it
    writes the run's HTML report again if the run has one (a `report_written` event; it is
    derived from the same events), even when its folder is gone; without one, the report is
    kept as it was. Comparison pages are kept as they were
    (they read other runs too). It holds the run's lease: a run being written by its
    coordinator is refused, naming the holder.
    """
    store = open_store(store_path, create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        tree = OutputTree(store, out_dir)
        if not rebuild:
            tree.catch_up()
            return tree.run_dir(run_id)
        broken = verify_chain(store.conn, run_id).broken
        if broken is not None and not force:
            raise ChainBroken(
                f"{store_path}: refusing to rebuild {run_id}: hash chain broken at "
                f"{broken.describe()}; pass --force to rebuild from these events anyway"
            )
        run_dir = tree.run_dir(run_id)
        # The run's coordinator would write the same folder and rows: a rebuild waits its turn.
        with store.leased(run_id):
            read_model = ReadModel()
            events = list(store.read(run_id))
            # Whether the run has a report is a fact of its events (runs reported before that fact
            # was recorded: the file still says so, and writing it again records it).
            had_report = any(e.type == "report_written" for e in events) or (run_dir / "report.html").is_file()
            with store.transaction() as conn:
                read_model.clear_run(conn, run_id)
                read_model.apply(conn, events)
            target = tree.rebuild(run_id, events, keep=lambda path: path.parent == run_dir and _page(path.name))
            if had_report and report_writer is not None:
                report_writer(store_path, out_dir, run_id)  # written whole, over the old one
    return target


def _page(name: str) -> bool:
    """Pages other commands write into a run's folder: the report (rewritten when it can be)
    and comparisons (they read other runs too), kept as they are."""
    return name == "report.html" or (name.startswith("compare_") and name.endswith(".html"))
