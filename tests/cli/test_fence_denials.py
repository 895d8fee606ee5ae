"""What the fence withheld, told through the front door: an agent that needs an API key, a config
file under the user's home or a local server fails with failure_cause `fence` and the flag that
allows it (the run's end, show, the report, the failure breakdown), and succeeds with the flag;
a run whose failures are its own never says `fence`; a quiet run keeps its problems; the
credential line; `ironbench sandbox` and its shell. No secret's value is ever printed or stored."""

import json
import os
import shlex
import socket
import sqlite3
import sys
import threading
from pathlib import Path

import pytest
import yaml

from ironbench.sandbox import machine_fence
from tests.conftest import cli, query

AGENT = Path(__file__).resolve().parents[1] / "fixtures" / "needy_agent.py"
LEVEL = machine_fence().level
SECRET = "sk-test-0123456789abcdef"
LEVELS = [
    pytest.param("full", marks=pytest.mark.skipif(LEVEL != "full", reason=f"this machine allows {LEVEL} only")),
    pytest.param("partial", marks=pytest.mark.skipif(LEVEL == "none", reason="this machine allows no fence")),
]
pytestmark = pytest.mark.slow


def suite(folder: Path, need: str, runs: int = 2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "suite_id": "needy",
        "mode": "baseline",
        "timeout_seconds": 60,
        "target": [sys.executable, str(AGENT), "{instruction}", *need.split()],
        "cases": [{"id": "add", "instruction": "Write a function named add.", "runs": runs}],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    """The user's home, with the agent's config in it."""
    found = tmp_path / "home"
    (found / ".config" / "agent").mkdir(parents=True)
    (found / ".config" / "agent" / "config.json").write_text('{"model": "local"}')
    return found


@pytest.fixture
def server():
    """A local server the agent talks to (it answers each line): its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"hi " + connection.recv(100))

    threading.Thread(target=serve, daemon=True).start()
    yield listener.getsockname()[1]
    listener.close()


def ran(tmp_path: Path, home: Path, level: str, need: str, *args: str, runs: int = 2, env: dict | None = None):
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    environ = {"HOME": str(home), "IRONBENCH_FENCE_LEVEL": level, "OPENAI_API_KEY": SECRET, **(env or {})}
    result = cli("run", str(suite(tmp_path / "suite", need, runs)), "--out", str(out), *args, env=environ)
    return out, result


def causes(out: Path) -> list[tuple]:
    return [(r["success"], r["failure_cause"]) for r in query(out, "SELECT success, failure_cause FROM invocations")]


def never_the_secret(out: Path, *texts: str) -> None:
    assert not any(SECRET in text for text in texts)
    with sqlite3.connect(out / "ironbench.db") as conn:
        assert not conn.execute("SELECT count(*) FROM events WHERE instr(payload, ?)", (SECRET,)).fetchone()[0]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("need", "flag"),
    [
        ("key", ["--pass-env", "OPENAI_API_KEY"]),
        ("config", ["--allow-read", "{home}/.config/agent"]),
        ("port {port}", ["--allow-net", "127.0.0.1:{port}"]),
    ],
    ids=["api key", "config file", "local port"],
)
def test_what_the_fence_withheld_is_the_failure_cause_with_its_flag_and_the_flag_fixes_it(
    tmp_path, home, server, level, need, flag
):
    need = need.format(port=server)
    flag = [part.format(home=home, port=server) for part in flag]
    said_flag = " ".join(flag).replace(str(home), "~")
    out, result = ran(tmp_path, home, level, need)
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.strip()
    assert causes(out) == [(False, "fence"), (False, "fence")]
    assert "The fence caused 2 failed invocations: it withheld what they needed: " in result.stderr
    assert (
        f"({said_flag}) in 2" in result.stderr
        and "every invocation failed (2 of 2); the fence caused 2" in result.stderr
    )
    shown = cli("show", run_id, "--out", str(out), check=True).stdout
    fence_lines = [line for line in shown.splitlines() if line.startswith("fence (all cases): ")]
    assert fence_lines[-1].startswith("fence (all cases): The fence caused 2") and said_flag in fence_lines[-1]
    assert shown.splitlines()[len(fence_lines) - 1] == fence_lines[-1]  # first: before every other verdict
    assert "why runs failed: fence 2" in shown
    as_json = json.loads(cli("show", run_id, "--out", str(out), "-f", "json", check=True).stdout)
    assert next(d["flag"] for d in as_json["fence_denials"]) == said_flag
    rows = json.loads(cli("query", "failure_breakdown.sql", "--out", str(out), "-f", "json", check=True).stdout)
    assert [(r["failure_cause"], r["failures"]) for r in rows] == [("fence", 2)]
    page = (out / run_id / "report.html").read_text()
    assert "The fence caused 2 failed invocations" in page and said_flag in page
    never_the_secret(out, result.stdout, result.stderr, shown, page)

    allowed, result = ran(tmp_path, home, level, need, *flag)
    assert result.returncode == 0, result.stderr
    assert causes(allowed) == [(True, None), (True, None)]
    assert "fence caused" not in result.stderr


@pytest.mark.parametrize("level", LEVELS)
def test_failures_of_the_targets_own_never_say_fence(tmp_path, home, level):
    """The agent fails for reasons of its own, in the fence's words: a variable the harness has
    not, a session's word, a path the machine lacks, an allowed port where nothing listens."""
    with socket.create_server(("127.0.0.1", 0)) as closed:
        port = closed.getsockname()[1]
    out, result = ran(tmp_path, home, level, f"honest {port}", "--allow-net", f"127.0.0.1:{port}", runs=3)
    assert result.returncode == 0, result.stderr
    assert {cause for _, cause in causes(out)} == {None}
    assert "fence caused" not in result.stderr and "withheld" not in result.stderr
    shown = cli("show", result.stdout.strip(), "--out", str(out), check=True).stdout
    assert "The fence caused" not in shown and "fence 3" not in shown
    assert not [r for r in query(out, "SELECT * FROM fence_denials") if r["explains"]]


@pytest.mark.parametrize("level", LEVELS)
def test_a_target_that_cannot_start_for_its_fence_is_told_the_flag_not_file_paths(tmp_path, home, level):
    out, result = ran(tmp_path, home, level, "key", runs=3)
    assert result.returncode == 1, result.stderr
    said = result.stderr
    assert "stopped: the fence withheld what the target needs" in said
    assert "OPENAI_API_KEY was not passed (--pass-env OPENAI_API_KEY)" in said
    assert "Hint: run it again with --pass-env OPENAI_API_KEY" in said and "absolute" not in said
    assert "\n    Error: OPENAI_API_KEY is not set" in said  # quoted line by line
    never_the_secret(out, result.stdout, said)


def test_quiet_keeps_the_problems_on_stderr(tmp_path, home):
    capped = "partial" if LEVEL == "full" else "none"
    _out, result = ran(tmp_path, home, capped, "key", "-q", "--no-report")
    assert result.returncode == 0 and result.stdout.strip().startswith("run_")
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("fence: Targets ran below the full fence")
    assert lines[-1].endswith(
        "every invocation failed (2 of 2); the fence caused 2: what it withheld is said with the flag that allows it"
    )
    if capped == "partial":
        assert (
            lines[1].startswith("fence: The fence caused 2 failed invocations")
            and "--pass-env OPENAI_API_KEY" in lines[1]
        )
    assert "━" not in result.stderr and "Baseline:" not in result.stderr  # no progress, no verdict prose


def test_quiet_names_a_broken_check(tmp_path):
    from tests.cli.test_references import proven_suite
    from tests.conftest import SCRIPTED_TARGET

    folder = tmp_path / "suite"
    folder.mkdir()
    result = cli(
        "run", str(proven_suite(folder)), "--target", shlex.join(SCRIPTED_TARGET), "--out", str(tmp_path / "out"),
        "-q", "--no-report",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "BROKEN CHECK: the python check of typo fails its reference" in result.stderr


def test_the_credentials_a_target_will_not_get_are_named_before_it_runs(tmp_path, home):
    with_them = {"GITHUB_TOKEN": "ghp_0000secretvalue", "DB_PASSWORD": "hunter2hunter2"}
    _out, result = ran(tmp_path, home, LEVEL, "key", "--pass-env", "OPENAI_API_KEY", env=with_them)
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("not passed to the target")]
    assert "DB_PASSWORD, GITHUB_TOKEN" in line and "--pass-env DB_PASSWORD --pass-env GITHUB_TOKEN" in line
    assert "OPENAI_API_KEY" not in line  # passed
    assert result.stderr.index(line) < result.stderr.index("baseline/add")  # before the first invocation
    assert not any(value in result.stderr for value in (*with_them.values(), SECRET))
    _, without = ran(tmp_path, home, LEVEL, "key", "--pass-env", "OPENAI_API_KEY")
    assert "not passed to the target" not in without.stderr


def test_ironbench_sandbox_says_what_a_target_would_see(tmp_path, home):
    folder = tmp_path / "suite"
    path = suite(folder, "key")
    args = (
        "--allow-read",
        str(home / ".config" / "agent"),
        "--allow-net",
        "127.0.0.1:8765",
        "--pass-env",
        "AGENT_MODE",
    )
    env = {"HOME": str(home), "OPENAI_API_KEY": SECRET, "AGENT_MODE": "fast"}
    text = cli("sandbox", str(path), *args, "--out", str(tmp_path / "out"), env=env, check=True).stdout
    assert text.splitlines()[0] == f"level: {LEVEL} ({machine_fence().mechanism})"
    if LEVEL != "none":
        assert f"hidden: {folder} (the run's answer key)" in text and f"hidden: {folder / 'suite.yaml'}" in text
        assert f"read-only: {home / '.config' / 'agent'}" in text and "reachable: 127.0.0.1:8765" in text
        assert "AGENT_MODE" in text.split("variables:")[1].splitlines()[0]
        assert "OPENAI_API_KEY" in text and "--pass-env OPENAI_API_KEY" in text
    assert SECRET not in text and "fast" not in text  # names, never values
    seen = json.loads(
        cli(
            "sandbox",
            "--target",
            f"{shlex.join([sys.executable, str(AGENT)])} {{instruction}}",
            *args,
            "--json",
            env=env,
            check=True,
        ).stdout
    )
    assert seen["level"] == LEVEL and seen["target"][:2] == [sys.executable, str(AGENT)]
    if LEVEL != "none":
        assert seen["endpoints"] == ["127.0.0.1:8765"] and "AGENT_MODE" in seen["variables"]
        assert seen["withheld_credentials"] == ["OPENAI_API_KEY"] and str(home) in seen["hidden"]
    assert SECRET not in json.dumps(seen)
    bad = cli("sandbox", "--out", str(tmp_path / "out"))
    assert bad.returncode == 2 and "--target" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("level", LEVELS)
def test_ironbench_sandbox_shell_runs_inside_that_fence(tmp_path, home, level):
    folder = tmp_path / "suite"
    path = suite(folder, "key")
    script = (
        f"cat {folder / 'suite.yaml'} && echo SUITE-READ\n"
        "echo key=[$OPENAI_API_KEY]\n"
        "cat ~/.config/agent/config.json && echo CONFIG-READ\n"
        "touch ~/made && echo HOME-WRITABLE\n"
        "exit 7\n"
    )
    env = {"HOME": str(home), "OPENAI_API_KEY": SECRET, "IRONBENCH_FENCE_LEVEL": level, "SHELL": "/bin/sh"}
    shell = cli("sandbox", str(path), "--shell", "--out", str(tmp_path / "out"), env=env, stdin=script)
    assert shell.returncode == 7, shell.stderr
    assert "SUITE-READ" not in shell.stdout and "CONFIG-READ" not in shell.stdout and "key=[]" in shell.stdout
    assert "HOME-WRITABLE" in shell.stdout and not (home / "made").exists()
    allowed = cli(
        "sandbox", str(path), "--shell", "--allow-read", str(home / ".config" / "agent"), "--pass-env",
        "OPENAI_API_KEY", env=env, stdin=script,
    )  # fmt: skip
    assert allowed.returncode == 7 and "CONFIG-READ" in allowed.stdout and f"key=[{SECRET}]" in allowed.stdout
    assert "SUITE-READ" not in allowed.stdout


@pytest.mark.parametrize("level", LEVELS)
def test_nothing_the_shell_started_outlives_it(tmp_path, home, level):
    """A daemon the shell left (its own session, its streams closed) ends with the shell, as a
    target's does with its invocation."""
    import time
    import uuid

    tag = f"ironbench-left-{uuid.uuid4().hex[:8]}"
    script = f"setsid sh -c 'exec -a {tag} sleep 300' </dev/null >/dev/null 2>&1 &\nsleep 0.3\nexit 0\n"
    env = {"HOME": str(home), "IRONBENCH_FENCE_LEVEL": level, "SHELL": "/bin/sh"}
    shell = cli("sandbox", "--target", "agent {instruction}", "--shell", "--out", str(tmp_path / "out"), env=env,
                stdin=script)  # fmt: skip
    assert shell.returncode == 0, shell.stderr
    time.sleep(0.5)
    left = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and tag.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                left.append(int(entry))
        except OSError:
            continue
    for pid in left:
        os.kill(pid, 9)
    assert left == []
