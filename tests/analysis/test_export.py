"""`ironbench export`: the views as Parquet, CSV and JSON lines that read back whole."""

import json

import duckdb
import pytest

from tests.conftest import cli, make_suite, write_suite


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    suite = write_suite(tmp / "s.yaml", make_suite({"a": 4, "b": 4}))
    out = str(tmp / "out")
    env = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success", "generation"], "b": ["validation"]})}
    first = cli("run", str(suite), "--out", out, "-q", env=env, check=True).stdout.strip()
    second = cli("run", str(suite), "--out", out, "-q", env=env, check=True).stdout.strip()
    return tmp, out, first, second


def _count(query: str, run_id: str | None, out: str) -> int:
    args = ["query", query, "--out", out, "-f", "json"] + (["--run", run_id] if run_id else [])
    return json.loads(cli(*args, check=True).stdout)[0]["n"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "fmt, reader", [("parquet", "read_parquet"), ("csv", "read_csv_auto"), ("jsonl", "read_json_auto")]
)
def test_export_one_run_reads_back_with_the_same_rows(two_runs, fmt, reader):
    tmp, out, first, _ = two_runs
    to = tmp / f"one_{fmt}"
    result = cli("export", first, "--format", fmt, "--to", str(to), "--out", out, check=True)
    assert len(result.stdout.strip().splitlines()) == 7 + 3  # the views, and pass_k, robustness, survival
    invocations = to / f"invocations.{fmt}"
    con = duckdb.connect()
    rows = con.execute(f"SELECT count(*), count(DISTINCT run_id), min(run_id) FROM {reader}('{invocations}')")
    assert rows.fetchone() == (_count("SELECT count(*) AS n FROM invocations", first, out), 1, first)
    decisions = con.execute(f"SELECT count(*) FROM {reader}('{to / f'decisions.{fmt}'}')").fetchone()[0]
    assert decisions == _count("SELECT count(*) AS n FROM decisions", first, out) > 0
    assert not [p for p in to.iterdir() if p.name.startswith(".")]  # no partial files left


def test_export_all_runs_and_typed_columns(two_runs):
    tmp, out, first, second = two_runs
    to = tmp / "all"
    cli("export", "--all", "--to", str(to), "--out", out, check=True)
    con = duckdb.connect()
    got = con.execute(
        f"SELECT run_id, count(*), bool_or(success) FROM read_parquet('{to / 'invocations.parquet'}') "
        "GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [r[0] for r in got] == sorted([first, second])
    assert sum(r[1] for r in got) == _count("SELECT count(*) AS n FROM invocations", None, out)
    assert all(r[2] is True for r in got)  # booleans stay booleans in Parquet


def test_export_needs_run_or_all(two_runs, tmp_path):
    _, out, first, _ = two_runs
    for args in ([], [first, "--all"]):
        result = cli("export", *args, "--to", str(tmp_path / "x"), "--out", out)
        assert result.returncode == 2 and "name a RUN or pass --all" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "x").exists()


def test_export_unknown_run_is_one_line(two_runs, tmp_path):
    _, out, _, _ = two_runs
    result = cli("export", "run_nope", "--to", str(tmp_path / "y"), "--out", out)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "run 'run_nope' not found" in result.stderr
