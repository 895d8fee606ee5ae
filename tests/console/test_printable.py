"""Terminal safety: what users and targets wrote is shown, never obeyed by the terminal."""

import io
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.console.printable import printable
from tests.conftest import cli

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\x9b31m\u202edesrever"


def test_controls_and_bidi_overrides_are_escaped_and_other_text_is_kept():
    assert printable(ESCAPES) == "\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202edesrever"
    assert printable("naïve 中文 ✓ tab\there") == "naïve 中文 ✓ tab\\there"
    assert printable("two\nlines", keep_newlines=True) == "two\nlines"


@given(st.text())
def test_nothing_printable_returns_can_drive_a_terminal(text):
    shown = printable(text, keep_newlines=True)
    assert all(c == "\n" or unicodedata.category(c) != "Cc" for c in shown)
    assert not any("\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069" for c in shown)


def test_progress_notes_are_escaped():
    from rich.console import Console

    from ironbench.console.progress import ProgressReporter

    buffer = io.StringIO()
    ProgressReporter(Console(file=buffer, force_terminal=False, width=200)).note(f"[e] turn 1: {ESCAPES}")
    assert "\x1b" not in buffer.getvalue() and "\\x1b]0;pwned" in buffer.getvalue()


def test_error_lines_are_escaped(tmp_path):
    result = cli("run", str(tmp_path / "evil\x1b[2J.yaml"))
    assert result.returncode == 2 and "\x1b" not in result.stderr and "evil\\x1b[2J.yaml" in result.stderr


@pytest.mark.slow
def test_runs_and_show_escape_text_from_the_store(paths):
    """A store is data from elsewhere (another version, another person): its text is escaped too."""
    import sqlite3

    from ironbench.run.runner import start_run
    from tests.conftest import make_suite

    run_id = start_run(make_suite({"c": 3}), paths)
    with sqlite3.connect(paths.store_path) as conn:
        conn.execute("UPDATE runs SET suite_id = ?", (f"suite{ESCAPES}",))
        conn.execute("UPDATE invocations SET case_id = ?", (f"case{ESCAPES}",))
    where = ("--out", str(paths.out_dir))
    for args in (("runs",), ("show", run_id)):
        shown = cli(*args, *where)
        assert shown.returncode == 0 and "\x1b" not in shown.stdout and "\x07" not in shown.stdout
        assert "suite\\x1b]0;pwned\\x07" in shown.stdout
    assert "case\\x1b]0;pwned" in cli("show", run_id, *where).stdout
    assert f"suite{ESCAPES}" in cli("runs", *where, "--format", "csv").stdout  # machine formats stay exact
