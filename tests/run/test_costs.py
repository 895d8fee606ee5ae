"""What runs cost, through the front door: a target that calls its model the way Ironclad
does (tests/fixtures/gateway_agent.py), answered through `--serve-model` by canned models
(tests/fixtures/llm_scripted.py: one under a model id the price table knows, claude-haiku-4-5,
one it does not, canned-coder). No network: the price table is the bundled one, and every
price is checked against genai-prices called here directly."""

import json
import shutil
import sqlite3
from decimal import Decimal
from pathlib import Path

import genai_prices
import pytest
from genai_prices import Usage, calc_price

from tests.conftest import REPO, cli
from tests.run.test_model_gateway import agent_suite as gateway_suite

ENV = {"IRONBENCH_LLM_PLUGINS": "tests.fixtures.llm_scripted", "PYTHONPATH": str(REPO)}
PRICED = "claude-haiku-4-5"  # Anthropic's, in the bundled table


def agent_suite(tmp_path: Path, cases: dict[str, tuple[int, int]], **fields) -> Path:
    """The model gateway tests' suite of the agent: {case: (repairs its candidate needs, runs)}."""
    return gateway_suite(tmp_path, cases, suite_id="costs", **fields)


def run(out: Path, suite: Path, *args: str):
    result = cli("run", str(suite), "--out", str(out), "-q", "--no-report", *args, env=ENV)
    return result, result.stdout.strip().split(" ")[0]


def rows(out: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        return conn.execute(sql, params).fetchall()


def table_price(input_tokens: int, output_tokens: int, cached: int | None) -> Decimal:
    """What genai-prices itself says such a call of PRICED costs."""
    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached)
    return calc_price(usage, PRICED, provider_id="anthropic").total_price


@pytest.mark.slow
def test_a_priced_model_costs_exactly_what_the_table_gives_for_its_recorded_tokens(tmp_path):
    out = tmp_path / "out"
    suite = agent_suite(tmp_path, {"none": (0, 2), "one": (1, 2), "two": (2, 2)})
    result, run_id = run(out, suite, "--serve-model", PRICED, "--jobs", "2")
    assert result.returncode == 0, result.stderr
    calls = rows(
        out,
        "SELECT g.invocation_key, g.call_index, g.prompt_tokens, g.completion_tokens, c.cached_tokens, c.cost, "
        "c.pricing, c.price_table, c.provider, c.caller FROM gateway_calls g JOIN call_costs c "
        "ON c.invocation_key = g.invocation_key AND c.call_index = g.call_index AND c.rerun = g.rerun",
    )
    assert len(calls) == 2 * 1 + 2 * 2 + 2 * 3  # every call priced once, against its own call
    by_invocation: dict[str, Decimal] = {}
    for key, index, prompt, completion, cached, cost, pricing, table, provider, caller in calls:
        # a repair's prompt repeats the conversation: the fixture reports half of it as cached
        assert cached == (prompt // 2 if index > 1 else None)
        assert Decimal(cost) == table_price(prompt, completion, cached)
        assert (pricing, table, provider, caller) == (
            "table",
            f"genai-prices {genai_prices.__version__}",
            "anthropic",
            "target",
        )
        by_invocation[key] = by_invocation.get(key, Decimal(0)) + Decimal(cost)
    total = sum(by_invocation.values(), Decimal(0))
    tree = out / run_id
    metadata = json.loads((tree / "metadata.json").read_text())
    assert metadata["cost"]["usd"] == float(total) and metadata["cost"]["unpriced_calls"] == 0
    assert metadata["cost"]["target"]["per_invocation"] == float(round(total / 6, 12))
    assert metadata["cost"]["own_share"] == 0.0
    keys = dict(rows(out, "SELECT case_id || '/' || run_index, invocation_key FROM invocations"))
    for case, calls_made in (("none", 1), ("one", 2), ("two", 3)):
        summary = json.loads((tree / "baseline" / case / "run_002" / "summary.json").read_text())
        assert summary["cost"] == {
            "usd": float(by_invocation[keys[f"{case}/2"]]),
            "calls": calls_made,
            "unpriced_calls": 0,
        }
        aggregate = json.loads((tree / "baseline" / case / "aggregate.json").read_text())
        group = by_invocation[keys[f"{case}/1"]] + by_invocation[keys[f"{case}/2"]]
        assert aggregate["cost"]["usd"] == float(group) and aggregate["cost"]["per_success"] == float(group / 2)
    shown = cli("show", run_id, "--out", str(out), "-f", "json", check=True)
    cost = json.loads(shown.stdout)["cost"]
    assert cost["usd"] == float(total) and cost["priced_by"] == f"genai-prices {genai_prices.__version__}"
    text = cli("show", run_id, "--out", str(out), check=True).stdout
    assert "cost: $" in text and "per success" in text and "cost two: $" in text
    # the views see it too, and the tree is rebuilt from the events to the same bytes
    queried = cli("query", "cost_per_case.sql", "--out", str(out), "-f", "json", check=True)
    assert {r["case_id"]: r["calls"] for r in json.loads(queried.stdout)} == {"none": 2, "one": 4, "two": 6}
    before = {p: p.read_bytes() for p in tree.rglob("*.json")}
    shutil.rmtree(tree)
    cli("project", run_id, "--out", str(out), "--rebuild", check=True)
    assert {p: p.read_bytes() for p in tree.rglob("*.json")} == before
    page = Path(cli("report", run_id, "--out", str(out), check=True).stdout.strip()).read_text()
    assert '<section id="cost">' in page and "genai-prices" in page


@pytest.mark.slow
def test_a_model_no_price_knows_is_unpriced_never_0_until_a_price_is_given(tmp_path):
    out = tmp_path / "out"
    suite = agent_suite(tmp_path, {"one": (1, 2)})
    # not quiet: the note comes before anything runs, with the progress
    result = cli("run", str(suite), "--out", str(out), "--no-report", "--serve-model", "canned-coder", env=ENV)
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.strip()
    assert "note: canned-coder has no price" in result.stderr and "--price canned-coder=IN/OUT" in result.stderr
    assert rows(out, "SELECT DISTINCT pricing, cost, cost_usd FROM call_costs") == [("unpriced", None, None)]
    summary = json.loads((out / run_id / "baseline" / "one" / "run_001" / "summary.json").read_text())
    assert summary["cost"] == {"usd": None, "calls": 2, "unpriced_calls": 2}
    aggregate = json.loads((out / run_id / "baseline" / "one" / "aggregate.json").read_text())
    assert aggregate["cost"]["usd"] is None and aggregate["cost"]["per_invocation"] is None
    shown = cli("show", run_id, "--out", str(out), check=True).stdout
    assert "cost: unpriced (4 model calls, no price for their models" in shown
    # the same model with a price given: USD per million tokens, exactly
    result, priced = run(out, suite, "--serve-model", "canned-coder", "--price", "canned-coder=0.5/2")
    assert result.returncode == 0, result.stderr
    for prompt, completion, cost, pricing, table in rows(
        out,
        "SELECT g.prompt_tokens, g.completion_tokens, c.cost, c.pricing, c.price_table FROM gateway_calls g "
        "JOIN call_costs c USING (invocation_key, call_index, rerun) WHERE g.run_id = ?",
        priced,
    ):
        assert (pricing, table) == ("given", "--price")
        assert Decimal(cost) == (Decimal("0.5") * prompt + 2 * completion) / 1_000_000
    [(payload,)] = rows(out, "SELECT payload FROM events WHERE run_id = ? AND type = 'pricing_set'", priced)
    assert json.loads(payload)["prices"] == {"canned-coder": {"input": "0.5", "output": "2"}}


@pytest.mark.slow
def test_a_budget_stops_a_run_midway_and_resume_runs_it_to_the_end_with_nothing_lost_or_run_twice(tmp_path):
    out = tmp_path / "out"
    # 8 invocations of 2 calls each, one at a time
    suite = agent_suite(tmp_path, {f"c{k}": (1, 2) for k in range(4)})
    price = ("--price", "canned-coder=1000/1000")  # a few cents an invocation: easy to read
    result, _ = run(out, suite, "--serve-model", "canned-coder", *price, "--budget", "0.4")
    assert result.returncode == 3, result.stderr
    [line] = result.stderr.strip().splitlines()
    [run_id] = [p.name for p in out.iterdir() if p.name.startswith("run_")]
    assert line.startswith(f"ironbench: budget reached: {run_id} spent $") and "of its $0.4 budget" in line
    assert line.endswith(f"continue with: ironbench resume {run_id} --budget MORE")
    costs = dict(rows(out, "SELECT invocation_key, sum(cost_usd) FROM call_costs GROUP BY 1"))
    spent = sum(costs.values())
    # stopped once the recorded cost reached the budget: within one invocation's cost of it
    assert 0.4 <= spent < 0.4 + max(costs.values())
    assert 1 < len(costs) < 8
    [(payload,)] = rows(out, "SELECT payload FROM events WHERE type = 'budget_reached'")
    reached = json.loads(payload)
    assert reached["budget"] == "0.4" and float(reached["spent"]) == pytest.approx(spent)
    started = rows(out, "SELECT count(*) FROM events WHERE type = 'invocation_started'")
    assert started == rows(out, "SELECT count(*) FROM events WHERE type = 'invocation_completed'")  # none left running
    assert rows(out, "SELECT status FROM runs") == [("aborted",)]
    # without more budget it stops again at once, running nothing
    again = cli("resume", run_id, "--out", str(out), "-q", "--no-report", env=ENV)
    assert again.returncode == 3 and "budget reached" in again.stderr
    assert rows(out, "SELECT count(*) FROM invocations") == [(len(costs),)]
    done = cli("resume", run_id, "--out", str(out), "-q", "--no-report", "--budget", "10", env=ENV)
    assert done.returncode == 0, done.stderr
    completed = rows(
        out,
        "SELECT key FROM (SELECT json_extract(payload, '$.key') AS key FROM events "
        "WHERE type = 'invocation_completed')",
    )
    assert len(completed) == 8 and len(set(completed)) == 8  # every slot once: nothing lost or run twice
    assert rows(out, "SELECT count(*), count(DISTINCT invocation_key || '/' || call_index) FROM call_costs") == [
        (16, 16)
    ]
    [(payload,)] = rows(out, "SELECT payload FROM events WHERE type = 'pricing_set' AND payload LIKE '%resume%'")
    assert Decimal(json.loads(payload)["budget"]) == Decimal(json.loads(payload)["spent"]) + 10
    assert rows(out, "SELECT status FROM runs") == [("finished",)]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same suite twice: by the table's price, then at half of it (--price): B costs less."""
    tmp_path = tmp_path_factory.mktemp("compare")
    out = tmp_path / "out"
    suite = agent_suite(tmp_path, {f"c{k}": (k % 3, 2) for k in range(6)})
    result, a = run(out, suite, "--serve-model", PRICED)
    assert result.returncode == 0, result.stderr
    result, b = run(out, suite, "--serve-model", PRICED, "--price", f"{PRICED}=0.5/2.5/0.05", "--jobs", "2")
    assert result.returncode == 0, result.stderr
    return out, a, b


@pytest.mark.slow
def test_compare_gives_the_cost_difference_with_its_interval(two_runs):
    out, a, b = two_runs
    compared = cli("compare", a, b, "--out", str(out), "-f", "json", env={"COLUMNS": "200"})
    cost = json.loads(compared.stdout)["cost"]
    per = cost["per_invocation"]
    assert per["b"] == pytest.approx(per["a"] / 2) and per["paired"] and per["cases"] == 6
    low, high = per["ci_95"]
    assert low <= per["difference"] <= high < 0  # B is cheaper, and the interval says so
    assert cost["on"] == "success" and cost["per_brick"]["difference"] < 0
    frontier = {p["run_id"]: p["frontier"] for p in cost["points"]}
    assert frontier == {a: False, b: True}  # as correct, at half the price
    text = cli("compare", a, b, "--out", str(out)).stdout
    assert "cost per invocation: A $" in text and "[95% CI -$" in text and "B costs less" in text
    assert "cost–success: B dominates A" in text
    page = Path(cli("report", b, "--compare", a, "--out", str(out), check=True).stdout.strip()).read_text()
    assert 'class="frontier-point"' in page and "B costs less" in page


@pytest.mark.slow
def test_plan_estimates_a_suites_cost_from_a_stored_run_of_its_target(two_runs, tmp_path):
    out, _, b = two_runs
    bigger = agent_suite(tmp_path, {f"c{k}": (k % 3, 4) for k in range(6)})
    planned = cli("plan", str(bigger), "--out", str(out), "-f", "json", check=True)
    found = json.loads(planned.stdout)
    assert found["from_run"] == b and found["at_most_invocations"] == 24 and found["same_suite"]
    low, high = found["ci_95"]
    assert low <= found["per_invocation"] <= high
    assert found["estimate_usd"] == pytest.approx(found["per_invocation"] * 24)
    said = cli("plan", str(bigger), "--out", str(out), check=True).stdout
    assert "at most 24 invocations" in said and "estimated cost: at most $" in said


def test_calls_a_target_leaves_before_their_answer_are_priced_and_stopped(tmp_path):
    """A target that hangs up on a streamed answer, or leaves before a whole one, still pays
    for what it asked (estimated: its prompt's characters and what was answered, four to a
    token), and the model is not kept generating for nobody."""
    import sys

    import yaml

    log = tmp_path / "words.log"
    agent = REPO / "tests" / "fixtures" / "abandoning_agent.py"
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "suite_id": "abandon",
                "mode": "baseline",
                "timeout_seconds": 30,
                "target": [sys.executable, str(agent), "{instruction}"],
                "cases": [
                    {"id": "stream", "instruction": "Write add. stream", "runs": 1},
                    {"id": "fire", "instruction": "Write add. fire", "runs": 1},
                ],
            }
        )
    )
    out = tmp_path / "out"
    env = {**ENV, "IRONBENCH_LLM_PLUGINS": "tests.fixtures.llm_slow", "SLOW_MODEL_LOG": str(log)}
    result = cli("run", str(suite), "--out", str(out), "-q", "--no-report", "--serve-model", "gpt-4o-mini", env=env)
    assert result.returncode in (0, 1), result.stderr
    calls = rows(
        out,
        "SELECT g.served_model, g.status, c.input_tokens, c.output_tokens, c.cost, c.pricing, c.price_table "
        "FROM gateway_calls g JOIN call_costs c ON c.invocation_key = g.invocation_key "
        "AND c.call_index = g.call_index AND c.rerun = g.rerun",
    )
    assert len(calls) == 2, calls
    for served, status, input_tokens, _output, cost, pricing, table in calls:
        assert (served, status, pricing) == ("gpt-4o-mini", 499, "table")
        assert input_tokens >= 200 and Decimal(cost) > 0 and "tokens estimated" in table
    import time

    time.sleep(1.0)  # a model still generating would go on writing
    made = log.read_text().splitlines() if log.exists() else []
    assert len(made) < 2 * 20, "the model went on answering calls nobody waits for"
