"""The report's sections for the numbers the field reports: a robustness table per generator
and a survival plot per engine. Self-contained: their data (`field_data`) and their markup
(`robustness`, `survival`) live here; the page only places them."""

from pathlib import Path

from ironbench.report.markup import Markup, el, leaf
from ironbench.report.widgets import Col, Td, figure, number, section, table

SERIES = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
GRID, MUTED, FONT = "#ddd", "#777", 11


def field_data(store_path: Path, run_id: str) -> dict:
    """`robustness` (adversarial) and `survival` (gauntlet) for the page, computed as `show`
    and the output tree compute them; absent when the run has no such mode."""
    from ironbench.analysis.field import field_numbers

    numbers = field_numbers(store_path, run_id)
    return {key: numbers[key] for key in ("robustness", "survival") if key in numbers}


def _ci(entry: dict | None, digits: int = 2) -> Td:
    """An estimate with its interval and n, sorted by the estimate."""
    if entry is None or entry.get("estimate") is None:
        return Td("–", -1.0)
    low, high = entry["ci_95"]
    n = entry.get("n", entry.get("cases"))
    return Td(
        f"{number(entry['estimate'], digits)} [{number(low, digits)}, {number(high, digits)}] (n = {n})",
        entry["estimate"],
    )


def robustness(data: dict) -> Markup:
    """Per generator across cases, then per case: robust pass, worst case, robust drop, flips."""
    columns = [
        Col("generator"),
        Col("cases", True, "cases the generator rewrote, and their variants"),
        Col("nominal", True, "the base instructions' success rate over their runs"),
        Col("robust pass", True, "share of cases where the base and every variant succeeded"),
        Col("worst case", True, "share of cases where every variant succeeded (the worst case over them)"),
        Col("robust drop", True, "(nominal − worst case) / nominal, over case means"),
        Col("success → failure", True, "variants that failed where the base succeeded, of those that could"),
        Col("failure → success", True, "variants that succeeded where the base failed, of those that could"),
    ]
    rows = [
        [
            g["generator"],
            Td(f"{g['cases']} ({g['variants']} variants)", g["cases"]),
            _ci(g["nominal_success_rate"]),
            _ci(g["robust_pass_rate"]),
            _ci(g["worst_case_success_rate"]),
            _ci(g["robust_drop"]),
            _ci(g["flips_success_to_failure"]),
            _ci(g["flips_failure_to_success"]),
        ]
        for g in data["generators"]
    ]
    per_case = [
        [
            c["case_id"],
            c["generator"],
            "success" if c["base_success"] else "failure",
            Td(f"{c['variants_succeeded']}/{c['variants']}", c["variants_succeeded"]),
            "yes" if c["robust_pass"] else "no",
            number(c["robust_drop"]),
            _flip(c["flips_success_to_failure"]),
            _flip(c["flips_failure_to_success"]),
        ]
        for c in data["cases"]
    ]
    return section(
        "robustness",
        "Robustness per generator",
        "How the runs hold up when the instruction is reworded (ReCode's robust pass and robust drop, "
        "HELM's worst case, and flips in both directions). Each variant counts by its first run: later "
        "runs are the verdict's repeats and would bias these rates. Across cases, the case is the unit: "
        "shares of cases with Wilson intervals, pooled rates with the case as cluster; 95% intervals.",
        table(columns, rows, caption="Across cases, per generator"),
        el(
            "details",
            None,
            el("summary", None, f"Per case and generator ({len(per_case)})"),
            table(
                [
                    Col("case"),
                    Col("generator"),
                    Col("base"),
                    Col("variants succeeded", True),
                    Col("robust pass"),
                    Col("robust drop", True),
                    Col("success → failure", True),
                    Col("failure → success", True),
                ],
                per_case,
                filterable=len(per_case) > 10,
            ),
        ),
    )


def _flip(entry: dict) -> Td:
    if not entry["n"]:
        return Td("–", -1.0)
    low, high = entry["ci_95"]
    return Td(f"{entry['count']}/{entry['n']} [{number(low)}, {number(high)}]", entry["rate"])


def survival(data: dict) -> Markup:
    """Per scorer (the one the verdicts use first), one Kaplan–Meier plot per engine, a table
    of when and how conversations broke, and each pair of engines compared."""
    parts = []
    for index, (scorer, found) in enumerate(data.items()):
        engines = found["engines"]
        charts = [
            _curve(engine, entry, SERIES[k % len(SERIES)], scorer) for k, (engine, entry) in enumerate(engines.items())
        ]
        rows = []
        for engine, e in engines.items():
            last = e["still_holding"][-1]
            low, high = e["median_ci_95"]
            median = e["median_turn_of_first_violation"]
            rows.append(
                [
                    engine,
                    Td(f"{e['violated']}/{e['conversations']}", e["violated"] / max(1, e["conversations"])),
                    Td(
                        f"{'not reached' if median is None else median} "
                        f"[{low or '> ' + str(last['turn'])}, {high or '> ' + str(last['turn'])}]",
                        median if median is not None else 1e9,
                    ),
                    Td(
                        f"{number(last['rate'])} [{number(last['ci_95'][0])}, {number(last['ci_95'][1])}]", last["rate"]
                    ),
                    _flips(e["flips"]),
                    Td(f"{e['recovered']} recovered, {e['persisted']} persisted", e["recovered"]),
                ]
            )
        block = [
            figure(
                el("div", {"class": "row"}, charts),
                "Still holding (no violation yet) after each turn: Kaplan–Meier, the turn of the first violation "
                "as the time and a conversation without one censored at its last turn; the band is the pointwise "
                "95% interval (Greenwood, log-log).",
            ),
            table(
                [
                    Col("engine"),
                    Col("violated", True, "conversations with a violation, of all"),
                    Col("median turn of first violation", True, "Brookmeyer–Crowley 95% interval"),
                    Col("still holding at the end", True),
                    Col("flips per conversation", True, "changes between violating and not, turn to turn"),
                    Col("after a violation", True, "a later answer that does not violate, or none"),
                ],
                rows,
            ),
            el("ul", {"class": "verdicts"}, [el("li", None, c["sentence"]) for c in found["comparisons"]]),
        ]
        title = el("h3", None, f"{scorer} scorer")
        parts.append(
            el("div", None, title, block) if index == 0 else el("details", None, el("summary", None, title), block)
        )
    return section(
        "survival",
        "When conversations break",
        "Not only whether an engine asserted the falsehood, but when (SYCON-Bench's turn of flip), how often "
        "it flipped, and whether it recovered. Engines are compared by the log-rank test stratified by "
        "scenario, its p-value by permutation within scenarios, Holm over the pairs.",
        parts,
    )


def _flips(entry: dict | None) -> Td:
    if entry is None:
        return Td("–", -1.0)
    low, high = entry["ci_95"]
    return Td(f"{number(entry['mean'])} [{number(low)}, {number(high)}]", entry["mean"])


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _curve(engine: str, entry: dict, colour: str, scorer: str, width: int = 300, height: int = 190) -> Markup:
    """One engine's step curve with its band, turns on x, 0–100% on y."""
    left, right, top, bottom = 40, 10, 18, 30
    points = entry["still_holding"]
    last = max(p["turn"] for p in points) or 1
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(turn: float) -> float:
        return left + turn / last * plot_w

    def py(rate: float) -> float:
        return top + (1 - rate) * plot_h

    upper, lower, line = [], [], []
    for k, p in enumerate(points):
        end = points[k + 1]["turn"] if k + 1 < len(points) else p["turn"]
        upper += [(px(p["turn"]), py(p["ci_95"][1])), (px(end), py(p["ci_95"][1]))]
        lower += [(px(p["turn"]), py(p["ci_95"][0])), (px(end), py(p["ci_95"][0]))]
        line += [(px(p["turn"]), py(p["rate"])), (px(end), py(p["rate"]))]
    band = " ".join(f"{_n(x)},{_n(y)}" for x, y in upper + lower[::-1])
    grid = "".join(f"M{_n(left)} {_n(py(v))}H{_n(left + plot_w)}" for v in (0, 0.5, 1))
    ticks = sorted({0, last} | {t for t in range(0, last + 1, max(1, last // 8))})
    label = (
        f"{engine}: still holding after each turn ({scorer}); {entry['violated']} of "
        f"{entry['conversations']} conversations violated"
    )
    return el(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": width,
            "height": height,
            "viewBox": f"0 0 {width} {height}",
            "role": "img",
            "aria-label": label,
            "font-size": FONT,
            "font-family": "system-ui, sans-serif",
            "class": "chart",
        },
        el("title", None, label),
        el("text", {"x": left, "y": 12}, engine),
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
