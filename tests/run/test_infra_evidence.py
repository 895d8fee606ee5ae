"""An infrastructure error is the harness's own evidence, never a target's choice: a printed
"Error connecting to Ollama" counts only when ironbench cannot reach the target's backend
either as the invocation ends; with the model gateway only what the gateway saw counts, and a
backend's refusal of the request's own content (a prompt beyond its context, a 400) is the
target's failure. Through the front door, a target that prints the line on its first attempt
to earn a re-run gets none."""

import socket
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ironbench.gateway.backends import backend_error
from ironbench.run.executors import backend_unreachable
from ironbench.sandbox import Endpoint, SandboxPolicy, fence_for
from tests.conftest import REPO, cli

ADD = {"entry_point": "add", "python": "def check(candidate):\n    assert candidate(2, 3) == 5\n"}
LLM_ENV = {"IRONBENCH_LLM_PLUGINS": "tests.fixtures.llm_scripted", "PYTHONPATH": str(REPO)}

# On its first attempt it saves a wrong brick and says its backend was unreachable (asking its
# model first, when it has one through the gateway, with a prompt far beyond any small context);
# run again, it saves a right one.
CHOOSER = """\
import json, os, urllib.request
os.makedirs("verified_bricks", exist_ok=True)
first = os.environ.get("IRONBENCH_RERUN", "0") == "0"
with open("verified_bricks/add.py", "w") as handle:
    handle.write("def add(a, b):\\n    return 0\\n" if first else "def add(a, b):\\n    return a + b\\n")
if first:
    base = os.environ.get("OPENAI_BASE_URL")
    if base:
        body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "word " * 4000}]}).encode()
        request = urllib.request.Request(base.rstrip("/") + "/chat/completions", body, {"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=60)
        except Exception as exc:
            print("model said", exc)
    print("[-] FAIL (Attempt 1/3)")
    print("[!] Error connecting to Ollama: Connection error")
    print("[X] INCINERATED: Output invalid.")
    raise SystemExit(1)
print("[SUCCESS] Verified brick saved to: verified_bricks/add.py")
"""


def _run(tmp_path: Path, *flags: str, env: dict | None = None) -> tuple[list[tuple], list[tuple]]:
    """One case of the chooser; (its invocations, the attempts superseded by a re-run), each
    (infra_error, failure_stage)."""
    (tmp_path / "target.py").write_text(textwrap.dedent(CHOOSER))
    suite = {
        "suite_id": "infra",
        "mode": "baseline",
        "timeout_seconds": 60,
        "stop": {"rule": "fixed", "runs": 1},
        "check": ADD,
        "target": [sys.executable, str(tmp_path / "target.py"), "{instruction}"],
        "cases": [{"id": "add", "instruction": "Write add(a, b)."}],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    out = tmp_path / "out"
    cli("run", str(tmp_path / "suite.yaml"), "--out", str(out), "--no-report", "-q", *flags, env=env)
    with sqlite3.connect(out / "ironbench.db") as conn:
        runs = conn.execute("SELECT infra_error, failure_stage FROM invocations").fetchall()
        superseded = conn.execute("SELECT infra_error, failure_stage FROM superseded_invocations").fetchall()
    return runs, superseded


@pytest.fixture
def backend():
    """A backend that is up: a port that accepts connections."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    yield f"127.0.0.1:{listener.getsockname()[1]}"
    listener.close()


def test_a_printed_connection_error_with_its_backend_up_is_the_targets_failure(tmp_path, backend):
    runs, superseded = _run(tmp_path, "--allow-net", backend)
    assert superseded == []  # no re-run earned
    assert runs == [(None, "generation")]  # [X] INCINERATED: by its stage, as any other failure


def test_a_printed_connection_error_with_its_backend_down_is_an_infrastructure_error(tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there
    assert backend_unreachable(fence_for(SandboxPolicy(allow_net=(Endpoint("127.0.0.1", port),)))) is not None
    runs, superseded = _run(tmp_path, "--allow-net", f"127.0.0.1:{port}")
    [(infra_error, stage)] = superseded
    assert stage == "infra_error"
    assert infra_error == "[!] Error connecting to Ollama: Connection error"
    assert runs == [(None, None)]  # the re-run succeeded


@pytest.mark.slow
def test_a_request_beyond_the_models_context_is_the_targets_failure(tmp_path):
    runs, superseded = _run(tmp_path, "--serve-model", "canned-small", env=LLM_ENV)
    assert superseded == []
    assert runs == [(None, "generation")]
    with sqlite3.connect(tmp_path / "out" / "ironbench.db") as conn:
        calls = conn.execute("SELECT error_kind, status FROM gateway_calls").fetchall()
    assert calls == [("request", 400)]


class _Refused(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"the backend answered {status}")
        self.status_code = status


@pytest.mark.parametrize(
    ("exc", "request_s", "status"),
    [
        (ValueError("Requested tokens (40031) exceed context window of 2048"), True, 400),
        (_Refused(400), True, 400),
        (_Refused(413), True, 413),
        (_Refused(422), True, 422),
        (_Refused(401), False, 502),  # the gateway's key: its configuration, not the request
        (_Refused(500), False, 502),
        (_Refused(503), False, 502),
        (ConnectionError("connection refused"), False, 502),
        (TimeoutError("the backend did not answer in 600 s"), False, 502),
    ],
)
def test_the_gateway_tells_the_requests_fault_from_the_backends(exc, request_s, status):
    found = backend_error(exc)
    assert (found.request, found.status) == (request_s, status)
