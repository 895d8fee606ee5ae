"""What runs cost, in `ironbench view` over HTTP: the runs table's cost column, a run's page
(its Cost section, the report's), and each model call's cost on its invocation's page."""

import html
import re
import sqlite3
import time
from decimal import Decimal

import pytest

from ironbench.core.prices import usd
from tests.run.test_costs import PRICED, agent_suite, run
from tests.view.served import Served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def priced_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("costs")
    out = tmp / "out"
    result, run_id = run(out, agent_suite(tmp, {"two": (2, 1)}), "--serve-model", PRICED)
    assert result.returncode == 0, result.stderr
    with Served(out / "ironbench.db") as server:
        yield out / "ironbench.db", run_id, server


def _rows(store, sql, *params):
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        return conn.execute(sql, params).fetchall()


def test_the_runs_table_and_the_run_page_say_what_it_cost(priced_run):
    store, run_id, server = priced_run
    [(total,)] = _rows(store, "SELECT sum(cost_usd) FROM call_costs")
    runs = server.get("/").body
    assert ">Cost</th>" in runs and f">{usd(total)}</td>" in runs
    deadline = time.monotonic() + 60
    page = server.get(f"/runs/{run_id}").body
    while "data-pending" in page and time.monotonic() < deadline:  # its report renders in a worker
        time.sleep(0.5)
        page = server.get(f"/runs/{run_id}").body
    assert '<section id="cost">' in page and "genai-prices" in page


def test_each_model_call_shows_its_cost_on_its_invocations_page(priced_run):
    store, run_id, server = priced_run
    [(seq,)] = _rows(store, "SELECT seq FROM events WHERE run_id = ? AND type = 'invocation_completed'", run_id)
    body = server.get(f"/runs/{run_id}/invocations/{seq}").body
    section = body[body.index('<section id="model">') :]
    costs = [c for (c,) in _rows(store, "SELECT cost FROM call_costs ORDER BY call_index")]
    assert len(costs) == 3
    shown = [html.unescape(m) for m in re.findall(r'<td data-v="\d+">(\$[^<]*)</td>', section)]
    assert shown == [usd(Decimal(c)) for c in costs]
