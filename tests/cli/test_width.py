"""Console output fits the terminal: tables and prose at 80 and 200 columns, through a real
pseudo-terminal; piped output keeps every character on its line."""

import fcntl
import json
import os
import struct
import subprocess
import sys
import termios

import pytest
import yaml
from rich.cells import cell_len

from tests.conftest import REPO, SCRIPTED_TARGET, cli

# The end-to-end tier (`pytest -m slow`): whole runs printed at several widths.
pytestmark = pytest.mark.slow

CASES = ["parse_iso_dates_in_text", "merge_sorted_intervals", "lru_cache_with_ttl"]
INSTRUCTION = (
    "Write a Python function that {} and returns the result, handling empty input, "
    "unicode text and very large inputs gracefully without external packages."
)


def in_terminal(columns: int, *args: str) -> tuple[int, str]:
    """Run ironbench with stdout and stderr on a pseudo-terminal `columns` wide (no COLUMNS)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        cwd=REPO,
        close_fds=True,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return process.wait(timeout=120), b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("width")
    suite = base / "wide.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "suite_id": "width_suite",
                "mode": "baseline",
                "timeout_seconds": 30,
                "target": SCRIPTED_TARGET,
                "cases": [
                    {"id": case, "instruction": INSTRUCTION.format(case.replace("_", " ")), "runs": 5} for case in CASES
                ],
            }
        )
    )
    out = str(base / "out")
    good = {"SCRIPTED_OUTCOMES": json.dumps({CASES[0]: ["success"], CASES[1]: ["success", "validation"]})}
    bad = {"SCRIPTED_OUTCOMES": json.dumps({CASES[0]: ["generation"], CASES[1]: ["validation"]})}
    first = cli("run", str(suite), "--out", out, "-q", "--no-report", env=good, check=True).stdout.strip()
    second = cli("run", str(suite), "--out", out, "-q", "--no-report", env=bad, check=True).stdout.strip()
    return out, first, second


def commands(out, first, second):
    return {
        "runs": ["runs", "--out", out],
        "show": ["show", first, "--out", out],
        "query": [
            "query",
            (
                "SELECT i.case_id, e.payload->>'$.instruction' AS instruction, i.success, i.attempts, "
                "i.failure_stage FROM invocations i JOIN events e USING (seq) ORDER BY i.case_id, i.run_index"
            ),
            "--run",
            first,
            "--out",
            out,
        ],
        "compare": ["compare", first, second, "--out", out],
    }


@pytest.mark.parametrize("columns", [80, 200])
def test_tables_fit_the_terminal_and_keep_key_cells_whole(runs, columns):
    out, first, second = runs
    shown = {}
    for name, args in commands(out, first, second).items():
        code, text = in_terminal(columns, *args)
        assert code == (1 if name == "compare" else 0), text
        widest = max(text.splitlines(), key=cell_len)
        assert cell_len(widest) <= columns, f"{name} at {columns}: {widest!r}"
        shown[name] = text
    for name in ("show", "compare", "query"):
        for case in CASES:
            assert case in shown[name], (name, case)
    assert first in shown["runs"] and second in shown["runs"] and "width_suite" in shown["runs"]
    # numbers are never cut: each case's run count and successes appear whole on its rows
    assert any(line.startswith(CASES[0]) and " 3 " in f" {line} " for line in shown["show"].splitlines())
    assert "3/3 100%" in shown["compare"] and "0/3 0%" in shown["compare"]
    assert "verdict: REGRESSION" in shown["compare"]
    long_instruction = INSTRUCTION.format(CASES[0].replace("_", " "))
    if columns == 80:  # the instruction is elided in the middle, both ends kept
        assert long_instruction not in shown["query"] and "…" in shown["query"]
        assert "Write a Python" in shown["query"] and "packages." in shown["query"]
    else:  # a wider terminal shows more of it
        assert long_instruction[:60] in shown["query"] and long_instruction[-40:] in shown["query"]
    assert shown["query"].rstrip().endswith("(10 rows)")


def test_piped_output_is_not_cut_or_wrapped(runs):
    out, first, second = runs
    env = {"COLUMNS": ""}
    queried = cli(*commands(out, first, second)["query"], env=env, check=True).stdout
    assert INSTRUCTION.format(CASES[0].replace("_", " ")) in queried  # whole, on one line
    shown = cli("show", first, "--out", out, env=env, check=True).stdout
    assert max(len(line) for line in shown.splitlines()) > 200  # laid out at its natural width
    assert "…" not in shown
