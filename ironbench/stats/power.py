"""Power: the smallest drop a comparison can detect, and how many runs per case it needs.

The stratified test's power is simulated with the exact test itself where that is cheap (a
few cases: its cost grows with the square of the runs it convolves), and beyond, taken from
the normal approximation to its statistic, whose cost grows with the distinct cases only.
Against the simulated exact figure the approximation's minimum detectable drop is within
1 percentage point (tests/stats/test_power.py measures it; tests/perf/bench_scale.py
prints the error over a grid of suites).
"""

import math
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import TypedDict

import numpy as np

from ironbench.core.errors import IronbenchError
from ironbench.stats.exact import stratified_p_regression_batch
from ironbench.stats.laws import TIE, binomial_pmf, bisect_root, hypergeometric_pmf

MAX_RUNS = 500


@lru_cache(maxsize=256)
def _fisher_rejects(n_a: int, n_b: int, level: float) -> np.ndarray:
    """mask[x, y]: one-sided Fisher rejects "B no worse" with x of n_a and y of n_b successes."""
    mask = np.zeros((n_a + 1, n_b + 1), dtype=bool)
    for total in range(n_a + n_b + 1):
        tail = np.cumsum(np.array(hypergeometric_pmf(total, n_a, n_b))[::-1])[::-1]
        xs = np.arange(max(0, total - n_b), min(n_a, total) + 1)
        mask[xs, total - xs] = tail[xs] <= level * (1 + TIE)
    return mask


def fisher_power(n_a: int, n_b: int, p_a: float, p_b: float, level: float) -> float:
    """Exact power of the one-sided Fisher test at `level` when the true rates are p_a, p_b."""
    return float(binomial_pmf(n_a, p_a) @ _fisher_rejects(n_a, n_b, level) @ binomial_pmf(n_b, p_b))


@lru_cache(maxsize=4096)  # cases with the same run counts and successes share it
def min_detectable_drop(n_a: int, n_b: int, p_a: float, level: float, power: float = 0.8) -> float | None:
    """The smallest drop from p_a that one case's Fisher test at `level` finds with `power`
    (exact; rejection regions are monotone, so power rises with the drop); None when even a
    drop to 0% is found less often."""
    if fisher_power(n_a, n_b, p_a, 0.0, level) < power:
        return None
    return bisect_root(lambda d: fisher_power(n_a, n_b, p_a, p_a - d, level) - power, 0.0, p_a)


# The simulated exact test convolves, per data set, each case's law into the sum so far:
# past this many entries per data set (8 cases of 10 runs, 30 of 2), the approximation.
EXACT_WORK = 4_000
NORMAL = "normal approximation to the stratified test's statistic"
SIMULATED = "simulated exact test"


def _exact_work(sizes: Sequence[tuple[int, int]]) -> int:
    work, width = 0, 1
    for n_a, _ in sizes:
        work += (n_a + 1) * width
        width += n_a
    return work


def stratified_power_method(sizes: Sequence[tuple[int, int]]) -> str:
    """How `stratified_power` and `stratified_min_detectable_drop` reach their figure for
    cases of these sizes: by simulating the exact test, or by the normal approximation."""
    return SIMULATED if _exact_work(sizes) <= EXACT_WORK else NORMAL


def stratified_power(
    sizes: Sequence[tuple[int, int]],
    p_a: Sequence[float],
    p_b: Sequence[float],
    alpha: float,
    sims: int = 2000,
    seed: int = 0,
) -> float:
    """Power of the one-sided stratified exact test at `alpha`: simulated (seeded, so
    reproducible) for a few cases, else by the normal approximation (stratified_power_method)."""
    if stratified_power_method(sizes) == NORMAL:
        return normal_power(sizes, p_a, p_b, alpha)
    uniforms_a, uniforms_b = _uniforms(sizes, sims, seed)
    return _stratified_power(sizes, uniforms_a, uniforms_b, p_a, p_b, alpha)


def _uniforms(sizes: Sequence[tuple[int, int]], sims: int, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    return ([rng.random((sims, n_a)) for n_a, _ in sizes], [rng.random((sims, n_b)) for _, n_b in sizes])


def _stratified_power(
    sizes: Sequence[tuple[int, int]],
    uniforms_a: Sequence[np.ndarray],
    uniforms_b: Sequence[np.ndarray],
    p_a: Sequence[float],
    p_b: Sequence[float],
    alpha: float,
) -> float:
    # Common random numbers: the same uniforms for every drop, so power is monotone in it.
    s_a = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_a, p_a, strict=True)], axis=1)
    s_b = np.stack([(u < p).sum(axis=1) for u, p in zip(uniforms_b, p_b, strict=True)], axis=1)
    p = stratified_p_regression_batch(s_a, s_b, [n for n, _ in sizes], [n for _, n in sizes])
    return float(np.mean(p <= alpha * (1 + TIE)))


@lru_cache(maxsize=65536)
def _case_moments(n_a: int, n_b: int, p_a: float, p_b: float) -> tuple[float, float, float, float, float]:
    """One case's A-side excess D = X − n_a·T/n (X of n_a and Y of n_b successes, T = X + Y)
    and its null variance V(T) = n_a·n_b·T·(n − T) / (n²(n − 1)), over the exact binomial laws
    at rates p_a, p_b: E D, E V, Var D, Cov(D, V), Var V."""
    n = n_a + n_b
    joint = np.outer(binomial_pmf(n_a, p_a), binomial_pmf(n_b, p_b))
    x, y = np.arange(n_a + 1)[:, None], np.arange(n_b + 1)[None, :]
    t = x + y
    d = (n_b * x - n_a * y) / n
    v = n_a * n_b * t * (n - t) / (n * n * max(1, n - 1))
    mean_d, mean_v = float((joint * d).sum()), float((joint * v).sum())
    return (
        mean_d,
        mean_v,
        float((joint * (d - mean_d) ** 2).sum()),
        float((joint * (d - mean_d) * (v - mean_v)).sum()),
        float((joint * (v - mean_v) ** 2).sum()),
    )


def normal_power(sizes: Sequence[tuple[int, int]], p_a: Sequence[float], p_b: Sequence[float], alpha: float) -> float:
    """Power of the one-sided stratified exact test at `alpha` by the normal approximation:
    linear in the cases (in the distinct ones, really), for any number of them.

    Given the margins the test rejects when ΣD >= z·sqrt(ΣV) + 1/2 (its statistic over its
    null standard deviation, with the continuity correction of a discrete test). Under the
    alternative the margins vary too: sqrt(ΣV) is linearised around the root of its mean, so
    the rule is Σ(D − c·V) >= z·sqrt(v)/2 + 1/2 with v = E ΣV and c = z / (2 sqrt(v)), a sum
    of independent terms whose exact mean and variance per case give the normal power.
    """
    z = NormalDist().inv_cdf(1 - alpha)
    groups = Counter(zip(sizes, p_a, p_b, strict=True))
    moments = [(count, _case_moments(n_a, n_b, a, b)) for ((n_a, n_b), a, b), count in groups.items()]
    v = sum(count * m[1] for count, m in moments)
    if v <= 0:
        return 0.0  # every margin fixed: the test never rejects
    c = z / (2 * math.sqrt(v))
    mean = sum(count * m[0] for count, m in moments) - z * math.sqrt(v) - 0.5
    variance = sum(count * (m[2] - 2 * c * m[3] + c * c * m[4]) for count, m in moments)
    if variance <= 0:
        return 1.0 if mean >= 0 else 0.0
    return 0.5 * math.erfc(-mean / math.sqrt(2 * variance))


def stratified_min_detectable_drop(
    sizes: Sequence[tuple[int, int]],
    p_a: Sequence[float],
    alpha: float,
    power: float = 0.8,
    sims: int = 1000,
    seed: int = 0,
) -> float | None:
    """The smallest uniform drop (every case from its rate in A, floored at 0%) that the
    stratified exact test at `alpha` finds with `power`: by seeded simulation for a few
    cases, else by the normal approximation (stratified_power_method); None when even
    every case dropping to 0% is found less often."""
    if not sizes:
        return None
    if stratified_power_method(sizes) == NORMAL:

        def power_at(drop: float) -> float:
            return normal_power(sizes, p_a, [max(0.0, p - drop) for p in p_a], alpha)

    else:
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


def runs_needed(
    p: float,
    drop: float,
    cases: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    gate: str = "overall",
    max_runs: int = 500,
) -> tuple[int, float] | None:
    """Runs per case (each side) to detect a drop from p to p − drop in every case with
    `power`: exact for one case or `gate="cases"` (Fisher at alpha/cases, which the min-p
    adjustment never needs more than), as `stratified_power` gives it for the stratified
    test over several cases. Returns (runs, power reached), or None beyond `max_runs`."""
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


class PowerPoint(TypedDict):
    """One point of a plan's power curve."""

    runs_per_case: int
    power: float


class RunsPlan(TypedDict):
    """`plan_runs`' answer, as `ironbench plan --format json` prints it."""

    p: float
    drop: float
    cases: int
    alpha: float
    power: float
    gate: str
    test: str
    runs_per_case: int | None
    power_reached: float | None
    curve: list[PowerPoint]


def plan_runs(
    p: float, drop: float, cases: int = 1, alpha: float = 0.05, power: float = 0.8, gate: str = "overall"
) -> RunsPlan:
    """Runs per case on each side for `compare` to find a drop from p to p − drop in every
    case with `power`, for the one-sided test the chosen gate uses."""
    if not 0 < drop <= p:
        raise IronbenchError(f"--drop {drop}: must be above 0 and at most --p {p} (a rate cannot fall below 0)")
    found = runs_needed(p, drop, cases, alpha, power, gate, MAX_RUNS)
    top = found[0] if found else MAX_RUNS
    test = (
        "one-sided Fisher exact test"
        if cases == 1
        else f"one-sided Fisher exact test per case at alpha/{cases} (min-p adjustment needs no more)"
        if gate == "cases"
        else f"one-sided exact test stratified by case over {cases} cases (power: "
        f"{stratified_power_method([(top, top)] * cases)})"
    )
    answer: RunsPlan = {
        "p": p,
        "drop": drop,
        "cases": cases,
        "alpha": alpha,
        "power": power,
        "gate": gate,
        "test": test,
        "runs_per_case": None,
        "power_reached": None,
        "curve": [],
    }
    if found is not None:
        answer["runs_per_case"], answer["power_reached"] = found[0], round(found[1], 4)
    for n in sorted({max(2, top // 4), max(2, top // 2), top} | ({2 * top} if 2 * top <= MAX_RUNS else set())):
        answer["curve"].append({"runs_per_case": n, "power": round(_power(p, drop, cases, alpha, gate, n), 4)})
    return answer


def _power(p: float, drop: float, cases: int, alpha: float, gate: str, n: int) -> float:
    if cases == 1 or gate == "cases":
        return fisher_power(n, n, p, p - drop, alpha / (cases if gate == "cases" else 1))
    return stratified_power([(n, n)] * cases, [p] * cases, [p - drop] * cases, alpha)
