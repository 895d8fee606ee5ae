"""A rebuilt folder is the folder, byte for byte; a writer stopped mid-write leaves old or new files, never half."""

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO, cli
from tests.projections.test_tree import snapshot

# The end-to-end tier (`pytest -m slow`): runs killed mid-write and rebuilt.
pytestmark = pytest.mark.slow

KILLED = Path(__file__).resolve().parents[1] / "fixtures" / "killed_writer.py"
ENV = {"SCRIPTED_OUTCOMES": "{}"}


MIXED = """\
suite_id: atomic
mode: mixed
timeout_seconds: 30
cases:
  - {id: base, mode: baseline, instruction: "Write a function named square that returns the square of a number.", runs: 3}
  - id: words
    mode: adversarial
    instruction: "Write a function named count_words that counts the words in a string."
    generators:
      - {generator: whitespace_noise, count: 3, intensity_min: 0.02, intensity_max: 0.08, seed: 1}
      - {generator: synonym_substitution, count: 2, max_replacements: 2, seed: 2}
  - id: ladder
    mode: stress
    instruction: "Write a function named parse_date that parses an ISO date."
    ladder: {generator: add_scope_detail, additions: 2, seed: 3, runs_per_level: 2}
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """Two runs of a small mixed suite (baseline, adversarial, stress) on the simulated
    Ironclad, each with its report, and the second with a comparison page."""
    folder = tmp_path_factory.mktemp("atomic")
    suite, out = folder / "mixed.yaml", folder / "out"
    suite.write_text(MIXED)
    ids = [
        cli("run", str(suite), "--target", "fixture", "--out", str(out), "-q", env=ENV, check=True).stdout.strip()
        for _ in range(2)
    ]
    cli("report", ids[1], "--compare", ids[0], "--out", str(out), check=True)
    return out, ids


def stopped(*args: str, at: int, signal: str = "SIGKILL") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(KILLED), *args], capture_output=True, text=True, cwd=REPO, timeout=300, check=False,
        env={**os.environ, **ENV, "KILL_AT_RENAME": str(at), "KILL_WITH": signal},
    )  # fmt: skip


def partials(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.startswith(".") and p.name.endswith(".tmp")]


def test_a_rebuilt_folder_is_the_original_byte_for_byte(two_runs):
    out, (_, run_id) = two_runs
    run_dir = out / run_id
    original = snapshot(run_dir)
    assert "report.html" in original and any(name.startswith("compare_") for name in original)
    # what a crash and a hand can leave: a lost file, a damaged one, a stray partial, an empty folder
    summary = next(run_dir.rglob("summary.json"))
    summary.unlink()
    next(run_dir.rglob("aggregate.json")).write_text("{")
    (run_dir / "metadata.json").with_name(".metadata.json.999-1.tmp").write_text("half")
    (run_dir / "stray_empty_folder").mkdir()
    cli("project", run_id, "--rebuild", "--out", str(out), check=True)
    assert snapshot(run_dir) == original
    assert not partials(run_dir) and not (run_dir / "stray_empty_folder").exists()


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("at", [1, 7, 30])
def test_a_rebuild_stopped_mid_write_leaves_whole_files_and_the_next_one_completes(two_runs, at, signal):
    out, (_, run_id) = two_runs
    run_dir = out / run_id
    original = snapshot(run_dir)
    result = stopped("project", run_id, "--rebuild", "--out", str(out), at=at, signal=signal)
    assert result.returncode == (-9 if signal == "SIGKILL" else 130), result.stderr
    if signal == "SIGINT":  # Ctrl-C: the partial file goes with the write it belonged to
        assert "Traceback" not in result.stderr and not partials(run_dir)
    after = snapshot(run_dir)
    assert {name: after[name] for name in after if not name.split("/")[-1].startswith(".")} == original
    cli("project", run_id, "--rebuild", "--out", str(out), check=True)
    assert snapshot(run_dir) == original


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGINT"])
def test_a_report_stopped_mid_write_leaves_the_old_page(two_runs, signal):
    out, (_, run_id) = two_runs
    page = out / run_id / "report.html"
    page.write_text("<!doctype html><p>the page as it was</p>\n")
    result = stopped("report", run_id, "--out", str(out), at=1, signal=signal)
    assert result.returncode in (-9, 130), result.stderr
    assert page.read_text() == "<!doctype html><p>the page as it was</p>\n"
    assert cli("report", run_id, "--out", str(out), check=True).stdout.strip() == str(page)
    assert page.read_text().rstrip().endswith("</html>")


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGINT"])
def test_an_export_stopped_mid_write_leaves_old_files_and_the_next_one_completes(two_runs, tmp_path, signal):
    out, (_, run_id) = two_runs
    to = tmp_path / "export"
    to.mkdir()
    (to / "runs.parquet").write_bytes(b"the file as it was")
    result = stopped("export", run_id, "--format", "parquet", "--to", str(to), "--out", str(out), at=1, signal=signal)
    assert result.returncode in (-9, 130), result.stderr
    assert (to / "runs.parquet").read_bytes() == b"the file as it was"  # the first view: never half a file
    done = cli("export", run_id, "--format", "parquet", "--to", str(to), "--out", str(out), check=True)
    rows = {Path(line.split("\t")[0]).stem: int(line.split("\t")[1].split()[0]) for line in done.stdout.splitlines()}
    for view, count in rows.items():
        assert duckdb.sql(f"SELECT count(*) FROM '{to / (view + '.parquet')}'").fetchone()[0] == count
    assert rows["invocations"] > 0


def test_every_summary_of_a_run_parses(two_runs):
    """The tree is written whole as the run goes, not only by rebuilds."""
    out, ids = two_runs
    for run_id in ids:
        for path in (out / run_id).rglob("*.json"):
            json.loads(path.read_text())
