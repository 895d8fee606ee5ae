"""Correctness in aggregate.json: checked, correct, verified but wrong, the correct rate with its
interval, pass@k on correctness, and why validations failed. Pure functions."""

from hypothesis import given
from hypothesis import strategies as st

from ironbench.core.events import CheckCompleted, InvocationCompleted, RecordedEvent, RunStarted
from ironbench.projections.summaries import Checks, aggregate, summary
from ironbench.stats import wilson_interval
from ironbench.suite.models import Suite


def run(index: int, success: bool = True, **fields) -> InvocationCompleted:
    return InvocationCompleted(
        key=f"k{index}",
        case_id="c",
        variant_id="base",
        run_index=index,
        instruction="Write a function.",
        instruction_hash="h",
        instruction_length=17,
        exit_code=0 if success else 1,
        success=success,
        failure_stage=None if success else "validation",
        attempts=1,
        repairs_triggered=0,
        duration_ms=10,
        debug_enabled=True,
        debug_artifacts_present=True,
        debug_path="d",
        brick_path="verified_bricks/f.py" if success else None,
        **fields,
    )


def check(index: int, verdict: str, rerun: int = 0) -> CheckCompleted:
    return CheckCompleted(
        key=f"k{index}",
        rerun=rerun,
        group="baseline/c",
        case_id="c",
        variant_id="base",
        run_index=index,
        kind="python",
        check_sha256="x",
        verdict=verdict,
        duration_ms=5,
        brick_path="verified_bricks/f.py",
    )


VERDICTS = st.sampled_from(["correct", "wrong", "no_entry_point", "import_error", "timeout", "harness_fault", None])


@given(st.lists(st.tuples(st.booleans(), VERDICTS), min_size=1, max_size=12))
def test_correctness_counts_and_interval(outcomes):
    runs, checks = [], {}
    for index, (success, verdict) in enumerate(outcomes, start=1):
        runs.append(run(index, success))
        if success and verdict is not None:
            checks[f"k{index}"] = check(index, verdict)
    data = aggregate("s", "c", "base", runs, checks=Checks(checks))
    counted = [(s, v) for s, v in outcomes if not (s and v == "harness_fault")]
    correct = sum(1 for s, v in counted if s and v == "correct")
    assert data["correct"] == correct
    assert data["checked"] == sum(1 for s, v in counted if s and v is not None)
    assert data["verified_but_wrong"] == sum(1 for s, v in counted if s and v not in (None, "correct"))
    assert data["check_harness_faults"] == len(outcomes) - len(counted)
    low, high = wilson_interval(correct, len(counted))
    assert data["correct_rate_wilson_95"] == [round(low, 6), round(high, 6)]
    assert data["correct"] <= data["successes"] or data["check_harness_faults"]


def test_a_check_of_a_superseded_attempt_does_not_count():
    runs = [run(1, rerun=1)]
    data = aggregate("s", "c", "base", runs, checks=Checks({"k1": check(1, "correct", rerun=0)}))
    assert (data["checked"], data["correct"]) == (0, 0)


CASE = {"id": "c", "mode": "baseline", "instruction": "i"}
STARTED = RecordedEvent(
    1,
    "e",
    "r",
    "run",
    "2026-01-01T00:00:00Z",
    RunStarted(
        suite_id="s",
        mode="baseline",
        suite={},
        target_argv=[],
        ironclad_version="v",
        harness_version="x",
        python_version="3",
        platform="p",
    ),
)


def test_pass_k_on_correctness_beside_the_self_reported():
    from ironbench.core.events import DecisionTaken

    runs = [run(i) for i in range(1, 4)]
    checks = {"k1": check(1, "correct"), "k2": check(2, "wrong"), "k3": check(3, "correct")}
    decision = DecisionTaken(
        case_id="c",
        variant_id="base",
        decision="stable",
        reason="r",
        n=3,
        successes=3,
        success_rate=1.0,
        wilson_low=0.4,
        wilson_high=1.0,
        chance_agreement=1.0,
    )
    suite = Suite.from_dict(
        {"suite_id": "s", "mode": "baseline", "cases": [CASE | {"stop": {"rule": "fixed", "runs": 3}}]}
    )
    data = aggregate("s", "c", "base", runs, decision, suite.stopping_rule("c"), Checks(checks))
    assert data["pass_k"]["by_k"][0]["pass_at_k"] == 1.0
    assert round(data["pass_k_correct"]["by_k"][0]["pass_at_k"], 4) == round(2 / 3, 4)
    assert data["pass_k_correct"]["by_k"][2]["pass_hat_k"] == 0.0


def test_no_check_no_keys_and_summary_bytes_unchanged():
    data = aggregate("s", "c", "base", [run(1)])
    assert "checked" not in data and "failure_causes" not in data
    assert "check" not in summary(STARTED, run(1), "2026-01-01T00:00:00Z")


def test_failure_causes_per_run_and_per_attempt():
    causes = [{"attempt": 1, "cause": "syntax_error"}, {"attempt": 2, "cause": "assertions_failed"}]
    runs = [
        run(1, False, failure_causes=causes, failure_cause="assertions_failed"),
        run(2, False, failure_causes=causes[:1], failure_cause="syntax_error"),
        run(3, True, failure_causes=causes[:1]),
    ]
    data = aggregate("s", "c", "base", runs)
    assert data["failure_causes"] == {"assertions_failed": 1, "syntax_error": 1}
    assert data["failed_attempt_causes"] == {"assertions_failed": 1, "syntax_error": 3}
    record = summary(STARTED, runs[0], "2026-01-01T00:00:00Z")
    assert record["failure_cause"] == "assertions_failed" and list(record)[-2:] == ["failure_cause", "failure_causes"]


def test_which_runs_a_suite_checks():
    ladder = [{"level": 1, "generator": "add_scope_detail"}, {"level": 2, "generator": "add_scope_detail"}]
    stress = {"id": "b", "mode": "stress", "instruction": "i", "stress_ladder": ladder, "level_checks": {"2": None}}
    suite = Suite.from_dict(
        {"suite_id": "s", "mode": "mixed", "check": {"command": "x {brick}"}, "cases": [CASE | {"id": "a"}, stress]}
    )
    assert suite.checked("a") and suite.checked("b", 1)
    assert not suite.checked("b", 2)
    assert not Suite.from_dict({"suite_id": "s", "mode": "baseline", "cases": [CASE | {"id": "a"}]}).checked("a")
