"""A check runs on copies of a saved brick, contained like a target, and says what it found."""

import uuid
from pathlib import Path

import pytest

from ironbench.core.errors import SuiteError
from ironbench.targets.boundary import pool
from ironbench.targets.checks import CheckMaterial, run_check
from tests.conftest import needs_fence, taken

CHECK = "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"


def python_check(entry: str = "add") -> CheckMaterial:
    return CheckMaterial.of({"python": CHECK, "entry_point": entry})


def saved(tmp_path: Path, source: str, name: str = "add.py") -> Path:
    folder = tmp_path / "workdir" / "verified_bricks"
    folder.mkdir(parents=True, exist_ok=True)
    brick = folder / name
    brick.write_text(source)
    return brick


@pytest.mark.parametrize(
    ("source", "verdict"),
    [
        ("def add(a, b):\n    return a + b\n", "correct"),
        ("def add(a, b):\n    return a - b\n", "wrong"),
        ("def plus(a, b):\n    return a + b\n", "no_entry_point"),
        ("add = 3\n", "no_entry_point"),
        ("raise RuntimeError('no')\n", "import_error"),
        ("def add(a, b)\n    return a + b\n", "import_error"),
        ("import os\ndef add(a, b):\n    os._exit(0)\n", "tampered"),  # ends its process before its answer
        ("import sys\ndef add(a, b):\n    sys.exit(0)\n", "wrong"),
    ],
)
def test_a_python_check_gives_the_verdict_of_the_brick(tmp_path, source, verdict):
    brick = saved(tmp_path, source)
    before = {p: p.read_bytes() for p in brick.parent.iterdir()}
    result = run_check(python_check(), taken(brick), 20, root=str(tmp_path))
    assert result.verdict == verdict, result.output
    # the target's working directory is untouched; the check's folder is gone, and so is the
    # next check's (laid out ahead) once the trusted processes are closed
    assert {p: p.read_bytes() for p in brick.parent.iterdir()} == before
    pool.close_all()
    assert [p.name for p in tmp_path.iterdir()] == ["workdir"]


def test_a_brick_that_never_ends_is_killed_at_the_timeout(tmp_path):
    brick = saved(
        tmp_path,
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'while True: pass'])\nwhile True:\n    pass\n",
    )
    result = run_check(python_check(), taken(brick), 1.5)
    assert result.verdict == "timeout"
    assert 1400 <= result.duration_ms < 10_000


def test_a_check_sees_the_helpers_its_brick_defines(tmp_path):
    # HumanEval's checks call helper functions the prompt defines (encode_cyclic for decode_cyclic)
    brick = saved(
        tmp_path,
        "def shift(s):\n    return s[1:] + s[:1]\n\ndef unshift(s):\n    return s[-1:] + s[:-1]\n",
        "unshift.py",
    )
    material = CheckMaterial.of(
        {"python": "def check(candidate):\n    assert candidate(shift('abc')) == 'abc'\n", "entry_point": "unshift"}
    )
    assert run_check(material, taken(brick), 20).verdict == "correct"


def test_a_check_source_without_check_is_the_harness_fault(tmp_path):
    brick = saved(tmp_path, "def add(a, b):\n    return a + b\n")
    material = CheckMaterial.of({"python": "def test():\n    pass\n", "entry_point": "add"})
    result = run_check(material, taken(brick), 20)
    assert result.verdict == "harness_fault" and "check(candidate)" in result.detail


def test_a_missing_brick_is_no_brick_never_a_harness_fault(tmp_path):
    result = run_check(python_check(), taken(tmp_path / "gone.py"), 20)
    assert result.verdict == "no_brick" and "not in the target's working folder" in result.detail


def test_a_pytest_check_imports_the_brick_by_its_name_and_counts_tests(tmp_path):
    tests = tmp_path / "checks"
    tests.mkdir()
    (tests / "test_add.py").write_text(
        "from add import add\n\ndef test_small():\n    assert add(2, 3) == 5\n\ndef test_negative():\n"
        "    assert add(-1, 1) == 0\n\ndef test_big():\n    assert add(10**6, 1) == 10**6 + 1\n"
    )
    material = CheckMaterial.of({"pytest": str(tests)})
    right = run_check(material, taken(saved(tmp_path, "def add(a, b):\n    return a + b\n")), 60)
    assert (right.verdict, right.passed, right.failed) == ("correct", 3, 0)
    wrong = run_check(material, taken(saved(tmp_path, "def add(a, b):\n    return abs(a) + b\n")), 60)
    assert (wrong.verdict, wrong.passed, wrong.failed) == ("wrong", 2, 1)
    missing = run_check(material, taken(saved(tmp_path, "def plus(a, b):\n    return a + b\n")), 60)
    assert missing.verdict == "no_entry_point"
    broken = run_check(material, taken(saved(tmp_path, "def add(a, b) return a + b\n")), 60)
    assert broken.verdict == "import_error"


def test_a_pytest_check_that_collects_nothing_is_the_harness_fault(tmp_path):
    tests = tmp_path / "test_nothing.py"
    tests.write_text("X = 1\n")
    result = run_check(
        CheckMaterial.of({"pytest": str(tests)}), taken(saved(tmp_path, "def add(a, b):\n    return a\n")), 60
    )
    assert result.verdict == "harness_fault"


def test_a_command_check_is_correct_on_exit_0(tmp_path):
    brick = saved(tmp_path, "def add(a, b):\n    return a + b\n")
    ok = "python -c \"import runpy, sys; assert runpy.run_path(sys.argv[1])['add'](1, 2) == 3\" {brick}"
    assert run_check(CheckMaterial.of({"command": ok}), taken(brick), 20).verdict == "correct"
    bad = ok.replace("== 3", "== 4")
    assert run_check(CheckMaterial.of({"command": bad}), taken(brick), 20).verdict == "wrong"
    gone = run_check(CheckMaterial.of({"command": "/no/such/program {brick}"}), taken(brick), 20)
    assert gone.verdict == "harness_fault"


def test_a_check_redacts_secrets_from_its_output(tmp_path, monkeypatch):
    from ironbench.core.redact import Redactor

    monkeypatch.setenv("MY_API_KEY", "s3cr3t-value-123")
    # the brick's process gets none of the harness's environment
    brick = saved(
        tmp_path, "import os\nprint(os.environ.get('MY_API_KEY', 'no key here'))\ndef add(a, b):\n    return 0\n"
    )
    result = run_check(python_check(), taken(brick), 20, Redactor.from_environ(()))
    assert result.verdict == "wrong" and "no key here" in result.output
    # and what the check's own output shows is redacted
    leaky = CheckMaterial.of(
        {"python": "def check(candidate):\n    assert candidate(1, 2) == 's3cr3t-value-123'\n", "entry_point": "add"}
    )
    result = run_check(leaky, taken(brick), 20, Redactor.from_environ(()))
    assert result.verdict == "wrong" and "assert candidate(1, 2)" in result.output
    assert "s3cr3t-value-123" not in result.output + result.detail


def test_a_pytest_path_that_cannot_be_read_is_a_suite_error(tmp_path):
    with pytest.raises(SuiteError, match="no test files"):
        CheckMaterial.of({"pytest": str(tmp_path)})


# A brick that looks for the check: every file whose name says "check" outside its own folder,
# in the machine's temporary folder (where the judges' private folders are) and the suite's.
def _looking(marker: str) -> str:
    """A brick that counts the files named `<marker>.py` outside its own folder that hold
    `marker` (only the check's files do: the brick's source spells it in two halves), under
    /tmp and SUITE_DIR; it opens nothing else (a decoy of its check stays unopened)."""
    half = len(marker) // 2
    return f"""import os

MARKER = {marker[:half]!r} + {marker[half:]!r}


def add(a, b):
    found = []
    for top in ("/tmp", os.environ.get("SUITE_DIR", "/nonexistent")):
        for root, _, names in os.walk(top):
            if os.path.realpath(root).startswith(os.path.realpath(os.getcwd())):
                continue
            for name in names:
                if name != MARKER + ".py":
                    continue
                try:
                    with open(os.path.join(root, name), encoding="utf-8", errors="replace") as handle:
                        if MARKER in handle.read(1 << 20):
                            found.append(os.path.join(root, name))
                except OSError:
                    pass
    return len(found)
"""


@needs_fence("full")
def test_a_fenced_brick_cannot_see_the_checks_that_judge_it(tmp_path):
    from ironbench.sandbox import SandboxPolicy, fence_for

    marker = f"test_planted_{uuid.uuid4().hex}"  # this check's file only: from any folder, nothing else holds it
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / f"{marker}.py").write_text(
        f"from add import add\n\n# {marker}\ndef test_nothing_found():\n    assert add(0, 0) == 0\n"
    )
    material = CheckMaterial.of({"pytest": str(suite / f"{marker}.py")})
    brick = saved(tmp_path, _looking(marker))
    unfenced = run_check(material, taken(brick), 60)
    # in plain sight the judges' folders under /tmp hold the check's copy: found (wrong), or read while
    # the check was not reading it (tampered)
    assert unfenced.verdict in ("wrong", "tampered"), unfenced.detail
    fence = fence_for(SandboxPolicy(mode="auto", hidden=(str(suite),)))
    fenced = run_check(material, taken(brick), 60, fence=fence)
    assert fenced.verdict == "correct", fenced.detail


def test_a_pytest_check_file_named_like_a_check_is_run_whatever_its_name(tmp_path):
    check = tmp_path / "suite" / "check_add.py"
    check.parent.mkdir()
    check.write_text("from add import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    material = CheckMaterial.of({"pytest": str(check)})
    assert run_check(material, taken(saved(tmp_path, "def add(a, b):\n    return a + b\n")), 60).verdict == "correct"
    wrong = run_check(material, taken(saved(tmp_path, "def add(a, b):\n    return a - b\n")), 60)
    assert wrong.verdict == "wrong" and wrong.failed == 1
