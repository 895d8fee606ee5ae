"""The value sets declared once in core: outcome codes (Python and SQL agree), decision kinds
(as the `decision_kinds` view has them) and labels."""

import itertools
from types import SimpleNamespace

import duckdb

from ironbench.analysis.query import vocabulary_views
from ironbench.core.kinds import DIFFERED, JUDGED, MATERIAL, decision_kind_rows
from ironbench.core.labels import case_label, group_of, group_path, group_path_sql, natural_key, track_of
from ironbench.core.outcome_codes import (
    BY_CODE,
    EVIDENCE_CODES,
    EXCLUDED_CODES,
    OUTCOME_CODE_SQL,
    OUTCOME_CODES,
    SUCCESS_CODES,
    outcome_code,
)

STAGES = (None, "generation", "validation", "repair", "timeout", "exit_3")


def test_the_sql_rule_gives_every_invocation_the_code_the_python_rule_gives():
    combinations = list(
        itertools.product((None, "boom"), (None, "Error connecting"), (False, True), STAGES, (False, True), (0, 2))
    )
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE invocations(harness_error VARCHAR, infra_error VARCHAR, timed_out BOOLEAN, "
        "failure_stage VARCHAR, success BOOLEAN, repairs_triggered INTEGER, k INTEGER)"
    )
    con.executemany(
        "INSERT INTO invocations VALUES (?, ?, ?, ?, ?, ?, ?)", [(*c, k) for k, c in enumerate(combinations)]
    )
    in_sql = [row[0] for row in con.execute(f"SELECT {OUTCOME_CODE_SQL} FROM invocations ORDER BY k").fetchall()]
    names = ("harness_error", "infra_error", "timed_out", "failure_stage", "success", "repairs_triggered")
    in_python = [outcome_code(SimpleNamespace(**dict(zip(names, c, strict=True)))) for c in combinations]
    assert in_sql == in_python
    assert set(in_python) == set(BY_CODE) - {"X"}  # every code but the superseded one comes from the fields


def test_codes_are_evidence_or_excluded_and_each_is_named_once():
    assert len(BY_CODE) == len(OUTCOME_CODES)
    assert sorted(EVIDENCE_CODES + EXCLUDED_CODES) == sorted(BY_CODE)
    assert SUCCESS_CODES == "Ss" and EXCLUDED_CODES == "HIX"


def test_decision_kinds_are_one_row_each_and_the_subsets_nest():
    rows = decision_kind_rows()
    assert len({r[0] for r in rows}) == len(rows)
    assert {r[0] for r in rows if r[2]} == set(JUDGED) and {r[0] for r in rows if r[3]} == set(MATERIAL)
    assert set(MATERIAL) <= set(DIFFERED) <= set(JUDGED)
    con = duckdb.connect()
    for name, select in vocabulary_views().items():
        con.execute(f"CREATE VIEW {name} AS {select}")
    assert con.execute("SELECT count(*) FROM decision_kinds WHERE judged").fetchone()[0] == len(JUDGED)
    assert con.execute("SELECT name FROM outcome_codes WHERE code = 's'").fetchone()[0] == "success after repair"


def test_labels_and_group_paths():
    assert case_label("cache", "base") == case_label("cache", None) == "cache"
    assert case_label("cache", "whitespace_noise/variant_0001") == "cache/whitespace_noise/variant_0001"
    assert group_path("", "cache") == "baseline/cache" and group_path("stress/cache/level_1", "cache").endswith("_1")
    assert group_of("adversarial/cache/g/variant_0001/run_002") == "adversarial/cache/g/variant_0001"
    assert track_of("stress/cache/level_1") == "stress/cache"
    con = duckdb.connect()
    found = con.execute(
        f"SELECT {group_path_sql('t.')} FROM (VALUES ('', 'a'), ('adversarial/a/baseline', 'a')) t(group_path, case_id)"
    ).fetchall()
    assert found == [("baseline/a",), ("adversarial/a/baseline",)]


def test_names_sort_as_people_count_them():
    names = ["humaneval_102", "humaneval_12", "humaneval_2", "a_1", "a01", "a1", "a", "b", "x²1", "²"]
    assert sorted(names, key=natural_key) == [
        "a",
        "a01",  # the same number as a1: then as written, one order whichever comes first
        "a1",
        "a_1",
        "b",
        "humaneval_2",
        "humaneval_12",
        "humaneval_102",
        "x²1",  # a digit that is not 0-9 is text
        "²",
    ]
    assert sorted(["a1", "a01"], key=natural_key) == sorted(["a01", "a1"], key=natural_key)
    assert natural_key(None) < natural_key("base")  # no variant first
