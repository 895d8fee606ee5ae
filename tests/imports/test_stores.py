"""`ironbench import other/ironbench.db`: the runs another store has and this one lacks come in with
their events, the chain verified on the way; twice adds nothing; colliding ids are renamed."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ironbench.run.options import RunOptions
from ironbench.run.runner import start_run
from ironbench.suite.models import load_suite
from tests.conftest import cli
from tests.store.test_chain import _tamper

# The end-to-end tier (`pytest -m slow`): stores of real runs merged.
pytestmark = pytest.mark.slow


def run(out: Path, suite: str = "baseline") -> str:
    return cli("run", suite, "--target", "fixture", "--out", str(out), "-q", "--no-report", check=True).stdout.strip()


def rows(store: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with sqlite3.connect(store) as conn:
        return conn.execute(sql, params).fetchall()


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> tuple[Path, list[str]]:
    """A CI job's store: a stress run and a baseline run."""
    out = tmp_path_factory.mktemp("ci") / "out"
    return out / "ironbench.db", [run(out, "stress"), run(out, "baseline")]


def test_another_stores_runs_come_in_with_their_events_and_twice_adds_nothing(tmp_path, other):
    source, run_ids = other
    out = tmp_path / "out"
    mine = run(out)
    result = cli("import", str(source), "--out", str(out), check=True)
    assert all(f"{r}: imported" in result.stdout for r in run_ids)
    target = out / "ironbench.db"
    # the same events: ids, times and payload bytes kept, each linked into this store's chain
    theirs = rows(source, "SELECT event_id, run_id, stream, type, timestamp_utc, payload FROM events ORDER BY seq")
    here = rows(
        target,
        "SELECT event_id, run_id, stream, type, timestamp_utc, payload FROM events WHERE run_id != ? AND type != 'run_imported' ORDER BY seq",
        (mine,),
    )
    assert here == theirs
    assert "hash chain holds" in cli("verify", "--out", str(out), check=True).stdout
    listed = {r["run_id"] for r in json.loads(cli("runs", "--out", str(out), "--format", "json", check=True).stdout)}
    assert listed == {mine, *run_ids}
    count = rows(target, "SELECT count(*) FROM events")[0][0]
    again = cli("import", str(source), "--out", str(out), check=True)
    assert "0 invocation(s) added" in again.stdout and rows(target, "SELECT count(*) FROM events")[0][0] == count
    # the read model and the tree are the source's
    assert rows(target, "SELECT count(*) FROM invocations WHERE run_id = ?", (run_ids[0],)) == rows(
        source, "SELECT count(*) FROM invocations WHERE run_id = ?", (run_ids[0],)
    )
    assert (out / run_ids[0] / "stress").is_dir() and (out / run_ids[1] / "metadata.json").is_file()
    assert cli("compare", run_ids[1], mine, "--out", str(out)).returncode == 0
    # and back: a store holding runs from this one adds only what it lacks
    back = cli("import", str(target), "--out", str(source.parent), check=True)
    assert f"{mine}: imported" in back.stdout and all(f"{r}: unchanged" in back.stdout for r in run_ids)


def test_a_broken_chain_is_refused_naming_the_link_and_nothing_is_imported(tmp_path, other):
    source = tmp_path / "tampered.db"
    shutil.copy(other[0], source)
    _tamper(source, "UPDATE events SET timestamp_utc = '2000-01-01T00:00:00.000000Z' WHERE seq = 9")
    out = tmp_path / "out"
    result = cli("import", str(source), "--out", str(out))
    assert (
        result.returncode == 2
        and "hash chain broken at seq 9 (run " in result.stderr
        and "nothing imported" in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (out / "ironbench.db").exists()


def test_a_run_of_the_same_id_comes_in_renamed_and_stays_apart(tmp_path, monkeypatch):
    """Parallel CI jobs started in the same second: two different runs, one id."""
    from ironbench.run import runner
    from ironbench.run.paths import RunPaths

    monkeypatch.setattr(runner, "new_run_id", lambda store: store.claim_new_run(iter(["run_20260101_000000"])))
    suite = load_suite("suites/baseline.yaml")
    for name in ("a", "b"):
        start_run(suite, RunPaths.resolve(tmp_path / name, None), RunOptions(target="fixture"))
    result = cli("import", str(tmp_path / "b" / "ironbench.db"), "--out", str(tmp_path / "a"), check=True)
    assert (
        "run_20260101_000000_2: imported" in result.stdout
        and "this store has another run run_20260101_000000" in result.stdout
    )
    target = tmp_path / "a" / "ironbench.db"
    keys = rows(target, "SELECT invocation_key FROM invocations WHERE run_id = 'run_20260101_000000_2'")
    assert keys and all(k[0].startswith("run_20260101_000000_2/") for k in keys)
    assert rows(target, "SELECT count(*) FROM invocations WHERE run_id = 'run_20260101_000000'") == rows(
        target, "SELECT count(*) FROM invocations WHERE run_id = 'run_20260101_000000_2'"
    )
    again = cli("import", str(tmp_path / "b" / "ironbench.db"), "--out", str(tmp_path / "a"), check=True)
    assert "run_20260101_000000_2: unchanged" in again.stdout
    assert "hash chain holds" in cli("verify", "--out", str(tmp_path / "a"), check=True).stdout


def test_a_file_that_is_no_store_or_is_this_store_is_refused(tmp_path):
    garbage = tmp_path / "x.db"
    garbage.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    result = cli("import", str(garbage), "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and str(garbage) in result.stderr
    out = tmp_path / "mine"
    run(out)
    same = cli("import", str(out / "ironbench.db"), "--out", str(out))
    assert same.returncode == 2 and "is the store it would be imported into" in same.stderr
