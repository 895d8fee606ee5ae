"""What a brick plants for the judge, through the front door: links and files laid where a later
check's folder is (or was, before the judge made its folders fresh) are never written through,
never make another brick's check the harness's fault; a recheck checks only the bytes the run
took; references are proven where no brick's host writes."""

import json
import shlex
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.conftest import cli, needs_fence

# Plants, in every other check's folder under the bricks' root it can list (and in each folder
# below those), links to PWNED under every name the judge writes (the brick's copy, its folder,
# the decoys' folder, pytest's scratch) and a regular file named like the judge's folders; it
# keeps at it until it has planted in another check's folder (the next one is prepared while it
# runs) or 3 s have passed.
PLANTER = """
import os, time
PWNED = {pwned!r}
NAMES = ("add.py", "reference.py", "test_add.py")
FOLDERS = ("brick", "ironbench_check", "scratch")

def _root():
    here = os.getcwd()
    while here != "/":
        if os.path.basename(here).startswith("ironbench-check-"):
            return os.path.dirname(here), os.path.basename(here)
        here = os.path.dirname(here)
    return None, None

def _lay(folder):
    for name in NAMES:
        try:
            os.symlink(os.path.join(PWNED, name), os.path.join(folder, name))
        except OSError:
            pass
    for name in FOLDERS:
        try:
            os.symlink(PWNED, os.path.join(folder, name))
        except OSError:
            pass
    try:
        open(os.path.join(folder, "ironbench_check"), "x").close()
    except OSError:
        pass

def _plant():
    root, mine = _root()
    if root is None:
        return 0
    planted = 0
    for name in os.listdir(root):
        if name == mine:
            continue
        folder = os.path.join(root, name)
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        _lay(folder)
        planted += 1
        for below in os.listdir(folder):
            inner = os.path.join(folder, below)
            if os.path.isdir(inner) and not os.path.islink(inner):
                _lay(inner)
    return planted

_end = time.time() + 3
while not _plant() and time.time() < _end:
    time.sleep(0.05)

def add(a, b):
    return a + b
"""
HONEST = "def add(a, b):\n    return a + b\n"
CHECK = {"python": "def check(candidate):\n    assert candidate(2, 3) == 5\n", "entry_point": "add"}

# Saves the case's files (IRONBENCH_CASE_ID) from BRICKS into verified_bricks/, names the first.
TARGET = """
import os, pathlib
BRICKS = {bricks}
files = BRICKS[os.environ["IRONBENCH_CASE_ID"]]
folder = pathlib.Path("verified_bricks")
folder.mkdir()
for name, text in files.items():
    (folder / name).write_bytes(text.encode("utf-8", "surrogatepass"))
print(f"[SUCCESS] Verified brick saved to: verified_bricks/{{next(iter(files))}}")
"""


def target(tmp_path: Path, bricks: dict[str, dict[str, str]]) -> str:
    script = tmp_path / "target.py"
    script.write_text(TARGET.format(bricks=repr(bricks)))
    return f"{shlex.join([sys.executable, str(script)])} {{instruction}}"


def suite(tmp_path: Path, cases: list[str], check: dict | None = None, **extra) -> Path:
    path = tmp_path / "suite.yaml"
    body = {
        "suite_id": "planted",
        "mode": "baseline",
        "timeout_seconds": 60,
        "stop": {"rule": "fixed", "runs": 1},
        "check": check or CHECK,
        "cases": [{"id": case, "instruction": f"Write add ({case})."} for case in cases],
        **extra,
    }
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def verdicts(out: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        rows = conn.execute("SELECT case_id, verdict, detail FROM checks ORDER BY case_id").fetchall()
    return {case: (verdict, detail) for case, verdict, detail in rows}


def run(tmp_path: Path, suite_path: Path, argv: str, *args: str) -> tuple[Path, str]:
    out = tmp_path / "out"
    result = cli("run", str(suite_path), "--target", argv, "--out", str(out), "-q", "--no-report", *args)
    assert result.returncode in (0, 1), result.stderr
    return out, result.stdout.strip()


@needs_fence("partial")
def test_the_judge_writes_through_nothing_a_brick_planted(tmp_path):
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    bricks = {"a_planter": {"add.py": PLANTER.format(pwned=str(pwned))}}
    bricks |= {f"victim_{n}": {"add.py": HONEST} for n in range(3)}
    out, _ = run(tmp_path, suite(tmp_path, list(bricks)), target(tmp_path, bricks), "--jobs", "1")
    assert sorted(p.name for p in pwned.iterdir()) == []  # nothing written through a planted link
    found = verdicts(out)
    assert {case: verdict for case, (verdict, _) in found.items()} == {case: "correct" for case in bricks}, found


@needs_fence("partial")
def test_a_recheck_checks_only_the_bytes_the_run_took(tmp_path):
    bricks = {"wrong": {"add.py": "def add(a, b):\n    return 0\n"}}
    out, run_id = run(tmp_path, suite(tmp_path, ["wrong"]), target(tmp_path, bricks))
    assert verdicts(out)["wrong"][0] == "wrong"
    with sqlite3.connect(out / "ironbench.db") as conn:
        (payload,) = conn.execute("SELECT payload FROM events WHERE type = 'invocation_completed'").fetchone()
    completed = json.loads(payload)
    workdir = Path(completed["debug_path"]).parent.parent
    (workdir / completed["brick_path"]).write_text(HONEST)  # the saved brick changed after the run
    cli("check", run_id, "--out", str(out), check=True)
    verdict, detail = verdicts(out)["wrong"]
    assert verdict == "no_brick", detail
    assert "not the one the run saved" in detail and completed["brick_sha256"] in detail


def test_references_are_proven_where_no_bricks_host_writes(tmp_path):
    """The reference's copy goes to a root of its own: a resumed run proves lazily, between
    bricks' checks, and a brick's process may be writing in the bricks' root meanwhile."""
    from ironbench.sandbox import SandboxPolicy, fence_for
    from ironbench.targets import checks
    from ironbench.targets.checks import CheckMaterial, prove

    fence = fence_for(SandboxPolicy(mode="auto"))
    if fence.level == "none":
        pytest.skip("no fence on this machine: hosts' folders are wherever the system's temporary folder is")
    reference = tmp_path / "reference.py"
    reference.write_text("import os\n\ndef add(a, b):\n    print('CWD', os.getcwd())\n    return a + b\n")
    material = CheckMaterial.of({**CHECK, "reference": str(reference)})
    result = prove(material, 60, fence=fence)
    assert result.verdict == "correct", result.detail
    where = next(line.split(" ", 1)[1] for line in result.output.splitlines() if line.startswith("CWD "))
    bricks = checks._setup(None, fence).root
    assert bricks is not None and not where.startswith(bricks + "/"), (where, bricks)


def test_the_planter_is_still_a_program(tmp_path):
    """(The planter above compiles: a test that passes because its brick is broken proves nothing.)"""
    compile(PLANTER.format(pwned=str(tmp_path)), "add.py", "exec")
    compile(textwrap.dedent(TARGET.format(bricks="{}")), "target.py", "exec")


# Answers right, having swapped its check's tmp_path (pytest's scratch, beside its own folder) for
# a link to PWNED, for the judge to write through when the check writes there.
SCRATCH_SWAPPER = """
import glob, os
PWNED = {pwned!r}

def add(a, b):
    here = os.getcwd()
    for found in glob.glob(os.path.join(os.path.dirname(here), "scratch-*", "test_add0")):
        try:
            os.rename(found, found + ".moved")
            os.symlink(PWNED, found)
        except OSError:
            pass
    return a + b
"""
TMP_PATH_TEST = """\
from add import add


def test_add(tmp_path):
    result = add(2, 3)
    (tmp_path / "seen.txt").write_text(str(result))
    assert result == 5
"""


@needs_fence("partial")
def test_the_judge_writes_through_no_link_in_a_checks_tmp_path(tmp_path):
    """pytest's scratch is in the check's folder, where honest bricks write what their check
    names: a brick swapped it for a link, and the judge (as root, unfenced) wrote where it
    pointed. A host makes no link: the swap fails, and the check fails with it."""
    pwned = tmp_path / "pwned"
    pwned.mkdir()
    bricks = {"swapper": {"add.py": SCRATCH_SWAPPER.format(pwned=str(pwned))}, "honest": {"add.py": HONEST}}
    (tmp_path / "test_add.py").write_text(TMP_PATH_TEST)
    check = {"pytest": str(tmp_path / "test_add.py")}
    out, _ = run(tmp_path, suite(tmp_path, list(bricks), check=check), target(tmp_path, bricks))
    found = verdicts(out)
    assert list(pwned.iterdir()) == [] and found["honest"][0] == "correct", found
    assert found["swapper"][0] != "correct"
