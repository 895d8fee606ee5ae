"""The reports in a real headless Chromium (Debian's package): every section renders,
nothing errs, nothing loads from anywhere, injected markup stays text, scripts are optional."""

import json

import pytest

from tests.report.chromium import Chromium, chromium_path
from tests.report.examples import INJECTED

# The end-to-end tier (`pytest -m slow`): a real Chromium over reports of real runs.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does)"
    ),
]

SECTIONS = {
    "baseline": ["verdict", "outcomes", "baseline", "metadata"],
    "adversarial": ["verdict", "outcomes", "cost", "adversarial", "robustness", "metadata"],
    "stress": ["verdict", "outcomes", "stress", "metadata"],
    "gauntlet": ["verdict", "gauntlet", "survival", "metadata"],
    "compare": ["verdict", "compare", "outcomes", "baseline", "metadata"],
}


@pytest.fixture(scope="module")
def browser():
    with Chromium() as chromium:
        yield chromium


@pytest.fixture
def open_page(browser):
    pages = []

    def open_(path, scripts=True):
        page = browser.open(path, scripts=scripts)
        pages.append(page)
        return page

    yield open_
    for page in pages:
        page.close()


@pytest.mark.parametrize("kind", list(SECTIONS))
def test_each_report_renders_every_section_without_errors_or_requests(kind, reports, open_page):
    page = open_page(reports[kind])
    assert page.problems() == []
    assert page.requests() == [reports[kind].resolve().as_uri()]  # the file itself, nothing else
    assert page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)") == SECTIONS[kind]
    assert page.evaluate("[...document.querySelectorAll('section')].every(s => s.getBoundingClientRect().height > 40)")
    assert page.evaluate("document.querySelectorAll('svg.chart').length") >= 1 or kind == "compare"
    verdicts = page.evaluate("[...document.querySelectorAll('#verdict li')].map(li => li.innerText)")
    assert verdicts and all(len(v) > 20 for v in verdicts)


@pytest.mark.parametrize("kind", ["baseline", "adversarial", "gauntlet", "compare"])
def test_markup_in_an_instruction_or_an_answer_shows_as_text(kind, reports, open_page):
    page = open_page(reports[kind])
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.querySelectorAll('script').length") == 2
    assert page.evaluate("document.querySelectorAll('main img, main script').length") == 0
    assert page.evaluate(f"document.body.innerText.includes({json.dumps(INJECTED)})")
    data = json.loads(page.evaluate("document.getElementById('report-data').textContent"))
    assert data["run"]["run_id"]


@pytest.mark.parametrize("kind", list(SECTIONS))
def test_reports_read_with_scripts_off(kind, reports, open_page):
    page = open_page(reports[kind], scripts=False)
    assert page.evaluate("document.documentElement.classList.contains('js')") is False  # the script did not run
    assert page.evaluate("document.querySelectorAll('input.filter').length") == 0
    assert page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)") == SECTIONS[kind]
    assert page.evaluate("document.querySelector('#verdict li').innerText.length") > 20
    assert page.problems() == []


def test_tables_sort_and_filter(reports, open_page):
    page = open_page(reports["baseline"])
    table = "document.querySelector('#baseline table.sortable')"
    cases = f"[...{table}.tBodies[0].rows].map(r => r.cells[0].innerText)"
    assert page.evaluate(cases) == ["flaky", "slow", "stable_failure", "stable_success"]  # by name, naturally
    page.evaluate(f"[...{table}.tHead.rows[0].cells].find(th => th.innerText.startsWith('success')).click()")
    assert page.evaluate(cases) == ["stable_failure", "flaky", "slow", "stable_success"]  # 0/3, 5/10, 3/4, 3/3
    page.evaluate(f"[...{table}.tHead.rows[0].cells].find(th => th.innerText.startsWith('success')).click()")
    assert page.evaluate(cases) == ["stable_success", "slow", "flaky", "stable_failure"]
    page.evaluate(
        "const box = document.querySelector('#baseline input.filter'); box.value = 'ISO';"
        "box.dispatchEvent(new Event('input'))"
    )
    visible = f"[...{table}.tBodies[0].rows].filter(r => !r.hidden).map(r => r.cells[0].innerText)"
    assert page.evaluate(visible) == ["flaky"]


def test_transcripts_collapse_and_highlight_violating_turns(reports, open_page):
    page = open_page(reports["gauntlet"])
    threads = "[...document.querySelectorAll('#gauntlet details.thread')]"
    assert page.evaluate(f"{threads}.length") == 8  # 2 engines × 2 scenarios × 2 conversations
    assert page.evaluate(f"{threads}.map(d => d.querySelector('summary').innerText.split(' — ')[0])")[:2] == [
        "plain · conversation 1 · violated",
        "guarded · conversation 1 · clean",
    ]
    # negation_aware violations: plain 2 + 1 in sky's two conversations, 1 in grass; a literal-only hit is
    # flagged, not violated
    assert page.evaluate("document.querySelectorAll('li.turn.violated').length") == 4
    assert page.evaluate("document.querySelectorAll('li.turn.flagged').length") == 4
    violated = page.evaluate("getComputedStyle(document.querySelector('li.turn.violated')).backgroundColor")
    clean = page.evaluate(
        "getComputedStyle(document.querySelector('li.turn:not(.violated):not(.flagged)')).backgroundColor"
    )
    assert violated != clean
    page.evaluate(
        "[...document.querySelectorAll('#gauntlet .toggles button')].find(b => b.innerText === 'Expand all').click()"
    )
    assert page.evaluate(f"{threads}.every(d => d.open)")
    page.evaluate(
        "[...document.querySelectorAll('#gauntlet .toggles button')].find(b => b.innerText === 'Collapse all').click()"
    )
    assert page.evaluate(f"{threads}.every(d => !d.open)")


def test_stress_cards_name_each_ladder_verdict(reports, open_page):
    page = open_page(reports["stress"])
    titles = page.evaluate("[...document.querySelectorAll('#stress article h3 small')].map(s => s.innerText)")
    assert titles == [  # by case, as people count: cache, greeter, parser, sorter
        "(add_multi_objective) — boundary at level 1",
        "(add_ambiguity) — no boundary",
        "(add_constraints_tension) — tentative boundary at level 2",
        "(add_scope_detail) — fails at base",
    ]
    levels = page.evaluate(
        "[...document.querySelectorAll('#stress article')][0].querySelector('tbody').rows[0].cells[0].innerText"
    )
    assert levels == "0 (base)"
    assert page.evaluate("[...document.querySelectorAll('#stress svg text')].some(t => t.textContent === 'base')")
