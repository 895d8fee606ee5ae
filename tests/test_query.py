import json

import pytest

from ironbench.errors import QueryError, RunNotFound, StoreError
from ironbench.query import format_result, resolve_query, run_query, run_sql
from ironbench.runner import start_run
from tests.conftest import make_suite

SHIPPED = ["failure_breakdown", "success_by_case", "attempts_distribution", "duration_percentiles", "stability"]


@pytest.fixture
def two_runs(paths, script):
    script({"a": ["success", "generation", "generation", "generation"], "b": ["validation"]})
    first = start_run(make_suite({"a": 10, "b": 10}), paths)
    script({"a": ["success"], "b": ["repair"]})
    second = start_run(make_suite({"a": 10, "b": 10}), paths)
    return paths, first, second


def test_failure_breakdown_across_runs_and_for_one(two_runs):
    paths, first, second = two_runs
    everything = run_query(paths.store_path, "failure_breakdown.sql")
    rows = {(r[1], r[2]): r[3] for r in everything.rows}
    assert rows == {("a", "generation"): 3, ("b", "validation"): 3, ("b", "repair"): 3}
    only_second = run_query(paths.store_path, "failure_breakdown", run_id=second)
    assert {(r[1], r[2]): r[3] for r in only_second.rows} == {("b", "repair"): 3}


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_query_runs_for_all_and_one_run(two_runs, name):
    paths, first, _ = two_runs
    assert run_query(paths.store_path, name).rows
    assert run_query(paths.store_path, name, run_id=first).rows


def test_success_by_case_reports_wilson_bounds(two_runs):
    paths, first, _ = two_runs
    result = run_query(paths.store_path, "success_by_case", run_id=first)
    row = dict(zip(result.columns, result.rows[0]))
    assert (row["case_id"], row["runs"], row["successes"]) == ("a", 4, 1)
    assert row["wilson_low"] == pytest.approx(0.046, abs=1e-3) and row["wilson_high"] == pytest.approx(0.699, abs=1e-3)


def test_queries_are_read_only(two_runs):
    paths, *_ = two_runs
    with pytest.raises(QueryError):
        run_sql(paths.store_path, "DELETE FROM store.invocations")
    with pytest.raises(QueryError):
        run_sql(paths.store_path, "INSERT INTO store.runs VALUES ('x','x','x','x','x',NULL,'x','x')")


def test_errors_are_one_line(two_runs, tmp_path):
    paths, *_ = two_runs
    bad = tmp_path / "bad.sql"
    bad.write_text("SELECT nope FROM invocations")
    with pytest.raises(QueryError, match=r"bad.sql: Binder Error"):
        run_query(paths.store_path, str(bad))
    with pytest.raises(QueryError, match="not found"):
        resolve_query("no_such_query")
    with pytest.raises(RunNotFound):
        run_query(paths.store_path, "stability", run_id="run_missing")
    with pytest.raises(StoreError, match="no store here"):
        run_query(tmp_path / "absent.db", "stability")


def test_formats(two_runs):
    paths, first, _ = two_runs
    result = run_query(paths.store_path, "stability", run_id=first)
    as_json = json.loads(format_result(result, "json"))
    assert {r["case_id"] for r in as_json} == {"a", "b"}
    csv_lines = format_result(result, "csv").splitlines()
    assert csv_lines[0].startswith("run_id,suite_id,case_id") and len(csv_lines) == 3
    table = format_result(result, "table")
    assert "(2 rows)" in table


def test_inline_sql(two_runs):
    paths, first, _ = two_runs
    result = run_query(paths.store_path, "SELECT count(*) AS n FROM invocations", run_id=first)
    assert result.columns == ["n"] and result.rows == [(7,)]


def test_an_outdated_store_asks_for_db_upgrade(tmp_path):
    from tests.conftest import store_at_revision

    path = store_at_revision(tmp_path / "old.db", "0001_initial")
    with pytest.raises(StoreError, match="run `ironbench db upgrade`"):
        run_query(path, "failure_breakdown")
