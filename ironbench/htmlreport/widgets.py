"""Page parts every section uses: sections, sortable tables, outcome strips, numbers."""

from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.htmlreport.gather import OUTCOME_NAMES
from ironbench.htmlreport.markup import Markup, el, esc, join

# Colours per outcome code (gather.CODE); names say the same in words.
OUTCOME_COLOURS = {
    "S": "#2e7d32", "s": "#81c784", "G": "#c62828", "V": "#ef6c00", "R": "#ad1457", "U": "#6d4c41",
    "T": "#5e35b1", "H": "#9e9e9e", "I": "#cfcfcf",
}
PALETTE = {code: (OUTCOME_COLOURS[code], name) for code, name in OUTCOME_NAMES.items()}
SUCCESS_CODES = ("S", "s")


def section(section_id: str, title: str, intro: str | Markup | None, *body) -> Markup:
    return el("section", {"id": section_id},
              el("h2", None, title), el("p", {"class": "intro"}, intro) if intro else None, *body)


def figure(chart: Markup, caption: str | Markup) -> Markup:
    return el("figure", None, el("div", {"class": "scroll"}, chart), el("figcaption", None, caption))


@dataclass(frozen=True)
class Col:
    title: str
    numeric: bool = False
    help: str | None = None


def table(columns: Sequence[Col], rows: Sequence[Sequence], filterable: bool = False,
          caption: str | None = None) -> Markup:
    """A sortable table (sorting and the filter box are added by the page's script).

    A cell is text, Markup, or (shown, sort value) when what is shown does not sort by itself.
    """
    head = el("tr", None, [el("th", {"title": c.help, "data-numeric": c.numeric or None, "scope": "col"}, c.title)
                           for c in columns])
    body = []
    for row in rows:
        cells = []
        for cell in row:
            if isinstance(cell, tuple):
                shown, key = cell
                cells.append(el("td", {"data-v": key}, shown))
            else:
                cells.append(el("td", None, cell))
        body.append(el("tr", None, cells))
    classes = "sortable filterable" if filterable else "sortable"
    return el("div", {"class": "scroll"},
              el("table", {"class": classes}, el("caption", None, caption) if caption else None,
                 el("thead", None, head), el("tbody", None, body)))


def strip(codes: str) -> Markup:
    """A run sequence in text: one coloured mark per run (readable without colour too)."""
    marks = []
    for code in codes:
        mark = "✓" if code in SUCCESS_CODES else "·" if code in ("H", "I") else "✗"
        marks.append(f'<b class="o{esc(code)}" title="{esc(OUTCOME_NAMES.get(code, code))}">{mark}</b>')
    return Markup(f'<span class="strip">{"".join(marks)}</span>')


def outcome_css() -> str:
    """Class names are case-sensitive in standards mode: .oS (success) and .os (after repair) differ."""
    return "".join(f".o{code}{{color:{colour}}}" for code, colour in OUTCOME_COLOURS.items())


def ratio(successes: int, n: int) -> tuple[str, float]:
    """`3/10 (30%)`, sorting by the rate."""
    if not n:
        return "–", -1.0
    return f"{successes}/{n} ({successes / n:.0%})", round(successes / n, 4)


def interval(low: float | None, high: float | None) -> tuple[str, float]:
    if low is None or high is None:
        return "–", -1.0
    return f"{low:.0%}–{high:.0%}", round(low, 4)


def number(value, digits: int = 2) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}".rstrip("0").rstrip(".") if digits else f"{value:.0f}"
    return str(value)


def extra_evidence(decision: dict | None, known: Sequence[str]) -> Markup:
    """Decision fields this page does not name yet (added by a later ironbench), shown as they are."""
    if not decision:
        return Markup("")
    extra = [(k, v) for k, v in decision.items() if k not in known and v is not None]
    return join([el("span", {"class": "kv"}, f"{k} = {number(v, 3)}") for k, v in extra])


def decision_badge(decision: dict | None) -> Markup:
    if not decision:
        return el("span", {"class": "badge undecided"}, "undecided")
    name = decision.get("decision", "?")
    return el("span", {"class": f"badge d-{name}", "title": decision.get("reason")}, name)
