"""The single-string contract: an instruction names the task, never the harness around it."""

import re

# Each pattern is one forbidden concept of the spec; word boundaries keep
# "logic" or "contest" legal while "logs" and "tests" are not.
_FORBIDDEN = re.compile(
    r"\b("
    r"tests?|testing|pytest|unittests?|coverage"
    r"|validat(?:e|es|ed|ion|ing)"
    r"|performance|performant|optimi[sz](?:e|es|ed|ation|ing)"
    r"|tool(?:s|ing)?"
    r"|harness(?:es|ing)?"
    r"|benchmark(?:s|ed|ing)?"
    r"|log(?:s|ged|ging)?"
    r"|debug(?:s|ged|ging)?"
    r")\b",
    re.IGNORECASE,
)


def forbidden_word(instruction: str) -> str | None:
    """Return the first forbidden word in the instruction, or None when it is clean."""
    match = _FORBIDDEN.search(instruction)
    return match.group(0) if match else None
