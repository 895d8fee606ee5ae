import json

import pytest

from ironbench.analysis.compare import CannotCompare, Evidence, Gating, Runs, compare_runs, decide, format_comparison
from ironbench.analysis.compare.sensitivity import cells_from_decisions, compare_sensitivity
from ironbench.core.errors import RunNotFound
from ironbench.core.events import InvocationCompleted, RunFinished, RunStarted
from ironbench.core.kinds import Gate
from ironbench.projections.readmodel import ReadModel
from ironbench.run.runner import start_run
from ironbench.store import open_store
from ironbench.store.eventstore import Pending
from tests.conftest import cli, make_suite, write_suite

CASES = {"a": 10, "b": 10, "c": 10}


def run_with(paths, script, outcomes, cases=CASES):
    script(outcomes)
    return start_run(make_suite(cases), paths)


def runs(successes: int, n: int, failure: str = "generation") -> Runs:
    return Runs(("success",) * successes + (failure,) * (n - successes), (1,) * successes + (0,) * (n - successes))


def sides(pairs: dict) -> tuple[dict, dict]:
    """{case: ((s_a, n_a), (s_b, n_b))} -> the two sides decide() takes."""
    return (
        {(k, "base"): runs(*a) for k, (a, _) in pairs.items()},
        {(k, "base"): runs(*b) for k, (_, b) in pairs.items()},
    )


# -- through the store ------------------------------------------------------------------------


def test_identical_behaviour_is_no_change(paths, script):
    outcomes = {"a": ["success", "generation"] * 5, "b": ["success"], "c": ["validation"]}
    first = run_with(paths, script, outcomes)
    second = run_with(paths, script, outcomes)
    comparison = compare_runs(paths.store_path, first, second)
    assert comparison.verdict == "no significant change" and not comparison.failed
    assert comparison.overall.delta == 0 and comparison.overall.delta_ci_95[0] < 0 < comparison.overall.delta_ci_95[1]
    # "no change" comes with what these runs could have seen
    assert comparison.overall.mde is not None and "would find a uniform drop of" in comparison.reason


@pytest.mark.slow
def test_broad_regression_is_found_by_the_stratified_test(paths, script):
    # Every case drops from mostly-success to mostly-failure.
    good = {k: ["success"] * 2 + ["generation"] + ["success"] * 7 for k in CASES}
    bad = {k: ["generation"] * 2 + ["success"] + ["generation"] * 7 for k in CASES}
    first = run_with(paths, script, good)
    second = run_with(paths, script, bad)
    comparison = compare_runs(paths.store_path, first, second)
    assert comparison.regressed and comparison.failed
    assert comparison.overall.p_regression < 0.01 and comparison.overall.informative_cases == 3
    assert comparison.overall.delta_ci_95[1] < 0
    text = format_comparison(comparison)
    assert "REGRESSION" in text and "verdict: REGRESSION. B's success rate is lower across cases" in text
    assert "Mantel-Haenszel" in text and "MDE at 80% power" in text
    reverse = compare_runs(paths.store_path, second, first)
    assert reverse.verdict == "improvement" and not reverse.failed
    # --fail-on change: the same drop, found two-sided within the Holm family; and the improvement too
    for runs in ((first, second), (second, first)):
        change = compare_runs(paths.store_path, *runs, fail_on="change")
        assert change.failed and change.verdict == "change" and "success rate (Holm-adjusted p" in change.reason


def test_attempts_shift_is_reported_and_fails_only_on_change(paths, script):
    first = run_with(paths, script, {k: ["success"] for k in CASES})
    second = run_with(paths, script, {k: ["success_r2"] for k in CASES})
    comparison = compare_runs(paths.store_path, first, second)
    case = comparison.cases[0]
    assert (case.a.mean_attempts, case.b.mean_attempts) == (1.0, 3.0)
    assert (case.a.mean_repairs, case.b.mean_repairs) == (0.0, 2.0)
    assert case.a.p95_duration_ms > 0
    attempts = next(s for s in comparison.shifts if s.name == "attempts")
    assert attempts.direction == "more attempts" and attempts.effect == 2.0 and attempts.p_value < 0.01
    assert not comparison.failed  # the default gate is about success only
    change = compare_runs(paths.store_path, first, second, fail_on="change")
    assert change.failed and change.verdict == "change" and "attempts (Holm-adjusted p" in change.reason


def test_a_different_way_to_fail_is_a_change_not_a_regression(paths, script):
    # Both 0% success: "always reaches validation" became "never produces valid output".
    first = run_with(paths, script, {k: ["validation"] for k in CASES})
    second = run_with(paths, script, {k: ["generation"] for k in CASES})
    regression = compare_runs(paths.store_path, first, second)
    assert not regression.failed and regression.verdict == "no significant change"
    stage = next(s for s in regression.shifts if s.name == "outcome distribution")
    assert stage.effect == 1.0 and stage.p_value < 0.01
    assert "validation 9" in stage.a and "generation 9" in stage.b
    change = compare_runs(paths.store_path, first, second, fail_on="change")
    assert change.failed and "outcome distribution (Holm-adjusted p" in change.reason


def test_unknown_run_is_an_error(paths, script):
    first = run_with(paths, script, {k: ["success"] for k in CASES})
    with pytest.raises(RunNotFound, match="run_nope"):
        compare_runs(paths.store_path, first, "run_nope")


def test_alpha_is_configurable(paths, script):
    first = run_with(paths, script, {k: ["success"] * 3 for k in CASES})
    second = run_with(paths, script, {"a": ["generation"], "b": ["success"], "c": ["success"]})
    # 3/3 against 0/3 in one case: Fisher's one-sided p is exactly 1/20, and p <= alpha rejects.
    assert compare_runs(paths.store_path, first, second, alpha=0.05).regressed
    assert not compare_runs(paths.store_path, first, second, alpha=0.04).regressed


@pytest.mark.slow
def test_runs_with_no_case_in_common_cannot_be_compared(tmp_path):
    out = str(tmp_path / "out")
    one = write_suite(tmp_path / "one.yaml", make_suite({"a": 3}))
    other = write_suite(tmp_path / "other.yaml", make_suite({"z": 3}))
    first = cli("run", str(one), "--out", out, "-q", check=True).stdout.strip()
    second = cli("run", str(other), "--out", out, "-q", check=True).stdout.strip()
    result = cli("compare", first, second, "--out", out)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"ironbench: error: cannot compare {first} and {second}: no case in common with evidence (A: a; B: z)"
    ]


def _run_with_infra_errors(store_path, run_id: str, slots: list[tuple[int, str | None]]) -> None:
    """A run whose invocations of case `a` are (run index, infra error or None), in order."""
    with open_store(store_path, [ReadModel()]) as store:
        pending = [
            Pending(
                "run",
                RunStarted(
                    suite_id="s",
                    mode="baseline",
                    suite={},
                    target_argv=["t"],
                    ironclad_version="x",
                    harness_version="x",
                    python_version="3",
                    platform="p",
                ),
            )
        ]
        for attempt, (index, infra) in enumerate(slots):
            pending.append(
                Pending(
                    f"baseline/a/run_{index:03d}",
                    InvocationCompleted(
                        key=f"{run_id}/a/{index}/{attempt}",
                        group="baseline/a",
                        case_id="a",
                        variant_id="base",
                        run_index=index,
                        instruction="i",
                        instruction_hash="h",
                        instruction_length=1,
                        exit_code=0 if infra is None else 1,
                        success=infra is None,
                        failure_stage=None if infra is None else "generation",
                        attempts=1,
                        repairs_triggered=0,
                        duration_ms=5,
                        infra_error=infra,
                        debug_enabled=False,
                        debug_artifacts_present=False,
                        debug_path="d",
                    ),
                )
            )
        pending.append(Pending("run", RunFinished(invocations=len(slots), successes=0)))
        store.append(run_id, pending)


def test_unresolved_infrastructure_errors_cannot_be_compared(tmp_path):
    store = tmp_path / "s.db"
    outage = "[!] Error connecting to Ollama: refused"
    _run_with_infra_errors(store, "run_ok", [(1, None), (2, None), (3, None)])
    _run_with_infra_errors(store, "run_outage", [(1, None), (2, outage), (3, outage)])
    # resumed: slot 2 re-ran and succeeded, the outage attempt stays in the store
    _run_with_infra_errors(store, "run_resumed", [(1, None), (2, outage), (2, None), (3, None)])
    result = cli("compare", "run_ok", "run_outage", "--store", str(store))
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [
        (
            "ironbench: error: cannot compare: run_outage has 2 run(s) with unresolved infrastructure errors "
            f"(first: a run 2: {outage}); `ironbench resume run_outage` re-runs them"
        )
    ]
    comparison = compare_runs(store, "run_ok", "run_resumed")
    [case] = comparison.cases
    assert (case.b.n, case.b.successes, case.b.infra_errors) == (3, 3, 1)  # the outage is not a failure
    infra = next(s for s in comparison.shifts if s.name == "infrastructure errors")
    assert (infra.a, infra.b, infra.gating) == ("0/3", "1/4", False)


@pytest.mark.slow
def test_cli_json_carries_deltas_intervals_mde_and_adjusted_flags(tmp_path):
    suite = write_suite(tmp_path / "s.yaml", make_suite({"a": 10, "b": 10}))
    out = str(tmp_path / "out")
    good = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["success"], "b": ["success"]})}
    bad = {"SCRIPTED_OUTCOMES": json.dumps({"a": ["generation"], "b": ["success"]})}
    first = cli("run", str(suite), "--out", out, "-q", env=good, check=True).stdout.strip()
    second = cli("run", str(suite), "--out", out, "-q", env=bad, check=True).stdout.strip()
    result = cli("compare", first, second, "--out", out, "--format", "json", "--gate", "cases")
    data = json.loads(result.stdout)
    assert result.returncode == 1 and data["failed"] and data["gate"] == "cases"
    overall = data["overall"]
    assert overall["delta"] == pytest.approx(-0.5) and overall["delta_ci_95"][1] < 0
    assert 0 < overall["p_regression"] <= 0.05 and 0 < overall["mde"] <= 1
    a, b = data["cases"]
    assert a["delta"] == -1.0 and a["delta_ci_95"][1] < 0 and a["flagged"]
    # a: 3/3 vs 0/3, raw p 1/20; case b carries no information, so min-p costs nothing
    assert a["p_regression"] == pytest.approx(0.05) and a["p_adjusted"] == pytest.approx(0.05)
    assert b["delta"] == 0.0 and b["p_adjusted"] == 1.0 and not b["flagged"]
    assert "B regressed in a" in data["reason"]
    table = cli("compare", first, second, "--out", out, "--margin", "0.05")
    assert "margin 5%" in table.stdout and "verdict:" in table.stdout


# -- the decision, pure ---------------------------------------------------------------------


def test_one_noisy_case_does_not_fail_the_overall_gate():
    # c0 drops 10/10 -> 5/10 (raw one-sided p 0.016); four cases move slightly the other way.
    a, b = sides({"c0": ((10, 10), (5, 10)), **{f"c{i}": ((5, 10), (6, 10)) for i in range(1, 5)}})
    overall = decide(Evidence(a, b), power=False)
    assert not overall.failed and overall.overall.p_regression > 0.05
    c0 = overall.cases[0]
    assert c0.p_regression < 0.05 and c0.p_adjusted > c0.p_regression  # reported, adjusted
    cases = decide(Evidence(a, b), Gating(gate=Gate.cases), power=False)
    assert cases.failed == (c0.p_adjusted <= 0.05) and cases.verdict == "regression"


def test_a_drop_in_one_case_fails_the_cases_gate_when_the_others_improve():
    a, b = sides({"c00": ((10, 10), (0, 10)), **{f"c{i:02d}": ((5, 10), (7, 10)) for i in range(1, 20)}})
    overall = decide(Evidence(a, b), power=False)
    assert not overall.failed and overall.verdict == "improvement"
    cases = decide(Evidence(a, b), Gating(gate=Gate.cases), power=False)
    assert cases.failed and [c.case_id for c in cases.cases if c.flagged] == ["c00"]
    assert cases.cases[0].p_adjusted < 1e-4


def test_margin_fails_only_beyond_it():
    a, b = sides({f"c{i:02d}": ((10, 10), (9, 10)) for i in range(20)})
    assert decide(Evidence(a, b), power=False).failed
    upper = decide(Evidence(a, b), power=False).overall.delta_upper
    assert -0.1 < upper < 0
    assert decide(Evidence(a, b), Gating(margin=-upper / 2), power=False).failed
    within = decide(Evidence(a, b), Gating(margin=0.3), power=False)
    assert not within.failed and within.verdict == "within margin"
    assert "not by more than the margin" in within.reason and "not below −30%" in within.reason


def test_cases_too_small_to_flag_are_warned_about():
    # each case 3/3 -> 0/3: p = 1/20, the smallest a case can reach; four such cases make
    # even that 1 - 0.95^4 = 0.185 after adjustment
    a, b = sides({f"c{i}": ((3, 3), (0, 3)) for i in range(4)})
    comparison = decide(Evidence(a, b), Gating(gate=Gate.cases))
    assert all(not c.can_be_flagged and c.p_adjusted == pytest.approx(1 - 0.95**4) for c in comparison.cases)
    assert not comparison.failed
    assert any(w.startswith("c0 cannot be flagged on its own with 3 vs 3 runs") for w in comparison.warnings)
    assert "(cannot flag)" in format_comparison(comparison)
    # together they are evidence the overall test can use
    assert comparison.overall.p_regression < 0.05


def test_no_common_case_is_cannot_compare():
    a, b = sides({"x": ((3, 3), (3, 3))})
    with pytest.raises(CannotCompare, match="no case in common"):
        decide(Evidence(a, {("y", "base"): b[("x", "base")]}))


def test_cases_only_on_one_side_are_listed_but_not_compared():
    a, b = sides({"x": ((3, 3), (3, 3)), "y": ((3, 3), (3, 3))})
    del b[("y", "base")]
    comparison = decide(Evidence(a, b), power=False)
    assert [(c.case_id, c.verdict) for c in comparison.cases] == [("x", "no significant change"), ("y", "only in A")]
    assert comparison.overall.cases == 1


# -- sensitivity to rewording, per generator ------------------------------------------------


def _simulated_cells(rng, rates: dict[str, float], variants: int) -> dict:
    return {(case, "g"): (int(rng.binomial(variants, rate)), variants) for case, rate in rates.items()}


def test_sensitivity_by_hand():
    a = {("x", "g"): (0, 5), ("y", "g"): (1, 5), ("x", "h"): (2, 4)}
    b = {("x", "g"): (4, 5), ("y", "g"): (5, 5), ("x", "h"): (2, 4), ("z", "g"): (5, 5)}
    changes = {c.generator: c for c in compare_sensitivity(a, b)}
    g = changes["g"]
    assert (g.cases, g.material, g.variants) == (2, (1, 9), (10, 10))  # z is only in B: not compared
    assert g.verdict == "more sensitive" and g.delta == pytest.approx(0.8) and g.p_adjusted <= 0.05
    assert g.sentence.startswith("g: B more sensitive than A: variants that changed the outcome 9/10 in B against 1/10")
    assert changes["h"].verdict == "cannot be told apart" and changes["h"].p_value == 1.0
    assert cells_from_decisions([("x", "g", "structural"), ("x", "g", "not_material"), ("x", None, "reference")]) == {
        ("x", "g"): (1, 2)
    }


def test_sensitivity_calibration_false_alarms_within_alpha_and_power():
    """Same sensitivity on both sides, case by case (each case its own rate): at most alpha;
    against a B whose variants change the outcome twice as often: power."""
    import numpy as np

    rng = np.random.default_rng(29)
    reps = 1000
    null = alt = 0
    for _ in range(reps):
        rates = {f"c{i}": float(r) for i, r in enumerate(rng.uniform(0.05, 0.4, 20))}
        same = compare_sensitivity(_simulated_cells(rng, rates, 5), _simulated_cells(rng, rates, 5))
        null += same[0].verdict != "cannot be told apart"
        doubled = {case: min(1.0, 2 * rate) for case, rate in rates.items()}
        moved = compare_sensitivity(_simulated_cells(rng, rates, 5), _simulated_cells(rng, doubled, 5))
        alt += moved[0].verdict == "more sensitive"
    assert null / reps <= 0.05
    assert alt / reps >= 0.85  # 20 cases × 5 variants per side (0.92); the statistics page has more


@pytest.mark.slow
def test_compare_tells_whether_sensitivity_changed(paths, script):
    from tests.run.test_adversarial_stress import adversarial_suite

    suite = adversarial_suite([{"generator": "punctuation_noise", "count": 4, "seed": 3}])
    script({"c/baseline": ["success"], "c/punctuation_noise": ["success"]})
    steady = start_run(suite, paths)
    script({"c/baseline": ["success"], "c/punctuation_noise": ["generation"]})
    fragile = start_run(suite, paths)
    comparison = compare_runs(paths.store_path, steady, fragile)
    [change] = comparison.sensitivity
    assert change.generator == "punctuation_noise" and change.material == (0, 4) and change.variants == (4, 4)
    assert change.verdict == "more sensitive"  # 4 of 4 against 0 of 4: two-sided exact p = 2/70
    shown = cli("compare", steady, fragile, "--store", str(paths.store_path), env={"COLUMNS": "200"}).stdout
    assert "sensitivity punctuation_noise: B more sensitive than A" in shown
    data = json.loads(cli("compare", steady, fragile, "--store", str(paths.store_path), "--format", "json").stdout)
    assert data["sensitivity"][0]["verdict"] == "more sensitive"
