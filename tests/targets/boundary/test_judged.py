"""What the judge decides on its own data: value types compared as values, a brick's own
comparison never consulted with the check's values (probed with a fresh object only), the
check's imports its own, a star import that binds only what the brick defines, StopIteration
out of a brick call as RuntimeError."""

from pathlib import Path

import pytest

from ironbench.suite.humaneval import check_source, problems
from ironbench.targets.checks import CheckMaterial, run_check
from tests.conftest import taken


def judged(tmp_path: Path, brick: str, check: dict, name: str = "mod.py"):
    folder = tmp_path / "verified_bricks"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(brick)
    if "pytest" in check:
        tests = tmp_path / "tests" / f"test_{name}"
        tests.parent.mkdir(exist_ok=True)
        tests.write_text(check["pytest"])
        check = {"pytest": str(tests)}
    return run_check(CheckMaterial.of(check), taken(folder / name), 20)


def python(body: str, entry: str = "f") -> dict:
    return {
        "python": "def check(candidate):\n" + "".join(f"    {line}\n" for line in body.splitlines()),
        "entry_point": entry,
    }


NAMEDTUPLES = """
from collections import namedtuple
from typing import NamedTuple

P = namedtuple("P", "x y")


class Q(NamedTuple):
    a: int
    b: str = "b"

    def both(self):
        return f"{self.a}{self.b}"


def f():
    return [P(1, 2), Q(3)]
"""
NAMEDTUPLES_CHECK = """
from mod import P
p, q = candidate()
assert p == (1, 2) and p == P(1, 2) and p is not P(1, 2) and p.x == 1 and p.y == 2 and p._asdict() == {"x": 1, "y": 2}
assert q == (3, "b") and q.both() == "3b" and {p: 1}[(1, 2)] == 1 and sorted([q, (0, "a")])[0] == (0, "a")
assert repr(p) == "P(x=1, y=2)" and isinstance(p, tuple)
"""
ENUMS = """
import enum


class Color(enum.Enum):
    RED = 1
    GREEN = 2


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mode(enum.StrEnum):
    FAST = "fast"


class Perm(enum.IntFlag):
    R = 4
    W = 2


def f(c):
    return Color.GREEN if c is Color.RED else Color.RED


def g():
    return [Level.HIGH, Mode.FAST, Perm.R | Perm.W, Color.RED]
"""
ENUMS_CHECK = """
from mod import Color, g
assert candidate(Color.RED) is Color.GREEN and candidate(Color.GREEN) == Color.RED
assert candidate(Color.RED) != Color.RED and Color.RED.name == "RED" and Color.GREEN.value == 2
level, mode, perm, red = g()
assert level == 2 and level > 1 and mode == "fast" and perm == 6 and red is Color.RED
assert str(Color.RED) == "Color.RED" and repr(Color.RED) == "<Color.RED: 1>" and {Color.RED: 1}[red] == 1
assert isinstance(red, Color) and not isinstance(level, Color)
"""
DATACLASSES = """
from dataclasses import dataclass, field


@dataclass
class Point:
    x: int
    y: int
    note: str = field(default="", compare=False)

    def moved(self, dx):
        self.x += dx
        return self


@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int


@dataclass
class Line:
    start: Point
    end: Point


def f():
    return Line(Point(0, 0), Point(1, 1, "n"))
"""
DATACLASSES_CHECK = """
from mod import Line, Point, Version
line = candidate()
assert line == Line(Point(0, 0), Point(1, 1))
assert line.end == Point(1, 1, "a different note") and line.end != Point(1, 2) and line != (0, 0)
p = Point(1, 2)
p.moved(2)
assert p == Point(3, 2) and p.x == 3
assert Version(1, 2) < Version(1, 10) and sorted([Version(2, 0), Version(1, 5)])[0] == Version(1, 5)
assert {Version(1, 2): "v"}[Version(1, 2)] == "v"
try:
    hash(p)
except TypeError:
    pass
else:
    raise AssertionError("a dataclass with eq and not frozen is unhashable")
"""
VALUE_TYPES = {
    "namedtuples": (NAMEDTUPLES, NAMEDTUPLES_CHECK),
    "enums": (ENUMS, ENUMS_CHECK),
    "dataclasses": (DATACLASSES, DATACLASSES_CHECK),
}


@pytest.mark.parametrize("kind", VALUE_TYPES)
def test_value_types_cross_as_values_and_honest_code_comparing_them_is_correct(tmp_path, kind):
    brick, body = VALUE_TYPES[kind]
    result = judged(tmp_path, brick, python(body.strip()))
    assert (result.verdict, result.detail) == ("correct", ""), result.output


def test_value_types_in_a_pytest_check(tmp_path):
    brick = (
        "from dataclasses import dataclass\nimport enum\nfrom typing import NamedTuple\n"
        "@dataclass\nclass Item:\n    name: str\n    price: float\n"
        "class Size(enum.Enum):\n    S = 's'\n    L = 'l'\n"
        "class Pair(NamedTuple):\n    left: int\n    right: int\n"
        "def cheapest(items):\n    return min(items, key=lambda i: i.price)\n"
        "def size_of(n):\n    return Size.S if n < 10 else Size.L\n"
        "def pair(a, b):\n    return Pair(min(a, b), max(a, b))\n"
    )
    tests = (
        "from shop import Item, Pair, Size, cheapest, pair, size_of\n\n"
        "def test_dataclass():\n    assert cheapest([Item('a', 2.0), Item('b', 1.0)]) == Item('b', 1.0)\n\n"
        "def test_enum():\n    assert size_of(3) == Size.S and size_of(30) is Size.L\n\n"
        "def test_namedtuple():\n    assert pair(5, 2) == Pair(2, 5) == (2, 5)\n"
    )
    result = judged(tmp_path, brick, {"pytest": tests}, "shop.py")
    assert (result.verdict, result.passed) == ("correct", 3), result.output


def test_a_brick_object_with_its_own_eq_is_wrong_with_a_note_never_tampered(tmp_path):
    # a legitimate __eq__ that accepts ints: in plain Python `Money(5) == 5`; here it is not consulted
    brick = (
        "class Money:\n    def __init__(self, v):\n        self.v = v\n"
        "    def __eq__(self, other):\n        return self.v == (other.v if isinstance(other, Money) else other)\n"
        "    def __lt__(self, other):\n        return self.v < (other.v if isinstance(other, Money) else other)\n"
        "    __hash__ = None\n\ndef f():\n    return Money(5)\n"
    )
    result = judged(tmp_path, brick, python("assert candidate() == 5"))
    assert result.verdict == "wrong", result.detail
    assert "the brick's Money has its own __eq__, which was not consulted" in result.detail


@pytest.mark.parametrize(
    ("methods", "check", "says"),
    [
        ("def __eq__(self, other):\n        return True", "assert candidate() == 5", "equals"),
        ("def __ne__(self, other):\n        return False", "assert not (candidate() != 5)", "is not unequal to"),
        ("def __lt__(self, other):\n        return True", "assert candidate() < 5", "is <"),
    ],
)
def test_an_object_equal_to_what_it_never_saw_is_tampered(tmp_path, methods, check, says):
    brick = f"class Forged:\n    {methods}\n    __hash__ = object.__hash__\n\ndef f():\n    return Forged()\n"
    result = judged(tmp_path, brick, python(check))
    assert result.verdict == "tampered" and f"says it {says} a fresh object it was never shown" in result.detail


def test_no_value_of_the_checks_crosses_to_be_compared(tmp_path):
    # `x in result`: the brick yields an object that records what it is compared with, then
    # yields that as the next item; the check's own values never reach it
    brick = (
        "SEEN = []\nclass Spy:\n    def __eq__(self, other):\n        SEEN.append(other)\n        return False\n"
        "    __hash__ = object.__hash__\n"
        "class Items:\n    def __iter__(self):\n        yield Spy()\n        yield from list(SEEN)\n\n"
        "def divisors(n):\n    return Items()\n\ndef seen():\n    return [repr(x) for x in SEEN]\n"
    )
    check = python("for x in (1, 2, 3, 4, 6, 12):\n    assert x in candidate(12)", "divisors")
    result = judged(tmp_path, brick, check, "divisors.py")
    assert result.verdict == "wrong", result.detail
    probe = python(
        "from divisors import seen\n2 in candidate(12)\nassert all(s == '<a fresh object>' for s in seen()), seen()",
        "divisors",
    )
    assert judged(tmp_path, brick, probe, "divisors.py").verdict == "correct"


def test_stop_iteration_out_of_a_brick_call_arrives_as_runtime_error(tmp_path):
    brick = "def f(x):\n    raise StopIteration\n"
    result = judged(
        tmp_path, brick, python("cases = [(1, 2), (2, 3)]\nassert all(map(lambda c: candidate(c[0]) == c[1], cases))")
    )
    assert result.verdict == "wrong" and "RuntimeError" in result.detail
    honest = "def f(n):\n    yield from range(n)\n"
    assert judged(tmp_path, honest, python("assert list(candidate(3)) == [0, 1, 2]")).verdict == "correct"


@pytest.mark.parametrize(("number", "module"), [(53, "random"), (38, "random"), (32, "math")])
def test_the_checks_imports_are_the_judges_whatever_the_brick_is_called(tmp_path, number, module):
    problem = problems()[number]
    # a brick named after a module its check imports, that would stand in for it
    forged = problem["prompt"] + "    return 0\n\ndef randint(a, b):\n    return 0\n\ndef choice(s):\n    return s[0]\n"
    check = {"python": check_source(problem), "entry_point": problem["entry_point"]}
    result = judged(tmp_path, forged, check, f"{module}.py")
    assert result.verdict == "tampered" and f"a module the check imports ({module})" in result.detail
    honest = judged(tmp_path, problem["prompt"] + problem["canonical_solution"], check, f"{problem['entry_point']}.py")
    assert honest.verdict == "correct", honest.output


STAR = (
    "import math\nimport os.path\nfrom collections import OrderedDict\n\n"
    "class _Always:\n    def isclose(self, *args, **kwargs):\n        return True\n"
    "class pytest:\n    class raises:\n        def __init__(self, *args, **kwargs):\n            pass\n"
    "        def __enter__(self):\n            return self\n        def __exit__(self, *args):\n            return True\n"
    "LIMIT = 10\n\ndef area(r):\n    return 0\n\ndef len(x):\n    return 0\n\n"
)


def test_a_star_import_binds_only_what_the_brick_defines_and_never_rebinds(tmp_path):
    tests = (
        "import math\nimport pytest\nfrom geometry import *\n\n"
        "def test_area():\n    assert math.isclose(area(1), 3.14159, rel_tol=1e-3)\n\n"
        "def test_raises():\n    with pytest.raises(ValueError):\n        area(-1)\n\n"
        "def test_names():\n    assert LIMIT == 10 and len([1]) == 1 and 'OrderedDict' not in globals() and 'os' not in globals()\n"
    )
    honest = judged(
        tmp_path,
        STAR.replace("return 0\n\ndef len", "return 3.14159 * r * r if r >= 0 else 1 / 0\n\ndef len").replace(
            "class pytest", "class _pytest"
        ),
        {"pytest": tests.replace("pytest.raises(ValueError)", "pytest.raises(ZeroDivisionError)")},
        "geometry.py",
    )
    assert (honest.verdict, honest.passed) == ("correct", 3), honest.output
    forged = judged(tmp_path, STAR + "math = _Always()\n", {"pytest": tests}, "geometry.py")
    assert forged.verdict == "tampered" and "exports a _Always as math" in forged.detail
    assert "exports a pytest as pytest" in forged.detail and "the check said wrong" in forged.detail


# what a red team tried against the boundary and got through before it was closed: each kept
RED_TEAM = {
    # the brick in sys.modules: a library probing it there (pytest's approx looks up numpy) would
    # call the brick with the check's values
    "never_in_sys_modules": (
        "def f():\n    return 1\n",
        python("import sys, importlib\nassert 'foo' not in sys.modules and importlib.import_module('foo').f() == 1"),
        "foo.py",
        "correct",
    ),
    # a module __getattr__ through a star import answers pytest's `__test__` probe of the test
    # module: no test collected, a harness fault of the brick's choosing
    "star_exports_a_module_getattr": (
        "__all__ = ['__getattr__', 'add']\n\ndef __getattr__(name):\n    return False\n\ndef add(a, b):\n    return 0\n",
        {"pytest": "from calc import *\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
        "calc.py",
        "wrong",
    ),
    # a skipif on the brick's own attribute: every test skipped passes pytest
    "skips_every_test": (
        "READY = False\n\ndef add(a, b):\n    return 0\n",
        {
            "pytest": "import pytest\nimport calc\n\n\n@pytest.mark.skipif(not calc.READY, reason='not ready')\n"
            "def test_add():\n    assert calc.add(2, 3) == 5\n"
        },
        "calc.py",
        "wrong",
    ),
    # an honest exception class named like a runner's outcome is no accusation
    "an_honest_failed": (
        "class Failed(Exception):\n    pass\n\ndef f():\n    raise Failed('no')\n",
        {"pytest": "from f import f\n\n\ndef test_f():\n    f()\n"},
        "f.py",
        "wrong",
    ),
    # pytest's own skip raised by the brick (its class says module `builtins`): still evidence
    "pytest_skip_from_the_brick": (
        "import pytest\n\ndef add(a, b):\n    pytest.skip('later')\n",
        {"pytest": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"},
        "calc.py",
        "tampered",
    ),
    # the standard library's always-equal object as the answer
    "mock_any_as_the_answer": (
        "from unittest.mock import ANY\n\ndef f():\n    return [ANY, ANY]\n",
        python("assert candidate() == [1, 2]"),
        "f.py",
        "tampered",
    ),
    # a name as long as a file's name can be: the decoy beside it (`test_` + the name) must not
    # fail the judge (a harness fault of the brick's choosing)
    "the_longest_name": ("def f():\n    return 2\n", python("assert candidate() == 1"), "f" * 248 + ".py", "wrong"),
    # field names that would be the stand-in's own methods are not taken
    "fields_named_like_methods": (
        "class T(tuple):\n    _fields = ('__eq__', 'count')\n\ndef f():\n    return T((1, 2))\n",
        python("assert candidate() == (1, 2) and candidate().count(1) == 1"),
        "f.py",
        "correct",
    ),
    # an exception the brick raised, passed back by the check: the brick's doing, never a harness fault
    "its_exception_passed_back": (
        "class E(Exception):\n    pass\n\ndef f():\n    raise E('x')\n\ndef g(e):\n    return 1\n",
        {
            "pytest": "import pytest\nfrom f import f, g\n\n\ndef test_f():\n    with pytest.raises(Exception) as info:\n"
            "        f()\n    assert g(info.value) == 1\n"
        },
        "f.py",
        "wrong",
    ),
}


@pytest.mark.parametrize("case", RED_TEAM)
def test_what_a_red_team_got_through_is_closed(tmp_path, case):
    brick, check, name, verdict = RED_TEAM[case]
    result = judged(tmp_path, brick, check, name)
    assert result.verdict == verdict, (result.detail, result.output[-2000:])
