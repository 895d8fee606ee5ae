"""The official Ollama and OpenAI clients against a real gateway process on loopback,
answering through canned llm models (tests/fixtures/llm_scripted.py), found where a target
finds them: OLLAMA_HOST and OPENAI_BASE_URL, each invocation at an address of its own."""

import http.client
import json
import os

import ollama
import openai
import pytest

from ironbench.gateway import GatewayConfig, GatewayProcess, Serving
from ironbench.gateway.server import new_token
from tests.conftest import REPO

SECRET = "hunter2-correct-horse"
TEN = "one two three four five six seven eight nine ten"


@pytest.fixture(scope="module")
def gateway():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IRONBENCH_LLM_PLUGINS", "tests.fixtures.llm_scripted")
        mp.setenv("PYTHONPATH", str(REPO))
        mp.setenv("MY_SECRET", SECRET)
        serving = Serving("canned-echo", {"streamer": "canned-streamer", "down": "canned-failing"})
        with GatewayProcess(GatewayConfig(serving.to_dict(), ("MY_SECRET",))).start() as process:
            process.ready()
            yield process


@pytest.fixture
def invocation(gateway, monkeypatch):
    """An invocation's address, set in the environment as the run sets it; its calls after it."""
    link, token = gateway.link(), new_token()
    link.open(token)
    for name, value in link.env(token).items():
        monkeypatch.setenv(name, value)
    closed: list = []
    yield lambda: closed or closed.extend(link.close(token)) or closed
    if not closed:
        link.close(token)


def test_ollama_client_chat_generate_stream_and_listing(invocation, monkeypatch):
    client = ollama.Client()  # OLLAMA_HOST, as Ironclad's client finds it
    answer = client.chat(model="gpt-oss:20b", messages=[{"role": "user", "content": "hi"}], options={"seed": 7})
    assert answer.message.content == "echo: hi (seed 7)" and answer.done
    assert answer.prompt_eval_count and answer.eval_count == 4
    generated = client.generate(model="gpt-oss:20b", prompt="yo", system="be brief")
    assert generated.response == "echo: yo"
    parts = list(client.chat(model="streamer", messages=[{"role": "user", "content": "count"}], stream=True))
    assert "".join(p.message.content for p in parts) == TEN and len(parts) == 11
    assert parts[-1].done and parts[-1].eval_count == 10
    assert {"canned-echo", "canned-failing", "canned-streamer", "down", "streamer"} == {
        m.model for m in client.list().models
    }
    calls = invocation()
    summary = [(c["index"], c["api"], c["requested_model"], c["served_model"], c["stream"]) for c in calls]
    assert summary == [
        (1, "ollama.chat", "gpt-oss:20b", "canned-echo", False),
        (2, "ollama.generate", "gpt-oss:20b", "canned-echo", False),
        (3, "ollama.chat", "streamer", "canned-streamer", True),
    ]
    assert calls[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert calls[0]["options"]["options"] == {"seed": 7} and calls[0]["applied"] == {"seed": 7}
    assert calls[0]["answer"] == "echo: hi (seed 7)" and calls[0]["completion_tokens"] == 4
    assert calls[1]["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "yo"}]
    assert calls[2]["answer"] == TEN and calls[2]["completion_tokens"] == 10
    assert all(c["latency_ms"] >= 0 and c.get("error") is None for c in calls)


def test_openai_client_chat_stream_with_usage_and_models(invocation):
    client = openai.OpenAI(max_retries=0)  # OPENAI_BASE_URL and OPENAI_API_KEY from the environment
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    answer = client.chat.completions.create(model="gpt-4o", messages=messages, seed=3, temperature=0)
    assert answer.choices[0].message.content == "echo: hi (seed 3)"
    assert answer.usage is not None and answer.usage.completion_tokens == 4
    stream = client.chat.completions.create(
        model="streamer", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == TEN
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 10
    assert "canned-echo" in {m.id for m in client.models.list()}
    calls = invocation()
    assert [(c["api"], c["served_model"], c["stream"]) for c in calls] == [
        ("openai.chat", "canned-echo", False),
        ("openai.chat", "canned-streamer", True),
    ]
    assert calls[0]["applied"] == {"seed": 3, "temperature": 0}
    assert calls[0]["options"] == {"seed": 3, "temperature": 0}


def test_a_failing_backend_is_a_502_to_the_client_and_a_backend_error_in_the_call(invocation):
    with pytest.raises(ollama.ResponseError) as raised:
        ollama.Client().chat(model="down", messages=[{"role": "user", "content": "hi"}])
    assert raised.value.status_code == 502 and "refused the connection" in str(raised.value)
    with pytest.raises(openai.APIStatusError) as failed:
        openai.OpenAI(max_retries=0).chat.completions.create(model="down", messages=[{"role": "user", "content": "x"}])
    assert failed.value.status_code == 502
    calls = invocation()
    assert [(c["error_kind"], c["status"]) for c in calls] == [("backend", 502), ("backend", 502)]
    assert "ConnectionError: the model backend refused the connection" in calls[0]["error"]


def test_calls_go_to_the_invocation_whose_address_they_used_and_nowhere_else(gateway):
    link = gateway.link()
    tokens = [new_token() for _ in range(3)]
    for token in tokens:
        link.open(token)
    for round_ in range(2):
        for number, token in enumerate(tokens):
            host = link.env(token)["OLLAMA_HOST"]
            ollama.Client(host=host).chat(model="m", messages=[{"role": "user", "content": f"{number}/{round_}"}])
    for number, token in enumerate(tokens):
        calls = link.close(token)
        assert [(c["index"], c["messages"][0]["content"]) for c in calls] == [(1, f"{number}/0"), (2, f"{number}/1")]
    # A closed invocation's address, or one never given, is nobody's: refused, not recorded.
    with pytest.raises(ollama.ResponseError) as raised:
        ollama.Client(host=link.env(tokens[0])["OLLAMA_HOST"]).chat(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    assert raised.value.status_code == 404


def test_a_bad_request_is_refused_and_recorded_as_the_targets_mistake(invocation):
    netloc, _, path = os.environ["OLLAMA_HOST"].removeprefix("http://").partition("/")
    connection = http.client.HTTPConnection(netloc, timeout=10)
    connection.request("POST", f"/{path}/api/chat", json.dumps({"model": "m", "messages": "hi"}))
    response = connection.getresponse()
    assert response.status == 400 and "messages" in json.loads(response.read())["error"]
    [call] = invocation()
    assert (call["error_kind"], call["status"]) == ("request", 400)


def test_a_secret_in_a_call_is_redacted_before_it_is_recorded(invocation):
    answer = ollama.Client().chat(model="m", messages=[{"role": "user", "content": f"key {SECRET}"}])
    assert answer.message.content == f"echo: key {SECRET}"  # the target gets its answer as it is
    [call] = invocation()
    assert SECRET not in json.dumps(call)
    assert call["messages"][0]["content"] == "key [REDACTED:MY_SECRET]"
    assert call["answer"] == "echo: key [REDACTED:MY_SECRET]"


def _raw(path: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """POST `body` to the invocation's OLLAMA_HOST + path as it is, with the headers given."""
    netloc, _, prefix = os.environ["OLLAMA_HOST"].removeprefix("http://").partition("/")
    connection = http.client.HTTPConnection(netloc, timeout=30)
    connection.putrequest("POST", f"/{prefix}{path}")
    for name, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
        connection.putheader(name, value)
    connection.endheaders()
    connection.send(body)
    response = connection.getresponse()
    return response.status, response.read()


def test_a_request_nested_past_the_parser_is_refused_and_recorded_whole(invocation):
    """A body of 100,000 open brackets stopped the handler before its call was recorded: the
    invocation's record came back without the fields a call has, and the run aborted."""
    status, _ = _raw("/api/chat", b"[" * 100_000)
    assert status == 400
    [call] = invocation()
    assert (call["error_kind"], call["status"], call["api"], call["served_model"]) == (
        "request",
        400,
        "ollama.chat",
        "",
    )


def test_a_lone_surrogate_in_a_request_never_costs_the_invocation_its_record(invocation):
    """The record of a call whose prompt holds "\\udcff" could not be sent back: every call of
    the invocation was lost. The surrogate is recorded, and given to the model, as its escape."""
    ollama.Client().chat(model="m", messages=[{"role": "user", "content": "first"}])
    body = b'{"model": "m", "messages": [{"role": "user", "content": "x\\udcffy"}], "stream": false}'
    status, answer = _raw("/api/chat", body)
    assert status == 200 and json.loads(answer)["message"]["content"] == "echo: x\\udcffy"  # escaped: no model sees one
    calls = invocation()
    assert [c["messages"][0]["content"] for c in calls] == ["first", "x\\udcffy"]


def test_a_negative_content_length_is_refused_not_read_to_the_end(invocation):
    status, answer = _raw("/api/chat", b"{}" * 1000, {"Content-Length": "-1"})
    assert status == 400 and b"Content-Length" in answer


def test_a_control_request_with_a_secret_no_ascii_can_say_is_refused(gateway):
    netloc = gateway.link().env(new_token())["OLLAMA_HOST"].removeprefix("http://").partition("/")[0]
    connection = http.client.HTTPConnection(netloc, timeout=10)
    connection.putrequest("GET", "/_ironbench/ping")
    connection.putheader("X-Ironbench-Secret", "\u00e9t\u00e9".encode().decode("latin-1"))
    connection.endheaders()
    assert connection.getresponse().status == 403


def test_connections_held_open_past_the_cap_are_closed_unanswered():
    """1,500 idle connections from a target at partial (no netgate there) gave the run's gateway
    1,500 threads; past its cap a connection is closed at once, and those within it still work."""
    import socket
    import threading
    import time

    from ironbench.gateway.server import Gateway, GatewayServer

    server = GatewayServer(Gateway("s", None))
    server.max_connections = 4
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        held = [socket.create_connection(server.server_address, timeout=5) for _ in range(6)]
        time.sleep(0.3)
        closed = []
        for conn in held:
            conn.settimeout(0.3)
            try:
                closed.append(conn.recv(1) == b"")
            except TimeoutError:
                closed.append(False)  # open, waiting for its request
        assert closed == [False] * 4 + [True] * 2
        for conn in held:
            conn.close()
        time.sleep(0.3)
        with socket.create_connection(server.server_address, timeout=5) as again:
            again.sendall(b"GET /_ironbench/ping HTTP/1.1\r\nHost: x\r\n\r\n")
            assert again.recv(100).startswith(b"HTTP/1.1 403")
    finally:
        server.shutdown()
        server.server_close()
