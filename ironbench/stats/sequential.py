"""Sequential tests: the thresholds of a stopping rule that looks after every run."""

from functools import lru_cache

import numpy as np

from ironbench.stats.laws import binomial_pmf


@lru_cache(maxsize=64)
def confidence_thresholds(reproduce: float, confidence: float, max_runs: int) -> tuple[int, ...]:
    """thresholds[n - 1]: how many of n runs must agree to stop `stable` after run n.

    Checking after every run is a sequential test of "the outcome recurs with probability
    <= reproduce"; each look uses a one-sided binomial test at a level lowered (by bisection)
    until the chance of ever crossing, computed exactly at the boundary rate, is at most
    1 − confidence. So a `stable` from this rule errs at most that often, whatever the cap.
    """
    alpha = 1 - confidence
    tails = [np.cumsum(binomial_pmf(n, reproduce)[::-1])[::-1] for n in range(1, max_runs + 1)]

    def thresholds(level: float) -> list[int]:
        # tails fall with k: the first k whose tail is small enough, or n + 1 (never)
        return [int(np.argmax(t <= level)) if t[-1] <= level else len(t) for t in tails]

    def crossing(level: float) -> float:
        limits = thresholds(level)
        alive = np.array([1.0])  # P(k agreeing so far, not yet stopped)
        crossed = 0.0
        for n, limit in enumerate(limits, start=1):
            grown = np.zeros(n + 1)
            grown[:-1] += alive * (1 - reproduce)
            grown[1:] += alive * reproduce
            crossed += grown[limit:].sum()
            grown[limit:] = 0.0
            alive = grown
        return crossed

    low, high = 0.0, alpha
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if crossing(middle) <= alpha else (low, middle)
    return tuple(thresholds(low))
