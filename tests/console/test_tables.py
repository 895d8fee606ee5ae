"""Console tables fit the width they are given: text elided in the middle, numbers whole."""

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from ironbench.analysis.query import QueryResult, format_result
from ironbench.console.layout import elide, fold, render, wrap

WORDS = st.text(alphabet="abcdefghij_/ 0123456789é界", min_size=0, max_size=60)


def test_elide_keeps_both_ends():
    assert elide("ambiguity_injection_light/variant_0001", 20) == "ambiguity_…iant_0001"
    assert elide("short", 20) == "short"
    assert cell_len(elide("界" * 30, 11)) <= 11


def test_fold_breaks_headers_after_underscores():
    assert fold("reproduce_lower_95", 10) == ["reproduce_", "lower_95"]
    assert fold("p95 ms", 3) == ["p95", "ms"]
    assert fold("runs", 10) == ["runs"]


def test_without_a_width_the_table_is_as_wide_as_its_cells():
    rows = [["x" * 150, "1"]]
    lines = render(["id", "n"], rows)
    assert lines[2] == "x" * 150 + "  1"


@settings(max_examples=150, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8), st.integers(min_value=40, max_value=200), st.data())
def test_every_line_fits_and_numbers_stay_whole(headers, width, data):
    headers = [h or "col" for h in headers]
    count = len(headers)
    numeric = [i % 2 == 1 for i in range(count)]
    rows = data.draw(
        st.lists(st.tuples(*[st.integers(0, 10**6) if numeric[i] else WORDS for i in range(count)]), max_size=5)
    )
    result = QueryResult(headers, [tuple(r) for r in rows])
    text = format_result(result, "table", width)
    key_width = max([cell_len(headers[0])] + [cell_len(str(r[0])) for r in rows])
    if key_width + 2 + max(cell_len(str(h)) for h in headers) + 2 * 8 < width:  # a panel can always be formed
        assert max(cell_len(line) for line in text.splitlines()) <= width, text
    for row in rows:
        for i, value in enumerate(row):
            if numeric[i]:
                assert str(value) in text  # never cut


def test_a_wide_table_continues_in_panels_that_repeat_the_keys():
    columns = ["case_id", "variant_id"] + [f"measure_number_{i}" for i in range(12)]
    rows = [("compile_email_regex", f"whitespace_noise/variant_000{k}", *range(k, k + 12)) for k in range(1, 4)]
    text = format_result(QueryResult(columns, rows), "table", 80, keys=2)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    panels = text.split("\n\n")
    assert len(panels) > 1
    for panel in panels:
        assert "compile_email_regex" in panel and "whitespace_noise/variant_0003" in panel
    assert lines[-1] == "(3 rows)"


def test_wrap_folds_prose_and_leaves_it_alone_without_a_width():
    text = "verdict: no significant regression " * 5
    assert wrap(text, None) == text
    assert all(len(line) <= 40 for line in wrap(text, 40).splitlines())
    assert wrap(text, 40).splitlines()[1].startswith("  ")
