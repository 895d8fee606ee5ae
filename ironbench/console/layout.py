"""Console tables and prose that fit the terminal: long text elided in the middle, numbers whole.

With no width (output piped, no COLUMNS) a table is laid out at its natural width and
prose is not wrapped, so `grep`, `less -S` and scripts see every character. With a
width, a table that is too wide first folds its headers (at `_` and spaces) and elides
the middle of long text cells (`ambiguity_…nt_0001`), never below a readable minimum and
never a number; what still does not fit continues in further panels that repeat the key
columns (the first, or the first `keys`), so every cell stays on a line within the width.
"""

import math
import os
import re
import sys
import textwrap
from datetime import date, datetime
from decimal import Decimal

from rich.cells import cell_len

SEPARATOR = "  "
ELLIPSIS = "…"
TEXT_MIN = 12  # an elided text cell keeps at least this many columns (when it had that many)
SHORTER = 0.7  # to stay in one panel, text cells may lose up to 30% of their width
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?")
_WORDS = re.compile(r"[^_\s]+(?:_+|\s+|$)|_+|\s+")


def terminal_width(stream=None) -> int | None:
    """The width to fit: `COLUMNS` when set, else the terminal's; None when output is not a terminal."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    stream = stream if stream is not None else sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or None
    except (AttributeError, OSError, ValueError):
        pass
    return None


def is_atomic(value) -> bool:
    """Values never cut: numbers and timestamps (half a number is a different number)."""
    if isinstance(value, str):  # the store keeps times as ISO text
        return bool(_TIMESTAMP.fullmatch(value))
    return isinstance(value, (int, float, Decimal, datetime, date)) and not isinstance(value, bool)


def pad(text: str, width: int) -> str:
    return text + " " * max(0, width - cell_len(text))


def elide(text: str, width: int) -> str:
    """`text` in at most `width` terminal columns, its middle replaced by `…` when longer."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head_width = width // 2
    tail_width = width - 1 - head_width
    head, used = "", 0
    for char in text:
        if used + cell_len(char) > head_width:
            break
        head, used = head + char, used + cell_len(char)
    tail, used = "", 0
    for char in reversed(text):
        if used + cell_len(char) > tail_width:
            break
        tail, used = char + tail, used + cell_len(char)
    return f"{head}{ELLIPSIS}{tail}"


def fold(header: str, width: int) -> list[str]:
    """A header on as many lines as it needs at `width`, broken after `_` or at spaces."""
    if cell_len(header) <= width:
        return [header]
    lines: list[str] = []
    line = ""
    for word in _WORDS.findall(header):
        if line and cell_len(line + word.rstrip()) > width:
            lines.append(line.rstrip())
            line = word.lstrip()
        else:
            line += word
    lines.append(line.rstrip())
    return [elide(part, width) for part in lines if part]


def _header_min(header: str) -> int:
    return max((cell_len(word.rstrip()) for word in _WORDS.findall(header)), default=0)


def _fit(columns: list[int], keys: set[int], natural: list[int], floors: list[list[int]], width: int) -> dict[int, int]:
    """Widths for one panel: natural when they fit; else shrunk stage by stage (each stage's
    floors: first only folding headers, then eliding other columns' text before the keys'),
    the widest column first, never below the last stage's floor."""
    widths = {i: natural[i] for i in columns}
    excess = sum(widths.values()) + len(SEPARATOR) * (len(columns) - 1) - width
    for floor in floors:
        for group in ([i for i in columns if i not in keys], [i for i in columns if i in keys]):
            while excess > 0:
                shrinkable = [i for i in group if widths[i] > floor[i]]
                if not shrinkable:
                    break
                widest = max(shrinkable, key=lambda i: (widths[i], -i))
                widths[widest] -= 1
                excess -= 1
    return widths


def _panels(count: int, keys: list[int], minimum: list[int], width: int) -> list[list[int]]:
    """Column groups that each fit `width` at their packing widths, each led by the key columns."""
    key_width = sum(minimum[i] for i in keys) + len(SEPARATOR) * max(0, len(keys) - 1)
    panels: list[list[int]] = []
    current, used = list(keys), key_width
    for i in range(count):
        if i in keys:
            continue
        grown = used + (len(SEPARATOR) if current else 0) + minimum[i]
        if grown > width and len(current) > len(keys):
            panels.append(current)
            current, used = list(keys), key_width
            grown = used + (len(SEPARATOR) if current else 0) + minimum[i]
        current.append(i)
        used = grown
    if len(current) > len(keys) or not panels:
        panels.append(current)
    return panels


def render(
    headers: list[str], rows: list[list[str]], width: int | None = None, keys: int = 1, atomic: list[bool] | None = None
) -> list[str]:
    """The table's lines: headers, a rule, the rows. `rows` are already printable strings;
    `atomic[i]` marks a column never elided (numbers)."""
    count = len(headers)
    atomic = atomic or [False] * count
    content = [max([0] + [cell_len(r[i]) for r in rows]) for i in range(count)]
    natural = [max(cell_len(h), content[i]) for i, h in enumerate(headers)]
    if width is None or sum(natural) + len(SEPARATOR) * (count - 1) <= width:
        panels, widths = [list(range(count))], [dict(enumerate(natural))]
    else:
        folded = [max(_header_min(h), content[i]) for i, h in enumerate(headers)]
        least = [
            folded[i] if atomic[i] else max(_header_min(h), min(content[i], TEXT_MIN)) for i, h in enumerate(headers)
        ]
        # Packing: text cells a little shorter when that keeps the table in one panel; once it
        # continues in panels anyway, cut only text longer than a third of the width.
        shorter = [folded[i] if atomic[i] else max(least[i], math.ceil(content[i] * SHORTER)) for i in range(count)]
        cap = max(TEXT_MIN, width // 3)
        packed = [folded[i] if atomic[i] else max(least[i], min(content[i], cap)) for i in range(count)]
        if sum(shorter) + len(SEPARATOR) * (count - 1) <= width:
            packed = shorter
        key_columns = list(range(min(keys, count)))
        panels = _panels(count, key_columns, packed, width)
        widths = [_fit(panel, set(key_columns), natural, [folded, packed, least], width) for panel in panels]
        # A folded header may need fewer columns than it was given: give them back.
        widths = [
            {
                i: max([min(content[i], w)] + [cell_len(line) for line in fold(headers[i], w)])
                for i, w in panel_widths.items()
            }
            for panel_widths in widths
        ]
    lines: list[str] = []
    for number, (panel, panel_widths) in enumerate(zip(panels, widths, strict=True)):
        if number:
            lines.append("")
        header_lines = [fold(headers[i], panel_widths[i]) for i in panel]
        height = max(len(h) for h in header_lines)
        for line in range(height):  # a folded header's last line sits on the rule
            cells = [h[line - (height - len(h))] if line >= height - len(h) else "" for h in header_lines]
            lines.append(SEPARATOR.join(pad(c, panel_widths[i]) for c, i in zip(cells, panel, strict=True)).rstrip())
        lines.append(SEPARATOR.join("-" * panel_widths[i] for i in panel))
        for row in rows:
            lines.append(SEPARATOR.join(pad(elide(row[i], panel_widths[i]), panel_widths[i]) for i in panel).rstrip())
    return lines


def wrap(text: str, width: int | None, indent: str = "", hanging: str = "  ") -> str:
    """Prose folded at word boundaries to `width` (as is, without one); each line of
    `text` on its own, continuation lines indented by `hanging`."""
    if width is None:
        return "\n".join(indent + line for line in text.split("\n"))
    out = []
    for line in text.split("\n"):
        if not line.strip():
            out.append("")
            continue
        out += textwrap.wrap(
            line,
            width=max(10, width),
            initial_indent=indent,
            subsequent_indent=indent + hanging,
            break_on_hyphens=False,
            drop_whitespace=True,
        ) or [""]
    return "\n".join(out)
