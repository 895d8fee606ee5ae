"""Honest value types cross as values, through the front door: what a brick returns (or a check
passes it) of the standard library's value types is that type on the other side, and compares as
it does in plain Python; an OrderedDict keeps its order (the wrong order is wrong)."""

import pytest

from tests.targets.test_planted import run, target, verdicts

# case -> (the brick, the check's body (candidate is the brick's f), the verdict)
CASES = {
    "ordered_wrong_order": (
        "from collections import OrderedDict\ndef f():\n    return OrderedDict([('b', 2), ('a', 1)])\n",
        "from collections import OrderedDict\n    assert candidate() == OrderedDict([('a', 1), ('b', 2)])",
        "wrong",
    ),
    "ordered": (
        "from collections import OrderedDict\ndef f():\n    return OrderedDict([('a', 1), ('b', 2)])\n",
        (
            "from collections import OrderedDict\n    assert candidate() == OrderedDict([('a', 1), ('b', 2)])\n"
            "    assert list(candidate()) == ['a', 'b']"
        ),
        "correct",
    ),
    "counter": (
        "from collections import Counter\ndef f():\n    return Counter('abracadabra')\n",
        "    c = candidate()\n    assert c['z'] == 0 and c.most_common(1) == [('a', 5)]",
        "correct",
    ),
    "defaultdict": (
        "from collections import defaultdict\ndef f():\n    d = defaultdict(list)\n    d['a'].append(1)\n    return d\n",
        "    d = candidate()\n    assert d == {'a': [1]} and d['missing'] == []",
        "correct",
    ),
    "deque": (
        "from collections import deque\ndef f():\n    return deque([1, 2, 3], maxlen=3)\n",
        "from collections import deque\n    assert candidate() == deque([1, 2, 3]) and candidate().maxlen == 3",
        "correct",
    ),
    "user_list": (
        "from collections import UserList\ndef f():\n    return UserList([1, 2])\n",
        "    assert candidate() == [1, 2]",
        "correct",
    ),
    "date": (
        "import datetime\ndef f():\n    return datetime.date(2024, 2, 29)\n",
        "import datetime\n    assert candidate() == datetime.date(2024, 2, 29) and candidate().weekday() == 3",
        "correct",
    ),
    "date_argument": (
        "import datetime\ndef f(day):\n    return day + datetime.timedelta(days=1)\n",
        "import datetime\n    assert candidate(datetime.date(2024, 2, 28)) == datetime.date(2024, 2, 29)",
        "correct",
    ),
    "datetime_and_timedelta": (
        "import datetime\ndef f(a, b):\n    return b - a, a.replace(tzinfo=datetime.timezone.utc)\n",
        (
            "import datetime\n    a, b = datetime.datetime(2024, 1, 1), datetime.datetime(2024, 1, 2, 3)\n"
            "    assert candidate(a, b) == (datetime.timedelta(days=1, hours=3), a.replace(tzinfo=datetime.timezone.utc))"
        ),
        "correct",
    ),
    "empty_by_its_length": (
        (
            "class Stack:\n    def __init__(self):\n        self.items = []\n    def __len__(self):\n"
            "        return len(self.items)\ndef f():\n    return Stack()\n"
        ),
        "    assert not candidate() and len(candidate()) == 0",
        "correct",
    ),
    "exception_attributes": (
        (
            "class ParseError(ValueError):\n    def __init__(self, message, line):\n        super().__init__(message)\n"
            "        self.line = line\ndef f():\n    raise ParseError('bad', 3)\n"
        ),
        (
            "    try:\n        candidate()\n    except ValueError as error:\n        assert error.line == 3\n"
            "    else:\n        raise AssertionError('no error')"
        ),
        "correct",
    ),
    "flag": (
        "import enum\nclass Perm(enum.Flag):\n    R = 1\n    W = 2\n    X = 4\ndef f():\n    return Perm.R | Perm.W\n",
        (
            "    p = candidate()\n    assert p == Perm.R | Perm.W and Perm.R in p and Perm.X not in p\n"
            "    assert p & Perm.W == Perm.W and ~Perm.X == Perm.R | Perm.W"
        ),
        "correct",
    ),
    "str_subclass": (
        "class Name(str):\n    pass\ndef f():\n    return Name('ada')\n",
        "    assert candidate() == 'ada' and candidate().upper() == 'ADA'",
        "correct",
    ),
}


def test_value_types_cross_as_values_and_compare_as_in_python(tmp_path):
    cases = []
    for case, (_, body, _) in CASES.items():
        imports, _, rest = body.partition("\n") if not body.startswith("    ") else ("", "", body)
        source = f"{imports}\ndef check(candidate):\n{rest}\n"
        cases.append({"id": case, "instruction": f"Write f ({case}).", "check": {"python": source, "entry_point": "f"}})
    import yaml

    suite = tmp_path / "suite.yaml"
    body = {"suite_id": "values", "mode": "baseline", "timeout_seconds": 60, "stop": {"rule": "fixed", "runs": 1}}
    suite.write_text(yaml.safe_dump({**body, "cases": cases}, sort_keys=False))
    bricks = {case: {"values.py": brick} for case, (brick, _, _) in CASES.items()}
    out, _ = run(tmp_path, suite, target(tmp_path, bricks), "--jobs", "2")
    found = verdicts(out)
    assert {case: found[case][0] for case in CASES} == {case: v for case, (_, _, v) in CASES.items()}, found


@pytest.mark.parametrize(
    "value",
    ["OrderedDict([(2, 1), (1, 2)])", "Counter({'z': 0})", "defaultdict(list, {1: [2]})", "deque([1], maxlen=2)"],
)
def test_a_value_type_comes_back_as_itself(value):
    import collections  # noqa: F401 (the values' names)
    from collections import Counter, OrderedDict, defaultdict, deque  # noqa: F401

    from ironbench.targets.boundary import codec

    made = eval(value)
    back = codec.decode(codec.encode(made))
    assert type(back) is type(made) and back == made and repr(back) == repr(made)


def test_a_class_that_calls_itself_a_value_type_is_not_taken_for_one():
    from ironbench.targets.boundary import codec

    Liar = type("OrderedDict", (dict,), {"__module__": "collections"})
    with pytest.raises(codec.Unencodable):
        codec.encode(Liar(a=1))
