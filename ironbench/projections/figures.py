"""The numbers the field compares systems by, from a run's outcomes: pass@k and pass^k and same
code per instruction, robustness per case and generator, and their figures across cases. Pure.

The gauntlet's (when a conversation breaks) are in `gauntlet_summary.py`. Every figure carries
its n and interval; across cases the case is the unit (`ironbench.stats.clustered`).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ironbench.core.kinds import JUDGED
from ironbench.stats import (
    CaseRobustness,
    GeneratorRobustness,
    PassK,
    StoppingRule,
    clustered_mean,
    confidence_thresholds,
    estimate_pass_k,
    wilson_interval,
)

SEED_RUNS = 10  # a baseline case's default `runs`


class Run(Protocol):
    """What these figures read of a run: an InvocationCompleted, or its read-model row."""

    @property
    def run_index(self) -> int: ...
    @property
    def success(self) -> bool: ...
    @property
    def failure_stage(self) -> str | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def repairs_triggered(self) -> int: ...
    @property
    def infra_error(self) -> str | None: ...
    @property
    def brick_sha256(self) -> str | None: ...


class Reference(Protocol):
    """What these figures read of an adversarial case's reference decision."""

    @property
    def reference(self) -> list | None: ...
    @property
    def successes(self) -> int: ...
    @property
    def n(self) -> int: ...


class Decided(Protocol):
    @property
    def decision(self) -> str: ...


def stopping_rule(suite: Mapping, case_id: str) -> StoppingRule:
    """The rule a baseline case of this suite (as a run recorded it) stopped by."""
    return _rule(suite, next((c for c in suite.get("cases", []) if c.get("id") == case_id), {}))


def stopping_rules(suite: Mapping) -> dict[str, StoppingRule]:
    """`stopping_rule` of every case of the suite, by id: the suite read once, not once a case."""
    return {case["id"]: _rule(suite, case) for case in reversed(suite.get("cases", [])) if "id" in case}


def _rule(suite: Mapping, case: Mapping) -> StoppingRule:
    stop = case.get("stop") or suite.get("stop") or {"rule": "last_3_agree"}
    if stop.get("rule") == "fixed":
        return StoppingRule("fixed", int(stop["runs"]))
    if stop.get("rule") == "confidence":
        cap = int(stop["max_runs"])
        thresholds = confidence_thresholds(float(stop["reproduce"]), float(stop["confidence"]), cap)
        return StoppingRule("confidence", cap, thresholds)
    return StoppingRule("last_3_agree", int(case.get("runs") or SEED_RUNS))


def signature(run: Run) -> tuple:
    """What the stopping rules compare (`core.outcome.Outcome.signature`)."""
    return (run.success, run.failure_stage, run.attempts, run.repairs_triggered)


def pass_k(runs: Sequence[Run], rule: StoppingRule) -> PassK | None:
    """pass@k, pass^k of a decided baseline from its evidence runs in run order."""
    return estimate_pass_k([signature(r) for r in runs], [r.success for r in runs], rule)


def pass_k_dict(found: PassK | None) -> dict | None:
    if found is None:
        return None
    return {
        "stop_rule": found.rule,
        "n": found.n,
        "successes": found.successes,
        "estimator": found.estimator,
        "interval": found.interval,
        "k": found.why_k,
        "by_k": [
            {
                "k": k,
                "pass_at_k": round(found.pass_at[k - 1], 6),
                "pass_at_k_ci_95": [round(x, 6) for x in found.pass_at_95[k - 1]],
                "pass_hat_k": round(found.pass_hat[k - 1], 6),
                "pass_hat_k_ci_95": [round(x, 6) for x in found.pass_hat_95[k - 1]],
            }
            for k in range(1, len(found.pass_at) + 1)
        ],
    }


def bricks(runs: Sequence[Run]) -> dict:
    """How many distinct bricks the successful runs wrote (raw-output agreement beside
    outcome agreement, as Atil et al. 2024 set them side by side): digests, never copies."""
    successful = [r for r in runs if r.success]
    digests = Counter(r.brick_sha256 for r in successful if r.brick_sha256)
    return {
        "successful_runs": len(successful),
        "with_brick": sum(digests.values()),
        "distinct": len(digests),
        "by_sha256": dict(sorted(digests.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def pass_k_across(per_case: Sequence[PassK]) -> dict | None:
    """The mean over instructions of each instruction's (unbiased) estimate, for every k some
    case reached, with the Wilson interval at the cluster-robust effective size (the case is
    the cluster: an estimand over the instructions these cases stand for)."""
    found = [p for p in per_case if p is not None]
    if not found:
        return None
    rows = []
    for k in range(1, max(len(p.pass_at) for p in found) + 1):
        having = [p for p in found if len(p.pass_at) >= k]
        row: dict = {"k": k, "cases": len(having), "runs": sum(p.n for p in having)}
        for name, values in (
            ("pass_at_k", [p.pass_at[k - 1] for p in having]),
            ("pass_hat_k", [p.pass_hat[k - 1] for p in having]),
        ):
            mean = clustered_mean(values, units=[p.n for p in having])
            assert mean is not None  # (every case having k has runs)
            row[name] = round(mean.estimate, 6)
            row[f"{name}_ci_95"] = [round(mean.low, 6), round(mean.high, 6)]
        rows.append(row)
    return {
        "cases": len(found),
        "stop_rules": sorted({p.rule for p in found}),
        "interval": "Wilson at the effective size from the cluster-robust variance across cases "
        "(Korn & Graubard, t with cases − 1 degrees of freedom); the case is the cluster",
        "by_k": rows,
    }


def same_code_across(per_case: Sequence[dict]) -> dict | None:
    """Of the cases with at least two successful runs that saved a brick, the share whose
    bricks were all the same (Atil et al.'s total agreement on raw output), Wilson over cases."""
    eligible = [b for b in per_case if b["with_brick"] >= 2]
    if not eligible:
        return None
    same = sum(1 for b in eligible if b["distinct"] == 1)
    low, high = wilson_interval(same, len(eligible))
    return {
        "cases": len(eligible),
        "one_brick": same,
        "rate": round(same / len(eligible), 6),
        "ci_95": [round(low, 6), round(high, 6)],
    }


# -- robustness -----------------------------------------------------------------------------


def case_robustness(
    case_id: str,
    generator: str,
    reference: Reference | None,
    variants: Sequence[tuple[Decided | None, Sequence[Run]]],
) -> CaseRobustness | None:
    """One case's variants of one generator against its base: the reference decision (its
    runs' counts, and the outcome the variants were judged against) and each variant's
    decision with its runs. Variants not decided yet are left out; None without a reference."""
    if reference is None or reference.reference is None:
        return None
    firsts = []
    for decision, runs in variants:
        if decision is None or decision.decision not in JUDGED:
            continue
        evidence = sorted((r for r in runs if r.infra_error is None), key=lambda r: r.run_index)
        if evidence:
            firsts.append(evidence[0].success)
    return CaseRobustness(
        case_id, generator, bool(reference.reference[0]), reference.successes, reference.n, tuple(firsts)
    )


@dataclass(frozen=True, slots=True)
class JudgedReference:
    """A reference decision judged again on correctness."""

    reference: list
    successes: int
    n: int


def judged_reference(reference: Reference, runs: Sequence[Run]) -> JudgedReference | None:
    """An adversarial case's reference judged on its own runs here, each one's success now its
    correctness: the base outcome is the majority. None: it stays as it was decided (it has no
    runs in this run: it was taken from a stored baseline)."""
    evidence = [r for r in runs if r.infra_error is None]
    if not reference.reference or not evidence:
        return None
    correct = sum(1 for r in evidence if r.success)
    return JudgedReference([2 * correct >= len(evidence), *reference.reference[1:]], correct, len(evidence))


def robustness_across(cells: Sequence[CaseRobustness]) -> list[dict]:
    """Per generator, across the cases it rewrote (generators in first-seen order)."""
    by_generator: dict[str, list[CaseRobustness]] = {}
    for cell in cells:
        by_generator.setdefault(cell.generator, []).append(cell)
    return [GeneratorRobustness(g, tuple(cases)).to_dict() for g, cases in by_generator.items()]
