"""Projections: views derived from events alone, incremental and rebuildable."""
