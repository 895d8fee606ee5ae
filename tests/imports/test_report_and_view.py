"""Imported runs read as a person reads a run: `ironbench report` and `ironbench view` label
them as imported and show, where a reader sees them, how often the outcome another harness
recorded disagrees with the facts re-derived from the output it kept."""

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import cli, query
from tests.fixtures import outputs_trees as trees
from tests.report.chromium import Chromium, chromium_path
from tests.view.served import Served
from tests.view.test_browser import settled

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does)"
)

WILD = "run_20260111_101010"  # a baseline tree whose records say attempts 1, repairs 0, stage "unknown"
CANONICAL = "run_20260113_101010"


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("imported")
    root = trees.every_shape(tmp / "tree")
    out = tmp / "out"
    cli("import", str(root), "--out", str(out), check=True)
    return out


@pytest.fixture(scope="module")
def browser():
    with Chromium() as chromium:
        yield chromium


def disagreements(out: Path, run_id: str) -> Counter:
    """Per outcome field, the run's invocations whose record it contradicts, as the store keeps them."""
    rows = query(out, f"SELECT disagrees FROM invocations WHERE run_id = '{run_id}' AND disagrees IS NOT NULL")
    return Counter(name for row in rows for name in row["disagrees"].split(","))


def shown(page) -> dict:
    """The imported section as the page shows it: its rows (field -> count) and its text."""
    rows = page.evaluate(
        "[...document.querySelectorAll('#imported table tbody tr')].map(r => [...r.cells].map(c => c.innerText))"
    )
    return {
        "rows": {field: int(count) for field, count, _ in rows},
        "text": page.evaluate("document.getElementById('imported').innerText"),
    }


@pytest.mark.slow
def test_the_report_of_an_imported_run_says_so_and_counts_what_its_record_gets_wrong(imported, browser):
    expected = disagreements(imported, WILD)
    assert expected["attempts"] and expected["failure_stage"]  # the fixture's records are wrong, as in the wild
    made = cli("report", WILD, "--out", str(imported), check=True)
    assert "Traceback" not in made.stderr
    page = browser.open(imported / WILD / "report.html")
    try:
        assert page.problems() == []
        sections = page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)")
        assert sections[:2] == ["verdict", "imported"] and "baseline" in sections
        found = shown(page)
        assert found["rows"] == dict(expected)
        assert "another harness's outputs tree" in found["text"]
        invocations = query(imported, f"SELECT count(*) AS n FROM invocations WHERE run_id = '{WILD}'")[0]["n"]
        assert f"Of its {invocations} invocation(s), {invocations} kept the target's output" in found["text"]
        assert "imported from" in page.evaluate("document.querySelector('header').innerText")
        verdicts = page.evaluate("[...document.querySelectorAll('#verdict li')].map(li => li.innerText)")
        assert verdicts[0].startswith("Imported from another harness's outputs tree")
        assert f"attempts {expected['attempts']}" in verdicts[0]
        # an outage it recorded cannot be re-run here: the page does not say `resume` can
        assert "ironbench resume" not in page.evaluate("document.body.innerText")
        data = json.loads(page.evaluate("document.getElementById('report-data').textContent"))
        assert data["imported"]["disagreements"] == dict(expected)
    finally:
        page.close()


@pytest.mark.slow
def test_the_viewer_lists_imported_runs_as_imported_and_shows_their_disagreements(imported, browser):
    with Served(imported / "ironbench.db") as server:
        runs = browser.open(f"{server.base}/")
        try:
            assert runs.problems() == []
            labelled = runs.evaluate(
                "[...document.querySelectorAll('#runs tbody tr')]"
                ".map(r => [r.dataset.run, !!r.querySelector('.badge.imported')])"
            )
            assert labelled and all(flag for _, flag in labelled)
        finally:
            runs.close()
        for run_id in (WILD, CANONICAL):
            answer = server.get(f"/runs/{run_id}")
            assert answer.status == 200, answer.body[:500]
            page = browser.open(f"{server.base}/runs/{run_id}")
            try:
                settled(page)
                assert page.problems() == []
                assert shown(page)["rows"] == dict(disagreements(imported, run_id))
            finally:
                page.close()


@pytest.mark.slow
def test_an_imported_canonical_run_is_grouped_by_complexity(imported, browser):
    cli("report", CANONICAL, "--out", str(imported), check=True)
    page = browser.open(imported / CANONICAL / "report.html")
    try:
        rows = page.evaluate(
            "[...document.querySelectorAll('#baseline .complexity tbody tr')]"
            ".map(r => [...r.cells].slice(0, 3).map(c => c.innerText))"
        )
        counted = query(
            imported,
            "SELECT complexity, count(DISTINCT case_id) AS cases, count(*) AS runs FROM invocations "
            f"WHERE run_id = '{CANONICAL}' AND infra_error IS NULL GROUP BY 1",
        )
        by = {r["complexity"]: r for r in counted}
        assert rows == [[c, str(by[c]["cases"]), str(by[c]["runs"])] for c in ("small", "mid", "large")]
    finally:
        page.close()
