"""Redaction: secret values found in text, in nested values and in chunked streams."""

from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.redact import MIN_SECRET_LENGTH, Redactor, secret_values


def test_secret_looking_names_and_explicit_names_are_chosen_short_values_are_not():
    environ = {
        "OPENAI_API_KEY": "sk-123456789",
        "GITHUB_TOKEN": "ghp_abcdefgh",
        "DB_PASSWORD": "hunter2hunter",
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI",
        "GCP_CREDENTIALS": "/path/creds.json",
        "KEYBOARD": "us",
        "HOME": "/home/me",
        "MY_VAR": "x1",
        "PATH": "/usr/bin",
    }
    found = secret_values(environ, ["MY_VAR"])
    assert set(found.values()) == {
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AWS_SECRET_ACCESS_KEY",
        "GCP_CREDENTIALS",
        "MY_VAR",
    }
    assert len("us") < MIN_SECRET_LENGTH


def test_nested_values_are_redacted_everywhere():
    redactor = Redactor({"s3cr3t-value": "API_KEY"})
    value = {"a": ["x s3cr3t-value y", {"s3cr3t-value": 1}], "n": 3, "b": None}
    assert redactor.value(value) == {"a": ["x [REDACTED:API_KEY] y", {"[REDACTED:API_KEY]": 1}], "n": 3, "b": None}


def test_a_secret_containing_another_is_replaced_whole():
    redactor = Redactor({"abcdefgh": "SHORT_KEY", "abcdefghijkl": "LONG_KEY"})
    assert redactor.text("abcdefghijkl abcdefgh") == "[REDACTED:LONG_KEY] [REDACTED:SHORT_KEY]"


SECRETS = {"tok-AAAA1111": "A_TOKEN", "tok-AAAA1111-extended": "B_TOKEN", "päss-wörd-ü": "C_PASSWORD"}


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.one_of(st.sampled_from(sorted(SECRETS)), st.text(alphabet="atok-A1ü ", max_size=6)), max_size=20
    ),
    cuts=st.lists(st.integers(0, 300), max_size=15),
)
def test_streamed_redaction_equals_redacting_the_whole_text_however_it_is_chunked(pieces, cuts):
    redactor = Redactor(SECRETS)
    data = "".join(pieces).encode("utf-8")
    stream = redactor.stream()
    out, position = [], 0
    for cut in sorted(cuts) + [len(data)]:
        cut = max(position, min(cut, len(data)))
        out.append(stream.feed(data[position:cut]))
        position = cut
    out.append(stream.finish())
    assert b"".join(out) == redactor.text(data.decode("utf-8")).encode("utf-8")


# -- end to end: nothing stored, printed or projected holds a secret ------------------------------

import sys
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile_target.py"
SECRET = "sk-proj-" + "Zx9" * 12
PLAIN = "plain-but-private-value"


def _files_holding(root: Path, needle: str) -> list[Path]:
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


def _env_suite(tmp_path: Path) -> Path:
    suite = tmp_path / "env.yaml"
    suite.write_text(
        "suite_id: env\nmode: baseline\ndebug_enabled: false\n"
        f"target: [{sys.executable!r}, {str(HOSTILE)!r}, env, '{{instruction}}']\n"
        "cases:\n  - {id: env, instruction: Write a function named env., runs: 3}\n"
    )
    return suite


@pytest.mark.slow
def test_a_target_printing_its_environment_leaves_no_secret_in_store_files_or_output(tmp_path):
    from tests.conftest import cli

    out = tmp_path / "out"
    env = {"OPENAI_API_KEY": SECRET, "MY_PLAIN": PLAIN}
    # passed in on purpose (a fenced target gets neither otherwise), then printed: redacted wherever kept
    given = ["--pass-env", "OPENAI_API_KEY", "--pass-env", "MY_PLAIN"]
    result = cli("run", str(_env_suite(tmp_path)), "--out", str(out), "--redact", "MY_PLAIN", *given, env=env)
    assert result.returncode == 0, result.stderr
    run_id = result.stdout.strip()
    shown = cli(
        "query", "SELECT payload FROM events WHERE type = 'invocation_completed'", "--out", str(out), "--format", "json"
    )
    assert "[REDACTED:OPENAI_API_KEY]" in shown.stdout and "[REDACTED:MY_PLAIN]" in shown.stdout
    assert list(out.rglob("ironbench_stdout.txt"))
    cli("project", run_id, "--rebuild", "--out", str(out), check=True)
    for needle in (SECRET, PLAIN):
        assert _files_holding(out, needle) == []
        assert needle not in result.stdout + result.stderr + shown.stdout


def test_resume_keeps_redacting_the_names_the_run_started_with(paths, monkeypatch, tmp_path):
    from ironbench.core.errors import IronbenchError
    from ironbench.run.options import RunOptions
    from ironbench.run.runner import SilentReporter, resume_run, start_run
    from ironbench.sandbox import SandboxPolicy
    from ironbench.store import open_store
    from ironbench.suite.models import load_suite

    monkeypatch.setenv("MY_PLAIN", PLAIN)

    class StopAfterOne(SilentReporter):
        def invocation(self, case_id, run_index, completed):
            raise IronbenchError(f"stopped while {PLAIN} was in view")

    with pytest.raises(IronbenchError) as stopped:
        # the target is given MY_PLAIN (a fenced target gets no variable it is not given) and prints it
        options = RunOptions(redact=("MY_PLAIN",), sandbox=SandboxPolicy(pass_env=("MY_PLAIN",)))
        start_run(load_suite(_env_suite(tmp_path)), paths, options, reporter=StopAfterOne())
    assert PLAIN not in str(stopped.value) and "[REDACTED:MY_PLAIN]" in str(stopped.value)
    with open_store(paths.store_path) as store:
        run_id = store.run_ids()[0]
        assert next(store.read(run_id)).event.redact == ["MY_PLAIN"]
    assert resume_run(run_id, paths) == "finished"
    assert _files_holding(paths.out_dir, PLAIN) == []
    with open_store(paths.store_path) as store:
        completed = [e.event for e in store.read(run_id, types=["invocation_completed"])]
    assert len(completed) == 3 and all("MY_PLAIN=[REDACTED:MY_PLAIN]" in e.stdout for e in completed)
