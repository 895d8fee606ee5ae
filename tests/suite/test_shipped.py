"""Shipped suites by name, from any directory (a path wins), and `ironbench init`: the example
suites, their schema and the rules example written into a folder of the user's."""

import json
import shlex
import sqlite3
import sys

import pytest
import yaml

from ironbench.core.errors import SuiteError
from ironbench.core.shipped import shipped
from ironbench.suite.models import load_suite
from ironbench.suite.shipped import EXAMPLE_FILES, SCHEMA_FILE, find_suite, init_folder, shipped_suites
from tests.conftest import REPO, cli

SCHEMA_LINE = "# yaml-language-server: $schema=./suite.schema.json"


def test_the_shipped_suites_are_the_repositorys_suites():
    assert sorted(shipped_suites()) == sorted(p.stem for p in (REPO / "suites").glob("*.yaml"))
    assert {"demo", "baseline", "adversarial", "stress", "gauntlet"} <= set(shipped_suites())


@pytest.mark.parametrize("name", ["demo", "demo.yaml", "baseline", "gauntlet.yaml"])
def test_a_shipped_suite_is_found_by_name_from_any_directory(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = find_suite(name)
    assert found == shipped("suites") / f"{name.removesuffix('.yaml')}.yaml"
    assert load_suite(found).suite_id


def test_a_path_wins_over_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo").write_text("suite_id: mine\nmode: baseline\ncases: [{id: a, instruction: Write a haiku.}]\n")
    assert find_suite("demo") == tmp_path.joinpath("demo").relative_to(tmp_path)
    assert load_suite(find_suite("demo")).suite_id == "mine"


@pytest.mark.parametrize("name", ["nonesuch", "elsewhere/demo.yaml"])
def test_an_unknown_suite_names_what_would_have_been_found(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SuiteError, match=r"no such suite file, and no shipped suite of that name \(.*demo.*\)"):
        find_suite(name)


@pytest.mark.slow
def test_run_and_variants_take_a_shipped_suite_by_name_in_an_empty_directory(tmp_path):
    preview = cli("variants", "stress", cwd=tmp_path, check=True).stdout
    assert "level_0" in preview or "level 0" in preview
    run_id = cli("run", "baseline", "--target", "fixture", "-q", "--no-report", cwd=tmp_path, check=True).stdout.strip()
    with sqlite3.connect(tmp_path / "outputs" / "ironbench.db") as conn:
        cases = {r[0] for r in conn.execute("SELECT case_id FROM invocations WHERE run_id = ?", (run_id,))}
    assert cases == {"compile_email_regex", "convert_list_to_dict", "simple_cache"}
    metadata = json.loads((tmp_path / "outputs" / run_id / "metadata.json").read_text())
    assert metadata["suite"] == "baseline_calibration"
    assert metadata["suite_path"] == str(shipped("suites") / "baseline.yaml")


def test_run_help_names_every_shipped_suite():
    text = cli("run", "--help", env={"COLUMNS": "200"}, check=True).stdout
    for name in shipped_suites():
        assert name in text


def test_init_writes_the_suites_their_schema_and_the_rules_example(tmp_path):
    result = cli("init", str(tmp_path / "bench"), check=True)
    folder = tmp_path / "bench"
    names = {p.name for p in folder.iterdir()}
    assert names == {*(f"{n}.yaml" for n in shipped_suites()), SCHEMA_FILE, *EXAMPLE_FILES}
    for name in shipped_suites():
        text = (folder / f"{name}.yaml").read_text(encoding="utf-8")
        assert text.splitlines()[0] == SCHEMA_LINE  # the editor finds the schema beside the suite
        assert load_suite(folder / f"{name}.yaml").suite_id
    assert (folder / SCHEMA_FILE).read_text(encoding="utf-8") == cli("schema", check=True).stdout
    assert f"ironbench run {folder / 'baseline.yaml'} --target fixture" in result.stdout


@pytest.mark.slow
def test_the_suites_init_wrote_run_with_the_rules_example(tmp_path):
    init_folder(tmp_path / "bench")
    suite = yaml.safe_load((tmp_path / "bench" / "baseline.yaml").read_text())
    suite["cases"] = suite["cases"][:1]
    (tmp_path / "bench" / "one.yaml").write_text(yaml.safe_dump(suite))
    agent = f"{shlex.join([sys.executable, str(tmp_path / 'bench' / 'toy_agent.py')])} {{instruction}}"
    rules = str(tmp_path / "bench" / "agent_rules.yaml")
    args = ["run", "bench/one.yaml", "--target", agent, "--rules", rules, "-q", "--no-report"]
    run_id = cli(*args, cwd=tmp_path, env={"TOY_AGENT_OUTCOMES": '["fixed"]'}, check=True).stdout.strip()
    with sqlite3.connect(tmp_path / "outputs" / "ironbench.db") as conn:
        rows = conn.execute("SELECT success, attempts FROM invocations WHERE run_id = ?", (run_id,)).fetchall()
    assert rows and all(row == (1, 2) for row in rows)  # read by the example's rules: one fix, then pass


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "stress.yaml").write_text("mine\n")
    result = cli("init", str(folder))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "stress.yaml: already exists" in result.stderr
    assert [p.name for p in folder.iterdir()] == ["stress.yaml"]
    assert (folder / "stress.yaml").read_text() == "mine\n"
    cli("init", str(folder), "--force", check=True)
    assert (folder / "stress.yaml").read_text(encoding="utf-8").startswith(SCHEMA_LINE)


def test_init_into_a_file_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("x")
    result = cli("init", str(tmp_path / "file"))
    assert result.returncode == 2 and "exists and is not a folder" in result.stderr


def test_init_defaults_to_the_current_directory(tmp_path):
    cli("init", cwd=tmp_path, check=True)
    assert (tmp_path / "demo.yaml").is_file() and (tmp_path / SCHEMA_FILE).is_file()
