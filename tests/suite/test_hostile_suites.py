"""Hostile suites: each is refused before anything is written, in one line, exit 2, no traceback."""

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ironbench.cli.main import main
from tests.conftest import cli

BASELINE = (
    "suite_id: s\nmode: baseline\ntarget: fixture\ncases:\n  - id: c1\n    instruction: {instruction}\n    runs: 2\n"
)
GAUNTLET = (
    "suite_id: g\nmode: gauntlet\nengines:\n  - {{name: e, type: python, target: {target}, kwargs: {kwargs}}}\n"
    "scenarios:\n  - {{name: s, domain: d, question: q, forbidden_phrase: f, follow_ups: [x]}}\n"
)
GOOD = "Write a function that adds two numbers."


def _baseline(instruction: str = GOOD, **replace: str) -> str:
    text = BASELINE.format(instruction=instruction)
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


def _gauntlet(target: str = "tests.fixtures.engines:ScriptedEngine", kwargs: str = "{answers: [a]}") -> str:
    return GAUNTLET.format(target=target, kwargs=kwargs)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


LAUGHS = (
    "{a: &a [x, x, x, x, x, x, x, x, x], "
    + ", ".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8))
    + "}"
)

HOSTILE = {
    "nesting 1,000 deep": _gauntlet(kwargs="{deep: " + _nested(1000) + "}"),
    "nesting 100,000 deep": _baseline(instruction=_nested(100_000)),
    "timeout 10^30": _baseline().replace("target: fixture", "target: fixture\ntimeout_seconds: " + "1" + "0" * 30),
    "timeout 1e30 as a float": _baseline().replace("target: fixture", "target: fixture\ntimeout_seconds: 1.0e+30"),
    "timeout of two days": _baseline().replace("target: fixture", "target: fixture\ntimeout_seconds: 172800"),
    "a 5,000-character case id": _baseline(**{"id: c1": "id: " + "c" * 5000}),
    "case id .": _baseline(**{"id: c1": "id: '.'"}),
    "case id ..": _baseline(**{"id: c1": "id: '..'"}),
    "case id with a slash": _baseline(**{"id: c1": "id: a/../../b"}),
    "stress seed 10^40": (
        "suite_id: s\nmode: stress\ntarget: fixture\ncases:\n  - id: c\n    instruction: "
        + GOOD
        + "\n    ladder: {generator: add_scope_detail, seed: 1"
        + "0" * 40
        + "}\n"
    ),
    "an integer of 5,000 digits": _baseline(**{"runs: 2": "runs: " + "9" * 5000}),
    "an infinite float": _baseline(**{"runs: 2": "runs: .inf"}),
    "python engine target os:system": _gauntlet(target="os:system"),
    "python engine kwargs its class does not take": _gauntlet(kwargs="{no_such_argument: 1}"),
    "a 10 MB instruction": _baseline(instruction="a" * 10_000_000),
    "a 30,000-character instruction": _baseline(instruction="Write " + "a" * 30_000),
    "billion laughs in kwargs": _gauntlet(kwargs=LAUGHS),
    "an alias": _baseline(**{"runs: 2": "runs: &n 2\n    timeout_seconds: *n"}),
    "duplicate keys": _baseline(**{"runs: 2": "runs: 2\n    runs: 3"}),
    "a zero-width space inside a forbidden word": _baseline(instruction='"Write te\\u200bsts for a parser."'),
    "a Cyrillic look-alike forbidden word": _baseline(instruction="Write t\u0435sts for a parser."),
    "a fullwidth forbidden word": _baseline(instruction="Write \uff54\uff45\uff53\uff54\uff53 for a parser."),
    "a terminal escape in an instruction": _baseline(instruction='"Write \\e]0;pwned\\a a parser."'),
    "a bidi override in an instruction": _baseline(instruction='"Write a \\u202eparser."'),
    "a control character in a target": _baseline().replace("target: fixture", 'target: "fix\\e[2Jture"'),
    "not UTF-8": b"suite_id: s\n\xff\xfe\n",
    "not a mapping": "- a\n- b\n",
    "empty": "",
}


def _run_in_process(capsys, suite: bytes | str, extra: tuple[str, ...] = ()) -> tuple[int, str, Path]:
    """`ironbench run` through the real entry point, in this process (fast enough to fuzz)."""
    work = Path(tempfile.mkdtemp(prefix="hostile-"))
    path = work / "suite.yaml"
    path.write_bytes(suite if isinstance(suite, bytes) else suite.encode("utf-8"))
    out = work / "out"
    argv = sys.argv
    sys.argv = ["ironbench", "run", str(path), "--out", str(out), "-q", *extra]
    try:
        with pytest.raises(SystemExit) as exited:
            main()
    finally:
        sys.argv = argv
    return exited.value.code, capsys.readouterr().err, out


def _assert_refused(code: int, err: str, out: Path) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1 and err.startswith("ironbench: error: "), err[:500]
    assert "Traceback" not in err and len(err) < 2000
    assert not out.exists(), "something was written before the suite was refused"


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_suite_is_refused_in_one_line_before_anything_is_written(capsys, name):
    _assert_refused(*_run_in_process(capsys, HOSTILE[name]))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["nesting 1,000 deep", "billion laughs in kwargs", "a 10 MB instruction", "python engine target os:system"]
)
def test_through_the_real_cli_hostile_suites_are_quick_and_clean(tmp_path, name):
    import time

    path = tmp_path / "suite.yaml"
    path.write_text(HOSTILE[name])
    started = time.monotonic()
    result = cli("run", str(path), "--out", str(tmp_path / "out"), "-q")
    assert time.monotonic() - started < 20
    _assert_refused(result.returncode, result.stderr, tmp_path / "out")


def test_jobs_zero_is_one_line(tmp_path):
    result = cli("run", "suites/baseline.yaml", "--jobs", "0", "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "ironbench: error: ironbench run: Invalid value for '--jobs' / '-j': Input should be greater than or equal to 1"
    ]


def test_the_instruction_a_target_receives_is_nfkc_normalised():
    from ironbench.suite.models import parse_suite

    suite = parse_suite(
        {
            "suite_id": "s",
            "mode": "baseline",
            "cases": [{"id": "c", "instruction": "Write a \ufb01le reader returning \u2460 value."}],
        },
        "s.yaml",
    )
    assert suite.cases[0].instruction == "Write a file reader returning 1 value."


# -- fuzz-ish: generated malformed suites ------------------------------------------------------

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\u3164"]
CONTROL = [chr(c) for c in range(0x20) if chr(c) not in "\t\n"] + ["\x7f", "\x85", "\x9b"]


def _yaml_string(text: str) -> str:
    import json

    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


nested = st.integers(33, 3000).map(lambda d: _baseline(**{"runs: 2": "runs: 2\n    x: " + _nested(d)}))
huge_numbers = st.tuples(
    st.sampled_from(["runs: 2", "target: fixture"]),
    st.one_of(st.integers(min_value=2**63, max_value=10**80), st.integers(max_value=-(2**63) - 1, min_value=-(10**80))),
).map(
    lambda p: _baseline(
        **{
            p[0]: f"{p[0]}\n{'    ' if p[0] == 'runs: 2' else ''}"
            f"{'seed' if p[0] == 'runs: 2' else 'timeout_seconds'}: {p[1]}"
        }
    )
)
bad_ids = st.one_of(
    st.sampled_from([".", "..", "../x", "a/b", "", "-a", "_a"]),
    st.text(min_size=65, max_size=3000, alphabet="abc"),
    st.tuples(st.text(max_size=5, alphabet="ab"), st.sampled_from(CONTROL)).map("".join),
).map(lambda i: _baseline(**{"id: c1": f"id: {_yaml_string(i)}"}))
sneaky = st.tuples(
    st.sampled_from(["tests", "logging", "benchmark", "pytest", "validation"]),
    st.sampled_from(INVISIBLE + CONTROL),
    st.integers(1, 3),
).map(lambda p: _baseline(instruction=_yaml_string(f"Write {p[0][: p[2]]}{p[1]}{p[0][p[2] :]} for a parser.")))
oversized = st.integers(20_001, 60_000).map(lambda n: _baseline(instruction="W" + "a" * n))
duplicated = st.sampled_from(["suite_id: s", "mode: baseline", "target: fixture"]).map(
    lambda key: _baseline(**{key: f"{key}\n{key}"})
)
aliased = st.sampled_from(
    [
        ("runs: 2", "runs: &r 2\n    timeout_seconds: *r"),
        ("target: fixture", "target: &t fixture\nx: *t"),
        ("suite_id: s", "suite_id: &s s\nmode2: *s"),
    ]
).map(lambda p: _baseline(**{p[0]: p[1]}))
garbage = st.binary(max_size=200).filter(lambda b: b"suite_id" not in b)
MALFORMED = st.one_of(nested, huge_numbers, bad_ids, sneaky, oversized, duplicated, aliased, garbage)


@pytest.mark.slow
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(suite=MALFORMED)
def test_generated_malformed_suites_exit_2_in_one_line_and_write_nothing(capsys, suite):
    _assert_refused(*_run_in_process(capsys, suite))
