import pytest
from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.contract import forbidden_word
from ironbench.core.errors import SuiteError
from ironbench.suite.models import load_suite, parse_suite

FORBIDDEN = [
    "test",
    "tests",
    "testing",
    "pytest",
    "coverage",
    "validate",
    "validation",
    "performance",
    "optimize",
    "optimization",
    "tooling",
    "tool",
    "harness",
    "harnessing",
    "benchmark",
    "benchmarking",
    "logging",
    "logs",
    "log",
    "debug",
]
CLEAN = ["logic", "contest", "catalog", "protest", "attestation", "harbour", "toolkitten", "debugger-free"]


def base(**case):
    return {
        "suite_id": "s",
        "mode": "baseline",
        "cases": [{"id": "c1", "instruction": "Write a function that adds two numbers.", **case}],
    }


def test_shipped_baseline_suite_is_the_calibration_triad():
    suite = load_suite("suites/baseline.yaml")
    assert [c.id for c in suite.cases] == ["compile_email_regex", "convert_list_to_dict", "simple_cache"]
    assert all(c.runs <= 10 for c in suite.cases)


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["cases"][0].update(runz=3), "cases[0].runz: unknown key"),
        (lambda d: d.update(colour="red"), "colour: unknown key"),
        (lambda d: d["cases"][0].update(runs="3"), "cases[0].runs"),
        (lambda d: d["cases"][0].update(runs=11), "cases[0].runs"),
        (lambda d: d["cases"][0].update(instruction="   "), "cases[0].instruction: instruction is empty"),
        (lambda d: d["cases"].append(dict(d["cases"][0])), "cases[1].id: duplicate id 'c1'"),
        (lambda d: d.pop("suite_id"), "suite_id: required field is missing"),
        (lambda d: d.update(mode="nonsense"), "mode"),
        (lambda d: d.update(debug_enabled="yes"), "debug_enabled"),
    ],
)
def test_bad_suites_name_the_file_and_field(mutate, expected):
    data = base()
    mutate(data)
    with pytest.raises(SuiteError) as error:
        parse_suite(data, "suites/bad.yaml")
    message = str(error.value)
    assert message.startswith("suites/bad.yaml: ")
    assert expected in message
    assert "\n" not in message


def test_unreadable_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("suite_id: s\ncases: [\n  - id: x\n")
    with pytest.raises(SuiteError, match=r"broken.yaml: invalid YAML at line \d+"):
        load_suite(path)


def test_missing_suite_file(tmp_path):
    with pytest.raises(SuiteError, match="no such suite file"):
        load_suite(tmp_path / "absent.yaml")


@pytest.mark.parametrize("word", FORBIDDEN)
def test_contract_rejects_forbidden_words_naming_case_and_word(word):
    data = base(instruction=f"Write a function that parses dates, with {word.upper()} included.")
    with pytest.raises(SuiteError) as error:
        parse_suite(data, "s.yaml")
    assert "s.yaml: cases[0] (c1)" in str(error.value)
    assert repr(word.upper()) in str(error.value)


@pytest.mark.parametrize("word", CLEAN)
def test_contract_allows_words_that_merely_contain_forbidden_ones(word):
    assert forbidden_word(f"Write a function about {word}.") is None


@given(
    prefix=st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Zs")), max_size=30),
    word=st.sampled_from(FORBIDDEN),
    suffix=st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Zs")), max_size=30),
)
def test_a_forbidden_word_standing_alone_is_always_found(prefix, word, suffix):
    assert forbidden_word(f"{prefix} {word} {suffix}") is not None


def test_ladder_levels_are_capped_with_a_readable_error():
    data = {
        "suite_id": "s",
        "mode": "stress",
        "cases": [
            {"id": "c", "instruction": "Write a parser.", "ladder": {"generator": "add_ambiguity", "additions": 11}}
        ],
    }
    with pytest.raises(SuiteError) as error:
        parse_suite(data, "s.yaml")
    assert str(error.value) == (
        "s.yaml: cases[0].ladder: add_ambiguity: additions: Input should be less than or equal to 10"
    )


def test_stop_rules_are_read_and_checked():
    from ironbench.run.planner import plan

    suite = parse_suite({**base(), "stop": {"rule": "confidence", "reproduce": 0.8, "max_runs": 30}}, "s.yaml")
    [track] = plan(suite)
    assert track.groups[0].max_runs == 30 and track.groups[0].stop.reproduce == 0.8
    own = parse_suite(base(stop={"rule": "last_3_agree"}, runs=5), "s.yaml")
    assert plan(own)[0].groups[0].stop is None and plan(own)[0].groups[0].max_runs == 5


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            base(stop={"rule": "confidence", "max_runs": 30}, runs=5),
            "cases[0]: runs: the confidence rule takes its cap from stop.max_runs",
        ),
        (
            base(stop={"rule": "confidence", "max_runs": 10}),
            (
                "cases[0].stop: max_runs: 10 runs can never show recurrence above 0.8 at 0.95 confidence; "
                "at least 14 are needed"
            ),
        ),
        (base(stop={"rule": "confidence", "reproduce": 0.5, "max_runs": 30}), "cases[0].stop.reproduce"),
        (base(stop={"rule": "confidence"}), "cases[0].stop.max_runs: required field is missing"),
        (base(stop={"rule": "sometimes"}), "cases[0].stop.rule"),
        ({**base(), "conversations": 3}, "conversations: only a gauntlet suite has conversations"),
    ],
)
def test_bad_stop_rules_and_conversations_are_one_clear_error(data, expected):
    with pytest.raises(SuiteError) as raised:
        parse_suite(data, "s.yaml")
    assert str(raised.value).startswith("s.yaml: ") and expected in str(raised.value)
