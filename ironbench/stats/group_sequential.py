"""Group-sequential boundaries: error spent on the information scale, found by recursive integration.

A statistic Z_j observed at looks j = 1..J with information I_1 < ... < I_J has, in the
canonical joint law (Jennison & Turnbull, ch. 3), mean theta·sqrt(I_j) and correlation
sqrt(I_i / I_j). Two boundaries: Z_j >= upper_j rejects theta = 0 ("regressed"), with the
type I error spent by look j equal to alpha_spent(I_j / I_J) among the paths not stopped
either way before (the lower boundary is binding: the gate always stops there);
Z_j <= lower_j rejects theta = margin ("not regressed"), with the type II error spent by
look j equal to beta_spent(I_j / I_J), computed under theta = margin.

The law of Z_j on its continuation region is carried from look to look on a grid (Simpson's
rule; increments are normal), so error rates are exact for the normal statistic to about 1e-5.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z_RANGE = 10.0  # |Z| beyond this is never reached (its probability is below 1e-23)
STEP = 0.04  # grid step in Z units; the narrowest increment kernel is >= 5 steps (looks are spaced)


def erfc(x: np.ndarray) -> np.ndarray:
    """Complementary error function, vectorised (Numerical Recipes' erfcc: relative error < 1.2e-7)."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = -z * z - 1.26551223 + t * (
        1.00002368
        + t
        * (
            0.37409196
            + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))
        )
    )  # fmt: skip
    value = t * np.exp(poly)
    return np.where(x >= 0, value, 2.0 - value)


def normal_sf(x: np.ndarray | float) -> np.ndarray:
    return 0.5 * erfc(np.asarray(x, dtype=float) / math.sqrt(2.0))


def normal_quantile(q: float) -> float:
    """The standard normal quantile, by bisection on the survival function."""
    low, high = -Z_RANGE, Z_RANGE
    for _ in range(80):
        middle = (low + high) / 2
        low, high = (middle, high) if float(normal_sf(middle)) > 1 - q else (low, middle)
    return (low + high) / 2


def spent(t: float, total: float, gamma: float) -> float:
    """Hwang-Shih-DeCani spending: the error spent by information fraction t (gamma < 0 spends
    late, like O'Brien-Fleming at about -4; gamma = 1 spends early, like Pocock)."""
    t = min(max(t, 0.0), 1.0)
    if abs(gamma) < 1e-9:
        return total * t
    return total * (1 - math.exp(-gamma * t)) / (1 - math.exp(-gamma))


def _simpson(low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid points and Simpson weights on [low, high] (an odd number of points, step <= STEP)."""
    intervals = max(2, 2 * math.ceil((high - low) / (2 * STEP)))
    z = np.linspace(low, high, intervals + 1)
    h = (high - low) / intervals
    w = np.ones(intervals + 1)
    w[1:-1:2], w[2:-1:2] = 4.0, 2.0
    return z, w * h / 3


@dataclass(frozen=True)
class _Carried:
    """The sub-density of Z_j on its continuation region: paths not stopped by look j."""

    z: np.ndarray
    mass: np.ndarray  # density x quadrature weight at each grid point
    info: float


def _moments(carried: _Carried | None, info: float, drift: float) -> tuple[np.ndarray, np.ndarray, float]:
    """For each grid point of the previous look, the mean of Z at this look, its weight and the sd."""
    if carried is None:
        return np.array([drift * math.sqrt(info)]), np.array([1.0]), 1.0
    step = info - carried.info
    means = (carried.z * math.sqrt(carried.info) + drift * step) / math.sqrt(info)
    return means, carried.mass, math.sqrt(step / info)


def _tail(means: np.ndarray, mass: np.ndarray, sd: float, b: float | np.ndarray) -> np.ndarray:
    """P(Z >= b, continuing) for one threshold or many."""
    return normal_sf((np.asarray(b, dtype=float)[..., None] - means) / sd) @ mass


def _solve(target: float, means: np.ndarray, mass: np.ndarray, sd: float, upper: bool) -> float:
    """The b with P(Z >= b, continuing) = target (upper), or P(Z <= b, continuing) = target:
    bracketed on three ever finer grids of thresholds (each one matrix product), then
    interpolated (to about 1e-7 in Z)."""
    total = float(mass.sum())
    low, high = -Z_RANGE, Z_RANGE
    for _ in range(3):
        grid = np.linspace(low, high, 65)
        tails = _tail(means, mass, sd, grid)
        values = tails if upper else total - tails  # falling in b for upper, rising otherwise
        past = values <= target if upper else values > target
        index = int(np.argmax(past)) if past.any() else len(grid) - 1
        index = max(index, 1)
        low, high = float(grid[index - 1]), float(grid[index])
        v_low, v_high = float(values[index - 1]), float(values[index])
    if v_high == v_low:
        return (low + high) / 2
    return low + (target - v_low) * (high - low) / (v_high - v_low)


def _carry(means: np.ndarray, mass: np.ndarray, sd: float, low: float, high: float, info: float) -> _Carried | None:
    if high <= low:
        return None
    z, weights = _simpson(low, high)
    density = (mass[None, :] * np.exp(-0.5 * ((z[:, None] - means[None, :]) / sd) ** 2)).sum(axis=1)
    return _Carried(z, density * weights / (sd * math.sqrt(2 * math.pi)), info)


def boundaries(
    info0: Sequence[float],
    info1: Sequence[float],
    drift: float,
    alpha: float,
    beta: float,
    gamma_alpha: float,
    gamma_beta: float,
    spread: Sequence[float] | None = None,
) -> tuple[list[float], list[float]]:
    """Both boundaries with the lower one binding (the gate always stops there): per look, the
    upper threshold spends alpha under theta = 0 (information info0) among paths not yet
    stopped either way, then the lower one spends beta under theta = drift (information
    info1). Where the lower threshold would pass the upper one, they meet: the last look.

    `spread`: per look, the statistic's standard deviation under theta = drift (1 when its
    standard error is estimated under that theta; more when it is estimated in its null
    form): the recursion under drift runs on Z / spread, which is canonical with info1."""
    scale = list(spread) if spread is not None else [1.0] * len(info1)
    upper: list[float] = []
    lower: list[float] = []
    null: _Carried | None = None
    alternative: _Carried | None = None
    for j, (level0, level1) in enumerate(zip(info0, info1, strict=True)):
        means, mass, sd = _moments(null, level0, 0.0)
        fraction = (level0 / info0[-1], info0[j - 1] / info0[-1] if j else 0.0)
        target = spent(fraction[0], alpha, gamma_alpha) - spent(fraction[1], alpha, gamma_alpha)
        u = min(_solve(target, means, mass, sd, upper=True), Z_RANGE) if target > 0 else Z_RANGE
        means1, mass1, sd1 = _moments(alternative, level1, drift)
        fraction = (level1 / info1[-1], info1[j - 1] / info1[-1] if j else 0.0)
        target = spent(fraction[0], beta, gamma_beta) - spent(fraction[1], beta, gamma_beta)
        low = _solve(target, means1, mass1, sd1, upper=False) * scale[j] if target > 0 else -Z_RANGE
        low = min(max(low, -Z_RANGE), u)
        upper.append(u)
        lower.append(low)
        null = _carry(means, mass, sd, low, u, level0)
        alternative = _carry(means1, mass1, sd1, low / scale[j], u / scale[j], level1)
        if null is None:
            break
    return upper, lower


@dataclass(frozen=True)
class Operating:
    """Where a design stops under one theta: per look, the chance of stopping up or down."""

    up: tuple[float, ...]
    down: tuple[float, ...]

    @property
    def crossing_up(self) -> float:
        return sum(self.up)


def operating(
    info: Sequence[float], drift: float, upper: Sequence[float], lower: Sequence[float], binding: bool = True
) -> Operating:
    """Stopping probabilities per look when the statistic's mean is drift·sqrt(I_j)."""
    up: list[float] = []
    down: list[float] = []
    carried: _Carried | None = None
    for j, level in enumerate(info):
        if j and carried is None:
            up.append(0.0)
            down.append(0.0)
            continue
        means, mass, sd = _moments(carried, level, drift)
        total = float(mass.sum())
        above = float(_tail(means, mass, sd, upper[j]))
        floor = lower[j] if binding and j < len(lower) else -Z_RANGE
        below = total - float(_tail(means, mass, sd, floor))
        up.append(above)
        down.append(below)
        carried = _carry(means, mass, sd, floor, upper[j], level)
    return Operating(tuple(up), tuple(down))
