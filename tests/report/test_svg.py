import re
import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.outcome_codes import BY_CODE
from ironbench.report import svg

NS = "{http://www.w3.org/2000/svg}"
labels = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=40)


def parse(chart: str) -> ET.Element:
    return ET.fromstring(chart)  # well-formed XML, or this raises


def texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{NS}text")] + [t.text or "" for t in root.iter(f"{NS}title")]


rates = st.integers(0, 20).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(max(n, 1))))


@given(st.lists(st.tuples(labels, rates), min_size=1, max_size=12))
def test_interval_bars_are_well_formed_and_show_every_label_as_text(rows):
    from ironbench.stats import wilson_interval

    items = []
    for label, (successes, n) in rows:
        low, high = wilson_interval(successes, n)
        items.append(svg.IntervalRow(label, successes / n, low, high, f"{successes}/{n}"))
    root = parse(svg.interval_bars(items, "rates <&>"))
    shown = texts(root)
    assert "rates <&>" in shown
    for item in items:
        assert any(item.label in t or t.rstrip("…") and item.label.startswith(t.rstrip("…")) for t in shown)
    whiskers = [p for p in root.iter(f"{NS}path") if p.get("stroke-width") == "1.5"]
    assert len(whiskers) == len(items)


def test_sequence_grid_draws_runs_and_hollow_squares_for_saved_runs():
    rows = [svg.SequenceRow("a", "SGV", 10), svg.SequenceRow("b", "SSSS", 4)]
    root = parse(svg.sequence_grid(rows, "runs"))
    squares = {p.get("fill"): p.get("d").count("z") for p in root.iter(f"{NS}path")}
    assert squares["none"] == 7  # a stopped after 3 of its 10 planned runs
    assert squares[BY_CODE["S"].colour] == 5 and squares[BY_CODE["G"].colour] == 1 and squares[BY_CODE["V"].colour] == 1


def test_heatmap_colours_by_value_and_marks_missing_cells():
    cells = [svg.Cell("r1", "c1", 0.0, "0/4"), svg.Cell("r1", "c2", 1.0, "4/4"), svg.Cell("r2", "c1", None, "–")]
    root = parse(svg.heatmap(["r1", "r2"], ["c1", "c2"], cells, "map"))
    fills = [r.get("fill") for r in root.iter(f"{NS}rect")]
    assert "#ffffff" in fills and "#a50f15" in fills and fills.count("#f4f4f4") == 2  # r2×c1 empty, r2×c2 absent
    assert {"0/4", "4/4", "–"} <= set(texts(root))


def test_ladder_marks_the_boundary_and_the_levels_never_run():
    points = [svg.LevelPoint(1, 1.0, 0.44, 1.0), svg.LevelPoint(2, 0.0, 0.0, 0.56)]
    root = parse(svg.ladder(points, 2, "ladder", planned=4))
    shown = texts(root)
    assert "boundary" in shown and shown.count("not run") == 2
    assert [c.get("fill") for c in root.iter(f"{NS}circle")] == [svg.POINT, svg.ALARM]


def test_ladder_names_level_0_the_base_and_marks_each_verdict():
    points = [svg.LevelPoint(0, 1.0, 0.44, 1.0), svg.LevelPoint(1, 0.67, 0.2, 0.94), svg.LevelPoint(2, 0.0, 0.0, 0.56)]
    tentative = parse(svg.ladder(points, 2, "ladder", planned=3, verdict="tentative"))
    shown = texts(tentative)
    assert "base" in shown and "tentative" in shown and "boundary" not in shown and shown.count("not run") == 1
    assert [c.get("fill") for c in tentative.iter(f"{NS}circle")] == [svg.POINT, svg.POINT, svg.WARN]
    at_base = parse(svg.ladder(points[:1], 0, "ladder", planned=3, verdict="fails_at_base"))
    assert "fails at base" in texts(at_base) and texts(at_base).count("not run") == 3
    assert [c.get("fill") for c in at_base.iter(f"{NS}circle")] == [svg.ALARM]


def test_forest_puts_estimates_around_zero():
    rows = [svg.ForestRow("worse", -0.5, -0.8, -0.2, flagged=True), svg.ForestRow("same", 0.0, -0.3, 0.3)]
    root = parse(svg.forest(rows, svg.ForestRow("overall", -0.25, -0.25, -0.25), "forest"))
    marks = {float(r.get("x")) + 3 for r in root.iter(f"{NS}rect")}
    zero = next(float(line.get("x1")) for line in root.iter(f"{NS}line"))
    worse, same = sorted(marks)
    assert worse < zero and abs(same - zero) < 0.1
    assert root.find(f"{NS}g/{NS}polygon") is not None or any(True for _ in root.iter(f"{NS}polygon"))


def test_lines_and_columns_are_well_formed():
    parse(svg.lines([("plain <b>", [(1, 0), (2, 1), (3, 2)]), ("guarded", [(1, 0), (2, 0)])], "v", "turn", "n", 2))
    chart = svg.stacked_columns(
        [("0", [(3, "#c62828", "failed")]), ("1", [(5, "#2e7d32", "ok"), (1, "#c62828", "x")])], "attempts", "attempts"
    )
    heights = [float(r.get("height")) for r in parse(chart).iter(f"{NS}rect")]
    assert max(heights) == heights[1] and re.search(r">6<", chart)  # the tallest column is 5 + 1
