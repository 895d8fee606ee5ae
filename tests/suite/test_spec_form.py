"""Suites written to the spec's "Benchmark Suite Schema" run as written; the short form reads
as the same typed Suite; errors name the file, the key path as the file wrote it, and what is wrong."""

import hashlib
import itertools
import json
from pathlib import Path

import pytest
import yaml

from ironbench.core.errors import SuiteError
from ironbench.run.planner import plan
from ironbench.run.preview import preview
from ironbench.suite.models import load_suite, parse_suite
from tests.conftest import cli, query

EMAIL = "Compile a list of email patterns into regex objects."

# The spec's schema examples, filled in: its Suite Configuration with the Base Case schema,
# its Adversarial Suite schema and its Stress Suite schema (a four-generator ladder).
SPEC_BASELINE = f"""\
suite_id: spec_baseline
mode: baseline
runs_per_variant: 1
timeout_seconds: 60
repair_enabled: true
debug_enabled: true
runs: 6
cases:
  - id: compile_email_regex
    instruction: >
      {EMAIL}
    runs: 4
    timeout_seconds: 60
  - id: convert_list_to_dict
    instruction: Convert a list of dictionaries into a dictionary keyed by id.
"""
SPEC_ADVERSARIAL = f"""\
suite_id: spec_adversarial
category: adversarial
base_case: compile_email_regex
runs_per_variant: 1
timeout_seconds: 60
repair_enabled: true
debug_enabled: true
cases:
  - id: compile_email_regex_adv
    base_instruction: {EMAIL}
    variants:
      - generator: whitespace_noise
        params: {{count: 3, intensity_min: 0.05, intensity_max: 0.1}}
        seed: 7
      - generator: punctuation_noise
        params: {{}}
        count: 2
        intensity_min: 0.05
        intensity_max: 0.2
        seed: 8
      - generator: lexical_shuffle
        params: {{count: 2, max_swaps: 1, seed: 9}}
      - generator: synonym_substitution
        params: {{max_replacements: 2}}
        count: 2
        intensity_min: 0.1
        intensity_max: 0.3
        seed: 10
"""
FOUR_GENERATORS = [
    ("add_scope_detail", ["Include plus addressing and subdomains."]),
    (
        "add_constraints_tension",
        ["Prefer maintainable patterns over extreme strictness.", "Prefer clarity over cleverness."],
    ),
    ("add_ambiguity", ["where appropriate"]),
    ("add_multi_objective", ["Return both compiled regex objects and a brief explanation of each pattern."]),
]
SPEC_STRESS = f"""\
suite_id: spec_stress
category: stress
base_case: compile_email_regex
runs_per_variant: 3
timeout_seconds: 60
cases:
  - id: compile_email_regex_stress
    base_instruction: {EMAIL}
    stress_ladder:
""" + "".join(
    f"      - level: {k}\n        generator: {g}\n        params:\n          additions: {json.dumps(a)}\n        seed: {k}\n"
    for k, (g, a) in enumerate(FOUR_GENERATORS, start=1)
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def shape(tracks) -> list:
    """What a plan runs: every group's folder, instruction, cap, generator, level and rule."""
    return [
        (
            t.mode,
            t.case_id,
            t.base_case,
            t.stop_at_boundary,
            [(g.path, g.instruction, g.max_runs, g.generator, g.level, g.stop, g.complexity) for g in t.groups],
        )
        for t in tracks
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, text", [("b.yaml", SPEC_BASELINE), ("a.yaml", SPEC_ADVERSARIAL), ("s.yaml", SPEC_STRESS)]
)
def test_the_specs_schema_examples_load_and_run_against_the_fixture(tmp_path, name, text):
    suite = write(tmp_path, name, text)
    out = tmp_path / "out"
    run_id = cli("run", str(suite), "--target", "fixture", "--out", str(out), "-q", "--no-report", check=True)
    run_id = run_id.stdout.strip()
    folders = {p.relative_to(out / run_id).parts[:3] for p in (out / run_id).rglob("summary.json")}
    loaded = load_suite(suite)
    for case in loaded.cases:
        mode = {"spec_baseline": "baseline", "spec_adversarial": "adversarial", "spec_stress": "stress"}[
            loaded.suite_id
        ]
        assert (mode, case.id) == next(f[:2] for f in folders if f[1] == case.id)
    if loaded.suite_id == "spec_stress":
        # the spec's own layout: stress/<case>/level_N/, one folder per level of the ladder
        levels = {f[2] for f in folders}
        assert levels <= {f"level_{k}" for k in range(5)} and "level_1" in levels
        assert (out / run_id / "stress" / "compile_email_regex_stress" / "aggregate.json").is_file()


def test_suite_keys_mean_what_the_spec_says(tmp_path):
    baseline = load_suite(write(tmp_path, "b.yaml", SPEC_BASELINE))
    # `runs` at the suite level caps every case that sets none; a case's own wins
    assert [g.max_runs for t in plan(baseline) for g in t.groups] == [4, 6]
    assert baseline.case_timeout(baseline.cases[0]) == 60
    adversarial = load_suite(write(tmp_path, "a.yaml", SPEC_ADVERSARIAL))
    assert adversarial.mode == "adversarial" and plan(adversarial)[0].base_case == "compile_email_regex"
    entries = {e.generator: e for e in adversarial.cases[0].variants}
    assert entries["whitespace_noise"].count == 3 and entries["whitespace_noise"].params.intensity_max == 0.1
    assert entries["punctuation_noise"].params.intensity_max == 0.2 and entries["punctuation_noise"].seed == 8
    assert entries["lexical_shuffle"].seed == 9 and entries["lexical_shuffle"].params.max_swaps == 1
    assert entries["synonym_substitution"].ignored == ("intensity_min", "intensity_max")
    stress = load_suite(write(tmp_path, "s.yaml", SPEC_STRESS))
    case = stress.cases[0]
    assert case.runs_per_level == 3  # the suite's runs_per_variant: each level runs 2 to 3 times
    assert [level.generator for level in case.stress_ladder] == [g for g, _ in FOUR_GENERATORS]


def test_a_four_generator_ladder_is_cumulative_and_previews_level_by_level(tmp_path):
    suite = write(tmp_path, "s.yaml", SPEC_STRESS)
    levels = [v for v in plan(load_suite(suite))[0].variants]
    assert [v.variant_id for v in levels] == [f"level_{k}" for k in range(5)]
    assert [v.generator for v in levels[1:]] == [g for g, _ in FOUR_GENERATORS]
    for lower, higher in itertools.pairwise(levels):
        assert higher.instruction.startswith(lower.instruction.rstrip("."))
    assert levels[3].instruction.endswith("Prefer clarity over cleverness, where appropriate.")
    assert levels[4].instruction.endswith("Return both compiled regex objects and a brief explanation of each pattern.")
    shown = cli("variants", str(suite), check=True).stdout
    for k, (generator, additions) in enumerate(FOUR_GENERATORS, start=1):
        line = next(x for x in shown.splitlines() if x.strip().startswith(f"level_{k} ("))
        # each level shows only what it adds to the level below
        assert f"({generator})" in line and additions[-1] in line and line.count("{+") >= 1
        assert EMAIL not in line.split("{+", 1)[1]
    data = json.loads(cli("variants", str(suite), "--format", "json", check=True).stdout)
    assert [d["variant_id"] for d in data] == [f"level_{k}" for k in range(5)]


SHORT_AND_SPEC = {
    "baseline": (
        {"suite_id": "s", "mode": "baseline", "cases": [{"id": "a", "instruction": EMAIL, "runs": 5}]},
        {"suite_id": "s", "mode": "baseline", "runs": 5, "cases": [{"id": "a", "instruction": EMAIL}]},
    ),
    "adversarial": (
        {
            "suite_id": "s",
            "mode": "adversarial",
            "cases": [
                {
                    "id": "a",
                    "instruction": EMAIL,
                    "generators": [
                        {
                            "generator": "punctuation_noise",
                            "count": 3,
                            "intensity_min": 0.05,
                            "intensity_max": 0.2,
                            "seed": 4,
                        },
                        {"generator": "ai_rewrite_style", "count": 2, "styles": ["casual_request"], "seed": 1},
                        {"generator": "ai_rephrase_with_focus_shift", "focuses": ["clarity"]},
                    ],
                }
            ],
        },
        {
            "suite_id": "s",
            "category": "adversarial",
            "cases": [
                {
                    "id": "a",
                    "base_instruction": EMAIL,
                    "variants": [
                        {
                            "generator": "punctuation_noise",
                            "params": {"count": 3, "intensity_min": 0.05, "intensity_max": 0.2},
                            "seed": 4,
                        },
                        {"generator": "ai_rewrite", "params": {"count": 2, "styles": ["casual_request"]}, "seed": 1},
                        {"generator": "ai_rephrase_with_focus_shift", "params": {"focus_values": ["clarity"]}},
                    ],
                }
            ],
        },
    ),
    "stress": (
        {
            "suite_id": "s",
            "mode": "stress",
            "cases": [
                {
                    "id": "a",
                    "instruction": EMAIL,
                    "ladder": {"generator": "add_ambiguity", "additions": 3, "seed": 9, "runs_per_level": 3},
                }
            ],
        },
        {
            "suite_id": "s",
            "category": "stress",
            "runs_per_variant": 3,
            "cases": [
                {
                    "id": "a",
                    "base_instruction": EMAIL,
                    "stress_ladder": [
                        {"level": k, "generator": "add_ambiguity", "params": {"additions": 1}, "seed": 9}
                        for k in (1, 2, 3)
                    ],
                }
            ],
        },
    ),
    "canonical": (
        {
            "suite_id": "s",
            "mode": "canonical",
            "runs_per_case": 3,
            "cases": [
                {"id": "a", "instruction": EMAIL, "complexity": "small"},
                {"id": "b", "instruction": "Write a cache.", "complexity": "large", "runs": 2},
            ],
        },
        {
            "suite_id": "s",
            "mode": "canonical",
            "runs_per_case": 3,
            "small": [{"id": "a", "instruction": EMAIL, "complexity": "small"}],
            "large": [{"id": "b", "instruction": "Write a cache.", "runs": 2}],
        },
    ),
}


@pytest.mark.parametrize("mode", sorted(SHORT_AND_SPEC))
def test_the_spec_form_and_the_short_form_are_the_same_suite_and_plan(mode):
    short, spec = (parse_suite(data, f"{mode}.yaml") for data in SHORT_AND_SPEC[mode])
    assert shape(plan(short)) == shape(plan(spec))
    assert [i.instruction for i in preview(short)] == [i.instruction for i in preview(spec)]
    if mode != "adversarial":  # (focuses and focus_values are one parameter; the entries say which was set)
        assert short.cases == spec.cases  # the same typed cases (suite-level keys differ as written)


def test_canonical_cases_run_a_fixed_number_of_times_under_their_complexity(tmp_path):
    suite = parse_suite(SHORT_AND_SPEC["canonical"][1], "c.yaml")
    groups = [g for t in plan(suite) for g in t.groups]
    assert [(g.path, g.max_runs, g.stop.rule, g.complexity) for g in groups] == [
        ("canonical/small/a", 3, "fixed", "small"),
        ("canonical/large/b", 2, "fixed", "large"),
    ]
    assert [c.id for c in suite.with_complexity("large").cases] == ["b"]
    with pytest.raises(SuiteError, match="no mid case"):
        suite.with_complexity("mid")


@pytest.mark.slow
def test_run_filter_runs_one_complexity_and_the_views_carry_it(tmp_path):
    path = write(tmp_path, "c.yaml", yaml.safe_dump(SHORT_AND_SPEC["canonical"][1]))
    out = tmp_path / "out"
    run_id = cli(
        "run", str(path), "--target", "fixture", "--filter", "large", "--out", str(out), "-q", "--no-report", check=True
    )
    run_id = run_id.stdout.strip()
    assert {p.parts[-5:-2] for p in (out / run_id).rglob("summary.json")} == {("canonical", "large", "b")}
    assert query(out, "SELECT DISTINCT complexity, case_id FROM invocations") == [
        {"complexity": "large", "case_id": "b"}
    ]
    refused = cli("run", "suites/baseline.yaml", "--target", "fixture", "--filter", "small", "--out", str(out))
    assert refused.returncode == 2 and "only a canonical suite" in refused.stderr


@pytest.mark.slow
def test_a_folded_blocks_final_line_break_is_not_part_of_the_instruction(tmp_path, monkeypatch):
    folded = write(
        tmp_path,
        "f.yaml",
        f"suite_id: s\nmode: baseline\ncases:\n  - id: a\n    instruction: >\n      {EMAIL}\n    runs: 3\n",
    )
    quoted = write(
        tmp_path, "q.yaml", f'suite_id: s\nmode: baseline\ncases:\n  - id: a\n    instruction: "{EMAIL}"\n    runs: 3\n'
    )
    assert load_suite(folded) == load_suite(quoted) and load_suite(folded).cases[0].instruction == EMAIL
    # the contract check reads the same string: a forbidden word on the block's last line is found
    bad = write(
        tmp_path,
        "bad.yaml",
        "suite_id: s\nmode: baseline\ncases:\n  - id: a\n    instruction: |\n      Write a parser.\n      Add tests.\n",
    )
    with pytest.raises(SuiteError, match="forbidden word 'tests'"):
        load_suite(bad)
    # what the target receives, the hash and instruction.txt: the words, no line break
    from tests.conftest import SCRIPTED

    folded.write_text(
        folded.read_text() + f'target: ["{__import__("sys").executable}", "{SCRIPTED}", "{{instruction}}"]\n'
    )
    out = tmp_path / "out"
    run_id = cli("run", str(folded), "--out", str(out), "-q", "--no-report", env={"SCRIPTED_ECHO": "1"}, check=True)
    folder = out / run_id.stdout.strip() / "baseline" / "a" / "run_001"
    summary = json.loads((folder / "summary.json").read_text())
    assert (folder / "instruction.txt").read_text() == EMAIL
    assert summary["instruction_hash"] == "sha256:" + hashlib.sha256(EMAIL.encode()).hexdigest()
    # the target printed its argument first (SCRIPTED_ECHO): the words, then its own line break
    stdout = query(out, "SELECT payload FROM events WHERE type = 'invocation_completed'")
    assert json.loads(stdout[0]["payload"])["stdout"].startswith(f"{EMAIL}\n[")


@pytest.mark.slow
@pytest.mark.parametrize(
    "text, expected",
    [
        (
            SPEC_ADVERSARIAL.replace(
                "params: {count: 2, max_swaps: 1, seed: 9}", "params: {count: 11, max_swaps: 1, seed: 9}"
            ),
            "cases[0].variants[2].params.count: Input should be less than or equal to 10",
        ),
        (
            SPEC_ADVERSARIAL.replace(
                "        count: 2\n        intensity_min: 0.05",
                "        count: 2\n        params: {count: 3}\n        intensity_min: 0.05",
            ).replace("        params: {}\n", ""),
            "cases[0].variants[1]: count: given at the entry's top level and in params, with different values",
        ),
        (
            SPEC_ADVERSARIAL.replace("generator: lexical_shuffle", "generator: emoji_noise"),
            "cases[0].variants[2]: unknown generator 'emoji_noise'",
        ),
        (
            SPEC_ADVERSARIAL.replace("params: {max_replacements: 2}", "params: {max_replacements: two}"),
            "cases[0].variants[3]: synonym_substitution: max_replacements: Input should be a valid integer",
        ),
        (SPEC_STRESS.replace("level: 2", "level: 3"), "cases[0]: stress_ladder[1].level: 3, where 2 was due"),
        (
            SPEC_STRESS.replace("generator: add_ambiguity", "generator: whitespace_noise"),
            "cases[0].stress_ladder[2]: unknown generator 'whitespace_noise'",
        ),
        (
            SPEC_STRESS.replace("runs_per_variant: 3", "runs_per_variant: 1"),
            "runs_per_variant: 1, but a stress level runs 2 to 5 times",
        ),
        (
            SPEC_STRESS.replace("category: stress", "category: stress\nmode: adversarial"),
            "category: 'stress', but mode: 'adversarial'",
        ),
        (
            SPEC_STRESS.replace("    base_instruction:", "    instruction: x\n    base_instruction:"),
            "cases[0]: base_instruction: given twice (instruction is its shorthand)",
        ),
        (
            SPEC_BASELINE.replace("    runs: 4\n", "    runs: 40\n"),
            "cases[0].runs: Input should be less than or equal to 10",
        ),
        (
            "suite_id: s\nmode: canonical\nsmall:\n  - id: a\n    instruction: Write a cache.\n  - id: b\n",
            "small[1].instruction: required field is missing",
        ),
        (
            "suite_id: s\nmode: canonical\nmid:\n  - id: a\n    instruction: Write a cache.\n    complexity: large\n",
            "mid[0].complexity: 'large', under mid",
        ),
        (
            "suite_id: s\nmode: baseline\nsmall:\n  - id: a\n    instruction: Write a cache.\n",
            "small: only a canonical suite (mode: canonical) groups cases by complexity",
        ),
        (
            "suite_id: s\nmode: stress\ncases:\n  - id: a\n    instruction: Write a cache.\n    ladder: {generator: add_ambiguity, runs_per_level: 9}\n",
            "cases[0].ladder.runs_per_level: Input should be less than or equal to 5",
        ),
    ],
)
def test_spec_form_errors_name_file_key_path_and_problem_exit_2(tmp_path, text, expected):
    path = write(tmp_path, "bad.yaml", text)
    result = cli("variants", str(path))
    assert result.returncode == 2, result.stdout
    line = result.stderr.strip()
    assert "\n" not in line and "Traceback" not in line
    assert line.startswith(f"ironbench: error: {path}: ") and expected in line, line


@pytest.mark.parametrize(
    "text", [SPEC_BASELINE, SPEC_ADVERSARIAL, SPEC_STRESS, yaml.safe_dump(SHORT_AND_SPEC["canonical"][1])]
)
def test_the_generated_json_schema_accepts_the_specs_form(text):
    import jsonschema

    from ironbench.suite.schema import suite_schema

    validator = jsonschema.Draft202012Validator(suite_schema())
    assert list(validator.iter_errors(yaml.safe_load(text))) == []
