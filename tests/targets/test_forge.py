"""forge, the built-in reference target: its contract, with a scripted model in-process
and once for real on the embedded model."""

import json
import subprocess
import sys

import pytest

from ironbench.core.outcome import parse_outcome
from ironbench.targets import forge

ADD = {
    "filename": "add.py",
    "code": "def add(a, b):\n    return a + b\n",
    "test": "from add import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
BROKEN = {**ADD, "code": "def add(a, b):\n    return a - b\n"}


def test_parse_candidate_finds_the_json_object():
    assert forge.parse_candidate("Sure:\n" + json.dumps(ADD) + "\nDone") == ADD
    assert forge.parse_candidate('{"filename": "x.py"} then ' + json.dumps(ADD)) == ADD
    assert forge.parse_candidate("def add(a, b): return a + b") is None
    assert forge.parse_candidate('{"filename": "x.py", "code": "", "test": "t"}') is None


def test_braces_inside_strings_do_not_hide_the_candidate():
    tricky = {**ADD, "code": "def add(a, b):\n    return a + b  # '}' closes nothing\n"}
    assert forge.parse_candidate("reply: " + json.dumps(tricky) + " }") == tricky


def test_a_repair_sees_the_error_lines_and_the_summary_only():
    output = (
        "....F\n" + "noise line\n" * 500 + "E   assert 3 == 4\nE    +  where 3 = add(1, 2)\n"
        "FAILED test_add.py::test_add\n1 failed in 0.01s\n"
    )
    summary = forge.failure_summary(output)
    assert "noise" not in summary and "E   assert 3 == 4" in summary and summary.endswith("1 failed in 0.01s")
    assert len(summary) <= forge.FAILURE_CHARS
    # the repair is a further turn of the same conversation, worked examples included
    messages = forge.repair_messages("Add two numbers.", BROKEN, output)
    assert messages[: len(forge.generate_messages("Add two numbers."))] == forge.generate_messages("Add two numbers.")
    assert messages[-2] == ("assistant", json.dumps(BROKEN)) and summary in messages[-1][1]


def test_module_names_are_importable():
    assert forge.module_name("my-module.py") == "my_module"
    assert forge.module_name("1st.py") == "m_1st"
    assert forge.module_name("../../etc/passwd") == "passwd"


REAL_MODEL = forge.Model


@pytest.fixture
def run_forge(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRONCLAD_DEBUG", "1")

    def run(answers: list[str], repair_enabled: bool = True, calls: list | None = None):
        monkeypatch.setenv("IRONBENCH_REPAIR_ENABLED", "1" if repair_enabled else "0")
        replies = iter(answers)

        def model(messages, repair=False):
            (calls if calls is not None else []).append(repair)
            return next(replies)

        monkeypatch.setattr(forge, "Model", lambda: model)
        code = forge.main(["Write a Python function that adds two numbers."])
        return code, capsys.readouterr().out

    return run


def test_success_saves_the_brick(run_forge, tmp_path):
    code, out = run_forge([json.dumps(ADD)])
    assert code == 0 and parse_outcome(code, out).signature() == (True, None, 1, 0)
    assert (tmp_path / "verified_bricks" / "add.py").read_text() == ADD["code"]
    assert (tmp_path / "build" / ".ironclad_debug" / "generate.txt").exists()
    assert (tmp_path / "build" / ".ironclad_debug" / "validate_add_attempt1.txt").exists()


def test_repair_then_success(run_forge):
    code, out = run_forge([json.dumps(BROKEN), json.dumps(ADD)])
    assert "[+] Verified after 1 repairs." in out
    assert parse_outcome(code, out).signature() == (True, None, 2, 1)


def test_invalid_generation_is_incinerated(run_forge, tmp_path):
    code, out = run_forge(["def add(a, b): return a + b"])
    assert parse_outcome(code, out).signature() == (False, "generation", 0, 0)
    assert "not valid JSON" in (tmp_path / "build" / ".ironclad_debug" / "generate.txt").read_text()


def test_invalid_repair_aborts(run_forge):
    code, out = run_forge([json.dumps(BROKEN), "no json here"])
    assert parse_outcome(code, out).signature() == (False, "repair", 1, 1)  # no validation after the abort


def test_three_failed_repairs_are_final(run_forge):
    calls = []
    code, out = run_forge([json.dumps(BROKEN)] * 4, calls=calls)
    assert parse_outcome(code, out).signature() == (False, "validation", 4, 3)
    assert calls == [False, True, True, True]  # only repairs are cut at a blank-line loop


def test_a_repair_looping_on_blank_lines_is_cut_and_aborts(run_forge):
    # the embedded model stops where the stop text appears: what forge gets is not JSON
    looping = json.dumps({**BROKEN, "test": "from add import add" + "\n" * 100})
    cut = looping[: looping.index(forge.LOOP_STOP)]
    code, out = run_forge([json.dumps(BROKEN), cut])
    assert "[!] Repair produced invalid JSON. Aborting." in out
    assert parse_outcome(code, out).signature() == (False, "repair", 1, 1)
    model = REAL_MODEL()  # the real options on the embedded model (nothing generated here)
    assert model.repair_options == {"stop": "\\n\\n\\n\\n"} and "stop" not in model.options


def test_no_repair_when_repair_is_disabled(run_forge):
    code, out = run_forge([json.dumps(BROKEN)], repair_enabled=False)
    assert parse_outcome(code, out).signature() == (False, "validation", 1, 0)


@pytest.mark.slow
def test_forge_on_the_embedded_model_reaches_validation(tmp_path):
    # Constrained decoding makes every reply a parseable candidate: the run gets past
    # generation to pytest, whatever the 135M model writes. (No repair: one call.)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ironbench.targets.forge",
            "Write a Python function that returns the square of a number.",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **__import__("os").environ,
            "IRONCLAD_DEBUG": "1",
            "IRONBENCH_FORGE_SEED": "3",
            "IRONBENCH_REPAIR_ENABLED": "0",
        },
        check=False,
    )
    outcome = parse_outcome(result.returncode, result.stdout)
    assert outcome.failure_stage in (None, "validation"), result.stdout + result.stderr
    assert outcome.attempts == 1
    assert "Model output was valid JSON" in (tmp_path / "build" / ".ironclad_debug" / "generate.txt").read_text()
    assert list((tmp_path / "build" / ".ironclad_debug").glob("validate_*_attempt1.txt"))
    assert outcome.success == (tmp_path / "verified_bricks").is_dir()
