"""Per-group aggregates (aggregate.json) and per-run summaries (summary.json). Pure."""

from collections import Counter
from collections.abc import Sequence

from ironbench.events import DecisionTaken, InvocationCompleted
from ironbench.stats import percentile, wilson_interval


def summary(run_id: str, suite_id: str, ironclad_version: str, completed: InvocationCompleted,
            timestamp_utc: str) -> dict:
    return {
        "run_id": run_id,
        "suite": suite_id,
        "case_id": completed.case_id,
        "variant_id": completed.variant_id,
        "run_index": completed.run_index,
        "instruction_hash": completed.instruction_hash,
        "instruction_length": completed.instruction_length,
        "success": completed.success,
        "failure_stage": completed.failure_stage,
        "attempts": completed.attempts,
        "repairs_triggered": completed.repairs_triggered,
        "duration_ms": completed.duration_ms,
        "timed_out": completed.timed_out,
        "harness_error": completed.harness_error,
        "exit_code": completed.exit_code,
        "debug_enabled": completed.debug_enabled,
        "debug_artifacts_present": completed.debug_artifacts_present,
        "debug_path": completed.debug_path,
        "timestamp_utc": timestamp_utc,
        "ironclad_version": ironclad_version,
    }


def aggregate(suite_id: str, case_id: str, variant: str, runs: Sequence[InvocationCompleted],
              decision: DecisionTaken | None = None) -> dict:
    total = len(runs)
    successes = sum(1 for r in runs if r.success)
    durations = [r.duration_ms for r in runs]
    breakdown = Counter(r.failure_stage for r in runs if not r.success)
    attempts = Counter(r.attempts for r in runs)
    low, high = wilson_interval(successes, total)
    first = runs[0] if runs else None
    result = {
        "suite": suite_id,
        "case_id": case_id,
        "variant": variant,
        "mode": first.mode if first else None,
        "generator": first.generator if first else None,
        "level": first.level if first else None,
        "instruction_hash": first.instruction_hash if first else None,
        "total_runs": total,
        "successes": successes,
        "failures": total - successes,
        "success_rate": round(successes / total, 6) if total else 0.0,
        "success_rate_wilson_95": [round(low, 6), round(high, 6)],
        "failure_breakdown": {stage: breakdown[stage] for stage in sorted(breakdown, key=str)},
        "attempts_distribution": {str(k): attempts[k] for k in sorted(attempts)},
        "timeouts": sum(1 for r in runs if r.timed_out),
        "avg_duration_ms": round(sum(durations) / total, 3) if total else 0.0,
        "p95_duration_ms": round(percentile(durations, 95), 3),
        "debug_coverage": round(sum(1 for r in runs if r.debug_artifacts_present) / total, 6) if total else 0.0,
    }
    if decision is not None:
        result["stop_decision"] = {
            "decision": decision.decision,
            "reason": decision.reason,
            "n": decision.n,
            "successes": decision.successes,
            "wilson_95": [round(decision.wilson_low, 6), round(decision.wilson_high, 6)],
            "chance_agreement": round(decision.chance_agreement, 6),
        }
        for name in ("success_lower_95", "success_upper_95", "reproduce_lower_95", "p_value"):
            if getattr(decision, name) is not None:  # absent from decisions recorded before they existed
                result["stop_decision"][name] = round(getattr(decision, name), 6)
        if decision.direction is not None:
            result["stop_decision"]["direction"] = decision.direction
        if decision.reference is not None:
            result["stop_decision"]["baseline_reference"] = {
                "signature": dict(zip(("success", "failure_stage", "attempts", "repairs_triggered"),
                                      decision.reference)),
                "source": decision.reference_source,
            }
            if decision.reference_outcomes:
                result["stop_decision"]["baseline_reference"]["outcomes"] = [
                    dict(zip(("success", "failure_stage", "attempts", "repairs_triggered"), o))
                    for o in decision.reference_outcomes]
    return result
