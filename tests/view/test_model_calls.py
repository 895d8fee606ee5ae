"""An invocation's model calls on its page in `ironbench view`, over HTTP: a run whose target
calls the model gateway like Ironclad does (tests/fixtures/gateway_agent.py, answered by a
canned llm model), its first prompt long enough to be held once by its sha256 and its
system prompt hostile markup. The page lists the calls in order as the store holds them,
each call's messages and answer one click away, the long text whole, the markup as text."""

import html
import json
import re
import sqlite3

import pytest

from tests.report.chromium import Chromium, chromium_path
from tests.run.test_model_gateway import agent_suite, run
from tests.view.served import Served

# The end-to-end tier (`pytest -m slow`): runs served by the model gateway, read in the viewer.
pytestmark = pytest.mark.slow

HOSTILE = "<script>window.__pwned=1</script><img src=x onerror=alert(1)>"
LONG = " Keep it plain." * 80  # the first prompt is over 1,024 characters: held by hash


@pytest.fixture(scope="module")
def gateway_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("calls")
    suite = agent_suite(tmp, {"two": (2, 1)}, context=LONG)
    env = {"AGENT_SYSTEM": f"{HOSTILE} You output JSON only: filename, code and test."}
    result, run_id = run(tmp, suite, "--serve-model", "canned-coder", env=env)
    assert result.returncode == 0, result.stderr
    store = tmp / "out" / "ironbench.db"
    with Served(store) as server:
        yield store, run_id, server


def _store(store, sql, *params):
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
        return conn.execute(sql, params).fetchall()


def _section(body: str) -> str:
    start = body.index('<section id="model">')
    return body[start : body.index("</section>", start)]


def test_the_invocation_page_lists_its_calls_in_order_with_their_texts(gateway_run):
    store, run_id, server = gateway_run
    [(seq, payload)] = _store(
        store, "SELECT seq, payload FROM events WHERE run_id = ? AND type = 'invocation_completed'", run_id
    )
    invocation = json.loads(payload)
    page = server.get(f"/runs/{run_id}/invocations/{seq}")
    assert page.status == 200
    shown = _section(page.body)
    calls = _store(
        store,
        "SELECT call_index, api, requested_model, served_model, prompt_tokens, completion_tokens, messages, "
        "answer FROM gateway_calls WHERE invocation_key = ? ORDER BY call_index",
        invocation["key"],
    )
    assert [c[0] for c in calls] == [1, 2, 3]  # one generation, two repairs
    rows = re.findall(r"<tr><td>(.*?)</tr>", shown, re.DOTALL)
    assert len(rows) == 3
    texts = dict(_store(store, "SELECT sha256, text FROM gateway_texts WHERE run_id = ?", run_id))
    held = 0
    for row, (index, api, requested, served, prompt, completion, messages, answer) in zip(rows, calls, strict=True):
        cells = re.findall(r"(?:^|<td[^>]*>)(.*?)</td>", row, re.DOTALL)
        assert [html.unescape(c) for c in cells[:6]] == [
            str(index),
            api,
            f"{requested} → {served}",
            "no",
            str(prompt),
            str(completion),
        ]
        exchange = html.unescape(row[row.index("<details") :])
        for message in json.loads(messages):
            content = message["content"]
            if isinstance(content, dict):  # held by hash: shown whole, from gateway_texts
                held += 1
                content = texts[content["sha256"]]
                assert len(content) >= 1024 and LONG in content
            assert f'<h4>{message["role"]}</h4><pre class="text">{content}</pre>' in exchange
        assert f'<h4>answer</h4><pre class="text">{answer}</pre>' in exchange
    assert held == 1
    totals = f"{invocation['model_calls']} model calls: </b>{invocation['prompt_tokens']:,} prompt + "
    assert totals in shown and f"{invocation['completion_tokens']:,} completion tokens" in shown


def test_markup_in_a_message_is_shown_as_text(gateway_run):
    store, run_id, server = gateway_run
    [(seq,)] = _store(store, "SELECT seq FROM events WHERE run_id = ? AND type = 'invocation_completed'", run_id)
    body = server.get(f"/runs/{run_id}/invocations/{seq}").body
    assert html.escape(HOSTILE, quote=True) in body
    assert "<script>window" not in body and "<img" not in body
    assert re.findall(r"<script[^>]*>", body) == ['<script src="/static/report.js">', '<script src="/static/view.js">']


@pytest.mark.skipif(chromium_path() is None, reason="chromium is not installed (apt-get install -y chromium)")
def test_a_calls_messages_and_answer_open_with_a_click(gateway_run):
    store, run_id, server = gateway_run
    [(seq,)] = _store(store, "SELECT seq FROM events WHERE run_id = ? AND type = 'invocation_completed'", run_id)
    with Chromium() as browser:
        page = browser.open(f"{server.base}/runs/{run_id}/invocations/{seq}")
        first = "document.querySelector('#model details')"
        answer = f"[...{first}.querySelectorAll('pre')].at(-1)"
        assert page.evaluate(f"{first}.open") is False
        assert page.evaluate(f"{answer}.checkVisibility()") is False  # closed: nothing shown
        page.evaluate(f"{first}.querySelector('summary').click()")
        assert page.evaluate(f"{first}.open") is True
        assert page.evaluate(f"{answer}.checkVisibility()") is True
        assert page.evaluate(f"{answer}.innerText").startswith('{"filename": "solve"')
        assert page.evaluate("typeof window.__pwned") == "undefined" and page.problems() == []
