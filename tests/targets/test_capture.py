"""Output capture: capped files, head+tail text, bounded memory whatever the target prints."""

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.redact import Redactor
from ironbench.targets.capture import OutputCapture
from ironbench.targets.command import invoke

HOSTILE = Path(__file__).resolve().parents[1] / "fixtures" / "hostile_target.py"
REPO = Path(__file__).resolve().parents[2]


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=400), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_capture_keeps_everything_up_to_the_caps_and_marks_what_it_drops(tmp_path_factory, data, cuts):
    path = tmp_path_factory.mktemp("cap") / "out.txt"
    capture = OutputCapture(path, file_cap=120, file_tail=30, text_head=50, text_tail=40)
    position = 0
    for cut in sorted(cuts) + [len(data)]:
        capture.write(data[position : max(position, cut)])
        position = max(position, cut)
    text = capture.finish()
    stored = path.read_bytes()
    if len(data) <= 120 - 30 + 30:
        assert stored == data
    else:
        assert stored.startswith(data[:90]) and stored.endswith(data[-30:])
        assert f"[{len(data) - 120} bytes dropped by ironbench]".encode() in stored
    if len(data) <= 90:
        assert text == data.decode("utf-8", "replace")
    else:
        assert text.startswith(data[:50].decode("utf-8", "replace")[:10])
        assert f"[{len(data) - 90} bytes dropped by ironbench]" in text


def test_a_long_stream_keeps_head_and_tail_in_memory_and_all_of_it_on_disk(tmp_path):
    result = invoke([sys.executable, str(HOSTILE), "flood", str(3 * 1024 * 1024)], tmp_path, 60, {})
    assert result.exit_code == 0
    assert result.stdout.startswith("x" * 1000) and result.stdout.endswith("[SUCCESS] Verified brick saved to: b.py\n")
    assert "bytes dropped by ironbench" in result.stdout and len(result.stdout) < 2 * 1024 * 1024 + 100
    assert Path(result.stdout_path).stat().st_size > 3 * 1024 * 1024  # under the file cap: complete
    assert Path(result.stderr_path).read_bytes() == b""


@pytest.mark.slow
def test_the_harness_memory_stays_bounded_under_an_output_flood(tmp_path):
    """300 MB of output through `ironbench run` (the old harness held it all, 3x over)."""
    suite = tmp_path / "flood.yaml"
    suite.write_text(
        "suite_id: flood\nmode: baseline\ntimeout_seconds: 120\ndebug_enabled: false\n"
        f"target: [{sys.executable!r}, {str(HOSTILE)!r}, flood, '{300 * 1024 * 1024}', '{{instruction}}']\n"
        "cases:\n  - {id: flood, instruction: Write a function named flood., runs: 1}\n"
    )
    # Measured from a small fresh interpreter: a child's peak RSS counts its parent's
    # pages until exec, and the test runner is large.
    measure = (
        "import os, subprocess, sys\n"
        "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "_, status, usage = os.wait4(p.pid, 0)\n"
        "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            measure,
            sys.executable,
            "-m",
            "ironbench.cli.main",
            "run",
            str(suite),
            "--out",
            str(tmp_path / "out"),
            "-q",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    code, peak_kb = map(int, done.stdout.split())
    assert code == 0
    assert peak_kb / 1024 < 200, f"harness peaked at {peak_kb / 1024:.0f} MB"
    stdout_file = next((tmp_path / "out" / "workdirs").rglob("ironbench_stdout.txt"))
    assert 64 * 1024 * 1024 <= stdout_file.stat().st_size < 64 * 1024 * 1024 + 200


def test_secrets_are_redacted_in_the_file_and_the_text_even_across_reads(tmp_path):
    secret = "sk-live-" + "a1b2c3d4" * 4
    redactor = Redactor({secret: "OPENAI_API_KEY"})
    # 70,000 copies: the secret straddles many 64 KiB pipe reads.
    code = f"import sys; sys.stdout.write({secret!r} * 70000); sys.stderr.write('key=' + {secret!r})"
    result = invoke([sys.executable, "-c", code], tmp_path, 60, {}, redactor)
    for text in (
        result.stdout,
        result.stderr,
        Path(result.stdout_path).read_text(),
        Path(result.stderr_path).read_text(),
    ):
        assert secret not in text and "[REDACTED:OPENAI_API_KEY]" in text
    assert Path(result.stdout_path).read_text() == "[REDACTED:OPENAI_API_KEY]" * 70000
