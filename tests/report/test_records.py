"""What `ironbench show` computes for the page is read once from its JSON into records: nested
records included, a later ironbench's keys left out, and embedded in the page as show computes it."""

from ironbench.analysis.field import field_numbers
from ironbench.report.embedded import compact, plain
from ironbench.report.gather import gather
from ironbench.report.records import (
    CheckCounts,
    ChecksSection,
    Estimate,
    FailureCauses,
    RobustnessGenerator,
    WrongRun,
    from_json,
)


def test_a_record_is_read_from_its_json_form_its_records_with_it():
    wrong = {"case_id": "c", "variant_id": "base", "run_index": 2, "verdict": "wrong", "detail": None, "output": "x"}
    counts = {
        "verified_but_wrong": [wrong],
        "runs": 3,
        "checked": 3,
        "correct": 1,
        "verified_and_checked": 2,
        "correct_rate": 0.333333,
        "correct_rate_wilson_95": [0.06, 0.79],
        "verdicts": {"wrong": 2, "correct": 1},
        "harness_faults": 0,
        "a_later_field": {"whatever": 1},  # what this ironbench does not read is left out
    }
    causes = {"last_failed_attempt": {"assertions_failed": 2}, "every_failed_attempt": {"syntax_error": 3}}
    found = from_json(ChecksSection, {"checks": counts, "failure_causes": causes})
    assert found == ChecksSection(
        CheckCounts(
            [WrongRun("c", "base", 2, "wrong", None, "x")],
            3,
            3,
            1,
            2,
            0.333333,
            [0.06, 0.79],
            {"wrong": 2, "correct": 1},
            0,
        ),
        FailureCauses({"assertions_failed": 2}, {"syntax_error": 3}),
    )
    assert from_json(ChecksSection, {"checks": None}) == ChecksSection()


def test_an_estimate_keeps_what_it_counts_and_a_missing_one_stays_none():
    generator = {
        "generator": "g",
        "cases": 2,
        "variants": 5,
        "nominal_success_rate": {"estimate": 0.5, "ci_95": [0.1, 0.9], "n": 4, "cases": 2, "effective_n": 3.5},
        "robust_pass_rate": {"estimate": 0.5, "ci_95": [0.09, 0.91], "n": 2, "cases": 2},
        "worst_case_success_rate": {"estimate": None, "ci_95": [0.0, 1.0], "n": 0, "cases": 0},
        "robust_drop": None,
        "flips_success_to_failure": {"estimate": 0.2, "ci_95": [0.0, 0.6], "n": 5, "cases": 2, "count": 1},
        "flips_failure_to_success": None,
        "interval_note": "clustered by case",
    }
    found = from_json(RobustnessGenerator, generator)
    assert found.nominal_success_rate == Estimate(0.5, [0.1, 0.9], n=4, cases=2, effective_n=3.5)
    assert found.flips_success_to_failure is not None and found.flips_success_to_failure.count == 1
    assert found.worst_case_success_rate.estimate is None and found.robust_drop is None


def test_the_page_embeds_robustness_as_show_computes_it(examples):
    store = examples.paths.store_path
    data = gather(store, examples.adversarial)
    assert data.robustness is not None and data.robustness.generators and data.robustness.cases
    assert compact(plain(data.robustness)) == compact(field_numbers(store, examples.adversarial).robustness)
