"""Multiplicity for discrete p-values: exact Westfall-Young min-p, and Holm.

References
- Westfall & Young (1993) "Resampling-Based Multiple Testing", Algorithm 2.8 (step-down min-p);
  Westfall & Wolfinger (1997) "Multiple tests with discrete distributions", The American
  Statistician 51:3 (the min-p distribution computed exactly from each test's discrete null law).
- Holm (1979) "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65.
"""

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ironbench.stats.laws import TIE, hypergeometric_pmf


@dataclass(frozen=True)
class NullLaw:
    """A discrete test's attainable p-values (ascending) and P(p <= each) under its null."""

    p_values: tuple[float, ...]
    cumulative: tuple[float, ...]

    def cdf(self, c: float) -> float:
        """P(p <= c) under the null: at most c, often far less for a discrete test."""
        index = bisect_right(self.p_values, c * (1 + TIE))
        return self.cumulative[index - 1] if index else 0.0


def fisher_null_law(s_a: int, n_a: int, s_b: int, n_b: int, two_sided: bool = False) -> NullLaw:
    """The law of one case's Fisher p-value given its margins (what min-p adjustment needs)."""
    return _fisher_null_law(s_a + s_b, n_a, n_b, two_sided)


@lru_cache(maxsize=4096)
def _fisher_null_law(total: int, n_a: int, n_b: int, two_sided: bool) -> NullLaw:
    pmf = hypergeometric_pmf(total, n_a, n_b)
    support = [x for x in range(n_a + 1) if pmf[x] > 0]
    upper = {x: math.fsum(pmf[x:]) for x in support}
    lower = {x: math.fsum(pmf[: x + 1]) for x in support}
    pairs: dict[float, float] = {}
    for x in support:
        p = min(1.0, 2 * min(upper[x], lower[x])) if two_sided else min(1.0, upper[x])
        key = next((k for k in pairs if math.isclose(k, p, rel_tol=TIE)), p)
        pairs[key] = pairs.get(key, 0.0) + pmf[x]
    ordered = sorted(pairs)
    cumulative = np.minimum(1.0, np.cumsum([pairs[p] for p in ordered]))
    return NullLaw(tuple(float(p) for p in ordered), tuple(float(c) for c in cumulative))


def min_p_adjust(p_values: Sequence[float], laws: Sequence[NullLaw]) -> list[float]:
    """Westfall-Young step-down min-p adjusted p-values, computed exactly.

    Cases are independent given their margins, so P(min p <= c) over any subset of
    true nulls is 1 − Π(1 − F_k(c)), with F_k each case's discrete null law: no
    resampling needed. Unlike Bonferroni or Holm, a case whose smallest attainable
    p-value is large (few runs) costs the others almost nothing; it strongly controls
    the family-wise error rate (subset pivotality holds for independent cases).
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [1.0] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        c = p_values[index]
        survive = 1.0
        for other in order[rank:]:
            survive *= 1.0 - laws[other].cdf(c)
        running = max(running, min(1.0, 1.0 - survive))
        adjusted[index] = running
    return adjusted


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: valid for any dependence between the tests."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def smallest_adjusted_p(case: int, sizes: Sequence[tuple[int, int]], laws: Sequence[NullLaw]) -> float:
    """The best adjusted p-value case `case` could reach at its run counts (its most extreme
    result: every A run succeeds, every B run fails), given the other cases' null laws."""
    n_a, n_b = sizes[case]
    p_min = 1.0 / math.comb(n_a + n_b, n_a) if n_a and n_b else 1.0
    survive = 1.0 - p_min
    for other, law in enumerate(laws):
        if other != case:
            survive *= 1.0 - law.cdf(p_min)
    return 1.0 - survive
