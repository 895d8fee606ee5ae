"""Rebuilding a run's projections from its events alone."""

from pathlib import Path

from ironbench.errors import RunNotFound
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.store.eventstore import open_store


def project_run(store_path: Path, out_dir: Path, run_id: str, rebuild: bool) -> Path:
    """Bring a run's output tree (and with --rebuild, its read-model rows) up to date."""
    store = open_store(store_path, create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        tree = OutputTree(store, out_dir)
        if not rebuild:
            tree.catch_up()
            return tree.run_dir(run_id)
        read_model = ReadModel()
        events = list(store.read(run_id))
        with store.transaction() as conn:
            read_model.clear_run(conn, run_id)
            read_model.apply(conn, events)
        return tree.rebuild(run_id)
