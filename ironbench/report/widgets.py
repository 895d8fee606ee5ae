"""Page parts every section uses: sections, sortable tables, outcome strips, numbers."""

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

from ironbench.analysis.gate_verdict import GATED
from ironbench.console import numbers
from ironbench.core.outcome_codes import BY_CODE, OUTCOME_CODES
from ironbench.report.listing import sentence
from ironbench.report.markup import Markup, el, esc, join
from ironbench.report.records import Decision, LeftOut


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


def marks(codes: str) -> Markup:
    """A run sequence in text, one mark per run: ✓ success, ✗ failure, ◔ timeout, ? unknown,
    · excluded; colour tells the failure stage (see the legend). Runs of one outcome share a tag."""
    return Markup(
        "".join(f'<b class="o{esc(code)}">{_mark(code) * len(list(run))}</b>' for code, run in groupby(codes))
    )


def _mark(code: str) -> str:
    found = BY_CODE.get(code)
    return found.mark if found else "✗"


def strip(codes: str) -> Markup:
    return el("span", {"class": "strip"}, marks(codes))


def strip_cell(codes: str) -> Td:
    return Td(marks(codes), cls="strip")


def outcome_css() -> str:
    """Class names are case-sensitive in standards mode: .oS (success) and .os (after repair) differ."""
    return "".join(f".o{c.code}{{color:{c.colour}}}" for c in OUTCOME_CODES)


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


def extra_evidence(decision: Decision | None) -> Markup:
    """Decision fields this page does not name yet (added by a later ironbench), shown as they are."""
    if not decision:
        return Markup("")
    return join([el("span", {"class": "kv"}, f"{k} = {number(v, 3)}") for k, v in decision.more])


def has_extra(decisions: Sequence[Decision | None]) -> bool:
    """Whether any of these decisions has a field the page does not name (else no column for them)."""
    return any(d.more for d in decisions if d)


def decision_cell(decision: str | None, key: object = None) -> Td:
    """A decision kind as a table cell in its colour (`undecided` without one)."""
    name = decision or "undecided"
    return Td(name.replace("_", " "), key, f"dec d-{name}")  # spaces let "systematic failure" wrap


def decided_cell(decision: Decision | None) -> Td:
    """A group's decision as a cell: its kind, or for a case the sequential gate decided with
    every other case (`run --against`), the round it did so at."""
    if decision is not None and decision.decision == "gated":
        return Td(GATED.format(round=decision.n), "gated", "dec d-gated")
    return decision_cell(decision.decision if decision else None)


def runs_cell(codes: str, superseded: int = 0) -> Td:
    """A group's run strip, and any attempts a re-run superseded."""
    if not superseded:
        return strip_cell(codes)
    return Td(join([Markup(strip_cell(codes).shown), el("small", None, f" +{superseded} superseded")]), cls="strip")


def left_out(note: LeftOut | None, noun: str) -> Markup | None:
    """What a section leaves out of a run too large to list whole, and how to see it."""
    return el("p", {"class": "left-out"}, commands(sentence(note, noun))) if note else None


def commands(text: str) -> Markup:
    """Text whose `quoted` parts are commands, set as code."""
    return join([el("code", None, part) if k % 2 else part for k, part in enumerate(text.split("`"))])


def also(text: str) -> str:
    """A clause appended to an intro as a sentence of its own (empty text: nothing)."""
    return f" {text[:1].upper()}{text[1:]}." if text else ""
