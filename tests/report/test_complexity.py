"""A canonical run's report groups its cases by complexity: per group (small, mid, large) its
cases, runs, success rate with its interval, and pass@k / pass^k at the runs each case took,
each as the store's own rows give it; read in a real headless Chromium."""

import json

import pytest
import yaml

from ironbench.console.numbers import percent
from ironbench.stats import pass_at_k, pass_hat_k, wilson_interval
from tests.conftest import SCRIPTED_TARGET, cli, query
from tests.report.chromium import Chromium, chromium_path

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does)"
)

# Small tasks always verify, mid ones half the time, the large one never.
OUTCOMES = {
    "square": ["success"],
    "reverse": ["success"],
    "pairs": ["success", "validation", "success", "repair"],
    "regex": ["validation", "success", "validation", "success"],
    "cache": ["generation"],
}
SUITE = {
    "suite_id": "canonical_report",
    "mode": "canonical",
    "runs_per_case": 4,
    "timeout_seconds": 30,
    "target": SCRIPTED_TARGET,
    "small": [
        {"id": "square", "instruction": "Write a Python function that squares a number."},
        {"id": "reverse", "instruction": "Write a Python function that reverses a string."},
    ],
    "mid": [
        {"id": "pairs", "instruction": "Write a Python function that turns pairs into a dictionary."},
        {"id": "regex", "instruction": "Write a Python function that compiles an email regex."},
    ],
    "large": [{"id": "cache", "instruction": "Write a Python class for a least recently used cache."}],
}


@pytest.fixture(scope="module")
def canonical(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("canonical")
    path = tmp / "canonical.yaml"
    path.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    out = tmp / "out"
    run = cli("run", str(path), "--out", str(out), "-q", env={"SCRIPTED_OUTCOMES": json.dumps(OUTCOMES)}, check=True)
    return out, run.stdout.strip()


@pytest.mark.slow
def test_the_report_groups_a_canonical_run_by_complexity(canonical):
    out, run_id = canonical
    cases = query(
        out,
        "SELECT complexity, case_id, count(*) AS n, count(*) FILTER (WHERE success) AS c FROM invocations "
        "GROUP BY ALL ORDER BY ALL",
    )
    with Chromium() as browser:
        page = browser.open(out / run_id / "report.html")
        try:
            assert page.problems() == []
            rows = page.evaluate(
                "[...document.querySelectorAll('#baseline .complexity tbody tr')]"
                ".map(r => [...r.cells].map(c => c.innerText))"
            )
            header = page.evaluate("[...document.querySelectorAll('#baseline .complexity th')].map(th => th.innerText)")
            column = page.evaluate(
                "[...document.querySelectorAll('#baseline th')].filter(th => !th.closest('.complexity'))"
                ".map(th => th.innerText)"
            )
            verdict = page.evaluate("document.querySelector('#verdict li[data-mode=baseline]').innerText")
            data = json.loads(page.evaluate("document.getElementById('report-data').textContent"))
        finally:
            page.close()
    assert "complexity" in column  # each case's row names its group
    assert [r[0] for r in rows] == ["small", "mid", "large"]
    for row in rows:
        group = [c for c in cases if c["complexity"] == row[0]]
        n, c = sum(g["n"] for g in group), sum(g["c"] for g in group)
        k = min(g["n"] for g in group)
        low, high = wilson_interval(c, n)
        shown = dict(zip(header, row, strict=True))
        assert shown["cases"] == str(len(group)) and shown["runs"] == str(n)
        assert shown["success"].startswith(f"{c}/{n} ")
        assert shown["95% CI"] == f"{percent(low)}–{percent(high)}"
        assert shown["k"] == str(k)
        at = sum(pass_at_k(g["n"], g["c"], k) for g in group) / len(group)
        hat = sum(pass_hat_k(g["n"], g["c"], k) for g in group) / len(group)
        assert abs(float(shown["pass@k"]) - at) < 0.006 and abs(float(shown["pass^k"]) - hat) < 0.006
    assert "by complexity: small 8/8" in verdict and "large 0/4" in verdict
    embedded = data["baseline"]["complexities"]  # a list of records is embedded as one table
    at = embedded["columns"].index("complexity")
    assert [row[at] for row in embedded["rows"]] == ["small", "mid", "large"]
