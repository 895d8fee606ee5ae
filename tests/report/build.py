"""Records of the report's data made by hand, for tests of what listing, verdicts and
sections do with them (the examples' runs are gathered from a real store instead)."""

from ironbench.report.records import (
    AdversarialCase,
    AdversarialSection,
    BaselineCase,
    BaselineSection,
    Decision,
    Ladder,
    LadderLevel,
    NotEvidence,
    ReportData,
    RunMeta,
    Score,
    StressSection,
    Thread,
    Turn,
    Variant,
)
from ironbench.stats import wilson_interval


def report(status="finished", abort_reason=None, run_id="run_x", **sections) -> ReportData:
    run = RunMeta(run_id, None, None, status, None, None, None, None, abort_reason, {"run_id": run_id})
    return ReportData(run, {}, [], **sections)


def decided(kind, n=0, successes=0, case_id="c", **fields) -> Decision:
    reason = fields.pop("reason", "")
    return Decision(kind, reason, n, successes, 0.0, 0.0, 0.0, 0.25, case_id=case_id, variant_id="base", **fields)


def group_fields(case_id, codes, variant_id="base", level=None, decision=None, **counts) -> dict:
    """A group's fields from its run strip (its rate and interval over the runs that are evidence)."""
    n, successes = sum(c in "SsGVRUT" for c in codes), sum(c in "Ss" for c in codes)
    low, high = wilson_interval(successes, n)
    return {
        "group_path": f"baseline/{case_id}",
        "case_mode": "baseline",
        "case_id": case_id,
        "variant_id": variant_id,
        "generator": None,
        "level": level,
        "n": n,
        "successes": successes,
        "timeouts": 0,
        "excluded": 0,
        "infra_errors": 0,
        "codes": codes,
        "mean_attempts": None,
        "mean_repairs": None,
        "p95_ms": None,
        "superseded": 0,
        "rate": successes / n if n else 0.0,
        "low": low,
        "high": high,
        "decision": decision,
        **counts,
    }


def baseline_case(case_id, codes, kind=None, **counts) -> BaselineCase:
    fields = group_fields(case_id, codes, **counts)
    decision = None if kind is None else decided(kind, fields["n"], fields["successes"], case_id=case_id)
    return BaselineCase(**{**fields, "decision": decision})


def baseline(cases) -> BaselineSection:
    return BaselineSection(cases, [], NotEvidence.total(cases))


def variant(variant_id, kind=None, generator="g", **decision) -> Variant:
    shown = None if kind is None else decided(kind, **decision)
    return Variant(generator, variant_id, "", None, 1, None, "", 0, 0, 0, 0, 0, shown)


def adversarial_case(case_id, variants, reference=None, shortfalls=()) -> AdversarialCase:
    return AdversarialCase(case_id, "", reference, None, variants, [], shortfalls=list(shortfalls))


def adversarial(cases, cells=(), generators=(), rejections=()) -> AdversarialSection:
    return AdversarialSection(list(cases), list(cells), list(generators), NotEvidence(), list(rejections))


def level(number, codes, kind="mixed", **decision) -> LadderLevel:
    fields = group_fields("c", codes, variant_id=f"level_{number}", level=number)
    shown = decided(kind, fields["n"], fields["successes"], **decision)
    return LadderLevel(**{**fields, "group_path": f"stress/c/level_{number}", "case_mode": "stress", "decision": shown})


def ladder(case_id, verdict, at, levels, generator="add_scope_detail", **decision) -> Ladder:
    shown = None if verdict is None else decided(verdict, case_id=case_id, level=at, **decision)
    return Ladder(case_id, levels, shown, generator, "", None, verdict, at, at if verdict == "boundary" else None)


def stress(ladders) -> StressSection:
    return StressSection(ladders, NotEvidence())


def thread(scenario, violated, engine="e") -> Thread:
    score = Score("negation_aware", violated, None)
    return Thread(engine, scenario, "d", 1, [Turn(1, "", "", 0, [score])])
