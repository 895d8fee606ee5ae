"""The model gateway through the front door: `ironbench run --serve-model`, `replay` and
`run --replay`, a target that calls its model the way Ironclad does (tests/fixtures/
gateway_agent.py) through the official clients, answered by canned llm models."""

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, cli, host_pid

AGENT = REPO / "tests" / "fixtures" / "gateway_agent.py"
ENV = {"IRONBENCH_LLM_PLUGINS": "tests.fixtures.llm_scripted", "PYTHONPATH": str(REPO)}
# The summary fields the Ironclad benchmark spec names come first; the model's and its cost after them.
SPEC_FIELDS = ["run_id", "harness_run_id", "suite", "case_id", "variant_id", "run_index", "instruction_hash"]


def agent_suite(tmp_path: Path, cases: dict[str, tuple[int, int]], context: str = "", **fields) -> Path:
    """A suite of the agent: {case: (repairs its candidate needs, runs)}; `context` is added
    to every instruction."""
    data = {
        "suite_id": "gateway",
        "mode": "baseline",
        "timeout_seconds": 60,
        "target": [sys.executable, str(AGENT), "{instruction}"],
        "cases": [
            {"id": case, "instruction": f"Write solve. It needs {repairs} repairs.{context}", "runs": runs}
            for case, (repairs, runs) in cases.items()
        ],
        **fields,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run(tmp_path: Path, suite: Path, *args: str, env: dict | None = None):
    result = cli(
        "run", str(suite), "--out", str(tmp_path / "out"), "-q", "--no-report", *args, env={**ENV, **(env or {})}
    )
    return result, result.stdout.strip().split(" ")[0]


def rows(tmp_path: Path, sql: str, *params) -> list[tuple]:
    with sqlite3.connect(tmp_path / "out" / "ironbench.db") as conn:
        return conn.execute(sql, params).fetchall()


@pytest.mark.slow
def test_every_call_is_recorded_against_its_invocation_under_four_jobs(tmp_path):
    suite = agent_suite(tmp_path, {"none": (0, 2), "one": (1, 2), "two": (2, 2)})
    result, run_id = run(tmp_path, suite, "--serve-model", "canned-coder", "--jobs", "4")
    assert result.returncode == 0, result.stderr
    invocations = rows(
        tmp_path,
        "SELECT invocation_key, case_id, run_index, success, repairs_triggered, model_calls, prompt_tokens, "
        "completion_tokens, model_seconds FROM invocations WHERE run_id = ?",
        run_id,
    )
    assert len(invocations) == 6
    for key, case, index, success, repairs, calls, prompt, completion, seconds in invocations:
        assert success and repairs == {"none": 0, "one": 1, "two": 2}[case]
        assert calls == 1 + repairs  # Ironclad's arithmetic: one generation, then one call per repair
        made = rows(
            tmp_path,
            "SELECT call_index, api, requested_model, served_model, messages, prompt_tokens, completion_tokens, "
            "latency_ms FROM gateway_calls WHERE invocation_key = ? ORDER BY call_index",
            key,
        )
        assert [m[0] for m in made] == list(range(1, calls + 1))
        for _, api, requested, served, messages, *_ in made:
            assert (api, requested, served) == ("ollama.chat", "gpt-oss:20b", "canned-coder")
            # The agent names whose call it is in its prompt: every call reached its own invocation.
            assert f"(case {case} run {index})" in json.loads(messages)[-1]["content"]
        assert prompt == sum(m[5] for m in made) and completion == sum(m[6] for m in made)
        assert seconds == pytest.approx(sum(m[7] for m in made) / 1000, abs=1e-5)
    tree = tmp_path / "out" / run_id / "baseline" / "two"
    summary = json.loads((tree / "run_002" / "summary.json").read_text())
    assert list(summary)[: len(SPEC_FIELDS)] == SPEC_FIELDS and list(summary)[-2:] == ["model", "cost"]
    assert summary["model"]["calls"] == 3 and summary["model"]["completion_tokens"] > 0
    aggregate = json.loads((tree / "aggregate.json").read_text())
    assert aggregate["model"]["calls"] == 6 and aggregate["model"]["calls_per_run"] == 3.0
    metadata = json.loads((tmp_path / "out" / run_id / "metadata.json").read_text())
    assert metadata["serve_model"] == {"model": "canned-coder", "models": {}}
    query = cli(
        "query", "SELECT count(*) AS n FROM model_calls WHERE stream", "--out", str(tmp_path / "out"), "-f", "json"
    )
    assert query.returncode == 0 and json.loads(query.stdout)[0]["n"] == 0
    shown = cli("show", run_id, "--out", str(tmp_path / "out")).stdout
    assert "model: 12 model calls by 6 invocations (1–3 each)" in shown
    assert "model two: 6 model calls by 2 invocations (3 each)" in shown


@pytest.mark.slow
@pytest.mark.parametrize("client", ["ollama", "openai"])
def test_streamed_answers_are_recorded_whole(tmp_path, client):
    suite = agent_suite(tmp_path, {"one": (1, 1)})
    env = {"AGENT_CLIENT": client, "AGENT_STREAM": "1"}
    result, _ = run(tmp_path, suite, "--serve-model", "canned-coder", env=env)
    assert result.returncode == 0, result.stderr
    made = rows(tmp_path, "SELECT api, stream, answer, error FROM gateway_calls ORDER BY call_index")
    assert [(m[0], m[1], m[3]) for m in made] == [(f"{client}.chat", 1, None)] * 2
    assert all(json.loads(m[2])["filename"] == "solve" for m in made)
    assert rows(tmp_path, "SELECT success, model_calls FROM invocations") == [(1, 2)]


@pytest.mark.slow
def test_a_failing_model_makes_infrastructure_errors_whatever_the_target_printed(tmp_path):
    suite = agent_suite(tmp_path, {"one": (0, 2)})
    env = {"AGENT_HIDE_ERRORS": "1", "IRONBENCH_BACKOFF": "0.2,0.4"}  # it prints a plain failure
    result, _ = run(tmp_path, suite, "--serve-model", "canned-failing", "--max-outage", "1", env=env)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "stopped: the backend has failed for" in line and "--max-outage allows" in line
    assert "model backend error at call 1: ConnectionError: the model backend refused the connection" in line
    attempts = rows(tmp_path, "SELECT infra_error, failure_stage, model_calls FROM superseded_invocations")
    attempts += rows(tmp_path, "SELECT infra_error, failure_stage, model_calls FROM invocations")
    assert len(attempts) >= 2  # re-run after a backoff, until the outage outlasted --max-outage
    for infra_error, stage, calls in attempts:
        assert infra_error.startswith("model backend error at call 1") and stage == "infra_error" and calls == 1
    assert rows(tmp_path, "SELECT DISTINCT error_kind, status FROM gateway_calls") == [("backend", 502)]
    assert not rows(tmp_path, "SELECT * FROM decisions")  # a dead backend decides nothing


@pytest.mark.slow
def test_replay_reproduces_an_invocation_and_reports_a_divergence(tmp_path):
    # A long instruction: the first prompt is held once by its sha256, and replayed from there.
    suite = agent_suite(tmp_path, {"two": (2, 1), "none": (0, 1)}, context=" Keep it plain." * 80)
    result, run_id = run(tmp_path, suite, "--serve-model", "canned-coder")
    assert result.returncode == 0, result.stderr
    texts = rows(tmp_path, "SELECT chars FROM gateway_texts")
    assert len(texts) == 2 and all(chars > 1024 for (chars,) in texts)  # one first prompt per case
    first = json.loads(rows(tmp_path, "SELECT messages FROM gateway_calls WHERE call_index = 1")[0][0])
    assert first[0]["content"]["chars"] > 1024 and len(first[0]["content"]["sha256"]) == 64
    out = str(tmp_path / "out")
    same = cli("replay", run_id, "two", "--run", "1", "--out", out, env=ENV)
    assert same.returncode == 0, same.stderr
    assert f"{run_id} baseline/two/run_001: identical stdout and exit code (3 model calls" in same.stdout
    # The agent changed: another system prompt, and it gives up after one repair.
    changed = {**ENV, "AGENT_SYSTEM": "You write code.", "AGENT_MAX_REPAIRS": "1"}
    diverged = cli("replay", run_id, "two", "--run", "1", "--out", out, env=changed)
    assert diverged.returncode == 1, diverged.stderr
    text = diverged.stdout
    assert f"{run_id} baseline/two/run_001: differs from the recording (2 model calls" in text
    assert "stdout differs at line" in text and "exit 1, recorded exit 0" in text
    assert "call 1 diverged" in text and "call 2 diverged" in text
    assert '+      "content": "You write code.",' in text and '-      "content": "You are a strict' in text
    assert "the recording has 3 call(s); the replay made 2" in text
    # A whole run served from the recording: the same outcomes, no model asked.
    again, replay_id = run(tmp_path, suite, "--replay", run_id)
    assert again.returncode == 0, again.stderr
    outcomes = "SELECT case_id, success, repairs_triggered, model_calls FROM invocations WHERE run_id = ? ORDER BY 1"
    assert rows(tmp_path, outcomes, replay_id) == rows(tmp_path, outcomes, run_id)
    served = rows(tmp_path, "SELECT DISTINCT served_model, divergence FROM gateway_calls WHERE run_id = ?", replay_id)
    assert served == [("replay", None)]


def _gateway_of(pid: int) -> int | None:
    """The PID of the model gateway `pid` started, if one runs."""
    for entry in Path("/proc").iterdir():
        try:
            if not entry.name.isdigit():
                continue
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == pid and b"ironbench.gateway" in cmdline:
            return int(entry.name)
    return None


def _gone(pid: int, seconds: float = 10.0) -> bool:
    """Whether `pid` is gone, or is by `seconds` from now (looked at once at least)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie of ours is gone too
            if (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) == "Z":
                return True
        except OSError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _refused(port: int, seconds: float = 10.0) -> bool:
    """Whether nothing listens on `port` (within `seconds`: a process's sockets close as it exits)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except ConnectionRefusedError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "crash"])
def test_the_gateway_stops_with_its_coordinator_however_it_ends(tmp_path, sig):
    """And so does the target it serves, held waiting: all within 10 s of the signal."""
    suite = agent_suite(tmp_path, {"held": (0, 1)})
    (tmp_path / "hold").mkdir()
    held = tmp_path / "hold" / "held"  # where the fenced target says it is held: a folder the run lets it write
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(tmp_path / "out"), "-q"]
        + ["--serve-model", "canned-coder", "--allow-write", str(tmp_path / "hold")],
        env={**os.environ, **ENV, "AGENT_HOLD": str(held)},
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        # Ctrl-C as a terminal sends it: a shell running the tests in the background leaves
        # SIGINT ignored, and the coordinator would inherit that (and rightly ignore it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    agent = None
    try:
        deadline = time.monotonic() + 120
        while not list(held.parent.glob("held.[0-9]*")) and time.monotonic() < deadline:
            assert coordinator.poll() is None, "the run ended before its target started"
            time.sleep(0.1)
        [said] = [json.loads(p.read_text()) for p in held.parent.glob("held.[0-9]*")]
        agent = host_pid(said["pid"], "gateway_agent")  # the pid it saw is its fence's
        port = int(said["host"].removeprefix("http://127.0.0.1:").split("/")[0])
        gateway = _gateway_of(coordinator.pid)
        assert gateway is not None
        coordinator.send_signal(sig)
        signalled = time.monotonic()
        coordinator.wait(timeout=60)
        assert _gone(agent, signalled + 10 - time.monotonic()), f"the target outlived its coordinator ({sig.name})"
        assert _gone(gateway, signalled + 10 - time.monotonic()), f"the gateway outlived its coordinator ({sig.name})"
        assert _refused(port), f"port {port} still listens after its coordinator ended ({sig.name})"
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
            coordinator.wait()
        if agent is not None:  # what a failed test left
            with contextlib.suppress(ProcessLookupError):
                os.kill(agent, signal.SIGKILL)


@pytest.mark.slow
def test_an_unknown_served_model_is_one_line_and_nothing_written(tmp_path):
    suite = agent_suite(tmp_path, {"one": (0, 1)})
    result, _ = run(tmp_path, suite, "--serve-model", "no-such-model")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("ironbench: error: --serve-model: unknown model id 'no-such-model'")
    assert not (tmp_path / "out" / "ironbench.db").exists()


def _seen(tmp_path: Path, sql: str) -> bool:
    """Whether a run under way has recorded a row `sql` selects (its store may not be there yet)."""
    if not (tmp_path / "out" / "ironbench.db").exists():
        return False
    try:
        return bool(rows(tmp_path, sql))
    except sqlite3.OperationalError:  # the schema is still being created
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _model_server(port: int, *args: str) -> subprocess.Popen:
    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "fixtures" / "model_server.py"), str(port), *args],
        env={**os.environ, **ENV},
        cwd=REPO,
    )
    deadline = time.monotonic() + 30
    while _refused(port, 0.2) and time.monotonic() < deadline:
        time.sleep(0.05)
    return server


@pytest.mark.slow
def test_a_model_server_down_for_2_s_is_ridden_out(tmp_path):
    port = _free_port()
    suite = agent_suite(tmp_path, {"one": (1, 3)})
    env = {"CANNED_MODEL_SERVER": f"http://127.0.0.1:{port}/", "IRONBENCH_BACKOFF": "0.5,2"}
    run_ = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(tmp_path / "out"), "-q"]
        + ["--no-report", "--serve-model", "canned-remote", "--max-outage", "60"],
        env={**os.environ, **ENV, **env},
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server = None
    try:
        # The model server is down until the first invocation has failed, then 2 s more.
        deadline = time.monotonic() + 120
        while not _seen(tmp_path, "SELECT 1 FROM gateway_calls WHERE error_kind = 'backend'"):
            assert time.monotonic() < deadline and run_.poll() is None
            time.sleep(0.1)
        time.sleep(2)
        server = _model_server(port)
        _, stderr = run_.communicate(timeout=180)
        assert run_.returncode == 0, stderr
    finally:
        if run_.poll() is None:
            run_.kill()
        if server is not None:
            server.kill()
            server.wait()
    live = rows(tmp_path, "SELECT success, infra_error, model_calls FROM invocations")
    assert live == [(1, None, 2)] * 3  # every slot answered once the server was back
    failed = rows(tmp_path, "SELECT infra_error FROM superseded_invocations")
    assert failed and all(f[0].startswith("model backend error at call 1") for f in failed)
    assert len(failed) <= 4  # waits of 0.5, 1, 2 s over an outage of about 2 s: a few re-runs, not one per poll


@pytest.mark.slow
def test_a_429_is_passed_on_and_its_retry_after_waited(tmp_path):
    port = _free_port()
    server = _model_server(port, "--rate-limit", "1")
    try:
        suite = agent_suite(tmp_path, {"one": (0, 1)})
        env = {"CANNED_MODEL_SERVER": f"http://127.0.0.1:{port}/", "IRONBENCH_BACKOFF": "0.1,0.1"}
        result, _ = run(tmp_path, suite, "--serve-model", "canned-remote", env=env)
    finally:
        server.kill()
        server.wait()
    assert result.returncode == 0, result.stderr
    calls = rows(tmp_path, "SELECT status, retry_after, error_kind FROM gateway_calls ORDER BY seq")
    assert calls == [(429, 1.0, "backend"), (200, None, None)]
    started = rows(
        tmp_path,
        "SELECT timestamp_utc FROM events WHERE type = 'invocation_started' ORDER BY seq",
    )
    first, second = (datetime.fromisoformat(s[0]) for s in started)
    assert (second - first).total_seconds() >= 1.0  # the backoff was 0.1 s; the backend asked for 1 s


@pytest.mark.slow
def test_on_a_dask_cluster_workers_reach_a_gateway_and_calls_come_back(tmp_path):
    pytest.importorskip("distributed")
    from tests.fixtures.dask_cluster import LoopbackCluster

    (tmp_path / "cluster").mkdir()
    cluster = LoopbackCluster(tmp_path / "cluster", ENV)
    try:
        cluster.worker("near", 2)  # auto: on the coordinator's host, it uses the coordinator's gateway
        cluster.worker_env = {**ENV, "IRONBENCH_WORKER_GATEWAY": "own"}  # as a worker on another machine does
        far = cluster.worker("far", 2)
        cluster.wait_for_workers(2)
        suite = agent_suite(tmp_path, {"one": (1, 3), "two": (2, 3)})
        result, _ = run(
            tmp_path,
            suite,
            "--serve-model",
            "canned-coder",
            "--scheduler",
            cluster.address,
            env={"IRONBENCH_SCHEDULER": ""},
        )
        assert result.returncode == 0, result.stderr
        own = _gateway_of(far.pid)  # started at its first invocation, kept while the worker lives
    finally:
        cluster.stop()
    assert own is not None and _gone(own)  # and gone with its worker
    invocations = rows(
        tmp_path,
        "SELECT i.invocation_key, i.case_id, i.run_index, i.repairs_triggered, i.model_calls, "
        "json_extract(e.payload, '$.debug_path') FROM invocations i JOIN events e USING (seq)",
    )
    assert len(invocations) == 6
    hosts = set()
    for key, case, index, repairs, calls, debug_path in invocations:
        assert calls == 1 + repairs
        messages = rows(tmp_path, "SELECT messages FROM gateway_calls WHERE invocation_key = ?", key)
        assert len(messages) == calls
        assert all(f"(case {case} run {index})" in json.loads(m[0])[-1]["content"] for m in messages)
        hosts.add("far_workdirs" in debug_path)
    assert hosts == {True, False}  # both workers ran some
