"""Why a validation failed, read from debug files holding pytest's real output."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ironbench.core.causes import classify, read_causes
from ironbench.core.outcome import load_rules

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ironclad"  # the real Ironclad's transcripts
RULES = load_rules("ironclad").rules.failure_causes
assert RULES is not None


def pytest_output(folder: Path, code: tuple[str, str], test: tuple[str, str]) -> str:
    """What pytest prints for a brick and its test, as Ironclad runs it (`python -m pytest TEST`)."""
    folder.mkdir(parents=True)
    (folder / code[0]).write_text(code[1])
    (folder / test[0]).write_text(test[1])
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", test[0]],
        cwd=folder,
        capture_output=True,
        text=True,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    return result.stdout + result.stderr


def debug_file(folder: Path, name: str, attempt: int, raw: str, message: str = "Validation failed") -> Path:
    """A debug file as Ironclad writes it: its header, then pytest's output."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"validate_{name}_attempt{attempt}.txt"
    path.write_text(f"Phase: validate\nComponent: {name}\nAttempt: {attempt}\nMessage: {message}\n\nRAW DATA:\n{raw}")
    return path


CASES = {
    # the prompt's placeholder copied as code
    "syntax_error": (
        ("reverse.py", "def reverse(s):\n    return s[::-1]\n"),
        ("test_reverse.py", "from reverse import reverse\n\ndef test_function_name... \n"),
        (None, None),
    ),
    # the model put .py in the filename: x.py.py, which pytest cannot import by name
    "import_error": (
        ("data.json.py.py", "def load():\n    return 1\n"),
        ("test_data.json.py.py", "from data.json.py import load\n\ndef test_load():\n    assert load() == 1\n"),
        (None, None),
    ),
    "no_tests_collected": (
        ("adder.py", "def add(a, b):\n    return a + b\n"),
        ("test_adder.py", "from adder import add\n\nEXPECTED = 3\n"),
        (None, None),
    ),
    "assertions_failed": (
        ("adder.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_adder.py",
            (
                "from adder import add\n\ndef test_zero():\n    assert add(0, 0) == 0\n\n"
                "def test_one():\n    assert add(1, 2) == 3\n\ndef test_two():\n    assert add(2, 2) == 4\n"
            ),
        ),
        (1, 2),
    ),
    # the test calls the function without importing it (the placeholder's name, say)
    "import_error_name": (
        ("palindrome.py", "def is_palindrome(s):\n    return s == s[::-1]\n"),
        ("test_palindrome.py", "def test_function_name():\n    assert function_name('aba')\n"),
        (0, 1),
    ),
    "other": (
        ("adder.py", "def add(a, b):\n    return a + b\n"),
        ("test_adder.py", "def test_add(missing_fixture):\n    assert True\n"),
        (0, 0),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_cause_from_pytests_real_output(tmp_path, name):
    code, test, counts = CASES[name]
    raw = pytest_output(tmp_path / "brick", code, test)
    path = debug_file(tmp_path / "debug", code[0], 1, raw)
    cause, passed, failed = classify(RULES, path.read_text())
    assert cause == name.removesuffix("_name"), raw
    if counts != (None, None):
        assert (passed, failed) == counts, raw


def test_a_timeout_is_its_own_cause(tmp_path):
    path = debug_file(tmp_path, "slow", 2, "pytest timed out after 60 s")
    assert classify(RULES, path.read_text())[0] == "timeout"


def test_the_real_ironclads_debug_file():
    text = (FIXTURES / "validation_exhausted.debug_validate_attempt3.txt").read_text()
    assert classify(RULES, text) == ("import_error", 0, 0)  # "1 error": nothing ran


def test_causes_are_read_per_attempt_from_the_debug_folder(tmp_path):
    debug = tmp_path / "build" / ".ironclad_debug"
    debug_file(debug, "x.py", 1, "E   SyntaxError: invalid syntax\n")
    debug_file(debug, "x", 2, "===== 1 failed, 2 passed in 0.01s =====\n")
    debug_file(debug, "x", 3, "===== 3 passed in 0.01s =====\n", message="Validation passed")
    (debug / "generate.txt").write_text("Phase: generate\n")
    (debug / "validate_x_attemptZ.txt").write_text("Message: Validation failed\n")
    found = read_causes(RULES, tmp_path)
    assert [(c.attempt, c.cause, c.passed, c.failed) for c in found] == [
        (1, "syntax_error", None, None),
        (2, "assertions_failed", 2, 1),
    ]
    assert read_causes(RULES, tmp_path / "nowhere") == []


def test_rules_without_an_attempt_group_are_refused():
    from ironbench.core.causes import FailureCauseRules

    with pytest.raises(ValueError, match="attempt"):
        FailureCauseRules(directory=".", files=r"validate_(\d+)\.txt", causes=[])


def test_debug_files_are_data_a_linked_folder_or_file_is_not_followed(tmp_path):
    """The target made its debug folder: a symbolic link on the way to it, a link in it, a hard
    link to a file elsewhere, a FIFO (which would block an open for reading) are each read as
    nothing; a plain file beside them is read."""
    elsewhere = tmp_path / "elsewhere"
    debug_file(elsewhere, "x", 1, "E   SyntaxError: invalid syntax\n")
    linked_folder = tmp_path / "folder_linked"
    (linked_folder / "build").mkdir(parents=True)
    (linked_folder / "build" / ".ironclad_debug").symlink_to(elsewhere)
    assert read_causes(RULES, linked_folder) == []
    linked_build = tmp_path / "build_linked"
    linked_build.mkdir()
    (elsewhere / ".ironclad_debug").mkdir()
    debug_file(elsewhere / ".ironclad_debug", "x", 1, "E   SyntaxError: invalid syntax\n")
    (linked_build / "build").symlink_to(elsewhere)
    assert read_causes(RULES, linked_build) == []

    mixed = tmp_path / "mixed"
    debug = mixed / "build" / ".ironclad_debug"
    debug_file(debug, "x", 4, "===== 1 failed, 2 passed in 0.01s =====\n")
    (debug / "validate_x_attempt1.txt").symlink_to(next(elsewhere.glob("validate_*")))
    os.link(next((elsewhere / ".ironclad_debug").glob("validate_*")), debug / "validate_x_attempt2.txt")
    os.mkfifo(debug / "validate_x_attempt3.txt")
    found = read_causes(RULES, mixed)
    assert [(c.attempt, c.cause) for c in found] == [(4, "assertions_failed")]


def test_a_debug_folder_of_too_many_names_is_not_listed(tmp_path, monkeypatch):
    from ironbench.core import causes

    debug = tmp_path / "build" / ".ironclad_debug"
    debug_file(debug, "x", 1, "E   SyntaxError: invalid syntax\n")
    for index in range(5):
        (debug / f"filler_{index}.txt").write_text("")
    monkeypatch.setattr(causes, "MAX_DEBUG_NAMES", 5)
    assert read_causes(RULES, tmp_path) == []
    monkeypatch.setattr(causes, "MAX_DEBUG_NAMES", 6)
    assert [c.cause for c in read_causes(RULES, tmp_path)] == ["syntax_error"]


def test_a_target_s_output_is_read_a_line_at_a_time(tmp_path):
    """A debug file of 30,000 newlines cost 47 s of the harness's processor, and a brick line
    ending in 60,000 blanks and a letter 74 s: the rules matched the whole text, `\\s*` crossing
    every newline and every blank. Read a line at a time, each cut and its long runs of blanks
    shortened, both take a moment, and what they say stays what an honest output says."""
    import signal

    from ironbench.core.outcome import parse_outcome

    def too_long(*_):
        raise TimeoutError("a rule read the target's output in more than linear time")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(20)
    try:
        folder = tmp_path / "build" / ".ironclad_debug"
        debug_file(folder, "add", 1, "\n" * 30_000)
        debug_file(folder, "add", 2, "E     \n" * 30_000 + "SyntaxError: invalid syntax\n")
        assert [(c.attempt, c.cause) for c in read_causes(RULES, tmp_path)] == [(1, "other"), (2, "syntax_error")]
        line = "[SUCCESS] Verified brick saved to: verified_bricks/add.py" + " " * 60_000 + "x\n"
        parsed = parse_outcome(0, line * 3)
        assert parsed.brick_path is not None and parsed.brick_path.startswith("verified_bricks/add.py")
        honest = parse_outcome(0, "[SUCCESS] Verified brick saved to: verified_bricks/add.py   \n")
        assert honest.brick_path == "verified_bricks/add.py"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
