"""Page parts every section uses: sections, sortable tables, outcome strips, numbers."""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from ironbench.console import numbers
from ironbench.report.gather import OUTCOME_NAMES
from ironbench.report.markup import Markup, el, esc, join

# Colours per outcome code (gather.CODE); names say the same in words.
OUTCOME_COLOURS = {
    "S": "#2e7d32",
    "s": "#81c784",
    "G": "#c62828",
    "V": "#ef6c00",
    "R": "#ad1457",
    "U": "#6d4c41",
    "T": "#5e35b1",
    "H": "#9e9e9e",
    "I": "#cfcfcf",
    "X": "#e0e0e0",
}
PALETTE = {code: (OUTCOME_COLOURS[code], name) for code, name in OUTCOME_NAMES.items()}


def section(section_id: str, title: str, intro: str | Markup | None, *body) -> Markup:
    return el(
        "section",
        {"id": section_id},
        el("h2", None, title),
        el("p", {"class": "intro"}, intro) if intro else None,
        *body,
    )


def figure(chart: Markup, caption: str | Markup) -> Markup:
    return el("figure", None, el("div", {"class": "scroll"}, chart), el("figcaption", None, caption))


@dataclass(frozen=True)
class Col:
    title: str
    numeric: bool = False
    help: str | None = None


@dataclass(frozen=True)
class Td:
    """A table cell: what it shows, the value it sorts by when the shown text does not
    sort by itself, and a class (a decision's colour, a run strip, a diff)."""

    shown: object
    key: object = None
    cls: str | None = None


def _td(cell) -> Markup:
    if isinstance(cell, tuple):
        cell = Td(*cell)
    if not isinstance(cell, Td):
        return el("td", None, cell)
    key = round(cell.key, 4) if isinstance(cell.key, float) else cell.key
    if key is not None and not isinstance(cell.shown, Markup) and str(key) == str(cell.shown):
        key = None  # sorts by its text already
    return el("td", {"data-v": key, "class": cell.cls}, cell.shown)


def table(
    columns: Sequence[Col], rows: Sequence[Sequence], filterable: bool = False, caption: str | None = None
) -> Markup:
    """A sortable table (sorting and the filter box are added by the page's script).

    A cell is text, Markup, a Td, or (shown, sort value).
    """
    head = el("tr", None, [el("th", {"title": c.help, "data-numeric": c.numeric or None}, c.title) for c in columns])
    body = Markup("".join(el("tr", None, [_td(cell) for cell in row]) for row in rows))
    classes = "sortable filterable" if filterable else "sortable"
    return el(
        "div",
        {"class": "scroll"},
        el(
            "table",
            {"class": classes},
            el("caption", None, caption) if caption else None,
            el("thead", None, head),
            el("tbody", None, body),
        ),
    )


MARKS = {"S": "✓", "s": "✓", "T": "◔", "H": "·", "I": "·", "X": "·", "U": "?"}


def marks(codes: str) -> Markup:
    """A run sequence in text, one mark per run: ✓ success, ✗ failure, ◔ timeout, ? unknown,
    · excluded; colour tells the failure stage (see the legend). Runs of one outcome share a tag."""
    return Markup(
        "".join(f'<b class="o{esc(code)}">{MARKS.get(code, "✗") * len(list(run))}</b>' for code, run in groupby(codes))
    )


def strip(codes: str) -> Markup:
    return el("span", {"class": "strip"}, marks(codes))


def strip_cell(codes: str) -> Td:
    return Td(marks(codes), cls="strip")


def outcome_css() -> str:
    """Class names are case-sensitive in standards mode: .oS (success) and .os (after repair) differ."""
    return "".join(f".o{code}{{color:{colour}}}" for code, colour in OUTCOME_COLOURS.items())


def ratio(successes: int, n: int) -> tuple[str, float]:
    """`3/10 (30%)`, sorting by the rate."""
    if not n:
        return "–", -1.0
    return f"{successes}/{n} ({numbers.percent(successes / n)})", round(successes / n, 4)


def interval(low: float | None, high: float | None) -> tuple[str, float]:
    if low is None or high is None:
        return "–", -1.0
    return f"{numbers.percent(low)}–{numbers.percent(high)}", round(low, 4)


def number(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        text = numbers.number(value, f".{digits}f")
        return text.rstrip("0").rstrip(".") if digits else text
    return str(value)


def extra_evidence(decision: dict | None, known: Sequence[str]) -> Markup:
    """Decision fields this page does not name yet (added by a later ironbench), shown as they are."""
    if not decision:
        return Markup("")
    extra = [(k, v) for k, v in decision.items() if k not in known and v is not None]
    return join([el("span", {"class": "kv"}, f"{k} = {number(v, 3)}") for k, v in extra])


def has_extra(decisions, known: Sequence[str]) -> bool:
    """Whether any of these decisions has a field the page does not name (else no column for them)."""
    return any(k not in known and v is not None for d in decisions if d for k, v in d.items())


def decision_cell(decision: dict | None, key=None) -> Td:
    name = (decision or {}).get("decision", "undecided")
    return Td(name.replace("_", " "), key, f"dec d-{name}")  # spaces let "systematic failure" wrap
