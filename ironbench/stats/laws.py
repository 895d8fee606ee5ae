"""Exact discrete laws everything else builds on: binomial and hypergeometric, by log-factorials.

Exact formulas, no statistics package; batches of values with numpy.
"""

import math
from collections.abc import Callable
from functools import cache, lru_cache

import numpy as np

TIE = 1e-9  # relative tolerance when comparing p-values computed along different paths


def significant(p: float, alpha: float) -> bool:
    """p <= alpha, allowing for rounding: a table whose exact p is alpha (3/3 vs 0/3 at 0.05)
    must not pass or fail by the last bit of a float sum."""
    return p <= alpha * (1 + TIE)


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p)."""
    k = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        return (k == (0 if p <= 0.0 else n)).astype(float)
    logs = log_comb(n, k) + k * math.log(p) + (n - k) * math.log1p(-p)
    return np.exp(logs)


@cache
def log_factorials(n: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=float)))])


def log_comb(n: int | np.ndarray, k: int | np.ndarray) -> np.ndarray:
    table = log_factorials(int(np.max(n)))
    return table[n] - table[k] - table[np.asarray(n) - k]


def binomial_sf(k: int, n: int, p: float) -> float:
    """P(X >= k)."""
    return float(binomial_pmf(n, p)[k:].sum()) if k > 0 else 1.0


def bisect_root(f: Callable[[float], float], low: float = 0.0, high: float = 1.0) -> float:
    """The root of an increasing f on [low, high], to 1e-12."""
    for _ in range(60):
        middle = (low + high) / 2
        if f(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


@lru_cache(maxsize=4096)
def hypergeometric_pmf(successes_total: int, n_a: int, n_b: int) -> tuple[float, ...]:
    """P(X = x), x = 0..n_a successes in A, given the stratum's margins (Fisher's conditional law)."""
    x = np.arange(n_a + 1)
    rest = successes_total - x
    possible = (rest >= 0) & (rest <= n_b)
    logs = np.full(n_a + 1, -np.inf)
    xs, rs = x[possible], rest[possible]
    logs[possible] = log_comb(n_a, xs) + log_comb(n_b, rs) - log_comb(n_a + n_b, successes_total)
    return tuple(np.exp(logs))


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the regularized incomplete beta function, by its continued fraction
    (modified Lentz; Press et al., "Numerical Recipes", 3rd ed., §6.4)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - regularized_beta(1.0 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * result


@lru_cache(maxsize=1024)
def t_quantile(q: float, df: float) -> float:
    """The q-quantile (q > 0.5) of Student's t with `df` degrees of freedom, by bisection on
    its distribution function 1 − I_{df/(df+t²)}(df/2, 1/2)/2."""
    low, high = 0.0, 1e6
    for _ in range(200):
        middle = (low + high) / 2
        upper_tail = 0.5 * regularized_beta(df / (df + middle * middle), df / 2, 0.5)
        low, high = (middle, high) if 1.0 - upper_tail < q else (low, middle)
    return (low + high) / 2
