"""Projections: views derived from events alone, incremental and rebuildable.

The read model (tables for DuckDB) is applied inside the append transaction; the output
tree (metadata.json, summary.json, aggregate.json, ...) follows the events on disk.
"""

from ironbench.projections.readmodel import READ_MODEL_TABLES, ReadModel
from ironbench.projections.rebuild import ReportWriter, project_run, verify_store
from ironbench.projections.tree import OutputTree

__all__ = ["READ_MODEL_TABLES", "OutputTree", "ReadModel", "ReportWriter", "project_run", "verify_store"]
