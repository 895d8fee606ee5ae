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

    The step at rank r multiplies 1 − F_k(c_r) over the cases ranked r and after, in rank
    order (a cumulative product: the same floating-point products as one at a time); each
    distinct law's F_k(c_r) is found once per rank, as c_r rises. Once an adjusted p-value
    reaches 1 every later one is 1, so the steps stop there: most families of thousands of
    cases need a few steps of their length each, not their length squared.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    distinct: dict[NullLaw, int] = {}
    member = np.array([distinct.setdefault(laws[i], len(distinct)) for i in order], dtype=np.intp)
    rising = _Cdfs(list(distinct))
    running = 0.0
    for rank, index in enumerate(order):
        factors = 1.0 - rising.at(p_values[index])
        survive = float(np.cumprod(factors[member[rank:]])[-1])
        running = max(running, min(1.0, 1.0 - survive))
        adjusted[index] = running
        if running == 1.0:
            break
    return adjusted


class _Cdfs:
    """F(c) of several null laws at once, for c that only rise: each law's steps are
    passed once in all."""

    def __init__(self, laws: Sequence[NullLaw]) -> None:
        steps = sorted(
            (p, k, cumulative)
            for k, law in enumerate(laws)
            for p, cumulative in zip(law.p_values, law.cumulative, strict=True)
        )
        self._p = [p for p, _, _ in steps]
        self._law = [k for _, k, _ in steps]
        self._cumulative = [c for _, _, c in steps]
        self._next = 0
        self._values = np.zeros(len(laws))

    def at(self, c: float) -> np.ndarray:
        """Every law's F(c), as NullLaw.cdf(c) gives it; c must not fall below an earlier c."""
        limit = c * (1 + TIE)
        while self._next < len(self._p) and self._p[self._next] <= limit:
            self._values[self._law[self._next]] = self._cumulative[self._next]
            self._next += 1
        return self._values


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
    return smallest_adjusted_ps(sizes, laws)[case]


def smallest_adjusted_ps(sizes: Sequence[tuple[int, int]], laws: Sequence[NullLaw]) -> list[float]:
    """`smallest_adjusted_p` of every case. A case's product runs over the others in case
    order; factors of exactly 1 (laws that cannot reach its p) are left out, which changes
    no product, and cases with the same run counts share the factors."""
    distinct: dict[NullLaw, int] = {}
    member = np.array([distinct.setdefault(law, len(distinct)) for law in laws], dtype=np.intp)
    out = [1.0] * len(sizes)
    by_size: dict[tuple[int, int], list[int]] = {}
    for case, size in enumerate(sizes):
        by_size.setdefault(size, []).append(case)
    for (n_a, n_b), cases in by_size.items():
        p_min = 1.0 / math.comb(n_a + n_b, n_a) if n_a and n_b else 1.0
        factors = (1.0 - np.array([law.cdf(p_min) for law in distinct]))[member]
        moving = np.flatnonzero(factors != 1.0)
        everyone = np.concatenate(([1.0 - p_min], factors[moving]))
        shared = 1.0 - float(np.cumprod(everyone)[-1])
        for case in cases:
            if factors[case] == 1.0:
                out[case] = shared
            else:
                others = everyone[np.concatenate(([0], 1 + np.flatnonzero(moving != case)))]
                out[case] = 1.0 - float(np.cumprod(others)[-1])
    return out
