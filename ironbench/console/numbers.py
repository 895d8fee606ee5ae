"""Numbers as people write them: a value that rounds to zero prints as 0, never -0 or +0.

Python keeps the sign of a negative value that rounds to nothing (`f"{-0.001:.2f}"` is
`-0.00`) and of negative zero itself (a difference `-(a - b)` of equal rates); a
signed format (`+.0f`) writes `+0`. Every number the console, the report and the
JUnit file print goes through `number` (or `points`, for differences of rates).
"""

import re

_EXPONENT = re.compile("[eE]")


def _zero_unsigned(text: str) -> str:
    """`text` without its sign when every digit before the exponent is 0."""
    mantissa = _EXPONENT.split(text, maxsplit=1)[0]
    if text[:1] in "+-" and any(c.isdigit() for c in mantissa) and not any(c in "123456789" for c in mantissa):
        return text[1:]
    return text


def number(value: float, spec: str = ".3g") -> str:
    """`format(value, spec)`, with no sign on a value that rounds to zero."""
    return _zero_unsigned(format(value, spec))


def points(share: float | None, digits: int = 0, unit: str = " pp", missing: str = "-") -> str:
    """A difference of two rates in percentage points, signed: `+12 pp`, `0 pp`, `-3.5 pp`
    (`unit=""` for the first bound of an interval)."""
    if share is None:
        return missing
    return f"{number(share * 100, f'+.{digits}f')}{unit}"


def percent(share: float | None, digits: int = 0, missing: str = "-") -> str:
    """A rate as a percentage: `40%`, `0%` (never `-0%`)."""
    if share is None:
        return missing
    return number(share, f".{digits}%")
