"""What a brick says in its own words reaches the store as text it can hold: an exception message
with a lone surrogate is the brick's `wrong`, never a run that cannot be projected."""

import sqlite3

import pytest

from tests.conftest import cli
from tests.targets.test_planted import CHECK, run, suite, target, verdicts

SURROGATE = 'def add(a, b):\n    raise ValueError("\\udcff" + "\\ud800 lone")\n'
PYTEST = {"pytest": "test_add.py"}


@pytest.mark.parametrize("kind", ["python", "pytest"])
def test_a_lone_surrogate_in_a_bricks_message_is_its_wrong_and_the_run_completes(tmp_path, kind):
    check = CHECK
    if kind == "pytest":
        (tmp_path / "test_add.py").write_text("from add import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
        check = {"pytest": str(tmp_path / "test_add.py")}
    bricks = {"surrogate": {"add.py": SURROGATE}}
    out, run_id = run(tmp_path, suite(tmp_path, ["surrogate"], check), target(tmp_path, bricks))
    verdict, detail = verdicts(out)["surrogate"]
    assert verdict == "wrong", detail
    assert "\\udcff" in detail or kind == "pytest", detail
    with sqlite3.connect(out / "ironbench.db") as conn:
        assert conn.execute("SELECT status FROM runs").fetchone() == ("finished",)
    resumed = cli("resume", run_id, "--out", str(out), "-q", "--no-report")
    assert resumed.returncode == 0, resumed.stderr
    assert "Traceback" not in resumed.stderr


def test_the_read_model_escapes_a_lone_surrogate_it_is_given(tmp_path):
    """(The projection holds whatever an event carries: an event recorded before the boundary
    escaped its texts still projects.)"""
    from ironbench.projections.readmodel import _put

    with sqlite3.connect(tmp_path / "t.db") as conn:
        conn.execute("CREATE TABLE t (a TEXT, b INTEGER)")
        _put(conn, "INSERT INTO t VALUES (?, ?)", ("x\udcffy", 1))
        assert conn.execute("SELECT a, b FROM t").fetchall() == [("x\\udcffy", 1)]
