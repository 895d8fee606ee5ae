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


UNCARRIED = {
    # what the check itself passes and the boundary cannot carry: the check's fault
    "deep_argument": (
        "def f(x):\n    return 1\n",
        "    x = []\n    for _ in range(300):\n        x = [x]\n    assert candidate(x) == 1",
        "harness_fault",
    ),
    "large_argument": (
        "def f(x):\n    return 1\n",
        "    assert candidate('a' * (65 * 1024 * 1024)) == 1",
        "harness_fault",
    ),
    # too deep by the brick's making (its answer, passed back): the brick's
    "deep_by_the_brick": (
        (
            "def f(x):\n    if x is None:\n        y = []\n        for _ in range(190):\n            y = [y]\n        return y\n"
            "    return 1\n"
        ),
        "    made = candidate(None)\n    for _ in range(20):\n        made = [made]\n    assert candidate(made) == 1",
        "wrong",
    ),
}


def test_what_the_check_passes_and_cannot_cross_is_the_checks_fault_never_the_bricks_choice(tmp_path):
    import yaml

    cases = [
        {"id": case, "instruction": case, "check": {"python": f"def check(candidate):\n{body}\n", "entry_point": "f"}}
        for case, (_, body, _) in UNCARRIED.items()
    ]
    path = tmp_path / "suite.yaml"
    body = {"suite_id": "uncarried", "mode": "baseline", "timeout_seconds": 60, "stop": {"rule": "fixed", "runs": 1}}
    path.write_text(yaml.safe_dump({**body, "cases": cases}, sort_keys=False))
    bricks = {case: {"values.py": brick} for case, (brick, _, _) in UNCARRIED.items()}
    out, _ = run(tmp_path, path, target(tmp_path, bricks))
    found = verdicts(out)
    assert {case: found[case][0] for case in UNCARRIED} == {case: v for case, (_, _, v) in UNCARRIED.items()}, found
