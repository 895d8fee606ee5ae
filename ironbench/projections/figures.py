"""The numbers the field compares systems by, from a run's outcomes: pass@k and pass^k and same
code per instruction, robustness per case and generator, and their figures across cases. Pure.

The gauntlet's (when a conversation breaks) are in `gauntlet_summary.py`. Every figure carries
its n and interval; across cases the case is the unit (`ironbench.stats.clustered`).
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ironbench.core.kinds import JUDGED
from ironbench.stats import (
    CaseRobustness,
    GeneratorRobustness,
    PassK,
    StoppingRule,
    clustered_mean,
    estimate_pass_k,
    wilson_interval,
)


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


def signature(run: Run) -> tuple:
    """What the stopping rules compare (`core.outcome.Outcome.signature`)."""
    return (run.success, run.failure_stage, run.attempts, run.repairs_triggered)


def pass_k(runs: Sequence[Run], rule: StoppingRule) -> PassK | None:
    """pass@k, pass^k of a decided baseline from its evidence runs in run order."""
    return estimate_pass_k([signature(r) for r in runs], [r.success for r in runs], rule)


@dataclass(frozen=True)
class AtK:
    """pass@k and pass^k of one instruction at one k, rounded as aggregate.json writes them."""

    k: int
    pass_at_k: float
    pass_at_k_ci_95: list[float]
    pass_hat_k: float
    pass_hat_k_ci_95: list[float]


def by_k(found: PassK) -> list[AtK]:
    """Every k of an estimate, in order."""
    return [
        AtK(
            k,
            round(found.pass_at[k - 1], 6),
            [round(x, 6) for x in found.pass_at_95[k - 1]],
            round(found.pass_hat[k - 1], 6),
            [round(x, 6) for x in found.pass_hat_95[k - 1]],
        )
        for k in range(1, len(found.pass_at) + 1)
    ]


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
        "by_k": [asdict(row) for row in by_k(found)],
    }


@dataclass(frozen=True)
class Bricks:
    """How many distinct bricks a group's successful runs wrote (raw-output agreement beside
    outcome agreement, as Atil et al. 2024 set them side by side): digests, never copies."""

    successful_runs: int
    with_brick: int
    distinct: int
    by_sha256: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bricks(runs: Sequence[Run]) -> Bricks:
    """The bricks of `runs`' successful runs."""
    successful = [r for r in runs if r.success]
    digests = Counter(r.brick_sha256 for r in successful if r.brick_sha256)
    return Bricks(
        len(successful),
        sum(digests.values()),
        len(digests),
        dict(sorted(digests.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


@dataclass(frozen=True)
class AcrossAtK:
    """pass@k and pass^k at one k, the mean over the cases that reached it."""

    k: int
    cases: int
    runs: int
    pass_at_k: float
    pass_at_k_ci_95: list[float]
    pass_hat_k: float
    pass_hat_k_ci_95: list[float]


@dataclass(frozen=True)
class PassKAcross:
    """pass@k and pass^k across instructions, for every k some case reached."""

    cases: int
    stop_rules: list[str]
    by_k: list[AcrossAtK]
    interval: str = (
        "Wilson at the effective size from the cluster-robust variance across cases "
        "(Korn & Graubard, t with cases − 1 degrees of freedom); the case is the cluster"
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "stop_rules": self.stop_rules,
            "interval": self.interval,
            "by_k": [asdict(row) for row in self.by_k],
        }


def pass_k_across(per_case: Sequence[PassK]) -> PassKAcross | None:
    """The mean over instructions of each instruction's (unbiased) estimate, for every k some
    case reached, with the Wilson interval at the cluster-robust effective size (the case is
    the cluster: an estimand over the instructions these cases stand for)."""
    found = [p for p in per_case if p is not None]
    if not found:
        return None
    rows = []
    for k in range(1, max(len(p.pass_at) for p in found) + 1):
        having = [p for p in found if len(p.pass_at) >= k]
        means = []
        for values in ([p.pass_at[k - 1] for p in having], [p.pass_hat[k - 1] for p in having]):
            mean = clustered_mean(values, units=[p.n for p in having])
            assert mean is not None  # (every case having k has runs)
            means.append((round(mean.estimate, 6), [round(mean.low, 6), round(mean.high, 6)]))
        (at, at_95), (hat, hat_95) = means
        rows.append(AcrossAtK(k, len(having), sum(p.n for p in having), at, at_95, hat, hat_95))
    return PassKAcross(len(found), sorted({p.rule for p in found}), rows)


@dataclass(frozen=True)
class SameCode:
    """Of the cases with at least two successful runs that saved a brick, how many saved one brick."""

    cases: int
    one_brick: int
    rate: float
    ci_95: list[float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def same_code_across(per_case: Sequence[Bricks]) -> SameCode | None:
    """The share of eligible cases whose bricks were all the same (Atil et al.'s total
    agreement on raw output), Wilson over cases."""
    eligible = [b for b in per_case if b.with_brick >= 2]
    if not eligible:
        return None
    same = sum(1 for b in eligible if b.distinct == 1)
    low, high = wilson_interval(same, len(eligible))
    return SameCode(len(eligible), same, round(same / len(eligible), 6), [round(low, 6), round(high, 6)])


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
