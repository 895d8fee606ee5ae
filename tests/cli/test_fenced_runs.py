"""A run's fence through the front door: what it records (an event per machine, metadata.json's
`sandbox`), what it says first when it is below full (console, show, report, viewer's line),
and a target that tries every way out of `ironbench run` finding each one shut."""

import json
import socket
import sqlite3
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import FENCE_LEVEL, SCRIPTED_TARGET, cli, needs_fence

ESCAPING = Path(__file__).resolve().parents[1] / "fixtures" / "escaping_target.py"
LEVEL = FENCE_LEVEL
needs_full = needs_fence("full")


def _suite(folder: Path, runs: int = 2, target: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    suite = {
        "suite_id": "fenced",
        "mode": "baseline",
        "timeout_seconds": 60,
        "target": target or SCRIPTED_TARGET,
        "cases": [{"id": "add", "instruction": "Write a function named add.", "runs": runs}],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


def _metadata(out: Path) -> dict:
    (found,) = out.glob("run_*/metadata.json")
    return json.loads(found.read_text())


def _fences(out: Path) -> list[dict]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        rows = conn.execute("SELECT payload FROM events WHERE type = 'sandbox_applied'").fetchall()
    return [json.loads(payload) for (payload,) in rows]


def test_a_run_records_the_fence_each_machine_gave(tmp_path):
    out = tmp_path / "out"
    result = cli("run", str(_suite(tmp_path / "suite")), "--out", str(out), "--no-report", check=True)
    (fence,) = _fences(out)
    assert fence["worker"] == "coordinator" and fence["level"] == LEVEL
    sandbox = _metadata(out)["sandbox"]
    assert sandbox["mode"] == "auto" and sandbox["level"] == LEVEL
    assert sandbox["machines"] == [
        {"worker": "coordinator", "level": LEVEL, "mechanism": fence["mechanism"], "missing": fence["missing"]}
    ]
    said_below = "below the full fence" in result.stderr
    assert said_below == (LEVEL != "full")


def test_below_full_is_the_first_thing_a_run_says_everywhere(tmp_path):
    out = tmp_path / "out"
    capped = {"IRONBENCH_FENCE_LEVEL": "none"}  # the machine allows no more than this, for the test
    result = cli("run", str(_suite(tmp_path / "suite")), "--out", str(out), env=capped, check=True)
    verdicts = result.stderr.split("report:")[0]
    first_verdict = next(line for line in verdicts.splitlines() if "fence" in line or "Baseline" in line)
    assert "below the full fence" in first_verdict and "coordinator: none" in first_verdict
    assert _metadata(out)["sandbox"]["level"] == "none"
    run_id = _metadata(out)["run_id"]

    shown = cli("show", run_id, "--out", str(out), check=True).stdout
    verdict_lines = [line for line in shown.splitlines() if line.startswith(("fence", "reference", "gate"))]
    assert verdict_lines[0].startswith("fence (all cases): Targets ran below the full fence")
    assert "sandbox: none" in shown
    as_json = json.loads(cli("show", run_id, "--out", str(out), "--format", "json", check=True).stdout)
    assert as_json["sandbox"] == "none" and as_json["verdicts"][0]["kind"] == "fence"

    page = (out / run_id / "report.html").read_text()
    first_item = page.index("<li data-mode=")
    assert page[first_item:].startswith('<li data-mode="fence">')


def test_sandbox_off_is_said_to_be_unfenced(tmp_path):
    out = tmp_path / "out"
    result = cli("run", str(_suite(tmp_path / "suite")), "--out", str(out), "--sandbox", "off", "--no-report")
    assert result.returncode == 0, result.stderr
    assert "Targets ran unfenced (--sandbox off)" in result.stderr
    assert _metadata(out)["sandbox"]["mode"] == "off"


def test_on_refuses_to_start_below_full_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    capped = {"IRONBENCH_FENCE_LEVEL": "partial"}
    result = cli("run", str(_suite(tmp_path / "suite")), "--out", str(out), "--sandbox", "on", env=capped)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "--sandbox on" in result.stderr
    assert "fence only" in result.stderr and "full" not in result.stderr.split("fence only")[0][-12:]
    assert "Traceback" not in result.stderr
    assert not list(out.glob("run_*"))


@pytest.mark.parametrize("level", ["full", "partial"])
def test_a_folder_the_target_may_write_never_holds_the_answer_key(tmp_path, level):
    """A project folder holding the suite and the outputs, given with --allow-write: at partial
    the target rewrote its check (wrong, then correct); at full no target could start. Refused
    at start, in one line, nothing written."""
    project = tmp_path / "project"
    suite = _suite(project / "suites")
    out = project / "outputs"
    for allowed in (project, out):
        env = {"IRONBENCH_FENCE_LEVEL": level}
        result = cli("run", str(suite), "--out", str(out), "--allow-write", str(allowed), env=env)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and f"--allow-write {allowed}" in result.stderr
        assert not out.exists()
    beside = tmp_path / "scratch"
    beside.mkdir()
    ok = cli("run", str(suite), "--out", str(out), "-q", "--no-report", "--allow-write", str(beside))
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "level",
    [
        pytest.param("full", marks=needs_full),
        pytest.param("partial", marks=needs_fence("partial")),
    ],
)
def test_a_target_run_by_ironbench_finds_every_way_out_shut(tmp_path, level):
    suite_folder, out = tmp_path / "suite", tmp_path / "out"
    (suite_folder / "check_add.py").parent.mkdir(parents=True)
    (suite_folder / "check_add.py").write_text("assert True\n")
    closed = socket.create_server(("127.0.0.1", 0))  # a port on this machine the run never gave it
    agent = socket.socket(socket.AF_UNIX)  # an agent of the user's, listening in the suite's folder
    agent.bind(str(suite_folder / "agent.sock"))
    agent.listen(1)
    config = {
        "closed_ports": [closed.getsockname()[1]],
        "store": str(out / "ironbench.db"),
        "store_wal": str(out / "ironbench.db-wal"),
        "suite": str(suite_folder / "suite.yaml"),
        "check": str(suite_folder / "check_add.py"),
        "other_file": str(suite_folder / "check_add.py"),
        "other_folder": str(out),
        "hidden_socket": str(suite_folder / "agent.sock"),
        "syscalls": True,
        "secret": "s3cr3t-of-the-harness",
    }
    target = [sys.executable, str(ESCAPING), json.dumps(config), "{instruction}"]
    with closed, agent:
        result = cli(
            "run", str(_suite(suite_folder, runs=1, target=target)), "--out", str(out), "--no-report",
            env={"IRONBENCH_FENCE_LEVEL": level, "IRONBENCH_TEST_SECRET": config["secret"]},
        )  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    assert _fences(out)[0]["level"] == level
    said = None
    for path in out.rglob("*stdout*"):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                said = json.loads(line)
    assert said is not None, result.stderr
    escaped = {name: how for name, how in said.items() if how[0] in ("escaped", "broken")}
    assert escaped == {}
    assert said["read store"][0] == "stopped" and said["read suite"][0] == "stopped"
    assert (
        said["write store"][0] == "stopped"
        and said[f"connect to 127.0.0.1:{config['closed_ports'][0]}"][0] == "stopped"
    )
    for attempt in (
        "chmod the check",
        "connect to a unix socket under a hidden folder",
        "ptrace its own child",
        "the harness's secret in any process's environment",
    ):
        assert said[attempt][0] == "stopped", attempt
    assert oct((suite_folder / "check_add.py").stat().st_mode & 0o777) == "0o644"


SEEKER = """
import os, sys, time
root, marker = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 4
while time.monotonic() < deadline:
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                with open(os.path.join(folder, name), errors="replace") as handle:
                    if marker in handle.read(100_000):
                        print("FOUND", os.path.join(folder, name))
                        deadline = 0
            except OSError:
                pass
    time.sleep(0.05)
os.makedirs("verified_bricks", exist_ok=True)
with open("verified_bricks/add.py", "w") as handle:
    handle.write("def add(a, b):\\n    return a + b\\n")
print("[SUCCESS] Verified brick saved to: verified_bricks/add.py")
"""


@pytest.mark.parametrize(
    "level", [pytest.param("full", marks=needs_full), pytest.param("partial", marks=needs_fence("partial"))]
)
def test_a_target_allowed_the_temporary_folder_never_reaches_a_check_being_judged(tmp_path, level):
    """The judges wrote each check's file in the harness's temporary folder: a target given it
    to read (or whose own script sat there) read the check of an invocation beside it, and given
    it to write, rewrote it (run by the judge, unfenced). The judges' folder is the run's answer
    key now."""
    import uuid

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    marker = f"HIDDEN-{uuid.uuid4().hex}"
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "check_add.py").write_text(
        f"# {marker}\nfrom add import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    seeker = tmp_path / "agent" / "seeker.py"
    seeker.parent.mkdir()
    seeker.write_text(SEEKER)
    data = {
        "suite_id": "seek",
        "mode": "baseline",
        "timeout_seconds": 60,
        "target": [sys.executable, str(seeker), str(temporary), marker, "{instruction}"],
        "check": {"pytest": "check_add.py"},
        "cases": [{"id": f"c{i}", "instruction": "Write add.", "runs": 1} for i in range(3)],
    }
    suite = folder / "suite.yaml"
    suite.write_text(yaml.safe_dump(data, sort_keys=False))
    env = {"IRONBENCH_FENCE_LEVEL": level, "TMPDIR": str(temporary)}
    out = tmp_path / "out"
    ran = cli("run", str(suite), "--out", str(out), "-q", "--no-report", "--jobs", "2", "--allow-read",
              str(temporary), env=env)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    run_id = ran.stdout.strip().splitlines()[-1].split()[0]
    said = "".join(cli("log", run_id, f"c{i}", "--out", str(out), check=True).stdout for i in range(3))
    assert "[SUCCESS]" in said and "FOUND" not in said
    with sqlite3.connect(out / "ironbench.db") as conn:  # and the hosts still start: their program is not there
        assert [v for (v,) in conn.execute("SELECT verdict FROM checks")] == ["correct"] * 3
    writes = cli("run", str(suite), "--out", str(tmp_path / "out2"), "--allow-write", str(temporary), env=env)
    assert writes.returncode == 2 and "judges" in writes.stderr and "Traceback" not in writes.stderr
