"""The sequential regression gate: did B's success drop against a stored run A, in as few rounds as it takes?

B runs in rounds (one more run of every case per round) against A's runs as stored. After
a look the gate says `regressed` (B's success is lower: type I error <= alpha), `not
regressed` (B is not worse by the margin or more: the chance of saying so when it is worse
by the margin is <= 1 - power), or goes on; `undecided` only at the cap (the fixed design's
runs per case, from `plan`) when A's runs hold too little information for the design.

The statistic: drop = sum_k w_k (rate_A,k - rate_B,k) over cases, with fixed weights
w_k (Mantel-Haenszel's for a risk difference at the cap), over its standard error,
which carries A's sampling variance: that part does not shrink as B grows, so the
information I_j = 1 / (V_A + V_B / j) is bounded by A's. For j <= k looks the estimates
share A's term, so Cov(drop_j, drop_k) = Var(drop_k): the canonical joint law of group-
sequential tests, whose boundaries (Hwang-Shih-DeCani spending of alpha and of beta on the
information scale, the lower boundary binding) come from group_sequential.py.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from ironbench.core.errors import IronbenchError
from ironbench.stats.group_sequential import boundaries
from ironbench.stats.power import runs_needed

GAMMA_ALPHA = -4.0  # alpha spent late (about O'Brien-Fleming): little power lost at the cap
GAMMA_BETA = -4.0  # beta likewise: "not regressed" comes once B has shown enough
MAX_LOOKS = 20  # a look when the information has grown by another 1/20 of the design's
PLAN_RATE_DIGITS = 2  # A's rate is planned with to the percent, as `plan --p` takes it
RATE_FLOOR = 0.01  # variances are never planned or estimated at a rate of exactly 0 or 1

GateDecision = Literal["regressed", "not regressed", "undecided", "continue"]


class GateError(IronbenchError):
    """The reference run cannot anchor a gate (no runs, or a margin it cannot hold)."""


@dataclass(frozen=True)
class GateDesign:
    """The boundaries of one gate, fixed before B's first run from A's counts and the margin."""

    alpha: float
    power: float
    margin: float
    rate: float  # A's success rate as planned with (all cases pooled, to the percent)
    cap: int  # runs per case of the fixed design (`plan`) at that rate: the most B runs
    looks: tuple[int, ...]  # the rounds (B's runs per case) after which the gate looks
    upper: tuple[float, ...]  # per look: Z at or above it says `regressed`
    lower: tuple[float, ...]  # per look: Z at or below it says `not regressed`
    weights: tuple[float, ...]  # per case, summing to 1
    met: bool  # the boundaries meet at the last look: every gate decides by then

    @property
    def end(self) -> int:
        """The last round the gate can run: where the boundaries meet, else the cap."""
        return self.looks[-1]

    def next_look(self, rounds: int) -> int:
        """The first look at or after `rounds` complete rounds (the end when past it)."""
        return next((r for r in self.looks if r >= rounds), self.end)


@dataclass(frozen=True)
class GateLook:
    """What one look saw: B's drop against A (positive: B worse), its standard error, the
    statistic against the boundaries, and the repeated confidence interval of B − A."""

    round: int
    look: int  # 1-based among the design's looks
    drop: float
    se: float
    z: float
    upper: float
    lower: float
    low: float  # repeated (1 − 2 alpha) interval of B − A: valid whenever the gate stops
    high: float
    decision: GateDecision


def _clip(rate: float | np.ndarray) -> np.ndarray:
    return np.clip(rate, RATE_FLOOR, 1 - RATE_FLOOR)


def design_gate(a: Sequence[tuple[int, int]], margin: float, alpha: float = 0.05, power: float = 0.8) -> GateDesign:
    """The gate against A's (successes, runs) per case, for a drop of `margin`."""
    if not a or any(n <= 0 for _, n in a):
        raise GateError("the reference run has a case without runs: nothing to hold B against")
    if not 0 < margin < 1:
        raise GateError(f"--drop {margin}: must be above 0 and below 1 (a share, e.g. 0.1)")
    successes, runs = sum(s for s, _ in a), sum(n for _, n in a)
    rate = round((successes + 0.5) / (runs + 1), PLAN_RATE_DIGITS)
    return _design(tuple(sorted(n for _, n in a)), tuple(n for _, n in a), rate, margin, alpha, power)


@lru_cache(maxsize=512)
def _cap(rate: float, margin: float, cases: int, alpha: float, power: float) -> int:
    drop = min(margin, rate)
    if drop <= 0:
        return 1
    found = runs_needed(rate, drop, cases, alpha, power)
    return found[0] if found else 500


@lru_cache(maxsize=512)
def _design(
    sorted_runs: tuple[int, ...], runs: tuple[int, ...], rate: float, margin: float, alpha: float, power: float
) -> GateDesign:
    cap = _cap(rate, margin, len(runs), alpha, power)
    n_a = np.array(runs, dtype=float)
    w = 1 / (1 / n_a + 1 / cap)
    w /= w.sum()
    planned, shifted = float(_clip(rate)), float(_clip(rate - margin))

    def info(j: int, alternative: bool) -> float:
        b_rate = shifted if alternative else planned
        return float(1 / (w * w * (planned * (1 - planned) / n_a + b_rate * (1 - b_rate) / j)).sum())

    def spread(j: int) -> float:
        # the statistic's variance is estimated from both runs pooled per case (its null
        # form); under the margin that estimate is off the true variance by this factor
        pooled = _clip((n_a * planned + j * shifted) / (n_a + j))
        return math.sqrt(float((w * w * pooled * (1 - pooled) * (1 / n_a + 1 / j)).sum()) * info(j, True))

    def build(end: int) -> tuple[list[int], list[float], list[float]]:
        fractions = [info(j, False) / info(end, False) for j in range(1, end + 1)]
        looks = [
            j
            for j in range(1, end + 1)
            if j == end
            or math.floor(MAX_LOOKS * fractions[j - 1] + 1e-9)
            > math.floor(MAX_LOOKS * (fractions[j - 2] if j > 1 else 0.0) + 1e-9)
        ]
        upper, lower = boundaries(
            [info(j, False) for j in looks], [info(j, True) for j in looks], margin, alpha, 1 - power,
            GAMMA_ALPHA, GAMMA_BETA, [1 / spread(j) for j in looks],
        )  # fmt: skip
        return looks[: len(upper)], upper, lower

    # The fewest rounds at which the boundaries meet (power reached), found by bisection:
    # at most the cap; where even the cap is too few (A holds too little), the cap, unmet.
    low, high = 1, cap
    while low < high:
        middle = (low + high) // 2
        _, upper, lower = build(middle)
        if lower[-1] >= upper[-1] - 1e-12:
            high = middle
        else:
            low = middle + 1
    looks, upper, lower = build(low)
    met = lower[-1] >= upper[-1] - 1e-12
    return GateDesign(alpha, power, margin, rate, cap, tuple(looks), tuple(upper), tuple(lower), tuple(w), met)


def statistics(
    design: GateDesign, a_successes: np.ndarray, a_runs: np.ndarray, b_successes: np.ndarray, rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """The drop (A − B, weighted over cases) and its standard error, for one gate or many:
    b_successes has the cases on its last axis. B's variance per case is taken at A's rate
    less the estimated drop (a round or two of B alone says little about a case's variance)."""
    w = np.asarray(design.weights)
    drop = ((a_successes / a_runs - b_successes / rounds) * w).sum(axis=-1)
    runs = a_runs + rounds
    pooled = (a_successes + b_successes) / runs
    # unbiased, and never 0: a case all of whose runs agree still varies
    spread = np.maximum(pooled * (1 - pooled) * runs / (runs - 1), RATE_FLOOR * (1 - RATE_FLOOR))
    variance = (w * w * spread * (1 / a_runs + 1 / rounds)).sum(axis=-1)
    return drop, np.sqrt(variance)


def decisions(design: GateDesign, z: np.ndarray, look: int) -> np.ndarray:
    """Per gate at look `look` (0-based): 1 regressed, -1 not regressed, 0 on (or undecided at the end)."""
    upper, lower = design.upper[look], design.lower[look]
    out = np.where(z >= upper, 1, np.where(z <= lower, -1, 0))
    if look == len(design.looks) - 1 and design.met:
        out = np.where(z >= upper, 1, -1)
    return out


def look(design: GateDesign, a: Sequence[tuple[int, int]], b_successes: Sequence[int], rounds: int) -> GateLook:
    """The gate's look after `rounds` complete rounds (a round the design looks at)."""
    index = design.looks.index(rounds)
    a_s = np.array([s for s, _ in a], dtype=float)
    a_n = np.array([n for _, n in a], dtype=float)
    drop, se = statistics(design, a_s, a_n, np.array(b_successes, dtype=float), rounds)
    z = float(drop / se) if se > 0 else 0.0
    code = int(decisions(design, np.array(z), index))
    last = index == len(design.looks) - 1
    decision: GateDecision = (
        "regressed" if code == 1 else "not regressed" if code == -1 else "undecided" if last else "continue"
    )
    half = design.upper[index] * float(se)
    return GateLook(
        rounds, index + 1, float(drop), float(se), z, design.upper[index], design.lower[index],
        -float(drop) - half, -float(drop) + half, decision,
    )  # fmt: skip
