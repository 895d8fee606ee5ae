"""Did B regress against A? The pure decision, its prose, reading the store, and the console table."""

from ironbench.analysis.compare.comparison import (
    POWER,
    CaseComparison,
    Comparison,
    Evidence,
    Gating,
    Overall,
    Runs,
    Shift,
    Side,
)
from ironbench.analysis.compare.decide import CannotCompare, decide
from ironbench.analysis.compare.format import format_comparison, format_plan
from ironbench.analysis.compare.read import compare_runs, runs_from_rows

__all__ = [
    "POWER",
    "CannotCompare",
    "CaseComparison",
    "Comparison",
    "Evidence",
    "Gating",
    "Overall",
    "Runs",
    "Shift",
    "Side",
    "compare_runs",
    "decide",
    "format_comparison",
    "format_plan",
    "runs_from_rows",
]
