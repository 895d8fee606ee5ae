"""Exact tests: the conditional test of two success rates stratified by case, and
permutation tests for shifts beyond the success rate.

References
- Agresti (2013) "Categorical Data Analysis", 3rd ed., §7.3.5: the exact conditional test of
  conditional independence in 2×2×K tables (Fisher's exact test when K = 1).
- Phipson & Smyth (2010) "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9:39.
"""

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from ironbench.stats.laws import TIE, hypergeometric_pmf


@dataclass(frozen=True)
class ExactTest:
    """Exact conditional test of equal success rates in A and B, stratified by case.

    `p_regression` is the one-sided p-value that B succeeds less often than A
    (A's successes at least as high as observed); `p_improvement` the opposite.
    With one stratum this is Fisher's exact test.
    """

    observed: int
    expected: float
    p_regression: float
    p_improvement: float
    informative_strata: int

    @property
    def p_two_sided(self) -> float:
        """Twice the smaller tail (capped at 1): a change in either direction."""
        return min(1.0, 2 * min(self.p_regression, self.p_improvement))


def stratified_exact_test(strata: Sequence[tuple[int, int, int, int]]) -> ExactTest:
    """strata: (successes_a, n_a, successes_b, n_b) per case."""
    distribution = np.ones(1)
    start = 0  # the value of A's total successes at distribution[0]
    length = 1  # the whole distribution's length: A's runs over the informative strata, plus one
    keep = 1 + max((n_a for _, n_a, _, _ in strata), default=0)
    trimmed_at = 4 * keep
    observed = 0
    expected = 0.0
    informative = 0
    for s_a, n_a, s_b, n_b in strata:
        total = s_a + s_b
        if n_a == 0 or n_b == 0 or total in (0, n_a + n_b):
            continue  # a stratum with a fixed margin carries no information
        informative += 1
        distribution = np.convolve(distribution, hypergeometric_pmf(total, n_a, n_b))
        length += n_a
        if len(distribution) >= trimmed_at:
            distribution, start = _trimmed(distribution, start, keep)
            trimmed_at = max(4 * keep, len(distribution) * 5 // 4)
        observed += s_a
        expected += n_a * total / (n_a + n_b)
    if informative == 0:
        return ExactTest(observed, expected, 1.0, 1.0, 0)
    # Summed where the whole distribution has them: numpy sums pairwise, by position, so
    # the sums are the very same.
    whole = np.zeros(length)
    whole[start : start + len(distribution)] = distribution
    p_regression = min(1.0, float(whole[observed:].sum()))
    p_improvement = min(1.0, float(whole[: observed + 1].sum()))
    return ExactTest(observed, expected, p_regression, p_improvement, informative)


def _trimmed(distribution: np.ndarray, start: int, keep: int) -> tuple[np.ndarray, int]:
    """The distribution without its outer entries that are exactly zero (values A's total
    cannot take, and far tails that underflowed), and where it now starts.

    The law of a sum over K cases spans K cases' runs, but its mass lies within some 40
    standard deviations of its mean (the square root of K cases' runs): past that, every
    probability is 0.0. Leaving those out makes the test cost about K^1.5 instead of K^2
    and changes no value: `keep` - 1 zeros (the longest stratum's law, less one) stay on
    each side, so every entry that is not zero is still convolved over a whole window of
    the same values, in the same order, as on the whole distribution.
    """
    nonzero = np.flatnonzero(distribution)
    low = max(0, int(nonzero[0]) - (keep - 1))
    high = min(len(distribution), int(nonzero[-1]) + keep)
    return distribution[low:high], start + low


def stratified_p_regression_batch(
    s_a: np.ndarray, s_b: np.ndarray, n_a: Sequence[int], n_b: Sequence[int]
) -> np.ndarray:
    """`stratified_exact_test(...).p_regression` for R data sets at once (rows of s_a, s_b),
    all with the same per-case sizes: what power and calibration simulations need."""
    s_a, s_b = np.atleast_2d(s_a), np.atleast_2d(s_b)
    rows = s_a.shape[0]
    distribution = np.ones((rows, 1))
    for k, (size_a, size_b) in enumerate(zip(n_a, n_b, strict=True)):
        table = np.array([hypergeometric_pmf(t, size_a, size_b) for t in range(size_a + size_b + 1)])
        pmf = table[s_a[:, k] + s_b[:, k]]
        grown = np.zeros((rows, distribution.shape[1] + size_a))
        for x in range(size_a + 1):
            grown[:, x : x + distribution.shape[1]] += distribution * pmf[:, x : x + 1]
        distribution = grown
    tails = np.cumsum(distribution[:, ::-1], axis=1)[:, ::-1]
    observed = s_a.sum(axis=1)
    return np.minimum(1.0, tails[np.arange(rows), observed])


def stratified_permutation_test(
    strata: Sequence[tuple[Sequence, Sequence]], kind: str, permutations: int = 1999, seed: int = 0
) -> tuple[float, float]:
    """Does B's distribution differ from A's, within cases? Returns (effect, p-value).

    kind "categories": values are labels (failure stage); per label, A's excess over its
    expected count is summed across cases and squared over its variance (a Cochran-Mantel-
    Haenszel-type statistic: a shift repeated in every case adds up); the effect is the
    total variation distance between the case-weighted A and B distributions. kind "mean":
    values are numbers (attempts); statistic and effect are the stratified mean difference
    B − A, tested two-sided. Labels are permuted within each case, so the test is exact in
    law whatever the counts: by full enumeration for one small case, else by seeded Monte
    Carlo with the +1 correction, which keeps it valid (P(p <= alpha) <= alpha).
    """
    return stratified_permutation_tests([(strata, kind)], permutations, seed)[0]


def stratified_permutation_tests(
    tests: Sequence[tuple[Sequence[tuple[Sequence, Sequence]], str]], permutations: int = 1999, seed: int = 0
) -> list[tuple[float, float]]:
    """`stratified_permutation_test` of several (strata, kind) over the same runs (each
    case's A and B as long in every test): each drawn permutation serves every test, so
    each result is the one a call of its own gives, at the cost of one."""
    shifts = [_Shift.of(strata, kind) for strata, kind in tests]
    sizes = shifts[0].sizes if shifts else []
    if any(shift.sizes != sizes for shift in shifts):
        raise ValueError("tests drawn together must hold the same runs per case")
    if not sizes:
        return [(0.0, 1.0)] * len(shifts)
    if len(sizes) == 1 and math.comb(sum(sizes[0]), sizes[0][0]) <= 5000:
        every = np.array(list(combinations(range(sum(sizes[0])), sizes[0][0])))
        return [
            (shift.effect, float(np.mean(shift.finish(shift.add(0, shift.features[0][every].sum(axis=1)[None]))
                                         >= shift.tie)))
            for shift in shifts
        ]  # fmt: skip
    totals = [shift.start(permutations) for shift in shifts]
    draws = _Draws(np.random.default_rng(seed), permutations)
    for first, stop, (n_a, n_b) in _runs_of_equal_sizes(sizes, permutations):
        chosen = draws.first_of_each_permutation(stop - first, n_a, n_b)
        for k, shift in enumerate(shifts):
            features = np.stack(shift.features[first:stop])
            totals[k] = shift.add(first, np.matmul(chosen, features), totals[k])
    return [
        (shift.effect, (1 + int(np.sum(shift.finish(total) >= shift.tie))) / (1 + permutations))
        for shift, total in zip(shifts, totals, strict=True)
    ]


def _runs_of_equal_sizes(sizes: Sequence[tuple[int, int]], permutations: int) -> Iterator[tuple[int, int, tuple]]:
    """(first, stop, size): consecutive cases of one size, a few million draws at most."""
    first = 0
    while first < len(sizes):
        most = max(1, 2_000_000 // (permutations * sum(sizes[first])))
        stop = first + 1
        while stop < len(sizes) and stop - first < most and sizes[stop] == sizes[first]:
            stop += 1
        yield first, stop, sizes[first]
        first = stop


class _Draws:
    """Which runs each permutation gives to A, drawn as permuting each case's runs by sorting
    uniforms would: the first n_a of a sorted row. One draw serves consecutive cases of equal
    sizes (the same stream as one draw per case), into buffers kept between draws."""

    def __init__(self, rng: np.random.Generator, permutations: int) -> None:
        self.rng, self.permutations = rng, permutations
        self._buffers: dict[tuple[int, ...], tuple[np.ndarray, ...]] = {}

    def first_of_each_permutation(self, cases: int, n_a: int, n_b: int) -> np.ndarray:
        """cases x permutations x runs: 1.0 where a run goes to A, else 0.0. A row's n_a smallest uniforms are those up to its
        n_a-th smallest; should that one tie with the next (about one row in 10^13), the
        first n_a of the sort are taken instead, as sorting them does."""
        shape = (cases, self.permutations, n_a + n_b)
        if shape not in self._buffers:
            self._buffers = {shape: (np.empty(shape), np.empty(shape), np.empty(shape, dtype=bool), np.empty(shape))}
        uniforms, ordered, chosen, as_float = self._buffers[shape]
        self.rng.random(out=uniforms)
        np.copyto(ordered, uniforms)
        ordered.sort(axis=-1)
        np.less_equal(uniforms, ordered[..., n_a - 1 : n_a], out=chosen)
        if n_b and np.any(ordered[..., n_a - 1] == ordered[..., n_a]):
            chosen[...] = False
            np.put_along_axis(chosen, np.argsort(uniforms, axis=-1)[..., :n_a], True, axis=-1)
        np.copyto(as_float, chosen)
        return as_float


@dataclass(frozen=True)
class _Shift:
    """One permutation test's cases: each run's features (a label's indicator, or a number),
    sizes, feature totals and weights, and its observed statistic and effect."""

    kind: str
    features: list[np.ndarray]
    sizes: list[tuple[int, int]]
    totals: np.ndarray  # cases x features
    weights: np.ndarray
    effect: float = 0.0
    tie: float = 0.0

    @classmethod
    def of(cls, strata: Sequence[tuple[Sequence, Sequence]], kind: str) -> "_Shift":
        cases = [(list(a), list(b)) for a, b in strata if len(a) and len(b)]
        if kind == "mean":
            features = [np.array([float(v) for v in a + b])[:, None] for a, b in cases]
        else:
            labels = sorted({v for a, b in cases for v in a + b}, key=str)  # one label set for every case
            index = {label: i for i, label in enumerate(labels)}
            identity = np.eye(len(labels))
            features = [identity[[index[v] for v in a + b]] for a, b in cases]
        sizes = [(len(a), len(b)) for a, b in cases]
        totals = np.array([f.sum(axis=0) for f in features]) if cases else np.zeros((0, 1))
        weights = np.array([n_a * n_b / (n_a + n_b) for n_a, n_b in sizes])
        weights /= weights.sum() if len(cases) else 1.0
        shift = cls(kind, features, sizes, totals, weights)
        if not cases:
            return shift
        pooled_a = sum(w * f[:n_a].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes, strict=True))
        pooled_b = sum(w * f[n_a:].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes, strict=True))
        assert isinstance(pooled_a, np.ndarray) and isinstance(pooled_b, np.ndarray)  # sums over >= 1 case
        effect = float(pooled_b[0] - pooled_a[0]) if kind == "mean" else float(np.abs(pooled_a - pooled_b).sum() / 2)
        a_sums = np.stack([f[:n_a].sum(axis=0)[None, :] for f, (n_a, _) in zip(features, sizes, strict=True)])
        observed = float(shift.finish(shift.add(0, a_sums))[0])
        return replace(shift, effect=effect, tie=observed - TIE * max(1.0, abs(observed)))

    def start(self, rows: int) -> np.ndarray:
        return np.zeros((rows, 1 if self.kind == "mean" else self.totals.shape[1]))

    def add(self, first: int, a_sums: np.ndarray, total: np.ndarray | None = None) -> np.ndarray:
        """The statistic's sum over cases carried on by cases first, first + 1, ... (A's sums
        per permutation of each: cases x rows x features), one case at a time in case order,
        as the sum over all cases is taken."""
        stop = first + len(a_sums)
        n_a = np.array([n for n, _ in self.sizes[first:stop]], dtype=float)[:, None, None]
        n_b = np.array([n for _, n in self.sizes[first:stop]], dtype=float)[:, None, None]
        totals = self.totals[first:stop][:, None, :]
        if self.kind == "mean":
            weights = self.weights[first:stop][:, None, None]
            terms = weights * ((totals - a_sums) / n_b - a_sums / n_a)
        else:
            terms = a_sums - n_a * totals / (n_a + n_b)
        total = np.zeros(terms.shape[1:]) if total is None else total
        for term in terms:
            total = total + term
        return total

    def finish(self, total: np.ndarray) -> np.ndarray:
        """The statistic, one value per row, from its sum over every case."""
        if self.kind == "mean":
            return np.abs(total[:, 0])
        variance = sum(
            n_a * n_b * t * (n_a + n_b - t) / ((n_a + n_b) ** 2 * max(1, n_a + n_b - 1))
            for t, (n_a, n_b) in zip(self.totals, self.sizes, strict=True)
        )
        safe = np.where(variance > 0, variance, 1.0)
        return np.sum(np.where(variance > 0, total**2 / safe, 0.0), axis=1)


def exact_distribution_test(reference: Sequence, sample: Sequence) -> float:
    """Could `sample` (a few runs) come from the same outcome distribution as `reference`?
    The exact permutation p-value of Pearson's X² over outcome labels, enumerated by the
    sample's label counts (a multivariate hypergeometric law): exact for any reference size."""
    labels = sorted(set(reference) | set(sample), key=str)
    totals = [list(reference).count(v) + list(sample).count(v) for v in labels]
    n_s, n = len(sample), len(reference) + len(sample)
    if n_s == 0 or not reference:
        return 1.0
    observed_counts = [list(sample).count(v) for v in labels]

    def x2(counts: Sequence[int]) -> float:
        return sum((c - n_s * t / n) ** 2 * n * n / (t * n_s * (n - n_s)) for c, t in zip(counts, totals, strict=True))

    observed = x2(observed_counts)
    p = 0.0
    log_all = math.lgamma(n + 1) - math.lgamma(n_s + 1) - math.lgamma(n - n_s + 1)
    for counts in _compositions(n_s, totals):
        if x2(counts) >= observed - TIE * max(1.0, observed):
            p += math.exp(
                sum(
                    math.lgamma(t + 1) - math.lgamma(c + 1) - math.lgamma(t - c + 1)
                    for c, t in zip(counts, totals, strict=True)
                )
                - log_all
            )
    return min(1.0, p)


def _compositions(total: int, bounds: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to split `total` runs over labels, at most bounds[i] in label i."""
    if len(bounds) == 1:
        if total <= bounds[0]:
            yield (total,)
        return
    for first in range(min(total, bounds[0]) + 1):
        for rest in _compositions(total - first, bounds[1:]):
            yield (first, *rest)
