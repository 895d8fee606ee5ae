"""A full disk, a read-only filesystem, a forbidden folder: one line each, nothing lost, nothing twice.

The disk fills in two ways: portably, the store's pages capped by SQLite
(`tests/fixtures/capped_store.py`), and for real, a small tmpfs (as root only).
"""

import errno
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SCRIPTED_TARGET, cli

CAPPED = Path(__file__).resolve().parents[1] / "fixtures" / "capped_store.py"
FULL_LINE = re.compile(
    r"^ironbench: the store's disk is full \((?P<store>[^:]+): database or disk is full\): (?P<run>run_\w+) keeps "
    r"its (?P<n>\d+) invocations?; free space, then: ironbench resume (?P=run) --out \S+( --store (?P=store))?$"
)


def big_suite(path: Path, cases: int = 40, runs: int = 3) -> Path:
    lines = ["suite_id: faults", "mode: baseline", "timeout_seconds: 30", f"target: {json.dumps(SCRIPTED_TARGET)}"]
    lines.append("cases:")
    lines += [
        f"  - {{id: c{i:02d}, instruction: 'Write a function named c{i:02d}.', runs: {runs}}}" for i in range(cases)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def recorded(store: Path, run_id: str) -> list[tuple[str, int]]:
    """(invocation key, rerun) of every completed invocation the store holds for the run."""
    with sqlite3.connect(store) as conn:
        payloads = conn.execute(
            "SELECT payload FROM events WHERE run_id = ? AND type = 'invocation_completed'", (run_id,)
        ).fetchall()
    return [(json.loads(p)["key"], json.loads(p)["rerun"]) for (p,) in payloads]


def status(store: Path, run_id: str) -> str:
    with sqlite3.connect(store) as conn:
        return conn.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]


def assert_tree_whole(run_dir: Path) -> None:
    """No half-written file: every JSON file parses, and no partial is left in place of one."""
    for path in run_dir.rglob("*.json"):
        json.loads(path.read_text())


@pytest.mark.slow
def test_a_full_store_stops_the_run_in_one_line_and_resume_loses_and_repeats_nothing(tmp_path):
    suite, out = big_suite(tmp_path / "s.yaml"), tmp_path / "out"
    store = out / "ironbench.db"
    env = {**os.environ, "CAPPED_STORE_PAGES": "110", "SCRIPTED_OUTCOMES": "{}"}
    full = subprocess.run(
        [sys.executable, str(CAPPED), "run", str(suite), "--out", str(out), "-q"],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300, check=False,
    )  # fmt: skip
    assert full.returncode == 1, full.stderr
    assert "Traceback" not in full.stderr and "rollback" not in full.stderr
    [line] = full.stderr.strip().splitlines()
    match = FULL_LINE.match(line)
    assert match, line
    run_id = match["run"]
    kept = recorded(store, run_id)
    assert int(match["n"]) == len(kept) and 0 < len(kept) < 120
    assert status(store, run_id) == "aborted"  # the reserve made room to record the stop
    assert_tree_whole(out / run_id)

    resumed = cli("resume", run_id, "--out", str(out), "-q", env={"SCRIPTED_OUTCOMES": "{}"})
    assert resumed.returncode == 0, resumed.stderr
    keys = recorded(store, run_id)
    assert len(keys) == len(set(keys)) == 120  # 40 cases x 3 agreeing runs: none lost, none twice
    assert keys[: len(kept)] == kept
    assert status(store, run_id) == "finished"


@pytest.fixture
def small_disk(tmp_path):
    """A real 3 MB filesystem (tmpfs), as root; its size can be raised while mounted."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)], check=False)
    if mounted.returncode != 0:
        pytest.skip("this machine does not allow mounting a tmpfs")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def remount(disk: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(disk)], check=True)


@pytest.mark.slow
def test_a_full_filesystem_stops_the_run_and_resume_completes_it(tmp_path, small_disk):
    suite, out = big_suite(tmp_path / "s.yaml", cases=60), tmp_path / "out"
    store = small_disk / "ironbench.db"
    full = cli("run", str(suite), "--out", str(out), "--store", str(store), "-q", env={"SCRIPTED_OUTCOMES": "{}"})
    assert full.returncode == 1, full.stderr
    [line] = full.stderr.strip().splitlines()
    match = FULL_LINE.match(line)
    assert match and "Traceback" not in full.stderr, full.stderr
    run_id = match["run"]
    kept = recorded(store, run_id)
    assert int(match["n"]) == len(kept) < 180
    listed = cli("runs", "--out", str(out), "--store", str(store), "--format", "json", check=True)
    [run] = json.loads(listed.stdout)
    assert run["status"] in ("aborted", "interrupted")  # stopped; never "running" with nobody running it

    remount(small_disk, "size=64m")  # space freed
    resumed = cli("resume", run_id, "--out", str(out), "--store", str(store), "-q", env={"SCRIPTED_OUTCOMES": "{}"})
    assert resumed.returncode == 0, resumed.stderr
    keys = recorded(store, run_id)
    assert len(keys) == len(set(keys)) == 180
    assert status(store, run_id) == "finished"


@pytest.mark.slow
def test_a_store_on_a_read_only_filesystem_is_one_line_and_writes_nothing(tmp_path, small_disk):
    suite, out = big_suite(tmp_path / "s.yaml", cases=2), tmp_path / "out"
    store = small_disk / "ironbench.db"
    first = cli("run", str(suite), "--out", str(out), "--store", str(store), "-q", env={"SCRIPTED_OUTCOMES": "{}"})
    run_id = first.stdout.strip()
    remount(small_disk, "ro")
    before = {p.name: p.read_bytes() for p in small_disk.iterdir()}
    fresh_out = tmp_path / "fresh"
    for args in (
        ["run", str(suite), "--out", str(fresh_out), "--store", str(store)],
        ["run", str(suite), "--out", str(fresh_out), "--store", str(small_disk / "new" / "ironbench.db")],
        ["resume", run_id, "--out", str(out), "--store", str(store)],
    ):
        result = cli(*args, "-q", env={"SCRIPTED_OUTCOMES": "{}"})
        assert result.returncode == 2, (args, result.stderr)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("ironbench: error: ") and "read-only" in line.lower(), line
    # Reading needs no write: it works where SQLite can open the store read-only, and is
    # otherwise one line naming the cause.
    listed = cli("runs", "--store", str(store))
    assert listed.returncode == 0 or (
        listed.returncode == 2 and len(listed.stderr.splitlines()) == 1 and "read-only" in listed.stderr
    ), listed.stderr
    assert not fresh_out.exists()
    assert {p.name: p.read_bytes() for p in small_disk.iterdir()} == before


@pytest.mark.slow
def test_a_store_without_permission_is_one_line_and_writes_nothing(tmp_path):
    """Root ignores file modes; without CAP_DAC_OVERRIDE (setpriv) it obeys them like anyone."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to drop the capability that ignores file modes")
    suite, folder = big_suite(tmp_path / "s.yaml", cases=1), tmp_path / "locked"
    store = folder / "ironbench.db"
    cli("run", str(suite), "--out", str(tmp_path / "out"), "--store", str(store), "-q", check=True,
        env={"SCRIPTED_OUTCOMES": "{}"})  # fmt: skip
    folder.chmod(0o555)
    store.chmod(0o444)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    try:
        result = subprocess.run(
            ["setpriv", "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search", "--",
             sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(tmp_path / "fresh"),
             "--store", str(store), "-q"],
            capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
            env={**os.environ, "SCRIPTED_OUTCOMES": "{}"},
        )  # fmt: skip
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("ironbench: error: ") and "no permission" in line, line
    assert not (tmp_path / "fresh").exists()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


# -- whichever write meets the full disk first -------------------------------------------------

FILLING = Path(__file__).resolve().parents[1] / "fixtures" / "filling_disk.py"
NAMED_LINE = re.compile(
    r"^ironbench: (?P<what>.+)'s disk is full \((?P<where>.+)\): (?P<run>run_\w+) keeps its (?P<n>\d+) "
    r"invocations?; free space, then: ironbench resume (?P=run) --out \S+$"
)


def filling(fill_at: str, *args: str) -> subprocess.CompletedProcess:
    """The CLI on a disk that fills at `fill_at` (tests/fixtures/filling_disk.py)."""
    return subprocess.run(
        [sys.executable, str(FILLING), *args],
        capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
        env={**os.environ, "FILL_AT": fill_at, "SCRIPTED_OUTCOMES": "{}"},
    )  # fmt: skip


def stopped_on_full_disk(result: subprocess.CompletedProcess, what: str, store: Path) -> str:
    """The run a full disk stopped: one line naming it, what it keeps and the resume command
    (`what`: the place whose disk the line says is full, or several, `|` between them)."""
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.strip().splitlines()
    match = NAMED_LINE.match(line)
    assert match and match["what"] in what.split("|"), line
    assert int(match["n"]) == len(recorded(store, match["run"]))
    return match["run"]


def free_space(store: Path) -> None:
    with sqlite3.connect(store) as conn:
        conn.execute("DROP TABLE filler")


@pytest.mark.slow
@pytest.mark.parametrize(
    "fill_at, jobs, what",
    [
        # a target's working directory meets it first; what the coordinator then meets first (that
        # failure, or the next record or file of another invocation) is the race
        ("workdir:5", "2", "the working directory|the output folder|the store"),
        ("file:1", "2", "the output folder"),  # the run's metadata.json, as soon as its start is recorded
        # the record of its end, every invocation done (a small event may still fit the store's last
        # page: then the tree's metadata.json is what meets the full disk)
        ("append:run_finished", "2", "the store|the output folder"),
    ],
)
def test_a_full_disk_names_the_run_and_resume_whichever_write_meets_it(tmp_path, fill_at, jobs, what):
    suite, out = big_suite(tmp_path / "s.yaml", cases=6), tmp_path / "out"
    store = out / "ironbench.db"
    stopped = filling(fill_at, "run", str(suite), "--out", str(out), "--jobs", jobs, "-q")
    run_id = stopped_on_full_disk(stopped, what, store)
    # the reserve made room to record the stop (a run whose end was recorded keeps its end)
    assert status(store, run_id) == ("finished" if fill_at == "append:run_finished" else "aborted")
    assert_tree_whole(out / run_id)
    free_space(store)
    resumed = cli("resume", run_id, "--out", str(out), "-q", env={"SCRIPTED_OUTCOMES": "{}"})
    assert resumed.returncode == 0, resumed.stderr
    keys = recorded(store, run_id)
    assert len(keys) == len(set(keys)) == 18 and status(store, run_id) == "finished"


@pytest.mark.slow
def test_a_resume_on_a_disk_still_full_names_the_run_when_it_cannot_even_claim_it(tmp_path):
    suite, out = big_suite(tmp_path / "s.yaml", cases=2), tmp_path / "out"
    store = out / "ironbench.db"
    # the record of an invocation's end meets the full disk; whether it still fits the store's last
    # pages is up to their layout (the length of the paths it carries changes it): if it does, the
    # tree's summary.json is what meets the full disk
    run_id = stopped_on_full_disk(filling("append:invocation_completed", "run", str(suite), "--out", str(out), "-q"),
                                  "the store|the output folder", store)  # fmt: skip
    again = filling("claim:1", "resume", run_id, "--out", str(out), "-q")
    assert stopped_on_full_disk(again, "the store", store) == run_id
    free_space(store)
    assert cli("resume", run_id, "--out", str(out), "-q", env={"SCRIPTED_OUTCOMES": "{}"}).returncode == 0
    assert len(recorded(store, run_id)) == 6 and status(store, run_id) == "finished"


def test_a_full_disk_under_a_working_directory_is_a_full_disk(tmp_path, monkeypatch):
    from ironbench.core.errors import StoreFull
    from ironbench.targets.command import ensure_fresh_dir

    def no_space(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))

    monkeypatch.setattr(Path, "mkdir", no_space)
    with pytest.raises(StoreFull, match=r"^the working directory's disk is full \(.*run_001: No space left"):
        ensure_fresh_dir(tmp_path / "workdirs" / "run_001")
