"""Robustness to rewording, per case and generator and across cases: robust pass, worst case,
robust drop and flips.

References
- Wang et al. (2023) "ReCode: Robustness Evaluation of Code Generation Models", ACL,
  arXiv 2212.10264, §3.3: Robust Pass (correct on every perturbed prompt), Robust Drop
  (nominal − robust, relative to nominal), and flips between nominal and perturbed outcomes.
- Liang et al. (2022) "Holistic Evaluation of Language Models" (HELM), arXiv 2211.09110,
  §4.5: robustness as the worst case over an instance's perturbations.

A variant's first run is its evidence here: later runs are the adaptive repeats of the
variant verdict (run only when the first differed from the base), and counting them would
bias every rate below. The base is judged by the outcome the variants are compared with.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.stats.clustered import Clustered, clustered_mean, clustered_ratio
from ironbench.stats.intervals import wilson_interval


@dataclass(frozen=True)
class CaseRobustness:
    """One case's variants of one generator against its base instruction."""

    case_id: str
    generator: str
    base_success: bool  # the base outcome the variants are judged against
    nominal_successes: int  # the base's runs
    nominal_n: int
    variant_successes: tuple[bool, ...]  # each variant's first run

    @property
    def variants(self) -> int:
        return len(self.variant_successes)

    @property
    def nominal(self) -> float:
        return self.nominal_successes / self.nominal_n if self.nominal_n else float(self.base_success)

    @property
    def robust_pass(self) -> bool:
        """The base and every variant succeeded (ReCode's Robust Pass with one sample)."""
        return self.base_success and all(self.variant_successes)

    @property
    def worst_case(self) -> float:
        """The lowest success over the variants (HELM's worst case): 1 only if all succeeded."""
        return float(min(self.variant_successes)) if self.variant_successes else float("nan")

    @property
    def robust_drop(self) -> float | None:
        """(nominal − worst case) / nominal; None when the base never succeeded."""
        return (self.nominal - self.worst_case) / self.nominal if self.nominal > 0 and self.variants else None

    @property
    def flips(self) -> tuple[int, int, int, int]:
        """(success → failure, over the variants of a successful base; failure → success, over
        those of a failed one): only one direction can happen in one case."""
        changed = sum(1 for ok in self.variant_successes if ok != self.base_success)
        if self.base_success:
            return changed, self.variants, 0, 0
        return 0, 0, changed, self.variants

    def to_dict(self) -> dict:
        lost, could_lose, gained, could_gain = self.flips
        return {
            "base_success": self.base_success,
            "nominal_success_rate": {
                "estimate": round(self.nominal, 6),
                "ci_95": [round(x, 6) for x in wilson_interval(self.nominal_successes, self.nominal_n)],
                "n": self.nominal_n,
            },
            "variants": self.variants,
            "variants_succeeded": sum(self.variant_successes),
            "robust_pass": self.robust_pass,
            "worst_case_success_rate": None if not self.variants else self.worst_case,
            "robust_drop": None if self.robust_drop is None else round(self.robust_drop, 6),
            "flips_success_to_failure": _rate(lost, could_lose),
            "flips_failure_to_success": _rate(gained, could_gain),
        }


def _rate(x: int, n: int) -> dict:
    low, high = wilson_interval(x, n)
    return {"count": x, "n": n, "rate": round(x / n, 6) if n else None, "ci_95": [round(low, 6), round(high, 6)]}


def _cases_share(flags: Sequence[bool]) -> dict:
    """A share of cases, each case one independent unit: Wilson over cases."""
    x, n = sum(flags), len(flags)
    low, high = wilson_interval(x, n)
    return {"estimate": round(x / n, 6) if n else None, "ci_95": [round(low, 6), round(high, 6)], "n": n, "cases": n}


@dataclass(frozen=True)
class GeneratorRobustness:
    generator: str
    cases: tuple[CaseRobustness, ...]

    def to_dict(self) -> dict:
        """Across cases, the case is the unit: shares of cases with Wilson intervals; the
        nominal rate and the flip rates pooled over runs or variants with the case as cluster
        (`stats.clustered`); the robust drop a ratio of case means with a cluster-robust
        interval."""
        used = [c for c in self.cases if c.variants]
        nominal = clustered_mean([c.nominal for c in used], units=[max(1, c.nominal_n) for c in used])
        lost = [c.flips[:2] for c in used if c.flips[1]]
        gained = [c.flips[2:] for c in used if c.flips[3]]
        drop = clustered_ratio([c.nominal - c.worst_case for c in used], [c.nominal for c in used])
        return {
            "generator": self.generator,
            "cases": len(used),
            "variants": sum(c.variants for c in used),
            "nominal_success_rate": _clustered(nominal),
            "robust_pass_rate": _cases_share([c.robust_pass for c in used]),
            "worst_case_success_rate": _cases_share([c.worst_case == 1.0 for c in used]),
            "robust_drop": None
            if drop is None
            # at most 1: the worst case cannot fall below 0
            else {
                "estimate": round(drop[0], 6),
                "ci_95": [round(drop[1], 6), round(min(1.0, drop[2]), 6)],
                "cases": len(used),
            },
            "flips_success_to_failure": _pooled(lost),
            "flips_failure_to_success": _pooled(gained),
            "interval_note": "clustered by case: each case one unit (Wilson over cases), or its variants one cluster",
        }


def _clustered(found: Clustered | None) -> dict | None:
    return None if found is None else found.to_dict()


def _pooled(pairs: Sequence[tuple[int, int]]) -> dict | None:
    """Σ flips / Σ variants that could flip, the case as cluster."""
    found = clustered_mean([x / n for x, n in pairs], weights=[n for _, n in pairs]) if pairs else None
    if found is None:
        return None
    return {**found.to_dict(), "count": sum(x for x, _ in pairs)}
