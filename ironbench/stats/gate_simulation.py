"""The regression gate's operating characteristic, by simulation through its own decision code.

Each simulated gate draws A's runs (the fixed design's size per case, with their own
sampling noise), designs its gate from them as `ironbench run --against` would, then draws
B's runs round by round and stops where `decisions` says. A gate undecided at the cap falls
back to compare's fixed-design test (the exact test stratified by case), as the run does.
Vectorised over gates: gates whose A planned the same design move together.
"""

from dataclasses import dataclass

import numpy as np

from ironbench.stats.exact import stratified_p_regression_batch
from ironbench.stats.laws import significant
from ironbench.stats.regression_gate import _cap, decisions, design_gate, statistics


@dataclass(frozen=True)
class GateRates:
    """Over simulated gates at one true drop: how often each verdict, and what B spent."""

    gates: int
    regressed: float  # share of gates that said `regressed` (at the cap too)
    undecided: float  # share that reached the cap undecided (compare's test decided them)
    rounds: float  # mean B runs per case
    cap: float  # mean runs per case of the fixed design (`plan` at A's observed rate)
    a_runs: int  # A's runs per case

    @property
    def ratio(self) -> float:
        """B's invocations against the fixed design's (both per case, over the same cases)."""
        return self.rounds / self.cap


def simulate_gate(
    rate: float,
    drop: float,
    cases: int,
    margin: float,
    gates: int = 2000,
    alpha: float = 0.05,
    power: float = 0.8,
    seed: int = 0,
    a_runs: int | None = None,
) -> GateRates:
    """`gates` gates where every case of A succeeds at `rate` and of B at `rate - drop`.
    A has `a_runs` runs per case (default: the fixed design's size at `rate`, as if main's
    run had been planned with `plan`)."""
    rng = np.random.default_rng(seed)
    n_a = a_runs if a_runs is not None else _cap(rate, margin, cases, alpha, power)
    a = rng.binomial(n_a, rate, size=(gates, cases))
    pooled = np.round((a.sum(axis=1) + 0.5) / (n_a * cases + 1), 2)
    verdict = np.zeros(gates)
    rounds = np.zeros(gates)
    caps = np.zeros(gates)
    undecided = np.zeros(gates, dtype=bool)
    for value in np.unique(pooled):
        members = np.flatnonzero(pooled == value)
        first = a[members[0]]
        design = design_gate([(int(s), n_a) for s in first], margin, alpha, power)
        caps[members] = design.cap
        a_s = a[members].astype(float)
        b = rng.random((len(members), design.end, cases)) < max(0.0, rate - drop)
        cumulative = b.cumsum(axis=1)
        alive = np.ones(len(members), dtype=bool)
        for index, look_round in enumerate(design.looks):
            drop_hat, se = statistics(
                design, a_s, np.full(cases, float(n_a)), cumulative[:, look_round - 1], look_round
            )
            z = np.where(se > 0, drop_hat / np.where(se > 0, se, 1.0), 0.0)
            code = decisions(design, z, index)
            stopping = alive & (code != 0)
            verdict[members[stopping]] = code[stopping]
            rounds[members[stopping]] = look_round
            alive &= code == 0
        if alive.any():  # undecided at the cap: compare's fixed-design test decides
            left = members[alive]
            end = design.end
            p = stratified_p_regression_batch(a[left], cumulative[alive, end - 1], [n_a] * cases, [end] * cases)
            verdict[left] = np.where([significant(x, alpha) for x in p], 1, -1)
            rounds[left] = end
            undecided[left] = True
    return GateRates(
        gates,
        float(np.mean(verdict == 1)),
        float(np.mean(undecided)),
        float(rounds.mean()),
        float(caps.mean()),
        n_a,
    )
