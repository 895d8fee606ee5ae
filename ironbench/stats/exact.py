"""Statistics that decisions and comparisons carry as evidence; pure functions.

Exact formulas, no statistics package: binomial and hypergeometric laws by
log-factorials, intervals by bisection on exact tails, batches of tests with numpy.

References
- Wilson (1927) "Probable inference, the law of succession, and statistical inference", JASA 22:209.
- Clopper & Pearson (1934) "The use of confidence or fiducial limits...", Biometrika 26:404.
- Newcombe (1998) "Interval estimation for the difference between independent proportions:
  comparison of eleven methods", Statistics in Medicine 17:873 (method 10, the hybrid score interval).
- Yan & Su (2010) "Stratified Wilson and Newcombe confidence intervals for multiple binomial
  proportions", Statistics in Biopharmaceutical Research 2:329.
- Mantel & Haenszel (1959) JNCI 22:719; Greenland & Robins (1985) Biometrics 41:55 (risk difference weights).
- Agresti (2013) "Categorical Data Analysis", 3rd ed., §7.3.5: the exact conditional test of
  conditional independence in 2×2×K tables (Fisher's exact test when K = 1).
- Westfall & Young (1993) "Resampling-Based Multiple Testing", Algorithm 2.8 (step-down min-p);
  Westfall & Wolfinger (1997) "Multiple tests with discrete distributions", The American
  Statistician 51:3 (the min-p distribution computed exactly from each test's discrete null law).
- Holm (1979) "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65.
- Phipson & Smyth (2010) "Permutation p-values should never be zero", Stat. Appl. Genet. Mol. Biol. 9:39.
"""

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

Z95 = 1.959963984540054
_TIE = 1e-9  # relative tolerance when comparing p-values computed along different paths


def significant(p: float, alpha: float) -> bool:
    """p <= alpha, allowing for rounding: a table whose exact p is alpha (3/3 vs 0/3 at 0.05)
    must not pass or fail by the last bit of a float sum."""
    return p <= alpha * (1 + _TIE)


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    low, high = _wilson(successes / n, n, z)
    return (0.0 if successes == 0 else low), (1.0 if successes == n else high)


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's interval for an estimate `p` worth `n` (possibly effective, non-integer) trials."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z * z / (4 * n * n))) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def chance_agreement(p: float, k: int = 3) -> float:
    """Probability that k independent runs agree on success/failure by chance at rate p."""
    return p**k + (1 - p) ** k


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# -- binomial: exact tails and one-sided Clopper-Pearson bounds -------------------------------

def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p)."""
    k = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        return (k == (0 if p <= 0.0 else n)).astype(float)
    logs = _log_comb(n, k) + k * math.log(p) + (n - k) * math.log1p(-p)
    return np.exp(logs)


@lru_cache(maxsize=None)
def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))])


def _log_comb(n, k):
    table = _log_factorials(int(np.max(n)))
    return table[n] - table[k] - table[np.asarray(n) - k]


def _binomial_sf(k: int, n: int, p: float) -> float:
    """P(X >= k)."""
    return float(binomial_pmf(n, p)[k:].sum()) if k > 0 else 1.0


def _bisect(f: Callable[[float], float], low: float = 0.0, high: float = 1.0) -> float:
    """The root of an increasing f on [low, high], to 1e-12."""
    for _ in range(60):
        middle = (low + high) / 2
        if f(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@lru_cache(maxsize=65536)
def clopper_pearson_lower(successes: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact lower bound: the smallest rate that makes `successes` or more in n
    runs at least (1 - confidence) likely. n of n gives (1 - confidence)^(1/n): 3/3 → 0.368."""
    if successes == 0 or n == 0:
        return 0.0
    alpha = 1 - confidence
    if successes == n:
        return alpha ** (1 / n)
    return _bisect(lambda p: _binomial_sf(successes, n, p) - alpha)


def clopper_pearson_upper(successes: int, n: int, confidence: float = 0.95) -> float:
    """One-sided exact upper bound on a rate: 0 of 3 still allows up to 0.632."""
    if n == 0 or successes == n:
        return 1.0
    return 1.0 - clopper_pearson_lower(n - successes, n, confidence)


# -- differences between two sides, with intervals -------------------------------------------

@dataclass(frozen=True)
class Difference:
    """B − A in success rate, with its interval."""

    delta: float
    low: float
    high: float


def newcombe_difference(s_a: int, n_a: int, s_b: int, n_b: int, z: float = Z95) -> Difference:
    """B − A with Newcombe's hybrid score interval (method 10): never degenerate at 0% or 100%."""
    p_a, p_b = s_a / n_a, s_b / n_b
    low_a, high_a = wilson_interval(s_a, n_a, z)
    low_b, high_b = wilson_interval(s_b, n_b, z)
    delta = p_b - p_a
    return Difference(delta, delta - math.hypot(p_b - low_b, high_a - p_a),
                      delta + math.hypot(high_b - p_b, p_a - low_a))


def stratified_difference(strata: Sequence[tuple[int, int, int, int]], z: float = Z95) -> Difference:
    """Across cases: the Mantel-Haenszel risk difference B − A (weights n_a·n_b/(n_a+n_b)),
    with Yan & Su's stratified Newcombe interval on the same weights.

    Sato's variance of the MH difference is zero whenever every case is at 0% or 100%
    (common with a few runs per case), which gives a zero-width interval; the stratified
    score interval does not degenerate. strata: (s_a, n_a, s_b, n_b) per case.
    """
    used = [(s_a, n_a, s_b, n_b) for s_a, n_a, s_b, n_b in strata if n_a and n_b]
    if not used:
        return Difference(0.0, -1.0, 1.0)
    weights = np.array([n_a * n_b / (n_a + n_b) for _, n_a, _, n_b in used])
    weights /= weights.sum()
    sides = []
    for success_index, size_index in ((0, 1), (2, 3)):
        sizes = np.array([s[size_index] for s in used], dtype=float)
        rates = np.array([s[success_index] for s in used]) / sizes
        estimate = float(weights @ rates)
        effective_n = 1.0 / float(np.sum(weights**2 / sizes))
        sides.append((estimate, *_wilson(estimate, effective_n, z)))
    (p_a, low_a, high_a), (p_b, low_b, high_b) = sides
    delta = p_b - p_a
    return Difference(delta, max(-1.0, delta - math.hypot(p_b - low_b, high_a - p_a)),
                      min(1.0, delta + math.hypot(high_b - p_b, p_a - low_a)))


# -- the exact conditional test, one stratum per case ------------------------------------------

@lru_cache(maxsize=4096)
def hypergeometric_pmf(successes_total: int, n_a: int, n_b: int) -> tuple[float, ...]:
    """P(X = x), x = 0..n_a successes in A, given the stratum's margins (Fisher's conditional law)."""
    x = np.arange(n_a + 1)
    rest = successes_total - x
    possible = (rest >= 0) & (rest <= n_b)
    logs = np.full(n_a + 1, -np.inf)
    xs, rs = x[possible], rest[possible]
    logs[possible] = _log_comb(n_a, xs) + _log_comb(n_b, rs) - _log_comb(n_a + n_b, successes_total)
    return tuple(np.exp(logs))


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
    observed = 0
    expected = 0.0
    informative = 0
    for s_a, n_a, s_b, n_b in strata:
        total = s_a + s_b
        if n_a == 0 or n_b == 0 or total in (0, n_a + n_b):
            continue  # a stratum with a fixed margin carries no information
        informative += 1
        distribution = np.convolve(distribution, hypergeometric_pmf(total, n_a, n_b))
        observed += s_a
        expected += n_a * total / (n_a + n_b)
    if informative == 0:
        return ExactTest(observed, expected, 1.0, 1.0, 0)
    p_regression = min(1.0, float(distribution[observed:].sum()))
    p_improvement = min(1.0, float(distribution[:observed + 1].sum()))
    return ExactTest(observed, expected, p_regression, p_improvement, informative)


def stratified_p_regression_batch(s_a: np.ndarray, s_b: np.ndarray, n_a: Sequence[int],
                                  n_b: Sequence[int]) -> np.ndarray:
    """`stratified_exact_test(...).p_regression` for R data sets at once (rows of s_a, s_b),
    all with the same per-case sizes: what power and calibration simulations need."""
    s_a, s_b = np.atleast_2d(s_a), np.atleast_2d(s_b)
    rows = s_a.shape[0]
    distribution = np.ones((rows, 1))
    for k, (size_a, size_b) in enumerate(zip(n_a, n_b)):
        table = np.array([hypergeometric_pmf(t, size_a, size_b) for t in range(size_a + size_b + 1)])
        pmf = table[s_a[:, k] + s_b[:, k]]
        grown = np.zeros((rows, distribution.shape[1] + size_a))
        for x in range(size_a + 1):
            grown[:, x:x + distribution.shape[1]] += distribution * pmf[:, x:x + 1]
        distribution = grown
    tails = np.cumsum(distribution[:, ::-1], axis=1)[:, ::-1]
    observed = s_a.sum(axis=1)
    return np.minimum(1.0, tails[np.arange(rows), observed])


# -- multiplicity for discrete p-values ---------------------------------------------------------

@dataclass(frozen=True)
class NullLaw:
    """A discrete test's attainable p-values (ascending) and P(p <= each) under its null."""

    p_values: tuple[float, ...]
    cumulative: tuple[float, ...]

    def cdf(self, c: float) -> float:
        """P(p <= c) under the null: at most c, often far less for a discrete test."""
        index = bisect_right(self.p_values, c * (1 + _TIE))
        return self.cumulative[index - 1] if index else 0.0


def fisher_null_law(s_a: int, n_a: int, s_b: int, n_b: int, two_sided: bool = False) -> NullLaw:
    """The law of one case's Fisher p-value given its margins (what min-p adjustment needs)."""
    return _fisher_null_law(s_a + s_b, n_a, n_b, two_sided)


@lru_cache(maxsize=4096)
def _fisher_null_law(total: int, n_a: int, n_b: int, two_sided: bool) -> NullLaw:
    pmf = hypergeometric_pmf(total, n_a, n_b)
    support = [x for x in range(n_a + 1) if pmf[x] > 0]
    upper = {x: math.fsum(pmf[x:]) for x in support}
    lower = {x: math.fsum(pmf[:x + 1]) for x in support}
    pairs: dict[float, float] = {}
    for x in support:
        p = min(1.0, 2 * min(upper[x], lower[x])) if two_sided else min(1.0, upper[x])
        key = next((k for k in pairs if math.isclose(k, p, rel_tol=_TIE)), p)
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


# -- power and the smallest detectable drop ---------------------------------------------------

@lru_cache(maxsize=256)
def _fisher_rejects(n_a: int, n_b: int, level: float) -> np.ndarray:
    """mask[x, y]: one-sided Fisher rejects "B no worse" with x of n_a and y of n_b successes."""
    mask = np.zeros((n_a + 1, n_b + 1), dtype=bool)
    for total in range(n_a + n_b + 1):
        tail = np.cumsum(np.array(hypergeometric_pmf(total, n_a, n_b))[::-1])[::-1]
        xs = np.arange(max(0, total - n_b), min(n_a, total) + 1)
        mask[xs, total - xs] = tail[xs] <= level * (1 + _TIE)
    return mask


def fisher_power(n_a: int, n_b: int, p_a: float, p_b: float, level: float) -> float:
    """Exact power of the one-sided Fisher test at `level` when the true rates are p_a, p_b."""
    return float(binomial_pmf(n_a, p_a) @ _fisher_rejects(n_a, n_b, level) @ binomial_pmf(n_b, p_b))


def min_detectable_drop(n_a: int, n_b: int, p_a: float, level: float, power: float = 0.8) -> float | None:
    """The smallest drop from p_a that one case's Fisher test at `level` finds with `power`
    (exact; rejection regions are monotone, so power rises with the drop); None when even a
    drop to 0% is found less often."""
    if fisher_power(n_a, n_b, p_a, 0.0, level) < power:
        return None
    return _bisect(lambda d: fisher_power(n_a, n_b, p_a, p_a - d, level) - power, 0.0, p_a)


def stratified_power(sizes: Sequence[tuple[int, int]], p_a: Sequence[float], p_b: Sequence[float],
                     alpha: float, sims: int = 2000, seed: int = 0) -> float:
    """Simulated power of the one-sided stratified exact test at `alpha` (seeded: reproducible)."""
    uniforms_a, uniforms_b = _uniforms(sizes, sims, seed)
    return _stratified_power(sizes, uniforms_a, uniforms_b, p_a, p_b, alpha)


def _uniforms(sizes, sims: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return ([rng.random((sims, n_a)) for n_a, _ in sizes], [rng.random((sims, n_b)) for _, n_b in sizes])


def _stratified_power(sizes, uniforms_a, uniforms_b, p_a, p_b, alpha) -> float:
    # Common random numbers: the same uniforms for every drop, so power is monotone in it.
    s_a = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_a, p_a)], axis=1)
    s_b = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_b, p_b)], axis=1)
    p = stratified_p_regression_batch(s_a, s_b, [n for n, _ in sizes], [n for _, n in sizes])
    return float(np.mean(p <= alpha * (1 + _TIE)))


def stratified_min_detectable_drop(sizes: Sequence[tuple[int, int]], p_a: Sequence[float], alpha: float,
                                   power: float = 0.8, sims: int = 1000, seed: int = 0) -> float | None:
    """The smallest uniform drop (every case from its rate in A, floored at 0%) that the
    stratified exact test at `alpha` finds with `power`, by seeded simulation; None when
    even every case dropping to 0% is found less often."""
    if not sizes:
        return None
    uniforms_a, uniforms_b = _uniforms(sizes, sims, seed)

    def power_at(drop: float) -> float:
        return _stratified_power(sizes, uniforms_a, uniforms_b, p_a, [max(0.0, p - drop) for p in p_a], alpha)

    top = max(p_a)
    if top <= 0 or power_at(top) < power:
        return None
    low, high = 0.0, top
    for _ in range(10):  # to 0.1% of the range: the figure is read in percentage points
        middle = (low + high) / 2
        low, high = (middle, high) if power_at(middle) < power else (low, middle)
    return high


def runs_needed(p: float, drop: float, cases: int = 1, alpha: float = 0.05, power: float = 0.8,
                gate: str = "overall", max_runs: int = 500) -> tuple[int, float] | None:
    """Runs per case (each side) to detect a drop from p to p − drop in every case with
    `power`: exact for one case or `gate="cases"` (Fisher at alpha/cases, which the min-p
    adjustment never needs more than), simulated for the stratified test over several
    cases. Returns (runs, power reached), or None beyond `max_runs`."""
    target = p - drop

    def achieved(n: int) -> float:
        if cases == 1 or gate == "cases":
            return fisher_power(n, n, p, target, alpha / (cases if gate == "cases" else 1))
        return stratified_power([(n, n)] * cases, [p] * cases, [target] * cases, alpha)

    low, high = 1, 2
    while achieved(high) < power:  # doubling, then bisection: power rises with n, up to a
        low, high = high, high * 2  # small sawtooth from discreteness that we do not chase
        if high > max_runs:
            if achieved(max_runs) < power:
                return None
            high = max_runs
            break
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if achieved(middle) < power else (low, middle)
    return high, achieved(high)


# -- permutation tests for shifts beyond the success rate -------------------------------------

def stratified_permutation_test(strata: Sequence[tuple[Sequence, Sequence]], kind: str,
                                permutations: int = 1999, seed: int = 0) -> tuple[float, float]:
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
    cases = [(list(a), list(b)) for a, b in strata if len(a) and len(b)]
    if not cases:
        return 0.0, 1.0
    if kind == "mean":
        features = [np.array([float(v) for v in a + b])[:, None] for a, b in cases]
    else:
        labels = sorted({v for a, b in cases for v in a + b}, key=str)  # one label set for every case
        features = [np.array([[v == label for label in labels] for v in a + b], dtype=float) for a, b in cases]
    sizes = [(len(a), len(b)) for a, b in cases]
    totals = [f.sum(axis=0) for f in features]
    weights = np.array([n_a * n_b / (n_a + n_b) for n_a, n_b in sizes])
    weights /= weights.sum()

    def statistic(a_sums: list[np.ndarray]) -> np.ndarray:
        """One value per row of A-side sums (one row per permutation)."""
        if kind == "mean":
            return np.abs(sum(w * ((t[0] - s[:, 0]) / n_b - s[:, 0] / n_a)
                              for w, s, t, (n_a, n_b) in zip(weights, a_sums, totals, sizes)))
        excess = sum(s - n_a * t / (n_a + n_b) for s, t, (n_a, n_b) in zip(a_sums, totals, sizes))
        variance = sum(n_a * n_b * t * (n_a + n_b - t) / ((n_a + n_b) ** 2 * max(1, n_a + n_b - 1))
                       for t, (n_a, n_b) in zip(totals, sizes))
        safe = np.where(variance > 0, variance, 1.0)
        return np.sum(np.where(variance > 0, excess**2 / safe, 0.0), axis=1)

    pooled_a = sum(w * f[:n_a].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes))
    pooled_b = sum(w * f[n_a:].mean(axis=0) for w, f, (n_a, _) in zip(weights, features, sizes))
    effect = float(pooled_b[0] - pooled_a[0]) if kind == "mean" else float(np.abs(pooled_a - pooled_b).sum() / 2)
    observed = statistic([f[:n_a].sum(axis=0)[None, :] for f, (n_a, _) in zip(features, sizes)])[0]
    tie = observed - _TIE * max(1.0, abs(observed))
    if len(cases) == 1 and math.comb(sum(sizes[0]), sizes[0][0]) <= 5000:
        draws = np.array(list(combinations(range(sum(sizes[0])), sizes[0][0])))
        return effect, float(np.mean(statistic([features[0][draws].sum(axis=1)]) >= tie))
    rng = np.random.default_rng(seed)
    null = statistic([f[np.argsort(rng.random((permutations, n_a + n_b)), axis=1)[:, :n_a]].sum(axis=1)
                      for f, (n_a, n_b) in zip(features, sizes)])
    return effect, (1 + int(np.sum(null >= tie))) / (1 + permutations)


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

    def x2(counts) -> float:
        return sum((c - n_s * t / n) ** 2 * n * n / (t * n_s * (n - n_s)) for c, t in zip(counts, totals))

    observed = x2(observed_counts)
    p = 0.0
    log_all = math.lgamma(n + 1) - math.lgamma(n_s + 1) - math.lgamma(n - n_s + 1)
    for counts in _compositions(n_s, totals):
        if x2(counts) >= observed - _TIE * max(1.0, observed):
            p += math.exp(sum(math.lgamma(t + 1) - math.lgamma(c + 1) - math.lgamma(t - c + 1)
                              for c, t in zip(counts, totals)) - log_all)
    return min(1.0, p)


def _compositions(total: int, bounds: Sequence[int]):
    """Every way to split `total` runs over labels, at most bounds[i] in label i."""
    if len(bounds) == 1:
        if total <= bounds[0]:
            yield (total,)
        return
    for first in range(min(total, bounds[0]) + 1):
        for rest in _compositions(total - first, bounds[1:]):
            yield (first, *rest)
