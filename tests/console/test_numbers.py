"""Numbers as people write them: nothing that rounds to zero prints with a sign."""

import math

from hypothesis import given
from hypothesis import strategies as st

from ironbench.console.numbers import number, percent, points

SPECS = [".0f", ".1f", ".2f", ".3f", ".2g", ".3g", ".4g", "+.0f", "+.1f", "+.2f", ".0%", "+.0%", ".1%", ".0e"]
finite = st.floats(allow_nan=False, allow_infinity=False)
small = st.floats(min_value=-0.01, max_value=0.01, allow_nan=False)


def _value(text: str) -> float:
    return float(text.removesuffix("%").removesuffix(" pp"))


@given(st.one_of(finite, small), st.sampled_from(SPECS))
def test_a_value_that_rounds_to_zero_has_no_sign(value, spec):
    text = number(value, spec)
    if _value(text) == 0:
        assert not text.startswith(("-", "+")), text
    else:
        assert text == format(value, spec)  # only a zero's sign is ever dropped


@given(st.one_of(finite, small), st.integers(min_value=0, max_value=2))
def test_points_are_signed_unless_zero(share, digits):
    text = points(share, digits)
    assert text.endswith(" pp")
    shown = _value(text)
    assert not text.startswith(("-0", "+0")) or shown != 0
    if shown != 0:
        assert text[0] == ("+" if share > 0 else "-")
    assert math.isclose(shown, round(share * 100, digits), abs_tol=10**-digits) or abs(share) > 1e15


def test_the_cases_people_met():
    assert number(-0.0, ".4g") == "0"
    assert number(-1e-9, ".2f") == "0.00"
    assert points(-0.0) == "0 pp" and points(0.0, 1) == "0.0 pp" and points(-0.0004, 1) == "0.0 pp"
    assert points(-0.2) == "-20 pp" and points(0.125, 1) == "+12.5 pp"
    assert percent(-0.001) == "0%" and percent(None) == "-"
    assert number(float("-inf"), ".2f") == "-inf" and number(-3e-20, ".2g") == "-3e-20"


def test_printed_differences_of_zero_carry_no_sign():
    import re

    from ironbench.analysis.compare import Evidence, decide, format_comparison
    from ironbench.projections.gauntlet_summary import Counts, ScenarioRow, engine_comparisons
    from tests.analysis.test_compare import sides

    a, b = sides({"x": ((3, 5), (3, 5)), "y": ((5, 5), (5, 5))})
    table = format_comparison(decide(Evidence(a, b), power=False), 200)
    assert "Δ = 0.0 pp" in table and "0 [-" in table
    # the same violations in two engines: -(0.0) is -0.0, once printed as "-0 pp"
    counts = Counts("geography", 3, {"s": 1}, 3, {"s": 1})
    (pair,) = engine_comparisons(
        [ScenarioRow("geography", {"plain": counts, "guarded": counts})], ["plain", "guarded"], "s"
    )
    assert "difference 0 pp (95% CI -" in pair.sentence
    for text in (table, pair.sentence):
        assert not re.search(r"(?<![\w.])[-+]0(\.0+)?(?![\d.])", text), text
