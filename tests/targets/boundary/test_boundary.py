"""What crosses between the brick's host and the check's judge, and what the judge makes of it:
exact plain values, handles decided on the check's side, the brick's exceptions as its types,
changes in place copied back, what cannot cross refused (the check's doing a harness fault, the
brick's answer wrong), the host's end told apart."""

from pathlib import Path

import pytest

from ironbench.suite.humaneval import check_source, problems
from ironbench.targets.checks import CheckMaterial, run_check
from tests.conftest import taken


def checked(tmp_path: Path, brick: str, check: str, entry: str = "f", name: str = "mod.py"):
    folder = tmp_path / "verified_bricks"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(brick)
    material = CheckMaterial.of({"python": f"def check(candidate):\n{check}", "entry_point": entry})
    return run_check(material, taken(folder / name), 20)


def test_plain_values_arrive_exactly(tmp_path):
    brick = (
        "import math\n\ndef f():\n"
        "    return [None, True, 2**70, -0.0, math.nan, math.inf, 1j, 'é\\ud800', b'\\xff', bytearray(b'a'),"
        " (1,), {1: {2}}, frozenset({3}), range(3)]\n"
    )
    check = (
        "    import math, struct\n    r = candidate()\n"
        "    assert [type(x).__name__ for x in r] == ['NoneType', 'bool', 'int', 'float', 'float', 'float', 'complex',"
        " 'str', 'bytes', 'bytearray', 'tuple', 'dict', 'frozenset', 'range']\n"
        "    assert r[2] == 2**70 and struct.pack('<d', r[3]) == struct.pack('<d', -0.0) and math.isnan(r[4])\n"
        "    assert r[7] == 'é\\ud800' and r[11] == {1: {2}} and r[13] == range(3)\n"
    )
    result = checked(tmp_path, brick, check)
    assert result.verdict == "correct", result.output


def test_numpy_scalars_arrive_as_python_numbers(tmp_path):
    brick = (
        "import numpy as np\n\ndef f():\n    return [np.int64(5), np.float32(0.5), np.bool_(True), np.complex128(1j)]\n"
    )
    check = "    r = candidate()\n    assert [type(x) for x in r] == [int, float, bool, complex] and r == [5, 0.5, True, 1j]\n"
    assert checked(tmp_path, brick, check).verdict == "correct"


def test_a_handle_is_decided_on_the_checks_side(tmp_path):
    brick = (
        "class Box:\n    def __init__(self):\n        self.items = [1, 2]\n    def size(self):\n        return len(self.items)\n"
        "    def __eq__(self, other):\n        return isinstance(other, list)\n    def __hash__(self):\n        return 1\n"
        "    def __bool__(self):\n        return False\n    def __len__(self):\n        return 2\n"
        "    def __iter__(self):\n        return iter(self.items)\n    def __getitem__(self, i):\n        return self.items[i]\n"
        "    def __repr__(self):\n        return 'Box!'\n\nONE = Box()\n\ndef f():\n    return ONE\n"
    )
    check = (
        "    box = candidate()\n    assert box is candidate() and box == box and hash(box) == hash(box)\n"
        "    assert box != 1 and not (box == [1, 2]) and bool(box)\n"
        "    assert box.size() == 2 and box.items == [1, 2] and len(box) == 2 and list(box) == [1, 2]\n"
        "    assert box[1] == 2 and 2 in box and 3 not in box and repr(box) == 'Box!' and str(box) == 'Box!'\n"
        "    for operation in (lambda: box + 1, lambda: box < 1, lambda: int(box), lambda: abs(box)):\n"
        "        try:\n            operation()\n        except TypeError:\n            continue\n"
        "        raise AssertionError('a handle has no operators')\n"
    )
    result = checked(tmp_path, brick, check)
    assert result.verdict == "correct", result.output


def test_the_bricks_exceptions_arrive_as_their_types(tmp_path):
    brick = (
        "class NotFound(KeyError):\n    pass\n\nclass Mine(Exception):\n    def __str__(self):\n        return 'mine!'\n\n"
        "def f(kind):\n    if kind == 0:\n        raise ValueError('bad value')\n    if kind == 1:\n        raise NotFound('k')\n"
        "    if kind == 2:\n        raise Mine()\n    if kind == 3:\n        raise KeyboardInterrupt()\n    return {}['missing']\n"
    )
    check = (
        "    def caught(kind):\n        try:\n            candidate(kind)\n        except Exception as exc:\n            return exc\n"
        "    e = caught(0)\n    assert type(e) is ValueError and str(e) == 'bad value'\n"
        "    e = caught(1)\n    assert isinstance(e, KeyError) and type(e).__name__ == 'NotFound' and str(e) == \"'k'\"\n"
        "    e = caught(2)\n    assert type(e).__name__ == 'Mine' and type(e).__bases__ == (Exception,) and str(e) == 'mine!'\n"
        "    e = caught(3)\n    assert type(e).__name__ == 'KeyboardInterrupt' and isinstance(e, Exception)\n"
        "    e = caught(4)\n    assert type(e) is KeyError and e.args == ('missing',)\n"
    )
    result = checked(tmp_path, brick, check)
    assert result.verdict == "correct", result.output


def test_changes_in_place_come_back_into_the_callers_objects(tmp_path):
    brick = (
        "def f(rows, seen, counts, raw):\n    rows[0].append(9)\n    rows.append([7])\n    seen.add('x')\n"
        "    counts['n'] = counts.get('n', 0) + 1\n    raw[0] = 65\n    return rows\n"
    )
    check = (
        "    first = [1]\n    rows, seen, counts, raw = [first], set(), {}, bytearray(b'z')\n"
        "    back = candidate(rows, seen, counts, raw)\n"
        "    assert rows == [[1, 9], [7]] and rows[0] is first and seen == {'x'} and counts == {'n': 1} and raw == b'A'\n"
        "    assert back is rows\n"
    )
    result = checked(tmp_path, brick, check)
    assert result.verdict == "correct", result.output


@pytest.mark.parametrize(
    ("brick", "check", "named"),
    [
        ("def f(g):\n    return g(1)\n", "    assert candidate(lambda x: x) == 1\n", "callback"),
        ("def f(xs):\n    return sum(xs)\n", "    assert candidate(x for x in [1, 2]) == 3\n", "generator or iterator"),
    ],
)
def test_what_the_check_passes_and_cannot_cross_is_a_harness_fault_never_correct(tmp_path, brick, check, named):
    # the check swallows what went wrong: the refusal still counts
    guarded = f"    try:\n        {check.strip()}\n    except BaseException:\n        pass\n"
    result = checked(tmp_path, brick, guarded)
    assert result.verdict == "harness_fault" and named in result.detail, result.detail


@pytest.mark.parametrize(
    ("returned", "named"),
    [
        ("deep = []\n    for _ in range(500):\n        deep = [deep]\n    return deep", "nested deeper"),
        ("me = []\n    me.append(me)\n    return me", "inside itself"),
        ("me = {}\n    me['me'] = [me]\n    return me", "inside itself"),
        ("return 'x' * (65 * 1024 * 1024)", "larger than a message"),
    ],
)
def test_what_the_brick_answers_and_cannot_cross_is_wrong_with_the_reason(tmp_path, returned, named):
    # a wrong brick cannot take itself out of the rate: its answer is its answer
    guarded = "    try:\n        candidate()\n    except BaseException:\n        pass\n"
    result = checked(tmp_path, f"def f():\n    {returned}\n", guarded)
    assert result.verdict == "wrong" and named in result.detail, result.detail


def test_a_host_killed_by_a_signal_is_wrong_and_one_that_exits_is_tampered(tmp_path):
    crash = checked(
        tmp_path, "import os, signal\n\ndef f():\n    os.kill(os.getpid(), signal.SIGSEGV)\n", "    candidate()\n"
    )
    assert (crash.verdict, crash.detail) == ("wrong", "the brick's process was killed by SIGSEGV while answering call")
    later = checked(
        tmp_path,
        "import os, threading, time\n\ndef f():\n    threading.Timer(0.05, os._exit, (0,)).start()\n    return 1\n",
        "    import time\n    assert candidate() == 1\n    time.sleep(1)\n    assert candidate() == 1\n",
    )
    assert later.verdict == "tampered" and "exited (status 0)" in later.detail


def test_a_reply_the_brick_forges_on_the_channel_is_tampered(tmp_path):
    brick = (
        "import os\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'\\x05\\x00\\x00\\x00garbage')\n"
        "    except OSError:\n        continue\n\ndef f():\n    return 1\n"
    )
    result = checked(tmp_path, brick, "    assert candidate() == 1\n")
    assert result.verdict == "tampered" and result.detail.startswith("the brick's process answered")


def test_a_call_that_never_returns_times_out(tmp_path):
    folder = tmp_path / "verified_bricks"
    folder.mkdir()
    (folder / "mod.py").write_text("def f():\n    while True:\n        pass\n")
    material = CheckMaterial.of({"python": "def check(candidate):\n    candidate()\n", "entry_point": "f"})
    result = run_check(material, taken(folder / "mod.py"), 1.5)
    assert result.verdict == "timeout" and 1400 <= result.duration_ms < 10_000


def test_a_brick_named_like_a_module_the_judge_has_is_refused(tmp_path):
    result = checked(
        tmp_path, "def mean(xs):\n    return 42\n", "    assert candidate([1]) == 42\n", "mean", "statistics.py"
    )
    assert result.verdict == "no_brick" and "statistics.py, the name of a module" in result.detail, result.detail
    # the check imports that name: the brick meant to be tested in its place
    imports = "    import statistics\n    assert statistics.mean([1, 3]) == 2 and candidate([1]) == 42\n"
    result = checked(tmp_path, "def mean(xs):\n    return 42\n", imports, "mean", "statistics.py")
    assert result.verdict == "tampered" and "a module the check imports (statistics)" in result.detail


def test_a_humaneval_check_calls_the_suites_helper_never_the_bricks(tmp_path):
    problem = problems()[38]  # decode_cyclic: the check encodes with encode_cyclic
    # a brick whose own encode_cyclic does nothing, so that its decode_cyclic needs do nothing
    forged = "def encode_cyclic(s):\n    return s\n\ndef decode_cyclic(s):\n    return s\n"
    honest = problem["prompt"] + problem["canonical_solution"]
    material = CheckMaterial.of({"python": check_source(problem), "entry_point": "decode_cyclic"})
    folder = tmp_path / "verified_bricks"
    folder.mkdir()
    verdicts = []
    for source in (forged, honest):
        (folder / "decode_cyclic.py").write_text(source)
        verdicts.append(run_check(material, taken(folder / "decode_cyclic.py"), 20).verdict)
    assert verdicts == ["wrong", "correct"]


def test_many_checks_in_a_row_share_a_host_server_and_stay_correct(tmp_path):
    # a judge done before its host's end is reported must not bring the host server down
    for n in range(25):
        result = checked(tmp_path, f"def f():\n    return {n}\n", f"    assert candidate() == {n}\n")
        assert result.verdict == "correct", (n, result.detail)
