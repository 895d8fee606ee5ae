"""`ironbench import` of outputs trees other harnesses wrote: every shape, the facts a live run of
the same output gives, twice without duplicates, and damaged or hostile trees refused by run."""

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from ironbench.core.events import InvocationCompleted, RunImported
from ironbench.store.eventstore import open_store
from tests.conftest import REPO, cli, query
from tests.fixtures import outputs_trees as trees

REPLAY = REPO / "tests" / "fixtures" / "replay_ironclad.py"
FACT_FIELDS = ("success", "failure_stage", "attempts", "repairs_triggered", "infra_error")
# What the live run plays, slot by slot: an outage's slot runs again with the next line.
LIVE_SEQUENCE = [
    "verified_after_0_repairs",
    "outage_during_generation",
    "verified_after_one_repair",
    "validation_exhausted",
    "outage_during_repair",
    "repair_abort_after_two_repairs",
    "generation_failed",
]


def completions(store_path: Path, run_id: str | None = None) -> list[InvocationCompleted]:
    with open_store(store_path, create=False) as store:
        return [e.event for e in store.read(run_id, types=("invocation_completed",))]  # type: ignore[misc]


def facts(event: InvocationCompleted) -> tuple:
    return tuple(getattr(event, name) for name in FACT_FIELDS)


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> dict[str, tuple]:
    """Transcript -> the facts a live run recorded when the target printed it."""
    tmp = tmp_path_factory.mktemp("live")
    (tmp / "state").mkdir()
    sequence = tmp / "state" / "sequence.txt"  # the target takes its transcripts from it, in turn
    sequence.write_text("".join(f"{name}\n" for name in LIVE_SEQUENCE))
    suite = tmp / "live.yaml"
    suite.write_text(
        "suite_id: live\nmode: baseline\ncases:\n  - id: compile_email_regex\n"
        f"    instruction: {trees.INSTRUCTION}\n    stop: {{rule: fixed, runs: 5}}\n"
        f"target: [{json.dumps(sys.executable)}, {json.dumps(str(REPLAY))}, '{{instruction}}']\n"
    )
    cli(
        "run",
        str(suite),
        "--out",
        str(tmp / "out"),
        "-q",
        "--no-report",
        "--allow-write",
        str(sequence.parent),
        env={"REPLAY_SEQUENCE": str(sequence)},
        check=True,
    )
    by_output = {e.stdout: facts(e) for e in completions(tmp / "out" / "ironbench.db")}
    found = {name: by_output[trees.transcript(name)] for name in LIVE_SEQUENCE}
    assert (
        found["outage_during_generation"][4] and found["outage_during_repair"][4]
    )  # outages are infrastructure errors
    return found


def import_(tree: Path, out: Path, *args: str, check: bool = True):
    return cli("import", str(tree), "--out", str(out), *args, check=check)


@pytest.mark.slow
@pytest.mark.parametrize(
    "build",
    [
        lambda out: trees.spec_tree(out, streams="beside"),
        trees.wild_tree,
        trees.wild_adversarial_tree,
        trees.canonical_tree,
    ],
    ids=["spec-layout-output-beside", "suite-id-for-mode-output-in-summary", "generator_0000-variants", "canonical"],
)
def test_each_shape_imports_with_the_facts_a_live_run_of_the_same_output_gives(tmp_path, live, build):
    root = build(tmp_path / "tree")
    out = tmp_path / "out"
    first = import_(root, out)
    assert "imported" in first.stdout
    imported = completions(out / "ironbench.db")
    assert imported and all(e.stdout for e in imported)
    for event in imported:
        name = next(n for n in trees.FACTS if trees.transcript(n) == event.stdout)
        assert facts(event) == live[name], name
        assert event.recorded is not None and "stdout" not in event.recorded  # kept beside, as recorded
    # twice: nothing added, no duplicate anywhere
    second = import_(root, out)
    assert "0 invocation(s) added" in second.stdout and "unchanged" in second.stdout
    with sqlite3.connect(out / "ironbench.db") as conn:
        assert conn.execute("SELECT count(*) FROM events WHERE type = 'invocation_completed'").fetchone()[0] == len(
            imported
        )
        assert conn.execute("SELECT count(*) FROM invocations").fetchone()[0] == len(imported)
    assert cli("verify", "--out", str(out), check=True).returncode == 0


@pytest.mark.slow
def test_every_shape_is_placed_where_ironbench_puts_it_and_the_commands_read_it(tmp_path):
    root = trees.every_shape(tmp_path / "tree")
    out = tmp_path / "out"
    import_(root, out)
    groups = query(out, "SELECT DISTINCT run_id, group_path, generator, complexity FROM invocations ORDER BY 1, 2")
    paths = {(g["run_id"], g["group_path"]) for g in groups}
    assert ("run_20260110_091533", "adversarial/compile_email_regex/whitespace_noise/variant_0002") in paths
    assert ("run_20260110_091533", "stress/compile_email_regex/level_2") in paths
    assert ("run_20260111_101010", "baseline/compile_email_regex") in paths
    # `<generator>_0000` under the case, and ai_rewrite_style read as the generator it names
    assert ("run_20260112_101010", "adversarial/compile_email_regex/ai_rewrite/variant_0000") in paths
    assert {g["complexity"] for g in groups if g["run_id"] == "run_20260113_101010"} == {"small", "mid", "large"}
    runs = json.loads(cli("runs", "--out", str(out), "--format", "json", check=True).stdout)
    by_id = {r["run_id"]: r for r in runs}
    assert by_id["run_20260114_101010"]["invocations"] == 0  # a dry run: its metadata, nothing else
    assert by_id["run_20260111_101010"]["suite_id"] == "baseline_v1"
    assert by_id["run_20260113_101010"]["mode"] == "canonical"
    rows = query(out, "SELECT run_id, imported, imported_from FROM runs")
    assert all(r["imported"] == "outputs" and r["imported_from"] == str(root) for r in rows)
    for run_id in by_id:
        assert cli("show", run_id, "--out", str(out), check=True).returncode == 0
        assert cli("report", run_id, "--out", str(out), check=True).returncode == 0
    metadata = json.loads((out / "run_20260111_101010" / "metadata.json").read_text())
    assert metadata["imported"]["format"] == "outputs" and metadata["imported"]["metadata"]["suite_id"] == "baseline_v1"
    summary = json.loads(
        (out / "run_20260111_101010" / "baseline" / "compile_email_regex" / "run_002" / "summary.json").read_text()
    )
    assert summary["attempts"] == 2 and summary["recorded"]["attempts"] == 1
    assert summary["disagrees"] == ["attempts", "repairs_triggered"]
    compared = cli("compare", "run_20260110_091533", "run_20260111_101010", "--out", str(out))
    assert compared.returncode in (0, 1) and "Traceback" not in compared.stderr
    resumed = cli("resume", "run_20260111_101010", "--out", str(out))
    assert resumed.returncode == 2 and "imported from" in resumed.stderr


@pytest.mark.slow
def test_the_import_counts_where_the_record_disagrees_with_the_output(tmp_path):
    root = trees.wild_tree(tmp_path / "tree")
    out = tmp_path / "out"
    result = import_(root, out)
    # wild harnesses record attempts 1, repairs 0, failure_stage "unknown" whatever was printed
    assert "attempts 5, failure_stage 5, repairs_triggered 4" in result.stdout
    with open_store(out / "ironbench.db", create=False) as store:
        [marker] = [e.event for e in store.read(types=("run_imported",))]
    assert isinstance(marker, RunImported) and marker.disagreements == {
        "attempts": 5,
        "failure_stage": 5,
        "repairs_triggered": 4,
    }
    # a summary that keeps no output: its recorded facts are the facts, nothing to disagree with
    plain = trees.spec_tree(tmp_path / "plain")
    result = import_(plain, tmp_path / "out2")
    assert "disagrees" not in result.stdout and "contradict" not in result.stdout
    recorded = completions(tmp_path / "out2" / "ironbench.db")
    assert {facts(e)[:4] for e in recorded} <= set(trees.FACTS.values())


def _damage(root: Path, how: str) -> Path:
    summary = next(root.rglob("run_002/summary.json"))
    if how == "invalid-json":
        summary.write_text('{"success": true,')
    elif how == "wrong-type":
        data = json.loads(summary.read_text())
        summary.write_text(json.dumps({**data, "attempts": "three", "stdout": None}))
    elif how == "not-utf8":
        (summary.parent / "instruction.txt").write_bytes(b"Write \xff a parser.")
    elif how == "symlink":
        summary.unlink()
        summary.symlink_to("/etc/hostname")
    elif how == "fifo":
        summary.unlink()
        os.mkfifo(summary)
    elif how == "huge":
        with summary.open("r+b") as handle:
            handle.truncate(65 * 1024 * 1024)
    elif how == "unplaced":
        deep = root / "baseline_v1" / "a" / "b" / "c" / "d" / "run_001"
        deep.mkdir(parents=True)
        (deep / "summary.json").write_text("{}")
        return deep
    elif how == "bad-time":
        data = json.loads(summary.read_text())
        summary.write_text(json.dumps({**data, "timestamp_utc": "yesterday"}))
    return summary


@pytest.mark.slow
@pytest.mark.parametrize(
    "how", ["invalid-json", "wrong-type", "not-utf8", "symlink", "fifo", "huge", "unplaced", "bad-time"]
)
def test_a_damaged_file_is_named_and_nothing_of_its_run_is_written(tmp_path, how):
    tree = tmp_path / "tree"
    trees.spec_tree(tree, streams="beside")
    damaged_root = trees.wild_tree(tree)
    named = _damage(damaged_root, how)
    out = tmp_path / "out"
    result = import_(tree, out, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert (
        line.startswith("ironbench: error: ")
        and str(named if how != "not-utf8" else named.parent / "instruction.txt") in line
    )
    with sqlite3.connect(out / "ironbench.db") as conn:
        runs = {r[0] for r in conn.execute("SELECT DISTINCT run_id FROM events")}
    assert runs == {"run_20260110_091533"}  # the good run came in; the damaged one left no trace
    assert not (out / "run_20260111_101010").exists()


@pytest.mark.slow
def test_a_folder_that_is_no_outputs_tree_gets_one_line_and_exit_2(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("hello")
    for path in (tmp_path / "notes", tmp_path / "notes" / "readme.txt", tmp_path / "absent"):
        result = cli("import", str(path), "--out", str(tmp_path / "out"))
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert str(path) in result.stderr
    assert not (tmp_path / "out").exists()  # refused before anything was written


@pytest.mark.slow
def test_a_growing_tree_adds_only_its_new_runs_and_a_changed_record_is_refused(tmp_path):
    tree = tmp_path / "tree"
    root = trees.wild_tree(tree)
    out = tmp_path / "out"
    import_(tree, out)
    before = len(completions(out / "ironbench.db"))
    trees.write_invocation(
        root / "baseline_v1" / "compile_email_regex" / "run_008",
        8,
        "baseline_v1",
        "compile_email_regex",
        None,
        "validation_exhausted",
        True,
    )
    result = import_(tree, out)
    assert "added to, 1 invocation(s)" in result.stdout and len(completions(out / "ironbench.db")) == before + 1
    changed = root / "baseline_v1" / "compile_email_regex" / "run_001" / "summary.json"
    changed.write_text(json.dumps({**json.loads(changed.read_text()), "duration_ms": 99}))
    refused = import_(tree, out, check=False)
    assert refused.returncode == 2 and "another run with the same id" in refused.stderr


@pytest.mark.slow
def test_an_ironbench_outputs_folder_of_runs_already_here_adds_nothing(tmp_path):
    out = tmp_path / "out"
    cli("run", "baseline", "--target", "fixture", "--out", str(out), "-q", "--no-report", check=True)
    result = import_(out, out)
    assert "skipped: already in this store" in result.stdout and "0 invocation(s) added" in result.stdout
