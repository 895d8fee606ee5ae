"""A recorded suite read back typed: every shape an ironbench recorded, each upcaster on a real
record of its shape, and the suite's rules as readers of a run use them.

The records in tests/fixtures/recorded_suites/ are `Suite.to_dict()` as each named commit wrote
it (`git archive <commit>`, its own `load_suite` on a suite of the features it had), and the
suites `ironbench import` records for another harness's runs.
"""

import json
import unicodedata
from pathlib import Path

import pytest

from ironbench.core.errors import StoreError
from ironbench.core.events import RecordedEvent, RunStarted
from ironbench.suite.models import (
    AdversarialCase,
    BaselineCase,
    FixedStop,
    PythonCheck,
    StressCase,
    Suite,
    parse_suite,
)
from ironbench.suite.recorded import (
    UPCASTERS,
    recorded_suite,
    suite_of_run,
    upcast,
    upcast_suite_base_instruction_v1,
    upcast_suite_focuses_v1,
    upcast_suite_generators_v1,
    upcast_suite_imported_v1,
    upcast_suite_intensity_v1,
    upcast_suite_ladder_v1,
    upcast_suite_material_repeats_v1,
    upcast_suite_runs_beside_own_count,
)
from ironbench.suite.shipped import open_suite, shipped_suites

RECORDED = Path(__file__).parents[1] / "fixtures" / "recorded_suites"
INSTRUCTION = "Write a Python function that adds two numbers and returns the sum."


def record(name: str) -> dict:
    (path,) = [p for p in RECORDED.glob(f"{name}_*.json") if p.stem.rsplit("_", 1)[0] == name]
    return json.loads(path.read_text())


def started(suite: dict, suite_id: str = "s", mode: str = "baseline") -> RunStarted:
    return RunStarted(
        suite_id=suite_id,
        mode=mode,
        suite=suite,
        target_argv=["t"],
        ironclad_version="x",
        harness_version="x",
        python_version="3",
        platform="p",
    )


@pytest.mark.parametrize("path", sorted(RECORDED.glob("*.json")), ids=lambda p: p.stem)
def test_every_recorded_shape_reads_typed(path):
    data = json.loads(path.read_text())
    suite = recorded_suite(started(data, data["suite_id"], data["mode"]))
    assert suite.suite_id == data["suite_id"] and suite.mode == data["mode"]
    assert [c.id for c in suite.cases] == [c["id"] for c in data["cases"]]
    # upcast to today's recorded shape, it reads back as itself
    again = Suite.from_dict(suite.to_dict())
    assert again == suite and again.to_dict() == suite.to_dict()


def test_the_upcasters_run_in_the_order_the_shapes_followed():
    assert [u.__name__ for u in UPCASTERS] == [
        "upcast_suite_generators_v1",
        "upcast_suite_ladder_v1",
        "upcast_suite_base_instruction_v1",
        "upcast_suite_intensity_v1",
        "upcast_suite_focuses_v1",
        "upcast_suite_runs_beside_own_count",
        "upcast_suite_imported_v1",
        "upcast_suite_material_repeats_v1",
    ]


def test_generators_v1_become_variants_with_their_parameters_under_params():
    old = record("adversarial")  # 3b800b8
    (case,) = old["cases"]
    assert "generators" in case and "variants" not in case
    (new,) = upcast_suite_generators_v1(old)["cases"]
    assert "generators" not in new
    punctuation = next(e for e in new["variants"] if e["generator"] == "punctuation_noise")
    assert punctuation == {"generator": "punctuation_noise", "seed": 4, "count": 1, "params": {"intensity": 0.1}}
    suite = Suite.from_dict(old)
    assert isinstance(suite.cases[0], AdversarialCase)
    assert [v.generator for v in suite.cases[0].variants] == [g["generator"] for g in case["generators"]]


def test_ladder_v1_becomes_stress_ladder_levels_with_the_runs_on_the_case():
    old = record("stress")  # 3b800b8
    ladder = old["cases"][0]["ladder"]
    new = upcast_suite_ladder_v1(old)["cases"][0]
    assert "ladder" not in new
    assert new["runs_per_level"] == ladder["runs_per_level"] == 2
    assert new["stop_at_boundary"] is ladder["stop_at_boundary"] is True
    assert new["stress_ladder"] == [
        {"generator": ladder["generator"], "seed": ladder["seed"], "params": {"additions": 1}, "level": k}
        for k in (1, 2)
    ]
    listed = upcast_suite_ladder_v1(record("stress_additions_list"))["cases"][0]
    assert [level["params"]["additions"] for level in listed["stress_ladder"]] == [["Also log."], ["Also test."]]
    case = Suite.from_dict(record("stress_additions_list")).cases[0]
    assert isinstance(case, StressCase) and case.stop_at_boundary is False
    # the runs the run recorded, though the suite's runs_per_variant reaches new files' levels
    assert case.runs_per_level == 5


def test_material_repeats_v1_is_the_3_repeats_every_variant_had():
    old = record("spec_adversarial")  # 88760bd: runs_per_variant 1 recorded, and read by nothing
    assert old["runs_per_variant"] == 1 and all("material_repeats" not in c for c in old["cases"])
    assert [c["material_repeats"] for c in upcast_suite_material_repeats_v1(old)["cases"]] == [3] * len(old["cases"])
    suite = Suite.from_dict(old)
    assert [c.material_repeats for c in suite.cases if isinstance(c, AdversarialCase)] == [3]
    # a record of today's shape says its own: runs_per_variant reached the case
    again = Suite.from_dict({**suite.to_dict(), "runs_per_variant": 2})
    assert again.cases[0].material_repeats == 3  # the case's recorded repeats, not the suite's
    mixed = Suite.from_dict(record("mixed"))  # 4d6d3a5: an adversarial case in a mixed suite
    assert [c.material_repeats for c in mixed.cases if isinstance(c, AdversarialCase)] == [3]
    baseline = upcast_suite_material_repeats_v1(record("baseline"))
    assert all("material_repeats" not in c for c in baseline["cases"])


def test_base_instruction_v1_is_recorded_under_instruction():
    old = record("spec_adversarial")  # 88760bd
    assert "base_instruction" in old["cases"][0] and "instruction" not in old["cases"][0]
    new = upcast_suite_base_instruction_v1(old)["cases"][0]
    assert new["instruction"] == INSTRUCTION and "base_instruction" not in new
    assert "base_instruction" not in record("spec_instruction")["cases"][0]  # bb7ce7a on
    assert Suite.from_dict(old).instruction_of("a") == INSTRUCTION


def test_intensity_v1_is_both_bounds():
    old = upcast_suite_generators_v1(record("adversarial"))
    entry = next(
        e for e in upcast_suite_intensity_v1(old)["cases"][0]["variants"] if e["generator"] == "punctuation_noise"
    )
    assert entry["params"] == {"intensity": 0.1, "intensity_min": 0.1, "intensity_max": 0.1}
    spec = record("spec_adversarial")  # bounds given: left alone
    assert upcast_suite_intensity_v1(spec) == spec


def test_focuses_v1_are_focus_values():
    old = upcast_suite_generators_v1(record("adversarial_ai"))  # 8d6a758
    entry = next(e for e in upcast_suite_focuses_v1(old)["cases"][0]["variants"] if "focus" in e["generator"])
    assert entry["params"]["focus_values"] == ["simplicity", "clarity"] and "focuses" not in entry["params"]
    case = Suite.from_dict(record("adversarial_ai")).cases[0]
    assert isinstance(case, AdversarialCase)
    focus = next(v for v in case.variants if "focus" in v.generator)
    assert focus.params.focus_values == ["simplicity", "clarity"]  # type: ignore[attr-defined]


def test_runs_beside_a_rule_with_its_own_count_is_the_default_not_the_users():
    old = record("stop_confidence")  # 7299ef5: runs 10 written beside the confidence rule
    assert old["cases"][0]["runs"] == 10 and old["cases"][0]["stop"]["rule"] == "confidence"
    new = upcast_suite_runs_beside_own_count(old)["cases"]
    assert "runs" not in new[0] and new[1]["runs"] == 4  # the seed's rule keeps its runs
    suite_rule = upcast_suite_runs_beside_own_count(record("stop_suite"))["cases"]  # 540befa: the suite's rule
    assert "runs" not in suite_rule[0] and suite_rule[1]["runs"] == 5
    suite = Suite.from_dict(record("stop_fixed"))
    case = suite.case("a")
    assert isinstance(case, BaselineCase) and isinstance(suite.stop_of(case), FixedStop)


def test_an_imported_suite_keeps_what_todays_model_reads():
    plain = record("imported")
    assert upcast_suite_imported_v1(plain) == plain
    hostile = record("imported_hostile")
    assert upcast_suite_imported_v1(hostile) == {
        "suite_id": "baseline v1 (nightly)",
        "mode": "baseline",
        "debug_enabled": True,
        "runs_per_variant": 1,
        "cases": [],
    }
    suite = recorded_suite(started(hostile, "baseline v1 (nightly)"))
    assert suite.suite_id == "baseline v1 (nightly)" and suite.cases == []
    # what the record states, and nothing it does not: metadata.json shows null for those
    assert (suite.settings.timeout_seconds, suite.settings.repair_enabled, suite.settings.debug_enabled) == (
        None,
        None,
        True,
    )
    assert Suite.from_dict(record("imported")).settings.timeout_seconds == 300


def test_todays_records_read_back_as_the_suites_that_recorded_them():
    for name in shipped_suites():
        suite, _ = open_suite(name)
        recorded = suite.to_dict()
        assert upcast(recorded) == recorded or any(
            case.get("stop", {}) and case["stop"]["rule"] in ("fixed", "confidence") for case in recorded["cases"]
        )
        assert Suite.from_dict(recorded) == suite, name


def test_a_record_keeps_what_ran_where_a_file_is_read_strictly():
    odd = unicodedata.normalize("NFD", "Write a função that adds two numbers.")
    data = {"suite_id": "s", "mode": "baseline", "cases": [{"id": "a", "instruction": odd}]}
    assert parse_suite(data, "f").cases[0].instruction != odd  # a file's: NFKC
    assert Suite.from_dict(data).cases[0].instruction == odd  # a record's: as it ran
    # a generator this ironbench lacks (a plugin not installed here): kept as recorded
    data = {
        "suite_id": "s",
        "mode": "adversarial",
        "cases": [
            {"id": "a", "instruction": INSTRUCTION, "variants": [{"generator": "from_a_plugin", "params": {"x": 1}}]}
        ],
    }
    with pytest.raises(Exception, match="unknown generator"):
        parse_suite(data, "f")
    case = Suite.from_dict(data).cases[0]
    assert isinstance(case, AdversarialCase) and case.variants[0].params.model_dump() == {"x": 1}
    assert Suite.from_dict(data).to_dict()["cases"][0]["variants"][0]["params"] == {"x": 1}
    with pytest.raises(StoreError, match="suite s: its record cannot be read"):
        recorded_suite(started({"cases": [{"id": "a"}]}))


def test_a_run_recorded_without_its_suite_reads_as_the_events_id_and_mode():
    suite = recorded_suite(started({}, "bare", "baseline"))
    assert suite.suite_id == "bare" and suite.cases == [] and suite.case("a") is None


def test_the_suites_rules_by_case_id():
    suite = Suite.from_dict(record("checks_stress_ladder"))  # c27bc9e
    assert suite.case("b") is suite.cases[0] and suite.case("nope") is None
    assert isinstance(suite.check_of(suite.cases[0]), PythonCheck)
    # the stress case: level 1 its own check, level 2 none, level 3 the suite's
    assert suite.checked("s", 1) and not suite.checked("s", 2) and suite.checked("s", 3)
    assert suite.checked("not_in_the_suite")  # the suite's check
    canonical = Suite.from_dict(record("canonical"))
    assert [canonical.stopping_rule(c).max_runs for c in ("a", "b", "c")] == [3, 2, 10]
    assert canonical.stopping_rule("c").name == "last_3_agree" and canonical.stopping_rule("a").name == "fixed"
    assert [canonical.max_runs(c) for c in canonical.cases if isinstance(c, BaselineCase)] == [3, 2, 10]
    confidence = Suite.from_dict(record("stop_confidence")).stopping_rule("a")
    assert confidence.name == "confidence" and confidence.max_runs == 30 and len(confidence.thresholds) == 30
    assert Suite.from_dict(record("stop_suite")).stopping_rule("elsewhere").name == "fixed"  # the suite's rule
    assert Suite.from_dict(record("baseline")).stopping_rule("elsewhere").max_runs == 10  # the seed's
    gauntlet = Suite.from_dict(record("gauntlet_conversations"))  # 2bc2dfe
    assert gauntlet.engine_names == ["plain", "guarded", "py", "cmd"]
    scenario = gauntlet.scenario("geo")
    assert scenario is not None and gauntlet.conversations_of(scenario) == 3 and gauntlet.scenario("x") is None
    # 4 engines x (geo: 3 conversations x 2 prompts + sci: the suite's 2 x 2 prompts)
    assert gauntlet.planned_turns == 4 * (3 * 2 + 2 * 2)
    fewer = canonical.with_complexity("small")
    assert fewer.case("b") is None and fewer.case("a") is not None and canonical.case("b") is not None


def test_a_runs_suite_is_read_once_per_event():
    first = RecordedEvent(1, "event-1", "run", "run", "2026-01-01T00:00:00Z", started(record("demo"), "demo", "mixed"))
    suite = suite_of_run(first)
    assert suite_of_run(first) is suite
    assert suite_of_run(RecordedEvent(1, "event-2", "run", "run", "t", first.event)) is not suite
