"""The report's Cost section: the cost–correctness plane (well-formed, every run named, the
frontier joined and its runs filled), and the section drawn from its record, names escaped."""

import xml.etree.ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st

from ironbench.analysis.compare.cost import CostPoint, pareto
from ironbench.report import svg
from ironbench.report.records import CallerCostRow, CostRow, CostSection
from ironbench.report.sections.cost import cost
from tests.report.build import report

NS = "{http://www.w3.org/2000/svg}"
labels = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)


@given(st.lists(st.tuples(labels, st.floats(0, 5), st.floats(0, 1)), min_size=1, max_size=20))
def test_the_plane_is_well_formed_names_every_run_and_joins_its_frontier(runs):
    points = pareto([CostPoint(label, None, c, r, r / 2, (1 + r) / 2, 10) for label, c, r in runs])
    drawn = [svg.PlanePoint(p.run_id, p.per_invocation, p.rate, p.rate_low, p.rate_high, p.frontier) for p in points]
    root = ET.fromstring(svg.cost_plane(drawn, "plane <&>", "correct"))
    titles = [t.text or "" for t in root.iter(f"{NS}title")]
    assert titles[0] == "plane <&>" and all(any(t.startswith(p.run_id) for t in titles) for p in points)
    filled = [c for c in root.iter(f"{NS}circle") if c.get("class") == "frontier-point"]
    assert len(filled) == sum(p.frontier for p in points)
    joined = [p for p in root.iter(f"{NS}path") if p.get("class") == "frontier"]
    assert len(joined) == (1 if len(filled) > 1 else 0)


def row(case_id: str, usd: float | None, correct: int | None = None) -> CostRow:
    per = None if usd is None else usd / 2
    return CostRow(case_id, usd, 4, 0 if usd is not None else 4, 2, 2, 2, correct, per, per, per if correct else None)


def test_the_section_says_who_spent_what_and_each_cases_cost_its_names_escaped():
    section = CostSection(
        "$0.004 (8 model calls; genai-prices 0.2.3), $0.001 per invocation",
        0.004,
        0.001,
        0.25,
        row("(all cases)", 0.003, 2),
        [
            CallerCostRow("target", 0.003, 4, 0, 0.0, "genai-prices 0.2.3"),
            CallerCostRow("ai_rewrite", 0.001, 4, 0, 0.0, "--price"),
        ],
        [row("<script>alert(1)</script>", 0.003, 2), row("free", None)],
        on="correct",
        plane=pareto(
            [CostPoint("run_a", None, 0.001, 0.5, 0.3, 0.7, 4), CostPoint("run_b", "x<y", 0.002, 0.4, 0.2, 0.6, 4)]
        ),
    )
    page = cost(section)
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert "ironbench: AI rewrites" in page and "25% of the run" in page
    assert "per correct brick" in page and "unpriced" in page  # a case none of whose calls was priced
    assert "x&lt;y" in page and 'class="frontier-point"' in page
    assert cost(CostSection("s", None, 0.0, None, row("(all cases)", None), [], [])).count("<svg") == 0


def test_a_run_without_priced_calls_has_no_cost_section():
    from ironbench.report.page import SECTIONS

    [part] = [p for p in SECTIONS if p.key == "cost"]
    assert part.draw(report()) is None
