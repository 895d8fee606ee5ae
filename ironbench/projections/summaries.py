"""Per-group aggregates (aggregate.json) and per-run summaries (summary.json). Pure."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ironbench.core.events import CheckCompleted, DecisionTaken, InvocationCompleted, RecordedEvent, run_started
from ironbench.core.kinds import FENCE_CAUSE
from ironbench.core.model_calls import CallTotals
from ironbench.projections.costs import Cost
from ironbench.projections.figures import bricks, pass_k, pass_k_dict, signature
from ironbench.stats import CaseRobustness, StoppingRule, estimate_pass_k, percentile, wilson_interval


def seed_hash(hex_digest: str) -> str:
    """The seed's instruction_hash format: "sha256:<hex>"."""
    return f"sha256:{hex_digest}"


def seed_timestamp(timestamp_utc: str) -> str:
    """The seed's timestamp format, to the second: "2026-01-10T15:15:33Z"."""
    return timestamp_utc.split(".", 1)[0].removesuffix("Z") + "Z"


def summary(
    started: RecordedEvent,
    completed: InvocationCompleted,
    timestamp_utc: str,
    surplus: bool = False,
    check: CheckCompleted | None = None,
    cost: Cost | None = None,
) -> dict:
    """summary.json of a run's invocation (`started`: the run's first event): the seed's fields
    in the seed's format (`run_id` is the run's sequential number within its group), then
    ironbench's own; `"surplus": true` for a run past its group's decision (--speculate),
    which counts in nothing; then, where there are any, why its validation attempts failed,
    the harness's `check` of its brick, and what its model calls `cost`."""
    run = run_started(started)
    return {
        "run_id": f"run_{completed.run_index:03d}",
        "harness_run_id": started.run_id,
        "suite": run.suite_id,
        "case_id": completed.case_id,
        "variant_id": completed.variant_id,
        "run_index": completed.run_index,
        "instruction_hash": seed_hash(completed.instruction_hash),
        "instruction_length": completed.instruction_length,
        "success": completed.success,
        "failure_stage": completed.failure_stage,
        "attempts": completed.attempts,
        "repairs_triggered": completed.repairs_triggered,
        "duration_ms": completed.duration_ms,
        "timed_out": completed.timed_out,
        "harness_error": completed.harness_error,
        "infra_error": completed.infra_error,
        "rerun": completed.rerun,
        "exit_code": completed.exit_code,
        "debug_enabled": completed.debug_enabled,
        "debug_artifacts_present": completed.debug_artifacts_present,
        "debug_path": completed.debug_path,
        "timestamp_utc": seed_timestamp(timestamp_utc),
        "ironclad_version": run.ironclad_version,
        **({"surplus": True} if surplus else {}),
        # only where set, so trees of older runs rebuild byte for byte
        **({"complexity": completed.complexity} if completed.complexity else {}),
        **({"recorded": completed.recorded} if completed.recorded is not None else {}),
        **({"disagrees": completed.disagrees} if completed.disagrees else {}),
        **({"model": totals_of(completed).to_dict()} if completed.model_calls is not None else {}),
        **(
            {"failure_cause": completed.failure_cause, "failure_causes": completed.failure_causes}
            if completed.failure_causes is not None or completed.failure_cause == FENCE_CAUSE
            else {}
        ),
        **({"check": check_summary(check)} if check is not None else {}),
        **({"cost": cost.to_dict()} if cost is not None else {}),
    }


def check_summary(check: CheckCompleted) -> dict:
    """A check as summary.json shows it (its output is in the `checks` view and the events)."""
    return {
        "verdict": check.verdict,
        "correct": None if check.verdict == "harness_fault" else check.verdict == "correct",
        "kind": check.kind,
        "passed": check.passed,
        "failed": check.failed,
        "duration_ms": check.duration_ms,
        "detail": check.detail,
        "recheck": check.recheck,
        "check_sha256": check.check_sha256,
    }


def is_correct(check: CheckCompleted | None) -> bool:
    """Correct by the harness's check; a run that saved no brick (no check) is not correct."""
    return check is not None and check.verdict == "correct"


@dataclass(frozen=True)
class Checks:
    """The harness's latest check of each saved brick, by invocation key (a later check of the
    same brick, `ironbench check`, replaces an earlier one)."""

    latest: dict[str, CheckCompleted] = field(default_factory=dict)

    def add(self, check: CheckCompleted) -> None:
        self.latest[check.key] = check

    def of(self, run: InvocationCompleted) -> CheckCompleted | None:
        """The latest check of the brick this attempt saved (a re-run's brick is another)."""
        check = self.latest.get(run.key)
        return check if check is not None and check.rerun == run.rerun else None


def correctness(runs: Sequence[InvocationCompleted], checks: Checks, rule: StoppingRule | None) -> dict:
    """The harness's verdicts on a group's runs (infra errors already left out): how many
    were checked and correct, how many the target verified but the check found wrong, and the
    correct rate with its Wilson interval over the runs that count (a run without a brick is
    not correct; a check the harness could not run counts in nothing); with `rule` (a decided
    baseline), pass@k and pass^k on correctness."""
    own = {r.key: check for r in runs if (check := checks.of(r)) is not None}
    faults = {key for key, c in own.items() if c.verdict == "harness_fault"}
    counted = [r for r in runs if r.key not in faults]
    correct = [is_correct(own.get(r.key)) for r in counted]
    verdicts = Counter(c.verdict for c in own.values())
    low, high = wilson_interval(sum(correct), len(counted))
    result: dict[str, Any] = {
        "checked": len(own) - len(faults),
        "correct": sum(correct),
        "verified_but_wrong": sum(1 for r in counted if r.success and r.key in own and not is_correct(own[r.key])),
        "correct_rate": round(sum(correct) / len(counted), 6) if counted else 0.0,
        "correct_rate_wilson_95": [round(low, 6), round(high, 6)],
        "check_verdicts": {v: verdicts[v] for v in sorted(verdicts)},
        "check_harness_faults": len(faults),
    }
    if rule is not None:
        found = estimate_pass_k([signature(r) for r in counted], correct, rule)
        result["pass_k_correct"] = pass_k_dict(found)
    return result


def causes(runs: Sequence[InvocationCompleted]) -> dict | None:
    """Why validation failed: the last failed attempt's cause per failed run (`fence`: what its
    fence withheld), and every failed attempt's; None when no run's causes were read and no
    run failed for its fence."""
    if all(r.failure_causes is None and r.failure_cause != FENCE_CAUSE for r in runs):
        return None
    last = Counter(r.failure_cause for r in runs if not r.success and r.failure_cause)
    every = Counter(c["cause"] for r in runs for c in r.failure_causes or ())
    return {
        "failure_causes": {c: last[c] for c in sorted(last)},
        "failed_attempt_causes": {c: every[c] for c in sorted(every)},
    }


def totals_of(completed: InvocationCompleted) -> CallTotals:
    """What an invocation asked of the model gateway (its run served a model)."""
    return CallTotals(
        completed.model_calls or 0, completed.prompt_tokens, completed.completion_tokens, completed.model_seconds or 0.0
    )


def model_aggregate(runs: Sequence[InvocationCompleted]) -> dict | None:
    """A group's model cost over its runs (those whose backend failed too: they were paid
    for); None when its run served no model."""
    served = [totals_of(r) for r in runs if r.model_calls is not None]
    if not served:
        return None
    total = CallTotals.add(served)
    return {**total.to_dict(), "calls_per_run": round(total.calls / len(served), 6)}


def aggregate(
    suite_id: str,
    case_id: str,
    variant: str,
    live: Sequence[InvocationCompleted],
    decision: DecisionTaken | None = None,
    rule: StoppingRule | None = None,
    checks: Checks | None = None,
) -> dict:
    """aggregate.json of one group's live runs; runs whose backend failed (infra_error)
    are counted apart and in nothing else. After the seed's fields and the decision, a
    decided baseline (given its stopping `rule`) adds `pass_k` (pass@k and pass^k, unbiased
    under that rule, with intervals) and `bricks` (distinct bricks of its successful runs).
    Where its runs are checked (`checks`; None: the case has no check),
    their correctness follows (`correctness`); where causes were read, their counts."""
    runs = [r for r in live if r.infra_error is None]
    total = len(runs)
    successes = sum(1 for r in runs if r.success)
    durations = [r.duration_ms for r in runs]
    breakdown = Counter(r.failure_stage for r in runs if not r.success)
    attempts = Counter(r.attempts for r in runs)
    low, high = wilson_interval(successes, total)
    first = live[0] if live else None
    result = {
        "suite": suite_id,
        "case_id": case_id,
        "variant": variant,
        "mode": first.mode if first else None,
        **({"complexity": first.complexity} if first and first.complexity else {}),
        "generator": first.generator if first else None,
        "level": first.level if first else None,
        "instruction_hash": seed_hash(first.instruction_hash) if first else None,
        "total_runs": total,
        "successes": successes,
        "failures": total - successes,
        "success_rate": round(successes / total, 6) if total else 0.0,
        "success_rate_wilson_95": [round(low, 6), round(high, 6)],
        "failure_breakdown": {stage: breakdown[stage] for stage in sorted(breakdown, key=str)},
        "attempts_distribution": {str(k): attempts[k] for k in sorted(attempts)},
        "timeouts": sum(1 for r in runs if r.timed_out),
        "infra_errors": len(live) - total,
        "avg_duration_ms": round(sum(durations) / total, 3) if total else 0.0,
        "p95_duration_ms": round(percentile(durations, 95), 3),
        "debug_coverage": round(sum(1 for r in runs if r.debug_artifacts_present) / total, 6) if total else 0.0,
    }
    model = model_aggregate(live)
    if model is not None:  # only where the run served a model: older trees rebuild byte for byte
        result["model"] = model
    baseline_rule = rule if decision is not None and first is not None and first.mode == "baseline" else None
    if decision is not None:
        result["stop_decision"] = _decision(decision)
        if baseline_rule is not None:
            result["pass_k"] = pass_k_dict(pass_k(runs, baseline_rule))
            result["bricks"] = bricks(runs).to_dict()
    found = causes(runs)
    if found is not None:
        result.update(found)
    if checks is not None:
        result.update(correctness(runs, checks, baseline_rule))
    return result


def generator_aggregate(
    suite_id: str,
    case_id: str,
    generator: str,
    live: Sequence[InvocationCompleted],
    robustness: CaseRobustness | None,
    checked: bool = False,
    robustness_correct: CaseRobustness | None = None,
) -> dict:
    """adversarial/<case>/<generator>/aggregate.json: the seed's fields over the live runs of
    every variant the generator made (the seed names the generator as `variant`; no single
    instruction), then `robustness`: the base against those variants (robust pass, worst
    case, robust drop, flips), each variant judged by its first run; where the case is
    `checked`, `robustness_correct`: the same on correctness, by the harness's checks."""
    result = aggregate(suite_id, case_id, generator, live)
    result["instruction_hash"] = None
    result["robustness"] = None if robustness is None else robustness.to_dict()
    if checked:
        result["robustness_correct"] = None if robustness_correct is None else robustness_correct.to_dict()
    return result


SIGNATURE_FIELDS = ("success", "failure_stage", "attempts", "repairs_triggered")


def _signature(values: list) -> dict[str, Any]:
    """A recorded signature by field: the spec's four, then `correct` where the rule compared it."""
    names = SIGNATURE_FIELDS + (("correct",) if len(values) > len(SIGNATURE_FIELDS) else ())
    return dict(zip(names, values, strict=True))


def _decision(decision: DecisionTaken) -> dict[str, Any]:
    data: dict[str, Any] = {
        "decision": decision.decision,
        "reason": decision.reason,
        "n": decision.n,
        "successes": decision.successes,
        "wilson_95": [round(decision.wilson_low, 6), round(decision.wilson_high, 6)],
        "chance_agreement": round(decision.chance_agreement, 6),
    }
    for name in ("success_lower_95", "success_upper_95", "reproduce_lower_95", "p_value"):
        if getattr(decision, name) is not None:  # absent from decisions recorded before they existed
            data[name] = round(getattr(decision, name), 6)
    if decision.direction is not None:
        data["direction"] = decision.direction
    if decision.reference is not None:
        data["baseline_reference"] = {
            "signature": _signature(decision.reference),
            "source": decision.reference_source,
        }
        if decision.reference_group is not None:
            data["baseline_reference"]["group"] = decision.reference_group
        if decision.reference_outcomes:
            data["baseline_reference"]["outcomes"] = [_signature(o) for o in decision.reference_outcomes]
    return data


def ladder_aggregate(suite_id: str, case_id: str, levels: Sequence[DecisionTaken], verdict: DecisionTaken) -> dict:
    """stress/<case>/aggregate.json: every level's decision and the ladder's verdict,
    naming the boundary level (None when there is none, 0 when it fails at base)."""
    return {
        "suite": suite_id,
        "case_id": case_id,
        "mode": "stress",
        "generator": verdict.generator,
        "levels": [
            {
                "level": d.level,
                "decision": d.decision,
                "n": d.n,
                "successes": d.successes,
                "success_rate": round(d.success_rate, 6),
                "wilson_95": [round(d.wilson_low, 6), round(d.wilson_high, 6)],
            }
            for d in sorted(levels, key=lambda d: -1 if d.level is None else d.level)  # (every level has one)
        ],
        "boundary_level": verdict.level,
        "ladder_decision": verdict.decision,
        "stop_decision": _decision(verdict),
    }
