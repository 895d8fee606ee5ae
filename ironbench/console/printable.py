"""Text from users and targets made safe for a terminal: control characters shown, not obeyed.

An instruction, a target's output or a query cell may carry escape sequences (clear
the screen, set the window title, rewrite earlier lines) or bidirectional overrides
that make text read differently from what it is. Human-readable output escapes them;
machine formats (json, csv) keep the exact data.
"""

import re

# C0 and C1 controls, DEL, bidirectional overrides and isolates, line/paragraph separators.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_KEEPING_LINES = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match) -> str:
    char = match.group(0)
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def printable(text: str, keep_newlines: bool = False) -> str:
    """`text` with every control character written as an escape (\\x1b, \\u202e, \\n)."""
    return (_UNSAFE_KEEPING_LINES if keep_newlines else _UNSAFE).sub(_escape, text)
