import pytest

from ironbench.compare import compare_runs, format_comparison
from ironbench.errors import RunNotFound
from ironbench.runner import start_run
from tests.conftest import make_suite

CASES = {"a": 10, "b": 10, "c": 10}


def run_with(paths, script, outcomes):
    script(outcomes)
    return start_run(make_suite(CASES), paths)


def test_identical_behaviour_is_no_change(paths, script):
    outcomes = {"a": ["success", "generation"] * 5, "b": ["success"], "c": ["validation"]}
    first = run_with(paths, script, outcomes)
    second = run_with(paths, script, outcomes)
    comparison = compare_runs(paths.store_path, first, second)
    assert comparison.verdict == "no significant change" and not comparison.regressed
    assert all(c.verdict == "no significant change" for c in comparison.cases)


def test_broad_regression_is_found_by_the_stratified_test(paths, script):
    # Every case drops from mostly-success to mostly-failure.
    good = {k: ["success"] * 2 + ["generation"] + ["success"] * 7 for k in CASES}
    bad = {k: ["generation"] * 2 + ["success"] + ["generation"] * 7 for k in CASES}
    first = run_with(paths, script, good)
    second = run_with(paths, script, bad)
    comparison = compare_runs(paths.store_path, first, second)
    assert comparison.regressed
    assert comparison.overall_p_regression < 0.01
    assert comparison.informative_cases == 3
    text = format_comparison(comparison)
    assert "REGRESSION" in text and "verdict: REGRESSION" in text
    reverse = compare_runs(paths.store_path, second, first)
    assert reverse.verdict == "improvement" and not reverse.regressed


def test_attempts_and_duration_shifts_are_reported(paths, script):
    first = run_with(paths, script, {k: ["success"] for k in CASES})
    second = run_with(paths, script, {k: ["success_r2"] for k in CASES})
    case = compare_runs(paths.store_path, first, second).cases[0]
    assert (case.a.mean_attempts, case.b.mean_attempts) == (1.0, 3.0)
    assert (case.a.mean_repairs, case.b.mean_repairs) == (0.0, 2.0)
    assert case.a.p95_duration_ms > 0


def test_unknown_run_is_an_error(paths, script):
    first = run_with(paths, script, {k: ["success"] for k in CASES})
    with pytest.raises(RunNotFound, match="run_nope"):
        compare_runs(paths.store_path, first, "run_nope")


def test_alpha_is_configurable(paths, script):
    first = run_with(paths, script, {k: ["success"] * 3 for k in CASES})
    second = run_with(paths, script, {"a": ["generation"], "b": ["success"], "c": ["success"]})
    # 3/3 against 0/3 in one case: Fisher's one-sided p is exactly 1/20.
    assert compare_runs(paths.store_path, first, second, alpha=0.1).regressed
    assert not compare_runs(paths.store_path, first, second, alpha=0.05).regressed
