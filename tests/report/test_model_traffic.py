"""The report's Model traffic section through the front door: a run whose target calls the
model gateway (tests/fixtures/gateway_agent.py, answered by canned llm models), then
`ironbench report`; its figures against the calls the store holds (the `model_calls` view),
every attempt counted. A run that served no model has no such section."""

import html
import json
import re
from pathlib import Path

import pytest

from tests.conftest import cli
from tests.report.test_page import SECTIONS, embedded, page, records
from tests.run.test_model_gateway import agent_suite, rows, run

# Per case, from the calls alone: invocations (attempts that made calls), calls, the fewest
# and most calls of one attempt, tokens, model seconds.
PER_CASE = """
SELECT case_id, count(*) AS invocations, sum(calls) AS calls, min(calls) AS fewest, max(calls) AS most,
       sum(prompt) AS prompt, sum(completion) AS completion, sum(ms) / 1000 AS seconds
FROM (SELECT case_id, invocation_key, rerun, count(*) AS calls, sum(prompt_tokens) AS prompt,
             sum(completion_tokens) AS completion, sum(latency_ms) AS ms
      FROM model_calls GROUP BY ALL)
GROUP BY case_id ORDER BY case_id
"""


def report(out: Path, run_id: str) -> str:
    written = cli("report", run_id, "--out", str(out))
    assert written.returncode == 0, written.stderr
    return (out / run_id / "report.html").read_text()


def store_figures(out: Path, run_id: str) -> list[dict]:
    found = cli("query", PER_CASE, "--out", str(out), "--run", run_id, "-f", "json")
    assert found.returncode == 0, found.stderr
    return json.loads(found.stdout)


def shown_rows(text: str) -> list[list[str]]:
    """The Model traffic table's cells, as the page shows them."""
    body = text[text.index('<section id="model">') :]
    body = body[body.index("<tbody>") : body.index("</tbody>")]
    return [
        [html.unescape(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


@pytest.mark.slow
def test_the_section_counts_every_call_the_store_holds(tmp_path):
    suite = agent_suite(tmp_path, {"none": (0, 2), "two": (2, 3)})
    result, run_id = run(tmp_path, suite, "--serve-model", "canned-coder", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    out = tmp_path / "out"
    text = report(out, run_id)
    assert SECTIONS.findall(text) == ["verdict", "outcomes", "model", "cost", "baseline", "metadata"]
    figures = store_figures(out, run_id)
    assert [f["case_id"] for f in figures] == ["none", "two"]
    shown = shown_rows(text)
    for row, f in zip(shown, figures, strict=True):
        each = str(f["fewest"]) if f["fewest"] == f["most"] else f"{f['fewest']}–{f['most']}"
        assert row[:4] == [f["case_id"], str(f["invocations"]), str(f["calls"]), each]
        assert row[5:7] == [f"{f['prompt']:,}", f"{f['completion']:,}"]
    assert [(r[2], r[3], r[4]) for r in shown] == [("2", "1", "1"), ("9", "3", "3")]  # Ironclad's: 1 + repairs
    data = embedded(text)["model"]
    for case, f in zip(records(data["cases"]), figures, strict=True):
        assert case["model_seconds"] == pytest.approx(f["seconds"], abs=1e-3)
    run_total = data["run"]
    assert (run_total["invocations"], run_total["calls"], run_total["fewest"], run_total["most"]) == (5, 11, 1, 3)
    assert run_total["prompt_tokens"] == sum(f["prompt"] for f in figures)
    assert run_total["completion_tokens"] == sum(f["completion"] for f in figures)
    # `show` says the run's total as the section does: one function reads both.
    shown_total = re.search(r"<b>The run: </b>(.*?)\.</p>", text).group(1)
    assert shown_total.startswith("11 model calls by 5 invocations (1–3 each), ")
    model_line = next(
        line for line in cli("show", run_id, "--out", str(out)).stdout.splitlines() if line.strip().startswith("model:")
    )
    assert model_line.split("model: ", 1)[1] == html.unescape(shown_total)


@pytest.mark.slow
def test_attempts_a_failing_backend_superseded_are_counted(tmp_path):
    suite = agent_suite(tmp_path, {"one": (0, 2)})
    env = {"AGENT_HIDE_ERRORS": "1", "IRONBENCH_BACKOFF": "0.2,0.4"}
    result, _ = run(tmp_path, suite, "--serve-model", "canned-failing", "--max-outage", "1", env=env)
    assert result.returncode == 1  # stopped: the backend kept failing
    [(run_id,)] = rows(tmp_path, "SELECT run_id FROM runs")
    out = tmp_path / "out"
    [figures] = store_figures(out, run_id)
    superseded = cli(
        "query", "SELECT count(*) AS n FROM superseded_invocations", "--out", str(out), "--run", run_id, "-f", "json"
    )
    assert json.loads(superseded.stdout)[0]["n"] >= 1
    [row] = shown_rows(report(out, run_id))
    assert row[:4] == ["one", str(figures["invocations"]), str(figures["calls"]), "1"]
    assert row[5:7] == ["–", "–"]  # a failing model reports no tokens


def test_a_run_that_served_no_model_has_no_section(examples):
    data, text = page(examples, examples.baseline)
    assert data.model is None
    assert '<section id="model">' not in text and "model" not in embedded(text)


def test_a_model_that_reports_no_tokens_is_said_so_and_case_ids_are_text():
    from ironbench.analysis.model_traffic import Traffic
    from ironbench.report.records import ModelSection
    from ironbench.report.sections.model import model

    run_total = Traffic(None, 3, 7, 1, 4, None, None, 0.5)
    case = Traffic("c<b>", 3, 7, 1, 4, None, None, 0.5)
    text = model(ModelSection(run_total, [case]))
    assert "7 model calls by 3 invocations (1–4 each), 0.5 s of model time" in text  # no tokens reported: none said
    assert "c&lt;b&gt;" in text and "c<b>" not in text
