"""Hostile targets: every invocation returns by its deadline and leaves no process behind."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ironbench.targets.command import DRAIN_SECONDS, invoke

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile_target.py"


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped yet."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _gone(pid: int, within: float = 3.0) -> bool:
    """Dead and reaped: no zombie left in the harness either."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def leftovers(tmp_path):
    """Kill, by the pids they recorded, whatever a failing test left running."""
    yield tmp_path
    for pid_file in tmp_path.rglob("*.pid"):
        pid = int(pid_file.read_text())
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _invoke_with_guard(argv, workdir: Path, timeout: float, guard: float):
    """invoke() on a thread: a harness that blocks on the pipes fails the test instead of hanging it."""
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("result", invoke(argv, workdir, timeout, {})), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(guard)
    assert "result" in box, f"invoke() still blocked {guard} s after a {timeout} s timeout"
    return box["result"], time.monotonic() - started


def _workdir(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    return path


def test_a_target_ignoring_sigterm_with_an_escaped_grandchild_returns_at_its_deadline(leftovers):
    work = _workdir(leftovers, "escape")
    result, elapsed = _invoke_with_guard([sys.executable, str(HOSTILE), "escape", "600"], work, 1.0, guard=15)
    assert result.timed_out and result.exit_code is None
    assert elapsed < 1.0 + DRAIN_SECONDS + 3  # generous for a loaded machine; the old harness never returned
    assert 1000 <= result.duration_ms < 2000  # the timeout, not the time spent cleaning up
    assert "target started" in result.stdout and "grandchild alive" in result.stdout
    for role in ("target", "grandchild"):
        assert _gone(int((work / f"{role}.pid").read_text())), f"{role} outlived its invocation"


def test_a_daemon_left_by_a_finished_target_is_killed_and_cannot_hold_the_run(leftovers):
    work = _workdir(leftovers, "daemon")
    result, elapsed = _invoke_with_guard([sys.executable, str(HOSTILE), "escape", "0.2"], work, 30, guard=15)
    assert not result.timed_out and result.exit_code == 0
    assert elapsed < 10  # not the 30 s timeout: the target's end ends the invocation
    assert "target done" in result.stdout
    assert _gone(int((work / "grandchild.pid").read_text()))


def test_a_grandchild_that_scrubs_its_environment_is_still_swept(leftovers):
    work = _workdir(leftovers, "scrub")
    result, _ = _invoke_with_guard([sys.executable, str(HOSTILE), "scrub", "0.5"], work, 30, guard=15)
    assert result.exit_code == 0
    deadline = time.monotonic() + 5
    while not (work / "grandchild.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(int((work / "grandchild.pid").read_text()))


def test_concurrent_invocations_sweep_only_their_own_processes(leftovers):
    """--jobs N runs invoke() on threads: one invocation's escaped daemon is killed when
    it ends, while the other's children (one of them in a session of its own) live on."""
    quiet, hostile = _workdir(leftovers, "quiet"), _workdir(leftovers, "hostile")
    results = {}

    def run_quiet():
        results["quiet"] = invoke([sys.executable, str(HOSTILE), "child", "60"], quiet, 90, {})

    thread = threading.Thread(target=run_quiet)
    thread.start()
    deadline = time.monotonic() + 10
    while not (quiet / "session_child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    results["hostile"] = invoke([sys.executable, str(HOSTILE), "escape", "0.2"], hostile, 30, {})
    assert _gone(int((hostile / "grandchild.pid").read_text()))
    for role in ("child", "session_child"):
        assert _alive(int((quiet / f"{role}.pid").read_text())), f"the other invocation's {role} was killed"
    (quiet / "release").touch()
    thread.join(30)
    assert results["quiet"].exit_code == 0 and results["quiet"].stdout.count("child done") == 2
    assert "[SUCCESS]" in results["quiet"].stdout


@pytest.mark.slow
def test_a_crashed_harness_leaves_no_target_behind(leftovers):
    """SIGKILL sweeps nothing: the harness's watchdog kills what its targets left, the target,
    the child in its group and the one that left its session, as soon as the harness is gone."""
    work = _workdir(leftovers, "crash")
    harness_code = (
        "import sys, pathlib, ironbench.targets.command as c; "
        "c.invoke(sys.argv[1:5], pathlib.Path(sys.argv[5]), 300, {})"
    )
    harness = subprocess.Popen(
        [
            sys.executable,
            "-c",
            harness_code,
            sys.executable,
            str(HOSTILE),
            "child",
            "600",
            str(work),
        ],
        cwd=work,
    )
    roles = ("target", "child", "session_child")
    deadline = time.monotonic() + 60
    while not all((work / f"{role}.pid").exists() for role in roles) and time.monotonic() < deadline:
        assert harness.poll() is None
        time.sleep(0.05)
    harness.kill()
    harness.wait()
    for role in roles:
        pid = int((work / f"{role}.pid").read_text())
        assert _gone(pid, within=10) or not _alive(pid), f"the {role} outlived its crashed harness"
