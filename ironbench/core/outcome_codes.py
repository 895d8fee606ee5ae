"""An invocation's outcome in one character, declared once: its code, name, colour, mark and
whether it is evidence, and the rule that gives a recorded invocation its code (in Python
and, for queries, in SQL: the same rules in the same order, side by side).

A run strip is a group's codes in run order ("SGsV"); pages, charts, the viewer's lists
and the `outcome_codes` view all read this table.
"""

from dataclasses import dataclass

from ironbench.core.events import InvocationCompleted


@dataclass(frozen=True, slots=True)
class OutcomeCode:
    """One outcome an invocation can have, as every page and chart shows it."""

    code: str
    """One character; a run strip is its runs' codes in run order."""
    name: str
    """What it means, in words."""
    colour: str
    """Its colour on pages and charts."""
    mark: str
    """Its mark in a text strip: ✓ success, ✗ failure, ◔ timeout, ? unknown, · not evidence."""
    evidence: bool
    """Whether it says something about the target: counted in rates and decisions."""
    success: bool
    """Whether the target succeeded (with or without repairs)."""


OUTCOME_CODES: tuple[OutcomeCode, ...] = (
    OutcomeCode("S", "success", "#2e7d32", "✓", True, True),
    OutcomeCode("s", "success after repair", "#81c784", "✓", True, True),
    OutcomeCode("G", "failed: generation", "#c62828", "✗", True, False),
    OutcomeCode("V", "failed: validation", "#ef6c00", "✗", True, False),
    OutcomeCode("R", "failed: repair", "#ad1457", "✗", True, False),
    OutcomeCode("U", "failed: unknown", "#6d4c41", "?", True, False),
    OutcomeCode("T", "failed: timeout", "#5e35b1", "◔", True, False),
    OutcomeCode("H", "harness error (excluded)", "#9e9e9e", "·", False, False),
    OutcomeCode("I", "infrastructure error (excluded)", "#cfcfcf", "·", False, False),
    OutcomeCode("X", "infrastructure error, slot re-run (superseded, excluded)", "#e0e0e0", "·", False, False),
)
BY_CODE: dict[str, OutcomeCode] = {c.code: c for c in OUTCOME_CODES}
EVIDENCE_CODES = "".join(c.code for c in OUTCOME_CODES if c.evidence)
EXCLUDED_CODES = "".join(c.code for c in OUTCOME_CODES if not c.evidence)
SUCCESS_CODES = "".join(c.code for c in OUTCOME_CODES if c.success)
SUPERSEDED = "X"  # an attempt a re-run replaced: a status of its row, not of its fields

# The failure stages with a code of their own; any other stage is "U".
STAGE_CODES = {"generation": "G", "validation": "V", "repair": "R"}


def outcome_code(invocation: InvocationCompleted) -> str:
    """A recorded invocation's code: the first rule that holds (OUTCOME_CODE_SQL in SQL)."""
    if invocation.harness_error is not None:
        return "H"
    if invocation.infra_error is not None:
        return "I"
    if invocation.timed_out or invocation.failure_stage == "timeout":
        return "T"
    if invocation.success:
        return "s" if invocation.repairs_triggered > 0 else "S"
    return STAGE_CODES.get(invocation.failure_stage or "", "U")


# The same rules over the invocations views' columns.
OUTCOME_CODE_SQL = (
    "CASE WHEN harness_error IS NOT NULL THEN 'H' "
    "WHEN infra_error IS NOT NULL THEN 'I' "
    "WHEN timed_out OR failure_stage = 'timeout' THEN 'T' "
    "WHEN success AND repairs_triggered > 0 THEN 's' "
    "WHEN success THEN 'S' "
    + "".join(f"WHEN failure_stage = '{stage}' THEN '{code}' " for stage, code in STAGE_CODES.items())
    + "ELSE 'U' END"
)
