"""Galleries of bricks that game their check, through the front door: a target saves each (or an
honest one), `ironbench run` checks it with a python, pytest or command check, and no forgery
is ever `correct`: `tampered` where the harness can tell, else `wrong`. Honest bricks stay
`correct`. The second gallery (issue 46) is of bricks that try to choose their verdict class:
the check's imports, its values, its loop, a harness fault of their own making; and of honest
value types (a dataclass, a named tuple, enums) that must be `correct`, never `tampered`."""

import shlex
import sqlite3
import sys
import time
from pathlib import Path

import pytest
import yaml

from ironbench.sandbox import machine_fence
from ironbench.suite.humaneval import check_source, problems
from tests.conftest import FENCE_LEVEL, cli
from tests.view.served import Served

FORGERY_TARGET = Path(__file__).resolve().parents[1] / "fixtures" / "forgery_target.py"
VERDICT_TARGET = Path(__file__).resolve().parents[1] / "fixtures" / "verdict_target.py"

ADD = {
    "python": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n",
    "entry_point": "add",
}
TESTS = {
    "calc": "from calc import Calc\n\n\ndef test_add():\n    assert Calc().add(2, 3) == 5\n\n\n"
    "def test_negative():\n    assert Calc().add(-1, 1) == 0\n",
    "calc_runners": "import unittest\n\nimport pytest\nfrom calc import Calc\n\n\ndef test_approx():\n"
    "    assert Calc().add(2, 3) == pytest.approx(5)\n\n\nclass TestCalc(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(Calc().add(2, 3), 5)\n",
    "calc_star": "from calc import *  # noqa: F403\n\n\ndef test_add():\n    assert Calc().add(2, 3) == 5  # noqa: F405\n",
    "shapes": """import pytest
from shapes import DIGITS, Circle, ShapeError, Stack, digits


def test_a_method_and_approx():
    assert Circle(2).area() == pytest.approx(12.566, rel=1e-3)


def test_a_class_through_its_methods():
    stack = Stack()
    stack.push(1)
    stack.push(2)
    assert stack.pop() == 2
    assert len(stack) == 1


def test_the_bricks_own_exception():
    with pytest.raises(ShapeError, match="negative radius"):
        Circle(-1)
    with pytest.raises(ValueError):
        Circle(-2)


def test_a_builtin_exception():
    with pytest.raises(IndexError, match="empty"):
        Stack().pop()


@pytest.mark.parametrize(("radius", "squared"), [(1, 1), (3, 9)])
def test_parametrized(radius, squared):
    assert Circle(radius).radius ** 2 == squared


def test_compiled_regex_objects():
    match = digits("abc123def")
    assert match.group(1) == "123" and match.span() == (3, 6)
    assert DIGITS.findall("a1b22") == ["1", "22"]


def test_tmp_path(tmp_path):
    Circle(1).save(tmp_path / "circle.txt")
    assert (tmp_path / "circle.txt").read_text() == "circle 1"


def test_isinstance_and_repr():
    circle = Circle(4)
    assert isinstance(circle, Circle) and not isinstance(Stack(), Circle)
    assert repr(circle) == "Circle(4)"
""",
    "statistics": "import statistics as real\n\nfrom statistics import mean\n\n\n"
    "def test_the_bricks_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n",
}
COMMAND = f"{shlex.quote(sys.executable)} -c \"import runpy, sys; assert runpy.run_path(sys.argv[1])['add'](2, 3) == 5\" {{brick}}"

# case: (its check, the verdict it must get)
# A brick's host fences itself: where the kernel scopes signals (Landlock ABI 6), its kill of its
# parent is refused and raises in the brick (wrong); elsewhere the kill reaches the host server,
# which the judge sees end while the brick ran (tampered).
SIGNAL_VERDICT = "wrong" if FENCE_LEVEL != "none" and machine_fence().landlock_abi >= 6 else "tampered"
FORGERIES = {
    "mark_from_cmdline": (ADD, "tampered"),
    "printed_verdicts": (ADD, "tampered"),
    "always_equal": (ADD, "tampered"),
    "always_equal_method": ({"pytest": "calc"}, "tampered"),
    # its own __bool__ is not consulted (a brick's object is true here): wrong, with that note; an
    # object whose truth is its own is no evidence of tampering (an honest Result type has one)
    "bool_override": (
        {
            "python": "def check(candidate):\n    assert candidate(4)\n    assert not candidate(3)\n",
            "entry_point": "is_even",
        },
        "wrong",
    ),
    "hash_override": (
        {"python": "def check(candidate):\n    assert candidate(2, 3) in {5}\n", "entry_point": "add"},
        "wrong",
    ),
    "shadowed_builtins": (
        {
            "python": "def check(candidate):\n    result = candidate(2, 3)\n    assert isinstance(result, int)\n"
            "    assert abs(result - 5) < 1e-9 and len([result]) == 1\n",
            "entry_point": "add",
        },
        "wrong",
    ),
    "exit_at_import": ({"pytest": "calc"}, "tampered"),
    "exit_in_call": (ADD, "tampered"),
    "sys_exit": (ADD, "wrong"),
    "patch_runners": ({"pytest": "calc_runners"}, "wrong"),
    "conftest_beside": ({"pytest": "calc"}, "tampered"),
    "plugin_beside": ({"pytest": "calc"}, "tampered"),
    "pth_and_sitecustomize_beside": (ADD, "tampered"),
    "signal_the_parent": (ADD, SIGNAL_VERDICT),
    "patch_operator_eq": (
        {
            "python": "import operator\n\ndef check(candidate):\n    assert operator.eq(candidate(2, 3), 5)\n",
            "entry_point": "add",
        },
        "wrong",
    ),
    "skip_from_the_brick": ({"pytest": "calc"}, "tampered"),
    "read_the_check": (ADD, "tampered"),
    "exports_pytest_names": ({"pytest": "calc_star"}, "tampered"),
    # HumanEval/38's check as a run recorded it before checks carried their prompt's helpers:
    # it still encodes with the suite's encode_cyclic, not the one the brick redefines
    "redefined_helper": ({"python": problems()[38]["test"], "entry_point": "decode_cyclic"}, "wrong"),
    "command_check_with_pth": ({"command": COMMAND}, "tampered"),
    # a brick saved as statistics.py for a check that imports `statistics`: the check's imports
    # are the judge's own, so the check would test the standard module in the brick's place
    "named_after_its_checks_module": ({"pytest": "statistics"}, "tampered"),
}
HONEST = {
    "honest_function": ADD,
    "honest_class": {"pytest": "shapes"},
    "honest_containers": {
        "python": "def check(candidate):\n    result = candidate(['ab', 'c', 'de'])\n"
        "    assert result == {'by_length': {2: ['ab', 'de'], 1: ['c']}, 'lengths': [1, 2], 'first': ('ab', 'de'),"
        " 'ratio': 1 / 3, 'raw': b'\\x00', 'letters': frozenset('abcde')}\n"
        "    assert type(result['first']) is tuple and candidate([])['first'] is None\n",
        "entry_point": "group",
    },
    "honest_in_place": {
        "python": "def check(candidate):\n    xs, index = [3, 1, 2], {}\n    assert candidate(xs, index) is None\n"
        "    assert xs == [1, 2, 3] and index == {1: 0, 2: 1, 3: 2}\n",
        "entry_point": "sort_in_place",
    },
    "honest_generator": {
        "python": "def check(candidate):\n    assert list(candidate(3)) == [0, 1, 2]\n"
        "    endless = candidate(10 ** 12)\n    assert next(endless) == 0 and next(endless) == 1\n",
        "entry_point": "count_up",
    },
}


def gallery_suite(folder: Path) -> Path:
    for name, text in TESTS.items():
        (folder / name).mkdir()
        (folder / name / f"test_{name}.py").write_text(text)
    checks = {**{case: check for case, (check, _) in FORGERIES.items()}, **HONEST}
    cases = [
        {"id": case, "instruction": f"Write the brick {case}.", "check": dict(check)} for case, check in checks.items()
    ]
    suite = {
        "suite_id": "forgeries",
        "mode": "baseline",
        "timeout_seconds": 60,
        "stop": {"rule": "fixed", "runs": 1},
        "cases": cases,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("gallery")
    return run_gallery(gallery_suite(folder), FORGERY_TARGET)


def run_gallery(suite: Path, target: Path) -> tuple[Path, str]:
    """`ironbench run` of a gallery's suite with its target: the output folder and the run's id."""
    out = suite.parent / "out"
    argv = f"{shlex.join([sys.executable, str(target)])} {{instruction}}"
    result = cli("run", str(suite), "--target", argv, "--out", str(out), "-q", "--no-report", "--jobs", "2")
    assert result.returncode in (0, 1), result.stderr
    return out, result.stdout.strip()


def verdicts(out: Path) -> dict[str, tuple[str, str]]:
    with sqlite3.connect(out / "ironbench.db") as conn:
        rows = conn.execute("SELECT case_id, verdict, detail FROM checks").fetchall()
    return {case: (verdict, detail) for case, verdict, detail in rows}


@pytest.mark.slow
def test_no_forgery_is_correct_and_each_gets_its_verdict(gallery):
    out, _ = gallery
    found = verdicts(out)
    assert {case: found[case][0] for case in FORGERIES} == {case: v for case, (_, v) in FORGERIES.items()}
    for case, (_, verdict) in FORGERIES.items():
        if verdict == "tampered":
            assert found[case][1], f"{case}: tampered without its evidence"


@pytest.mark.slow
@pytest.mark.parametrize("which", ["gallery", "choosers"])
def test_checking_the_run_again_gives_the_same_verdicts(which, request):
    out, run_id = request.getfixturevalue(which)
    before = {case: verdict for case, (verdict, _) in verdicts(out).items()}
    cli("check", run_id, "--out", str(out), "--jobs", "2", check=True)
    assert {case: verdict for case, (verdict, _) in verdicts(out).items()} == before


@pytest.mark.slow
def test_honest_bricks_stay_correct(gallery):
    out, _ = gallery
    found = verdicts(out)
    assert {case: found[case] for case in HONEST} == {case: ("correct", "") for case in HONEST}


@pytest.mark.slow
def test_tampered_counts_as_not_correct_wherever_correctness_is_counted(gallery):
    out, run_id = gallery
    with sqlite3.connect(out / "ironbench.db") as conn:
        counted = conn.execute(
            "SELECT count(*), sum(correct) FROM invocations WHERE check_verdict = 'tampered'"
        ).fetchone()
    tampered = sum(1 for _, verdict in FORGERIES.values() if verdict == "tampered")
    assert counted == (tampered, 0)
    show = cli("show", run_id, "--out", str(out), check=True).stdout
    assert f"correct: {len(HONEST)} of {len(HONEST) + len(FORGERIES)} runs" in show
    assert "tampered" in show


def test_a_checked_run_says_correctness_first_then_its_forgeries_then_self_reports(gallery):
    out, run_id = gallery
    result = cli("report", run_id, "--out", str(out), check=True)
    page = Path(result.stdout.strip()).read_text()
    modes = [chunk.split('"', 1)[0] for chunk in page.split('<li data-mode="')[1:]]
    modes = [m for m in modes if m != "fence"]  # (a machine below full says that first)
    assert modes[:2] == ["correctness", "correctness"], modes
    assert modes.index("baseline") > 1
    shown = cli("show", run_id, "--out", str(out), check=True).stdout
    assert "tampered" in page.split('<li data-mode="correctness">')[2].split("</li>")[0]
    assert shown.index("VERIFIED BUT WRONG") < shown.index("case_id")


# -- issue 46: a brick cannot choose its verdict class; honest value types are correct ----------


def humaneval(number: int) -> dict:
    problem = problems()[number]
    return {"python": check_source(problem), "entry_point": problem["entry_point"]}


def python(body: str, entry: str) -> dict:
    return {
        "python": "def check(candidate):\n" + "".join(f"    {line}\n" for line in body.splitlines()),
        "entry_point": entry,
    }


MEMBERSHIP = "for x in (1, 2, 3, 4, 6, 12):\n    assert x in candidate(12)"
SQUARE = "assert candidate(3) == 9\nassert candidate(-2) == 4"
CHOOSERS_TESTS = {
    "divisors": "from divisors import divisors\n\n\ndef test_divisors():\n"
    "    for x in (1, 2, 3, 4, 6, 12):\n        assert x in divisors(12)\n",
    "geometry": "import math\n\nimport pytest\nfrom geometry import *  # noqa: F403\n\n\ndef test_area():\n"
    "    assert math.isclose(area(1), 3.14159, rel_tol=1e-3)  # noqa: F405\n\n\ndef test_negative():\n"
    "    with pytest.raises(ValueError):\n        area(-1)  # noqa: F405\n",
    "shop": "from shop import Item, cheapest\n\n\ndef test_cheapest():\n"
    "    assert cheapest([Item(2.5, 'b'), Item(1.5, 'a')]) == Item(1.5, 'a')\n"
    "    assert Item(1.5, 'a') < Item(2.5, 'b') and len({Item(1.5, 'a'), Item(1.5, 'a')}) == 1\n",
}
# case: (its check, the verdict it must get, what its detail says)
CHOOSERS = {
    "random_module_53": (humaneval(53), "tampered", "a module the check imports (random)"),
    "random_module_38": (humaneval(38), "tampered", "a module the check imports (random)"),
    "math_module_32": (humaneval(32), "tampered", "a module the check imports (math)"),
    "spy_membership": (python(MEMBERSHIP, "divisors"), "wrong", "AssertionError"),
    "spy_membership_pytest": ({"pytest": "divisors"}, "wrong", "assert 1 in"),
    "star_shadows_the_tests_imports": ({"pytest": "geometry"}, "tampered", "exports a _Always as math"),
    "stop_iteration_ends_the_check": (
        python("cases = [(3, 9), (-2, 4)]\nassert all(map(lambda c: candidate(c[0]) == c[1], cases))", "square"),
        "wrong",
        "RuntimeError",
    ),
    "self_containing_answer": (python(SQUARE, "square"), "wrong", "cannot cross"),
    "too_deep_answer": (python(SQUARE, "square"), "wrong", "nested deeper"),
    "always_ordered": (python("assert not candidate(3) < 9", "square"), "tampered", "a fresh object"),
}
VALUE_TYPES = {
    "honest_dataclass": {"pytest": "shop"},
    "honest_namedtuple": python(
        "from pairs import Pair\nassert candidate(5, 2) == (2, 5) == Pair(2, 5)\nassert candidate(1, 9).high == 9",
        "ordered",
    ),
    "honest_enum": python(
        "from levels import Color, Level, color\nassert candidate(30) == Level.HIGH == 2 and candidate(3) < Level.HIGH\n"
        "assert color(True) is Color.RED and color(False) == Color.BLUE and color(True).value == 'red'",
        "level",
    ),
}
# honest, but not what the check asks for: never accused
NOT_ACCUSED = {
    "honest_money": (python("assert candidate([250, 150]) == 400", "total"), "wrong", "its own __eq__, which was not"),
    "named_like_a_module": (python("assert candidate([1]) == 1", "first"), "no_brick", "saved as queue.py"),
    "check_passes_a_callback": (
        python("assert candidate(lambda x: x + 1, 1) == 2", "apply"),
        "harness_fault",
        "callback from the check into the brick",
    ),
}


@pytest.fixture(scope="module")
def choosers(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("choosers")
    for name, text in CHOOSERS_TESTS.items():
        (folder / name).mkdir()
        (folder / name / f"test_{name}.py").write_text(text)
    checks = {
        **{case: check for case, (check, _, _) in CHOOSERS.items()},
        **VALUE_TYPES,
        **{case: check for case, (check, _, _) in NOT_ACCUSED.items()},
    }
    cases = [{"id": case, "instruction": f"Write the brick {case}.", "check": check} for case, check in checks.items()]
    suite = {"suite_id": "choosers", "mode": "baseline", "timeout_seconds": 60, "stop": {"rule": "fixed", "runs": 1}}
    (folder / "suite.yaml").write_text(yaml.safe_dump({**suite, "cases": cases}, sort_keys=False))
    return run_gallery(folder / "suite.yaml", VERDICT_TARGET)


@pytest.mark.slow
def test_no_brick_chooses_its_verdict_class(choosers):
    out, _ = choosers
    found = verdicts(out)
    for case, (_, verdict, said) in {**CHOOSERS, **NOT_ACCUSED}.items():
        assert found[case][0] == verdict and said in found[case][1], (case, found[case])
    # the only harness fault is the check's own doing
    assert [case for case, (verdict, _) in found.items() if verdict == "harness_fault"] == ["check_passes_a_callback"]


@pytest.mark.slow
def test_honest_value_types_are_correct_and_no_honest_brick_is_tampered(choosers):
    out, run_id = choosers
    found = verdicts(out)
    assert {case: found[case] for case in VALUE_TYPES} == {case: ("correct", "") for case in VALUE_TYPES}
    assert all(found[case][0] != "tampered" for case in NOT_ACCUSED)
    # the rate counts every run but the harness fault, which is said beside it
    counted = len(CHOOSERS) + len(VALUE_TYPES) + len(NOT_ACCUSED) - 1
    show = cli("show", run_id, "--out", str(out), check=True).stdout
    assert f"correct: {len(VALUE_TYPES)} of {counted} runs" in show
    assert "1 check could not run: the check passes the brick a function" in show
    assert show.splitlines()[0].endswith("; 1 check could not run (in no rate)")
    page = Path(cli("report", run_id, "--out", str(out), check=True).stdout.strip()).read_text()
    said = page.split('class="verified-but-wrong"')[1].split("</p>")[0]
    assert f"Correct: {len(VALUE_TYPES)} of {counted} runs" in said and "1 check could not run" in said
    with Served(out / "ironbench.db") as viewer:  # the viewer's run page: the report's own sections
        deadline = time.monotonic() + 60
        while 'class="verified-but-wrong"' not in (shown := viewer.get(f"/runs/{run_id}").body):
            assert time.monotonic() < deadline, "the viewer never rendered the run's report"
            time.sleep(0.5)
    said = shown.split('class="verified-but-wrong"')[1].split("</p>")[0]
    assert f"Correct: {len(VALUE_TYPES)} of {counted} runs" in said and "1 check could not run" in said
