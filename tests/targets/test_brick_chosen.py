"""A brick cannot choose `harness_fault` (which is in no rate) for its own check, through the
front door: a name as long as a file name can be in bytes, a star-exported test runner's hook."""

import pytest

from tests.targets.test_planted import HONEST, run, suite, target, verdicts

LONG = "é" * 126  # 252 bytes: with .py the longest name a file may have
WRONG_CALC = "class Calc:\n    def add(self, a, b):\n        return a - b\n"
HOOKS = {
    "setup_module": "def setup_module(module):\n    pass\n",
    "teardown_function": "def setup_function(function):\n    pass\n\ndef teardown_function(function):\n    pass\n",
    "unittest_names": "def setUpModule():\n    raise SystemExit(3)\n",
}


def test_a_brick_named_as_long_as_a_name_can_be_is_checked(tmp_path):
    bricks = {"long": {f"{LONG}.py": HONEST}}
    out, _ = run(tmp_path, suite(tmp_path, ["long"]), target(tmp_path, bricks))
    assert verdicts(out)["long"][0] == "correct", verdicts(out)


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_a_star_exported_test_runner_hook_is_never_the_checks_fault(tmp_path, hook):
    (tmp_path / "test_calc.py").write_text(
        "from calc import *  # noqa\n\n\ndef test_add():\n    assert Calc().add(2, 3) == 5\n"
    )
    bricks = {hook: {"calc.py": HOOKS[hook] + WRONG_CALC}}
    check = {"pytest": str(tmp_path / "test_calc.py")}
    out, _ = run(tmp_path, suite(tmp_path, [hook], check), target(tmp_path, bricks))
    verdict, detail = verdicts(out)[hook]
    assert verdict == "wrong", detail
    assert "assert -1 == 5" in detail


COMMAND = (
    'python -c "import subprocess, sys; r = subprocess.run([sys.executable, sys.argv[1]], capture_output=True, '
    "text=True); sys.exit(0 if r.stdout.strip() == '5' else 1)\" {brick}"
)


def test_a_command_checks_checker_never_imports_the_brick(tmp_path):
    """A brick saved as subprocess.py is not what the checker's `import subprocess` gets (it runs
    from a folder of the judge's, the brick's copy in a folder below): refused, tampered as the
    checker imports that name; an honest brick is correct."""
    bricks = {
        "shadow": {"subprocess.py": "import os\nos._exit(0)\n"},
        "honest": {"add.py": "print(2 + 3)\n"},
        "wrong": {"add.py": "print(4)\n"},
    }
    out, _ = run(tmp_path, suite(tmp_path, list(bricks), {"command": COMMAND}), target(tmp_path, bricks))
    found = verdicts(out)
    assert {case: verdict for case, (verdict, _) in found.items()} == {
        "honest": "correct",
        "shadow": "tampered",
        "wrong": "wrong",
    }, found
    assert "subprocess.py" in found["shadow"][1]
