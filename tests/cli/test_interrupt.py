"""Ctrl-C during run or resume: one line on stderr (what was kept, the exact resume command),
exit 130; resuming finishes the run as if it had never stopped."""

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, SCRIPTED_TARGET, cli


def start(*args: str, env: dict) -> subprocess.Popen:
    # SIGINT as a terminal sends it; the child must not inherit an ignored SIGINT (background shells)
    return subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", *args],
        cwd=REPO,
        text=True,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # A shell running the tests in the background leaves SIGINT ignored, and the child
        # would inherit that; the child starts no thread before exec.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )


def recorded(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT count(*) FROM invocations").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is still being created
        return 0


def interrupt_after(
    process: subprocess.Popen, store: Path, invocations: int, sig: signal.Signals = signal.SIGINT
) -> tuple[str, str]:
    stdout, stderr, _ = stop_after(process, store, invocations, sig)
    return stdout, stderr


def stop_after(process: subprocess.Popen, store: Path, invocations: int, sig: signal.Signals) -> tuple[str, str, float]:
    """Signal the run once it has recorded `invocations`; its output, and the seconds it took to end."""
    deadline = time.monotonic() + 120  # a loaded machine starts a run slowly
    while recorded(store) < invocations:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()  # its run has hung targets: never wait for it to end by itself
            raise AssertionError(f"no {invocations} recorded invocations: {process.communicate()}")
        time.sleep(0.05)
    process.send_signal(sig)
    signalled = time.monotonic()
    try:
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:  # a failed test leaves no coordinator behind
            process.kill()
            process.communicate()
    return stdout, stderr, time.monotonic() - signalled


def tagged() -> dict[str, str]:
    """An environment variable only this test's processes carry (the coordinator passes it on)."""
    return {"IRONBENCH_TEST_TAG": f"{os.getpid()}-{time.monotonic_ns()}"}


def survivors(tag: dict[str, str], seconds: float) -> list[int]:
    """The processes carrying `tag` (not zombies) still alive `seconds` from now (looked at once at least)."""
    entry = "{}={}".format(*next(iter(tag.items()))).encode()
    deadline = time.monotonic() + seconds
    while True:
        alive = []
        for proc in Path("/proc").iterdir():
            try:
                if not proc.name.isdigit() or entry not in (proc / "environ").read_bytes().split(b"\0"):
                    continue
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    alive.append(int(proc.name))
            except (OSError, IndexError):
                continue
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.1)


def suite_file(tmp_path: Path, timeout: int = 30) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "suite_id": "interrupt",
                "mode": "baseline",
                "timeout_seconds": timeout,
                "target": SCRIPTED_TARGET,
                "cases": [
                    {"id": c, "instruction": f"Write a function named {c}.", "runs": 10} for c in ("a", "b", "c")
                ],
            }
        )
    )
    return path


@pytest.mark.slow
def test_ctrl_c_says_what_was_kept_and_resume_finishes_the_run(tmp_path):
    out = tmp_path / "out"
    script = {
        "SCRIPTED_OUTCOMES": json.dumps({"a": ["success", "generation"], "b": ["validation"]}),
        "SCRIPTED_SLEEP_MS": "150",
    }
    process = start("run", str(suite_file(tmp_path)), "--out", str(out), env=script)
    stdout, stderr = interrupt_after(process, out / "ironbench.db", 3)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    kept = recorded(out / "ironbench.db")
    run_id = next(p.name for p in out.iterdir() if p.name.startswith("run_"))
    last = stderr.strip().splitlines()[-1]
    command = f"ironbench resume {run_id} --out {out}"
    assert (
        last == f"ironbench: interrupted: {run_id} keeps the {kept} invocations it recorded; continue with: {command}"
    )
    assert [line for line in stderr.splitlines() if line.startswith("ironbench:")] == [last]  # one line
    shown = json.loads(cli("show", run_id, "--out", str(out), "-f", "json", check=True).stdout)
    assert shown["status"] == "aborted" and shown["invocations"] == kept

    quick = {**script, "SCRIPTED_SLEEP_MS": "0"}  # only the interrupted run needed time to be interrupted
    resumed = cli(*shlex.split(command)[1:], "-q", "--no-report", env=quick, check=True)
    assert resumed.stdout.strip() == f"{run_id} finished"
    # the same decisions a run that was never interrupted reaches
    fresh = cli(
        "run", str(suite_file(tmp_path)), "--out", str(tmp_path / "fresh"), "-q", "--no-report", env=quick, check=True
    ).stdout.strip()
    decisions = [
        json.loads(
            cli(
                "query",
                "SELECT case_id, decision, n, successes FROM decisions ORDER BY case_id",
                "--run",
                run,
                "--out",
                where,
                "-f",
                "json",
                check=True,
            ).stdout
        )
        for run, where in ((run_id, str(out)), (fresh, str(tmp_path / "fresh")))
    ]
    assert decisions[0] == decisions[1] and len(decisions[0]) == 3


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_does_not_wait_for_a_running_target(tmp_path, sig):
    """Nor does SIGTERM, which stops a run the same way; nothing of the run outlives it by 10 s."""
    out = tmp_path / "out"
    # after a's first run every run hangs for 600 s (timeout 300): the interrupt must not wait
    tag = tagged()
    script = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success", "hang"], "b": ["hang"], "c": ["hang"]}), **tag}
    process = start("run", str(suite_file(tmp_path, timeout=300)), "--out", str(out), "-q", env=script)
    _stdout, stderr, seconds = stop_after(process, out / "ironbench.db", 1, sig)
    # a stop takes seconds (its record, its message), on a loaded machine too; one held by its
    # target would take the target's 300 s timeout
    assert seconds < 20, f"the run took {seconds:.1f} s to stop"
    assert process.returncode == 130 and "keeps the 1 invocation it recorded" in stderr, stderr
    assert "ironbench resume" in stderr.strip().splitlines()[-1]
    assert not survivors(tag, 10), "a process of the run outlived its coordinator by 10 s"


@pytest.mark.slow
def test_ctrl_c_during_resume_says_the_same(tmp_path):
    out = tmp_path / "out"
    script = {"SCRIPTED_SLEEP_MS": "150"}
    first = start("run", str(suite_file(tmp_path)), "--out", str(out), "-q", env=script)
    interrupt_after(first, out / "ironbench.db", 1)
    run_id = next(p.name for p in out.iterdir() if p.name.startswith("run_"))
    second = start("resume", run_id, "--out", str(out), "-q", env=script)
    _, stderr = interrupt_after(second, out / "ironbench.db", recorded(out / "ironbench.db") + 2)
    assert second.returncode == 130
    assert stderr.strip().splitlines()[-1].startswith(f"ironbench: interrupted: {run_id} keeps the ")
    assert stderr.strip().endswith(f"continue with: ironbench resume {run_id} --out {out}")
