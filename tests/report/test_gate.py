"""A run made with `run --against` (the sequential gate), as its report, its console and `show`
tell it: the gate's verdict first, a section with each look against the two boundaries, cases
the gate decided read as such, and `report --compare` warns as `compare` does. Through the
front door: the CLI in subprocesses, the page in headless Chromium."""

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.report.chromium import Chromium, chromium_path
from tests.run.test_gate import coin, write_coin_suite

# The end-to-end tier (`pytest -m slow`): gated runs through the CLI.
pytestmark = pytest.mark.slow

CASES = 6


def flat(text: str) -> str:
    """Text with its console wrapping undone."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    """Main's run (6 cases x 8 runs at 80%), a broken branch gated against it (with its report,
    the console as a person sees it) and a sound one (quiet)."""
    root = tmp_path_factory.mktemp("gate_report")
    suite = write_coin_suite(root / "coin.yaml", cases=CASES)
    out = root / "out"
    run_a = cli("run", str(suite), "--target", coin(0.8, "main"), "--out", str(out), "-q", "--no-report", check=True)
    a = run_a.stdout.strip()
    against = ("--against", a, "--drop", "0.3", "--out", str(out))
    broken = cli("run", str(suite), "--target", coin(0.2, "broken"), *against, env={"COLUMNS": "100"})
    sound = cli("run", str(suite), "--target", coin(0.8, "sound"), *against, "-q")
    return out, a, broken, sound


def looks(out: Path, run_id: str) -> list[tuple]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return conn.execute(
            "SELECT look, round, invocations, z, decision FROM gate_looks WHERE run_id = ? ORDER BY round", (run_id,)
        ).fetchall()


@pytest.fixture(scope="module")
def browser():
    if chromium_path() is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run does)")
    with Chromium() as chromium:
        yield chromium


def test_the_console_ends_with_the_gates_verdict_once_then_the_rest(gated):
    _, a, broken, sound = gated
    assert broken.returncode == 1 and sound.returncode == 0, broken.stderr + sound.stderr
    said = flat(broken.stderr)
    gate_at = said.index(f"• Gate against {a}: regressed (FAIL, exit 1). B's success rate is lower than A's")
    assert gate_at < said.index("• Baseline: all 6 instructions decided by the gate at round")
    assert said.count("crossed the upper boundary") == 1  # one source: no second line printed apart
    assert "instructions stable" not in said
    # quiet: the gate's verdict still ends the log (a CI log needs it), and nothing else of the report
    quiet = flat(sound.stderr)
    assert quiet.startswith(f"• Gate against {a}: not regressed (pass, exit 0). B is not worse than A by 30%")
    assert "• Baseline" not in quiet and "report: " in quiet


def test_the_page_puts_the_gates_verdict_first_and_draws_each_look(gated, browser):
    out, a, broken, _ = gated
    run_b = broken.stdout.strip()
    page = browser.open(out / run_b / "report.html")
    try:
        assert page.problems() == []
        assert page.evaluate("[...document.querySelectorAll('section')].map(s => s.id)") == [
            "verdict",
            "gate",
            "outcomes",
            "baseline",
            "metadata",
        ]
        verdicts = page.evaluate("[...document.querySelectorAll('#verdict li')].map(li => li.innerText)")
        assert flat(verdicts[0]) in flat(broken.stderr)  # the page and the console: the same words
        assert verdicts[0].startswith(f"Gate against {a}: regressed") and "repeated 90% CI" in verdicts[0]
        assert not any("instructions stable" in v for v in verdicts)
        taken = looks(out, run_b)
        assert taken and taken[-1][4] == "regressed"
        chart = "document.querySelector('#gate svg.chart')"
        assert page.evaluate(f"{chart}.querySelectorAll('circle').length") == len(taken)
        # two boundaries over every planned look, and z joined over the looks taken
        assert page.evaluate(f"{chart}.querySelectorAll('polyline').length") == 3
        rows = page.evaluate(
            "[...document.querySelectorAll('#gate table tbody tr')].map(r => [...r.cells].map(c => c.innerText))"
        )
        assert [(int(r[0]), int(r[1]), r[5], r[8]) for r in rows] == [
            (look, rounds, f"{z:.2f}", decision) for look, rounds, _, z, decision in taken
        ]
        fixed = 6 * CASES  # `plan`'s runs per case at A's rate x cases
        assert f"of the fixed design's {fixed}" in page.evaluate("document.getElementById('gate').innerText")
        shown = page.evaluate(
            "[...document.querySelectorAll('#baseline table tbody tr')].map(r => r.cells[4].innerText)"
        )
        assert shown == [f"decided by the gate at round {taken[-1][1]}"] * CASES
    finally:
        page.close()


def test_show_reads_a_gated_case_as_decided_by_the_gate(gated):
    out, _, broken, _ = gated
    run_b = broken.stdout.strip()
    rounds = looks(out, run_b)[-1][1]
    table = cli("show", run_b, "--out", str(out), check=True).stdout
    assert table.count(f"decided by the gate at round {rounds}") == CASES
    as_json = json.loads(cli("show", run_b, "--out", str(out), "--format", "json", check=True).stdout)
    assert {c["decision"] for c in as_json["cases"]} == {"gated"}  # machines keep the kind


def test_report_compare_on_a_gated_run_warns_as_compare_does(gated):
    out, a, broken, _ = gated
    run_b = broken.stdout.strip()
    compared = cli("compare", a, run_b, "--out", str(out))
    warning = next(line for line in compared.stdout.splitlines() if "ignores that stopping" in line)
    reported = cli("report", run_b, "--compare", a, "--out", str(out), check=True)
    assert warning.strip() in reported.stderr.splitlines()[0]  # first: what the whole comparison is worth
    page = Path(reported.stdout.strip()).read_text()
    assert "it ignores that stopping" in page
