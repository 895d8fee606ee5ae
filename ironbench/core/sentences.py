"""The words a verdict says, the same wherever it is said: `ironbench show`, the report, the viewer."""

# A stress ladder's verdict that names a level, by its decision.
LADDER_VERDICTS = {
    "boundary": "capability boundary at level {level}",
    "tentative": "tentative boundary at level {level}",
    "fails_at_base": "fails at base: level 0, the unchanged instruction, already fails systematically",
}


def ladder_verdict(decision: str, level: int | None) -> str:
    """`capability boundary at level 2`, `tentative boundary at level 1`, or the failing base."""
    return LADDER_VERDICTS[decision].format(level=level)
