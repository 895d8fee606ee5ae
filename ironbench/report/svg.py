"""Inline SVG charts for the report: interval bars, heatmaps, outcome sequences,
ladders, lines, stacked histograms and a forest plot. Pure functions returning Markup.

Drawn by hand, not by a plotting library: the page must open offline with scripts
off and stay small, and these seven shapes are rectangles, lines and text. Labels
are escaped like every other text on the page.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.console.numbers import number, percent
from ironbench.core.outcome_codes import BY_CODE
from ironbench.report.markup import Markup, el, join, leaf

FONT = 11
ROW = 16
INK = "#222"
GRID = "#ddd"
MUTED = "#777"
BAR = "#9ecae1"
POINT = "#08519c"
ALARM = "#c62828"
WARN = "#ef6c00"
SERIES = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _n(value: float) -> str:
    """Coordinates with one decimal at most: the page stays small."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _svg(width: float, height: float, label: str, *children) -> Markup:
    return el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": _n(width),
            "height": _n(height),
            "viewBox": f"0 0 {_n(width)} {_n(height)}",
            "role": "img",
            "aria-label": label,
            "font-size": FONT,
            "font-family": "system-ui, sans-serif",
            "class": "chart",
        },
        el("title", None, label),
        *children,
    )


def _titled(tooltip: str, *children: object) -> Markup:
    """A group of shapes with its tooltip (SVG's <title>: what a reader points at says what it is)."""
    return el("g", None, el("title", None, tooltip), *children)


def _text(x: float, y: float, text: str, anchor: str = "start", **attrs) -> Markup:
    return el("text", {"x": _n(x), "y": _n(y), "text-anchor": anchor if anchor != "start" else None, **attrs}, text)


def _line(x1: float, y1: float, x2: float, y2: float, stroke: str = INK, **attrs) -> Markup:
    return leaf("line", {"x1": _n(x1), "y1": _n(y1), "x2": _n(x2), "y2": _n(y2), "stroke": stroke, **attrs})


def _whisker(lo: float, hi: float, mid: float, colour: str, vertical: bool = False) -> Markup:
    """An interval with end caps, as one path."""
    if vertical:  # lo, hi are y positions at x = mid
        d = f"M{_n(mid)} {_n(lo)}V{_n(hi)}M{_n(mid - 4)} {_n(lo)}h8M{_n(mid - 4)} {_n(hi)}h8"
    else:
        d = f"M{_n(lo)} {_n(mid)}H{_n(hi)}M{_n(lo)} {_n(mid - 4)}v8M{_n(hi)} {_n(mid - 4)}v8"
    return leaf("path", {"d": d, "stroke": colour, "stroke-width": 1.5, "fill": "none"})


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: max(1, chars - 1)] + "…"


def _pct(value: float) -> str:
    return percent(value)


def _grid(d: list[str]) -> Markup:
    """Grid lines as one path."""
    return leaf("path", {"d": "".join(d), "stroke": GRID})


def _labels(anchor: str, texts: list[Markup]) -> Markup:
    """Axis labels share their colour and anchor through one group."""
    return el("g", {"fill": MUTED, "text-anchor": anchor if anchor != "start" else None}, texts)


def _unit_axis(
    x0: float,
    width: float,
    y_top: float,
    y_bottom: float,
    ticks=(0, 0.25, 0.5, 0.75, 1.0),
    fmt=_pct,
    lo: float = 0.0,
    hi: float = 1.0,
) -> Markup:
    """Vertical grid lines with labels below, for a horizontal value axis from lo to hi."""
    xs = [(x0 + (tick - lo) / (hi - lo) * width, tick) for tick in ticks]
    return join(
        [
            _grid([f"M{_n(x)} {_n(y_top)}V{_n(y_bottom)}" for x, _ in xs]),
            _labels("middle", [_text(x, y_bottom + FONT + 2, fmt(tick)) for x, tick in xs]),
        ]
    )


@dataclass(frozen=True)
class IntervalRow:
    label: str
    value: float  # a rate in [0, 1]
    low: float
    high: float
    note: str = ""  # right of the row, e.g. "7/10"
    flagged: bool = False


def interval_bars(rows: Sequence[IntervalRow], title: str, width: int = 680, label_chars: int = 30) -> Markup:
    """One row per item: a bar to the rate, a whisker over its interval, the count on the right."""
    label_w, note_w = label_chars * 6.2, 70
    plot_w = width - label_w - note_w - 10
    height = len(rows) * ROW + 28
    parts = [_unit_axis(label_w, plot_w, 4, len(rows) * ROW + 6)]
    for i, row in enumerate(rows):
        y = 6 + i * ROW
        mid = y + ROW / 2
        x = label_w + row.value * plot_w
        lo, hi = label_w + row.low * plot_w, label_w + row.high * plot_w
        colour = ALARM if row.flagged else POINT
        parts.append(
            _titled(
                f"{row.label}: {_pct(row.value)} (95% CI {_pct(row.low)}–{_pct(row.high)}) {row.note}",
                _text(label_w - 6, mid + 4, _clip(row.label, label_chars), "end"),
                leaf(
                    "rect", {"x": _n(label_w), "y": _n(y + 3), "width": _n(x - label_w), "height": ROW - 6, "fill": BAR}
                ),
                _whisker(lo, hi, mid, colour),
                leaf("circle", {"cx": _n(x), "cy": _n(mid), "r": 3, "fill": colour}),
                _text(label_w + plot_w + 8, mid + 4, row.note, fill=MUTED),
            )
        )
    return _svg(width, height, title, *parts)


@dataclass(frozen=True)
class Cell:
    row: str
    column: str
    value: float | None  # in [0, 1]; None: nothing measured
    text: str
    tooltip: str = ""


def _ramp(value: float) -> str:
    """White to dark red: higher is worse (material changes, violations)."""
    value = min(1.0, max(0.0, value))
    start, end = (255, 255, 255), (165, 15, 21)
    return "#" + "".join(f"{round(a + (b - a) * value):02x}" for a, b in zip(start, end, strict=True))


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    cells: Sequence[Cell],
    title: str,
    cell_w: int = 64,
    label_chars: int = 26,
) -> Markup:
    """A grid of rows × columns, each cell coloured by its value (white to dark red) and labelled;
    a cell without a value (or none at all) is grey."""
    at = {(cell.row, cell.column): cell for cell in cells}
    label_w = label_chars * 6.2
    head_h = 70
    width = label_w + len(columns) * cell_w + 70  # room for the last column's slanted label
    height = head_h + len(rows) * 22 + 6
    parts, cells_drawn = [], []
    for j, column in enumerate(columns):
        x = label_w + j * cell_w + cell_w / 2
        parts.append(
            _titled(
                column,
                _text(x, head_h - 6, _clip(column, 16), transform=f"rotate(-35 {_n(x)} {_n(head_h - 6)})"),
            )
        )
    for i, row in enumerate(rows):
        y = head_h + i * 22
        parts.append(_titled(row, _text(label_w - 6, y + 15, _clip(row, label_chars), "end")))
        for j, column in enumerate(columns):
            cell = at.get((row, column))
            x = label_w + j * cell_w
            if cell is None or cell.value is None:
                parts.append(
                    leaf("rect", {"x": _n(x + 1), "y": _n(y + 1), "width": cell_w - 2, "height": 20, "fill": "#f4f4f4"})
                )
                if cell is not None:
                    parts.append(_text(x + cell_w / 2, y + 15, cell.text, "middle", fill=MUTED))
                continue
            # the text's anchor and colour are the group's (below): thousands of cells stay small
            cells_drawn.append(
                _titled(
                    cell.tooltip or f"{row} × {column}: {cell.text}",
                    leaf(
                        "rect",
                        {"x": _n(x + 1), "y": _n(y + 1), "width": cell_w - 2, "height": 20, "fill": _ramp(cell.value)},
                    ),
                    _text(x + cell_w / 2, y + 15, cell.text, fill="#fff" if cell.value > 0.55 else None),
                )
            )
    parts.append(el("g", {"text-anchor": "middle", "fill": INK}, cells_drawn))
    return _svg(width, height, title, *parts)


@dataclass(frozen=True)
class SequenceRow:
    label: str
    codes: str  # one character per run, in run order
    planned: int  # runs the plan allowed: hollow squares show the ones an early stop saved
    tooltip: str = ""


def _outcome(code: str) -> tuple[str, str]:
    """An outcome code's colour and name (`ironbench.core.outcome_codes`)."""
    found = BY_CODE.get(code)
    return (found.colour, found.name) if found else ("#999", code)


def sequence_grid(rows: Sequence[SequenceRow], title: str, label_chars: int = 30) -> Markup:
    """Each row's runs in order as squares coloured by outcome; runs never needed are hollow.

    Squares of one colour form one path for the whole grid, so ten thousand runs cost
    tens of kilobytes, not megabytes.
    """
    size, gap = 10, 3
    label_w = label_chars * 6.2
    longest = max([max(len(r.codes), r.planned) for r in rows] + [1])
    width = label_w + longest * (size + gap) + 20
    height = len(rows) * ROW + 24
    paths: dict[str, list[str]] = {}
    hollow: list[str] = []
    parts = []
    for k in range(longest):  # run numbers along the top
        if k == 0 or (k + 1) % 5 == 0:
            parts.append(_text(label_w + k * (size + gap) + size / 2, 12, str(k + 1), "middle", fill=MUTED))
    for i, row in enumerate(rows):
        y = 18 + i * ROW
        for k in range(max(len(row.codes), row.planned)):
            square = f"M{_n(label_w + k * (size + gap))} {_n(y)}h{size}v{size}h-{size}z"
            if k < len(row.codes):
                paths.setdefault(row.codes[k], []).append(square)
            else:
                hollow.append(square)
        parts.append(
            _titled(
                row.tooltip or row.label,
                _text(label_w - 6, y + size - 1, _clip(row.label, label_chars), "end"),
                leaf(
                    "rect",
                    {
                        "x": _n(label_w),
                        "y": _n(y),
                        "width": _n(longest * (size + gap)),
                        "height": size,
                        "fill": "transparent",
                    },
                ),
            )
        )
    for code, squares in sorted(paths.items()):
        colour, name = _outcome(code)
        parts.append(el("path", {"d": "".join(squares), "fill": colour}, el("title", None, name)))
    if hollow:
        parts.append(
            el(
                "path",
                {"d": "".join(hollow), "fill": "none", "stroke": "#bbb"},
                el("title", None, "not run: the case had stopped"),
            )
        )
    return _svg(width, height, title, *parts)


def legend(codes: Sequence[str]) -> Markup:
    """An HTML legend (so it wraps with the page) for the outcome codes a chart uses."""
    items = []
    for code in codes:
        colour, name = _outcome(code)
        items.append(
            el(
                "span",
                {"class": "key"},
                el(
                    "svg",
                    {"width": 10, "height": 10, "aria-hidden": "true"},
                    leaf("rect", {"width": 10, "height": 10, "fill": colour}),
                ),
                " ",
                name,
            )
        )
    return el("p", {"class": "legend"}, items)


@dataclass(frozen=True)
class LevelPoint:
    level: int
    value: float
    low: float
    high: float
    note: str = ""


MARKS = {"boundary": ("boundary", ALARM), "tentative": ("tentative", WARN), "fails_at_base": ("fails at base", ALARM)}


def ladder(
    points: Sequence[LevelPoint],
    marked: int | None,
    title: str,
    planned: int | None = None,
    verdict: str = "boundary",
    width: int = 360,
    height: int = 170,
) -> Markup:
    """Success rate per ladder level with intervals, level 0 (the unchanged instruction) as
    "base"; the level the ladder's verdict names (`verdict`: boundary, tentative or
    fails_at_base) marked, and levels the plan had but the ladder did not need labelled as
    not run."""
    left, right, top, bottom = 36, 12, 14, 30
    label, colour_of_mark = MARKS.get(verdict, (verdict, ALARM))
    levels = [p.level for p in points] or [0]
    first = min(levels + ([marked] if marked is not None else []))
    last = max(levels + ([planned] if planned is not None else []))
    span = max(1, last - first)
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(level: float) -> float:
        return left + (level - first) / span * plot_w if last > first else left + plot_w / 2

    def y(value: float) -> float:
        return top + (1 - value) * plot_h

    parts = [
        _grid([f"M{left} {_n(y(tick))}h{_n(plot_w)}" for tick in (0, 0.5, 1)]),
        _labels("end", [_text(left - 4, y(tick) + 4, _pct(tick)) for tick in (0, 0.5, 1)]),
    ]
    run = {p.level for p in points}
    middle = [
        _text(x(level), height - bottom + 14, "base" if level == 0 else str(level)) for level in range(first, last + 1)
    ]
    middle.append(_text(left + plot_w / 2, height - 3, "level"))
    for level in range(first, last + 1):
        if level not in run and (marked is None or level > marked):
            middle.append(
                _text(
                    x(level),
                    top + plot_h / 2,
                    "not run",
                    transform=f"rotate(-90 {_n(x(level))} {_n(top + plot_h / 2)})",
                )
            )
    parts.append(_labels("middle", middle))
    if marked is not None:
        near_right = x(marked) > left + plot_w * 0.75
        parts += [
            _line(x(marked), top - 4, x(marked), top + plot_h, colour_of_mark, **{"stroke-dasharray": "4 3"}),
            _text(
                x(marked) + (-4 if near_right else 4),
                top + 6,
                label,
                "end" if near_right else "start",
                fill=colour_of_mark,
            ),
        ]
    ordered = sorted(points, key=lambda p: p.level)
    if len(ordered) > 1:
        parts.append(
            leaf(
                "polyline",
                {
                    "points": " ".join(f"{_n(x(p.level))},{_n(y(p.value))}" for p in ordered),
                    "fill": "none",
                    "stroke": POINT,
                    "stroke-opacity": 0.5,
                },
            )
        )
    for p in ordered:
        colour = colour_of_mark if p.level == marked else POINT
        name = "level 0 (base)" if p.level == 0 else f"level {p.level}"
        parts.append(
            _titled(
                f"{name}: {_pct(p.value)} (95% CI {_pct(p.low)}–{_pct(p.high)}) {p.note}",
                _whisker(y(p.low), y(p.high), x(p.level), colour, vertical=True),
                leaf("circle", {"cx": _n(x(p.level)), "cy": _n(y(p.value)), "r": 3.5, "fill": colour}),
            )
        )
    return _svg(width, height, title, *parts)


def lines(
    series: Sequence[tuple[str, Sequence[tuple[int, float]]]],
    title: str,
    x_label: str,
    y_label: str,
    y_max: float,
    width: int = 560,
    height: int = 220,
) -> Markup:
    """One line per series over integer x (e.g. violations per turn, per engine)."""
    left, right, top, bottom = 44, 130, 12, 34
    xs = sorted({x for _, points in series for x, _ in points}) or [1]
    first, last = xs[0], xs[-1]
    plot_w, plot_h = width - left - right, height - top - bottom
    y_max = y_max or 1

    def px(value: float) -> float:
        return left + (value - first) / max(1, last - first) * plot_w

    def py(value: float) -> float:
        return top + (1 - value / y_max) * plot_h

    parts = []
    for tick in sorted({0, y_max / 2, y_max}):
        parts += [
            _line(left, py(tick), left + plot_w, py(tick), GRID),
            _text(left - 4, py(tick) + 4, f"{tick:g}", "end", fill=MUTED),
        ]
    step = max(1, len(xs) // 12)
    for value in xs[::step]:
        parts.append(_text(px(value), top + plot_h + 14, str(value), "middle", fill=MUTED))
    parts.append(_text(left + plot_w / 2, height - 4, x_label, "middle", fill=MUTED))
    parts.append(
        _text(10, top + plot_h / 2, y_label, "middle", fill=MUTED, transform=f"rotate(-90 10 {_n(top + plot_h / 2)})")
    )
    for k, (name, points) in enumerate(series):
        colour = SERIES[k % len(SERIES)]
        ordered = sorted(points)
        parts.append(
            _titled(
                name,
                el(
                    "polyline",
                    {
                        "points": " ".join(f"{_n(px(a))},{_n(py(b))}" for a, b in ordered),
                        "fill": "none",
                        "stroke": colour,
                        "stroke-width": 2,
                    },
                ),
                [
                    el(
                        "circle",
                        {"cx": _n(px(a)), "cy": _n(py(b)), "r": 2.5, "fill": colour},
                        el("title", None, f"{name}, {x_label} {a}: {b:g}"),
                    )
                    for a, b in ordered
                ],
            )
        )
        ly = top + 10 + k * 16
        parts += [
            _line(width - right + 10, ly - 4, width - right + 26, ly - 4, colour, **{"stroke-width": 2}),
            _text(width - right + 30, ly, _clip(name, 16)),
        ]
    return _svg(width, height, title, *parts)


def stacked_columns(
    columns: Sequence[tuple[str, Sequence[tuple[float, str, str]]]],
    title: str,
    x_label: str,
    width: int = 420,
    height: int = 180,
) -> Markup:
    """Vertical bars, each a stack of (count, colour, name) parts: e.g. attempts, split by outcome."""
    left, right, top, bottom = 40, 10, 12, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max([sum(c for c, _, _ in parts) for _, parts in columns] + [1])
    slot = plot_w / max(1, len(columns))
    out = []
    for tick in (0, peak / 2, peak):
        y = top + plot_h - tick / peak * plot_h
        out += [_line(left, y, left + plot_w, y, GRID), _text(left - 4, y + 4, f"{tick:.0f}", "end", fill=MUTED)]
    for i, (label, parts) in enumerate(columns):
        base: float = top + plot_h
        x = left + i * slot + slot * 0.15
        total = sum(c for c, _, _ in parts)
        for count, colour, name in parts:
            h = count / peak * plot_h
            base -= h
            out.append(
                el(
                    "rect",
                    {"x": _n(x), "y": _n(base), "width": _n(slot * 0.7), "height": _n(h), "fill": colour},
                    el("title", None, f"{x_label} {label}: {count:g} {name}"),
                )
            )
        out.append(_text(x + slot * 0.35, top + plot_h + 14, label, "middle", fill=MUTED))
        out.append(_text(x + slot * 0.35, base - 3, f"{total:g}", "middle", fill=INK))
    out.append(_text(left + plot_w / 2, height - 4, x_label, "middle", fill=MUTED))
    return _svg(width, height, title, *out)


@dataclass(frozen=True)
class ForestRow:
    label: str
    estimate: float  # a difference of rates, in [-1, 1]
    low: float
    high: float
    note: str = ""
    flagged: bool = False


def forest(
    rows: Sequence[ForestRow], overall: ForestRow | None, title: str, width: int = 700, label_chars: int = 30
) -> Markup:
    """Per-case differences B − A with intervals around a zero line; the overall estimate
    as a diamond (a point when it has no interval) below them."""
    label_w, note_w = label_chars * 6.2, 150
    plot_w = width - label_w - note_w - 10
    count = len(rows) + (2 if overall is not None else 0)
    height = count * ROW + 30

    def x(value: float) -> float:
        return label_w + (max(-1.0, min(1.0, value)) + 1) / 2 * plot_w

    parts = [
        _unit_axis(
            label_w,
            plot_w,
            4,
            count * ROW + 6,
            ticks=(-1, -0.5, 0, 0.5, 1),
            fmt=lambda t: number(t, "+.0%"),
            lo=-1,
            hi=1,
        ),
        _line(x(0), 4, x(0), count * ROW + 6, INK),
    ]
    for i, row in enumerate(rows):
        mid = 6 + i * ROW + ROW / 2
        colour = ALARM if row.flagged else POINT
        parts.append(
            _titled(
                f"{row.label}: B − A {number(row.estimate, '+.0%')} "
                f"(95% CI {number(row.low, '+.0%')} to {number(row.high, '+.0%')}) "
                f"{row.note}",
                _text(label_w - 6, mid + 4, _clip(row.label, label_chars), "end"),
                _whisker(x(row.low), x(row.high), mid, colour),
                leaf("rect", {"x": _n(x(row.estimate) - 3), "y": _n(mid - 3), "width": 6, "height": 6, "fill": colour}),
                _text(label_w + plot_w + 8, mid + 4, _clip(row.note, 24), fill=MUTED),
            )
        )
    if overall is not None:
        mid = 6 + (len(rows) + 1) * ROW + ROW / 2
        cx, lo, hi = x(overall.estimate), x(overall.low), x(overall.high)
        lo, hi = min(lo, cx - 5), max(hi, cx + 5)
        parts.append(
            _titled(
                f"{overall.label}: {number(overall.estimate, '+.0%')} {overall.note}",
                _line(label_w, mid - ROW + 2, label_w + plot_w, mid - ROW + 2, GRID),
                _text(label_w - 6, mid + 4, _clip(overall.label, label_chars), "end", **{"font-weight": "bold"}),
                leaf(
                    "polygon",
                    {
                        "points": f"{_n(lo)},{_n(mid)} {_n(cx)},{_n(mid - 6)} {_n(hi)},{_n(mid)} "
                        f"{_n(cx)},{_n(mid + 6)}",
                        "fill": ALARM if overall.flagged else INK,
                    },
                ),
                _text(label_w + plot_w + 8, mid + 4, _clip(overall.note, 24), fill=MUTED),
            )
        )
    return _svg(width, height, title, *parts)


@dataclass(frozen=True)
class HoldingStep:
    turn: int
    rate: float  # still holding after the turn, in [0, 1]
    low: float
    high: float


def survival_curve(
    steps: Sequence[HoldingStep], name: str, label: str, colour: str, width: int = 300, height: int = 190
) -> Markup:
    """A Kaplan–Meier step curve with its pointwise band, turns on x, 0–100% on y (`name` above it)."""
    left, right, top, bottom = 40, 10, 18, 30
    last = max(s.turn for s in steps) or 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(turn: float) -> float:
        return left + turn / last * plot_w

    def py(rate: float) -> float:
        return top + (1 - rate) * plot_h

    upper, lower, line = [], [], []
    for k, s in enumerate(steps):
        end = steps[k + 1].turn if k + 1 < len(steps) else s.turn
        upper += [(px(s.turn), py(s.high)), (px(end), py(s.high))]
        lower += [(px(s.turn), py(s.low)), (px(end), py(s.low))]
        line += [(px(s.turn), py(s.rate)), (px(end), py(s.rate))]
    band = " ".join(f"{_n(x)},{_n(y)}" for x, y in upper + lower[::-1])
    grid = "".join(f"M{_n(left)} {_n(py(v))}H{_n(left + plot_w)}" for v in (0, 0.5, 1))
    ticks = sorted({0, last} | {t for t in range(0, last + 1, max(1, last // 8))})
    return _svg(
        width,
        height,
        label,
        el("text", {"x": left, "y": 12}, name),
        leaf("path", {"d": grid, "stroke": GRID}),
        el(
            "g",
            {"fill": MUTED},
            [el("text", {"x": left - 4, "y": _n(py(v) + 4), "text-anchor": "end"}, f"{v:.0%}") for v in (0, 0.5, 1)],
            [el("text", {"x": _n(px(t)), "y": height - 14, "text-anchor": "middle"}, str(t)) for t in ticks],
            el("text", {"x": _n(left + plot_w / 2), "y": height - 2, "text-anchor": "middle"}, "turn"),
        ),
        leaf("polygon", {"points": band, "fill": colour, "fill-opacity": 0.15, "stroke": "none"}),
        leaf(
            "polyline",
            {
                "points": " ".join(f"{_n(x)},{_n(y)}" for x, y in line),
                "fill": "none",
                "stroke": colour,
                "stroke-width": 2,
            },
        ),
    )


@dataclass(frozen=True)
class GateStep:
    """One planned look of a sequential gate: after `round` runs of every case, the boundaries,
    and the statistic if the gate looked there (None: it stopped before)."""

    round: int
    upper: float  # at or above: regressed
    lower: float  # at or below: not regressed
    z: float | None = None
    note: str = ""  # the look in words (its tooltip)


KEEP = "#2e7d32"  # the boundary that says `not regressed`


def sequential_gate(steps: Sequence[GateStep], title: str, width: int = 600, height: int = 240) -> Markup:
    """z per look against the two boundaries, over B's runs per case: the upper one (regressed)
    and the lower one (not regressed) as drawn lines, the statistic as points joined in order."""
    left, right, top, bottom = 44, 110, 12, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for s in steps for v in (s.upper, s.lower, s.z) if v is not None] or [0.0]
    lo, hi = min(min(values), 0.0) - 0.5, max(max(values), 0.0) + 0.5
    last = max((s.round for s in steps), default=1)

    def px(value: float) -> float:
        return left + value / last * plot_w

    def py(value: float) -> float:
        return top + (hi - value) / (hi - lo) * plot_h

    parts = [_line(left, py(0), left + plot_w, py(0), GRID)]
    parts += [
        _text(left - 4, py(tick) + 4, f"{tick:g}", "end", fill=MUTED) for tick in sorted({0.0, round(lo), round(hi)})
    ]
    step = max(1, len(steps) // 12)
    parts += [_text(px(s.round), top + plot_h + 14, str(s.round), "middle", fill=MUTED) for s in steps[::step]]
    parts.append(_text(left + plot_w / 2, height - 4, "B's runs per case (round)", "middle", fill=MUTED))
    parts.append(_text(10, top + plot_h / 2, "z", "middle", fill=MUTED))
    for name, colour, values_at in (
        ("upper boundary: regressed", ALARM, [(s.round, s.upper) for s in steps]),
        ("lower boundary: not regressed", KEEP, [(s.round, s.lower) for s in steps]),
    ):
        points = " ".join(f"{_n(px(x))},{_n(py(y))}" for x, y in values_at)
        parts.append(
            _titled(name, el("polyline", {"points": points, "fill": "none", "stroke": colour, "stroke-width": 1.5}))
        )
        # where the boundaries meet, the upper one's name above the point and the lower one's below it
        shift = -4 if colour == ALARM else 12
        parts.append(_text(left + plot_w + 6, py(values_at[-1][1]) + shift, name.split(": ")[1], fill=colour))
    seen = [s for s in steps if s.z is not None]
    if seen:
        points = " ".join(f"{_n(px(s.round))},{_n(py(s.z))}" for s in seen if s.z is not None)
        parts.append(el("polyline", {"points": points, "fill": "none", "stroke": POINT, "stroke-width": 2}))
        parts += [
            el(
                "circle",
                {"cx": _n(px(s.round)), "cy": _n(py(s.z)), "r": 4 if s is seen[-1] else 2.5, "fill": POINT},
                el("title", None, s.note),
            )
            for s in seen
            if s.z is not None
        ]
    return _svg(width, height, title, *parts)


# -- the cost–correctness plane ------------------------------------------------------------------


@dataclass(frozen=True)
class PlanePoint:
    """A run on the cost–correctness plane: cost per invocation (x), its rate with its interval
    (y), whether it is on the Pareto frontier, and its mark (A, B, this run: named on the chart)."""

    label: str
    cost: float
    rate: float
    low: float
    high: float
    frontier: bool
    mark: str = ""


def cost_plane(points: Sequence[PlanePoint], title: str, y_label: str, width: int = 600, height: int = 300) -> Markup:
    """Runs by cost per invocation and rate, each rate's 95% interval as a whisker; the Pareto
    frontier (no run cheaper and at least as good) joined as a staircase, its runs filled."""
    from ironbench.core.prices import usd

    left, right, top, bottom = 52, 24, 14, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    most = max((p.cost for p in points), default=0.0) or 1.0
    x_max = most * 1.1

    def px(value: float) -> float:
        return left + value / x_max * plot_w

    def py(value: float) -> float:
        return top + (1 - value) * plot_h

    ticks = [x_max * k / 4 for k in range(5)]
    parts: list[Markup] = [
        _grid([f"M{_n(left)} {_n(py(t))}H{_n(left + plot_w)}" for t in (0, 0.25, 0.5, 0.75, 1)]),
        _labels("end", [_text(left - 4, py(t) + 4, _pct(t)) for t in (0, 0.25, 0.5, 0.75, 1)]),
        _grid([f"M{_n(px(t))} {_n(top)}V{_n(top + plot_h)}" for t in ticks]),
        _labels("middle", [_text(px(t), top + plot_h + FONT + 2, usd(t, 2)) for t in ticks]),
        _text(left + plot_w / 2, height - 4, "cost per invocation (USD)", "middle", fill=MUTED),
        _text(12, top + plot_h / 2, y_label, "middle", fill=MUTED, transform=f"rotate(-90 12 {_n(top + plot_h / 2)})"),
    ]
    frontier = sorted((p for p in points if p.frontier), key=lambda p: p.cost)
    if len(frontier) > 1:
        steps = [f"M{_n(px(frontier[0].cost))} {_n(py(frontier[0].rate))}"]
        for p in frontier[1:]:
            steps.append(f"H{_n(px(p.cost))}V{_n(py(p.rate))}")
        parts.append(
            leaf(
                "path",
                {"d": "".join(steps), "stroke": POINT, "stroke-dasharray": "4 3", "fill": "none", "class": "frontier"},
            )
        )
    for p in points:
        x, y = px(p.cost), py(p.rate)
        colour = ALARM if p.mark == "B" else POINT
        tip = (
            f"{p.label}{f' ({p.mark})' if p.mark else ''}: {usd(p.cost)} per invocation, {_pct(p.rate)} "
            f"[{_pct(p.low)}, {_pct(p.high)}]{'; on the Pareto frontier' if p.frontier else ''}"
        )
        shape = el(
            "circle",
            {
                "cx": _n(x),
                "cy": _n(y),
                "r": 5 if p.mark else 4,
                "fill": colour if p.frontier else "#fff",
                "stroke": colour,
                "stroke-width": 2,
                "class": "frontier-point" if p.frontier else "point",
            },
        )
        mark = _text(x + 7, y - 6, p.mark, fill=colour, **{"font-weight": "bold"}) if p.mark else None
        parts.append(_titled(tip, _whisker(py(p.low), py(p.high), x, colour, vertical=True), shape, mark))
    return _svg(width, height, title, *parts)
