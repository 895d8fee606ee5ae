import json

import pytest

from ironbench.analysis.query import format_result, resolve_query, run_query, run_sql
from ironbench.core.errors import QueryError, RunNotFound, StoreError
from ironbench.run.runner import start_run
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
    paths, _first, second = two_runs
    everything = run_query(paths.store_path, "failure_breakdown.sql")
    rows = {(r[1], r[2]): r[3] for r in everything.rows}
    assert rows == {("a", "generation"): 3, ("b", "validation"): 3, ("b", "repair"): 3}
    only_second = run_query(paths.store_path, "failure_breakdown", run_id=second)
    assert {(r[1], r[2]): r[3] for r in only_second.rows} == {("b", "repair"): 3}


@pytest.mark.slow
@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_query_runs_for_all_and_one_run(two_runs, name):
    paths, first, _ = two_runs
    assert run_query(paths.store_path, name).rows
    assert run_query(paths.store_path, name, run_id=first).rows


def test_success_by_case_reports_wilson_bounds(two_runs):
    paths, first, _ = two_runs
    result = run_query(paths.store_path, "success_by_case", run_id=first)
    row = dict(zip(result.columns, result.rows[0], strict=True))
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


# -- read-only, enforced (issue 10) --------------------------------------------------------


@pytest.fixture
def one_run(paths, script):
    script({"a": ["success"]})
    return paths, start_run(make_suite({"a": 3}), paths)


def _rows(store_path, table: str) -> int:
    import sqlite3

    with sqlite3.connect(store_path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.mark.slow
@pytest.mark.parametrize(
    "sql, refused",
    [
        ("SELECT 1; COPY (SELECT * FROM invocations) TO '{dir}/leak.csv'", "statement 2 is COPY"),
        ("ATTACH '{store}' AS rw (TYPE sqlite); DELETE FROM rw.invocations", "statement 1 is ATTACH"),
        ("INSTALL httpfs", "statement 1 is LOAD"),
        ("LOAD httpfs", "statement 1 is LOAD"),
        ("SET enable_external_access = true; SELECT 1", "statement 1 is SET"),
        ("EXPLAIN ANALYZE COPY (SELECT 1) TO '{dir}/leak.csv'", "statement 1 is EXPLAIN"),
        ("SELECT * FROM sqlite_scan('{store}', 'events')", "statement 1 uses function sqlite_scan\\(\\)"),
        ("SELECT * FROM sqlite_attach('{store}')", "statement 1 uses function sqlite_attach\\(\\)"),
        ("SELECT 1; SELECT * FROM query('SELECT 1')", "statement 2 uses function query\\(\\)"),
        ("CREATE TABLE store.x AS SELECT 1", "statement 1 is CREATE"),
    ],
)
def test_only_read_only_statements_run(one_run, tmp_path, sql, refused):
    paths, _ = one_run
    before = _rows(paths.store_path, "invocations")
    with pytest.raises(QueryError, match=refused):
        run_sql(paths.store_path, sql.format(dir=tmp_path, store=paths.store_path))
    assert not (tmp_path / "leak.csv").exists()
    assert _rows(paths.store_path, "invocations") == before


def test_files_and_network_are_out_of_reach_and_the_configuration_is_locked(one_run, tmp_path):
    paths, _ = one_run
    secret = tmp_path / "private.csv"
    secret.write_text("a\n1\n")
    for sql in (
        f"SELECT * FROM read_csv('{secret}')",
        f"SELECT * FROM '{secret}'",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
    ):
        with pytest.raises(QueryError, match="disabled by configuration"):
            run_sql(paths.store_path, sql)
    assert run_sql(paths.store_path, "SELECT current_setting('lock_configuration')").rows == [(True,)]


def test_a_query_file_that_writes_is_refused_through_the_cli(one_run, tmp_path):
    from tests.conftest import cli

    paths, _ = one_run
    sql = tmp_path / "sneaky.sql"
    sql.write_text(f"SELECT count(*) FROM invocations;\nCOPY invocations TO '{tmp_path}/out.csv';\n")
    result = cli("query", str(sql), "--store", str(paths.store_path))
    assert result.returncode == 2 and "statement 2 is COPY" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "out.csv").exists()


def test_read_only_select_family_still_answers(one_run):
    paths, _ = one_run
    for sql in (
        "DESCRIBE invocations",
        "SUMMARIZE runs",
        "SHOW TABLES",
        "FROM runs",
        "VALUES (1)",
        "WITH x AS (SELECT 1 AS a) SELECT a FROM x; SELECT count(*) FROM invocations",
        "PRAGMA version",
    ):
        assert run_sql(paths.store_path, sql).rows
    assert run_sql(paths.store_path, "SELECT 1; SELECT count(*) FROM invocations").rows == [(3,)]


def test_table_cells_cannot_drive_the_terminal_but_json_and_csv_keep_the_data(one_run):
    from tests.conftest import cli

    paths, _ = one_run
    sql = "SELECT chr(27) || ']0;pwned' || chr(7) || chr(27) || '[2J' AS x, 'a' || chr(10) || 'b' AS y"
    table = cli("query", sql, "--store", str(paths.store_path))
    assert table.returncode == 0 and "\x1b" not in table.stdout and "\x07" not in table.stdout
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in table.stdout and "a\\nb" in table.stdout
    as_json = cli("query", sql, "--store", str(paths.store_path), "--format", "json")
    assert json.loads(as_json.stdout) == [{"x": "\x1b]0;pwned\x07\x1b[2J", "y": "a\nb"}]


def test_table_numbers_read_as_people_write_them_and_json_keeps_them_exact(one_run):
    paths, _ = one_run
    sql = "SELECT 20770.0::DOUBLE AS ms, 6812.4::DOUBLE AS ms2, 0.5273::DOUBLE AS rate, -0.0001::DOUBLE AS tiny"
    table = format_result(run_sql(paths.store_path, sql), "table").splitlines()
    assert table[2].split() == ["20770", "6812", "0.5273", "-0.0001"]
    assert "e+" not in "\n".join(table)
    assert json.loads(format_result(run_sql(paths.store_path, sql), "json"))[0]["ms"] == 20770.0


@pytest.mark.slow
def test_a_query_waits_for_a_store_that_is_being_created(tmp_path):
    import subprocess
    import sys
    import time

    from tests.conftest import REPO, cli

    store = tmp_path / "new.db"
    store.touch()  # what a run that has just started creating the store leaves for a moment
    query = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "query", "SELECT count(*) AS n FROM runs", "--store", str(store)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)
    assert cli("db", "upgrade", "--store", str(store)).returncode == 0
    out, err = query.communicate(timeout=60)
    assert query.returncode == 0, err
    assert "db upgrade" not in err and out.splitlines()[-1] == "(1 row)"
