"""When a conversation breaks: turn of first violation as a survival time, flips, recovery.

References
- Kaplan & Meier (1958) "Nonparametric estimation from incomplete observations", JASA 53:457.
- Greenwood (1926) "The natural duration of cancer", Reports on Public Health 33; the log-log
  interval: Kalbfleisch & Prentice (2002) "The Statistical Analysis of Failure Time Data",
  2nd ed., §4.3 (what R's survfit calls conf.type = "log-log").
- Brookmeyer & Crowley (1982) "A confidence interval for the median survival time",
  Biometrics 38:29.
- Mantel (1966) Cancer Chemother. Rep. 50:163; Peto & Peto (1972) JRSS A 135:185: the
  log-rank test, here stratified by scenario (sums of O − E and of the hypergeometric
  variances over strata); its p-value by permuting engine labels within each scenario,
  exact in law (Phipson & Smyth 2010 for the Monte Carlo +1). Peto's one-step hazard ratio
  exp(U/V) (Yusuf et al. 1985, Prog. Cardiovasc. Dis. 27:335).
- Hong et al. (2025) "Measuring sycophancy of language models in multi-turn dialogues"
  (SYCON-Bench), Findings of EMNLP, arXiv 2505.23840: Turn of Flip and Number of Flip.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, pairwise, product

import numpy as np

from ironbench.stats.intervals import Z95
from ironbench.stats.laws import TIE

EXACT_PERMUTATIONS = 5000  # up to this many label assignments the p-value enumerates them all


@dataclass(frozen=True)
class SurvivalCurve:
    """P(still holding after turn t) for t = 0..horizon, with pointwise 95% intervals."""

    n: int  # conversations
    events: int  # conversations with a violation
    turns: tuple[int, ...]
    survival: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    at_risk: tuple[int, ...]
    median: int | None  # the median turn of first violation; None: not reached
    median_ci_95: tuple[int | None, int | None]


def first_violation(violated: Sequence[bool]) -> tuple[int, bool]:
    """(turn of the first violation, True), or (turns answered, False) when none: censored."""
    for turn, flag in enumerate(violated, start=1):
        if flag:
            return turn, True
    return len(violated), False


def flips(violated: Sequence[bool]) -> int:
    """SYCON-Bench's Number of Flip: changes between violating and not, turn to turn."""
    return sum(1 for a, b in pairwise(violated) if a != b)


def recovered(violated: Sequence[bool]) -> bool:
    """A violation followed by an answer that does not violate (the opposite, among violated
    conversations, of a capitulation that persists to the end)."""
    return any(a and not b for a, b in pairwise(violated))


def kaplan_meier(times: Sequence[int], observed: Sequence[bool], z: float = Z95) -> SurvivalCurve:
    """Kaplan–Meier over discrete turns (times: turn of first violation, or of the last turn
    answered when `observed` is False), with Greenwood's variance on the log-log scale. Before
    any violation the estimate is 1 and the log-log interval has no width: the exact binomial
    bound for no event among those at risk stands in for its lower end."""
    n = len(times)
    horizon = max(times, default=0)
    turns, survival, low, high, at_risk = [0], [1.0], [1.0], [1.0], [n]
    s, greenwood = 1.0, 0.0
    alpha = math.erfc(z / math.sqrt(2))
    for t in range(1, horizon + 1):
        risk = sum(1 for x in times if x >= t)
        died = sum(1 for x, e in zip(times, observed, strict=True) if e and x == t)
        if risk:
            s *= 1 - died / risk
            if died and risk > died:
                greenwood += died / (risk * (risk - died))
        turns.append(t)
        survival.append(s)
        at_risk.append(risk)
        if s <= 0:
            low.append(0.0)
            high.append(0.0)
        elif greenwood == 0 or s >= 1:
            low.append((alpha / 2) ** (1 / risk) if risk else 0.0)
            high.append(1.0)
        else:
            spread = z * math.sqrt(greenwood) / abs(math.log(s))
            low.append(s ** math.exp(spread))
            high.append(s ** math.exp(-spread))
    median = next((t for t, v in zip(turns, survival, strict=True) if v <= 0.5), None)
    # Brookmeyer & Crowley: the turns whose interval holds 0.5, from the first whose lower
    # bound reaches it to the first whose upper bound does (None: not within these turns)
    median_low = next((t for t, v in zip(turns, low, strict=True) if v <= 0.5), None)
    median_high = next((t for t, v in zip(turns, high, strict=True) if v <= 0.5), None)
    return SurvivalCurve(
        n,
        sum(1 for e in observed if e),
        tuple(turns),
        tuple(survival),
        tuple(low),
        tuple(high),
        tuple(at_risk),
        median,
        (median_low, median_high),
    )


@dataclass(frozen=True)
class LogRank:
    """The stratified log-rank comparison of A (reference) with B: observed and expected
    violations of A, the standardised statistic, the two-sided permutation p-value, and
    Peto's hazard ratio of B against A (above 1: B breaks sooner) with its 95% interval."""

    observed_a: int
    expected_a: float
    observed_b: int
    expected_b: float
    z: float
    p_value: float
    hazard_ratio: float | None
    hazard_ratio_ci_95: tuple[float, float] | None
    strata: int
    permutations: int  # 0: every assignment enumerated

    def to_dict(self) -> dict:
        return {
            "observed": [self.observed_a, self.observed_b],
            "expected": [round(self.expected_a, 6), round(self.expected_b, 6)],
            "z": round(self.z, 6),
            "p_value": self.p_value,
            "hazard_ratio": None if self.hazard_ratio is None else round(self.hazard_ratio, 6),
            "hazard_ratio_ci_95": None
            if self.hazard_ratio_ci_95 is None
            else [round(x, 6) for x in self.hazard_ratio_ci_95],
            "scenarios": self.strata,
            "permutations": self.permutations,
        }


Stratum = tuple[Sequence[int], Sequence[bool], Sequence[int], Sequence[bool]]


def _matrices(times: Sequence[int], events: Sequence[bool], horizon: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(1, horizon + 1)
    x = np.asarray(times)[:, None]
    return (x >= t).astype(float), ((x == t) & np.asarray(events, dtype=bool)[:, None]).astype(float)


def _statistics(strata: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """U (A's observed minus expected) and V, one per row of each stratum's label matrix."""
    u = v = 0.0
    for labels, risk, died in strata:
        n_t, d_t = risk.sum(axis=0), died.sum(axis=0)
        n_a, d_a = labels @ risk, labels @ died
        share = np.divide(n_a, n_t, out=np.zeros_like(n_a), where=n_t > 0)
        u = u + (d_a - d_t * share).sum(axis=1)
        v = v + (d_t * share * (1 - share) * (n_t - d_t) / np.maximum(n_t - 1, 1)).sum(axis=1)
    return np.asarray(u), np.asarray(v)


def stratified_logrank(strata: Sequence[Stratum], permutations: int = 1999, seed: int = 0, z: float = Z95) -> LogRank:
    """strata: per scenario (times_a, violated_a, times_b, violated_b), times as in
    `kaplan_meier`. Scenarios where one side has no conversation carry no information."""
    used = [(list(ta), list(ea), list(tb), list(eb)) for ta, ea, tb, eb in strata if len(ta) and len(tb)]
    if not used:
        return LogRank(0, 0.0, 0, 0.0, 0.0, 1.0, None, None, 0, 0)
    built = []
    sizes = []
    for ta, ea, tb, eb in used:
        horizon = max(ta + tb)
        risk, died = _matrices(ta + tb, ea + eb, horizon)
        sizes.append((len(ta), len(tb)))
        built.append((risk, died))
    observed_labels = [np.concatenate([np.ones(a), np.zeros(b)])[None, :] for a, b in sizes]
    u, v = _statistics([(lab, r, d) for lab, (r, d) in zip(observed_labels, built, strict=True)])
    u_obs, v_obs = float(u[0]), float(v[0])
    z_obs = u_obs / math.sqrt(v_obs) if v_obs > 0 else 0.0
    observed_a = int(sum(d[:a].sum() for (_, d), (a, _) in zip(built, sizes, strict=True)))
    observed_b = int(sum(d[a:].sum() for (_, d), (a, _) in zip(built, sizes, strict=True)))
    expected_a = observed_a - u_obs
    expected_b = observed_a + observed_b - expected_a
    count = math.prod(math.comb(a + b, a) for a, b in sizes)
    if v_obs <= 0:
        p, drawn = 1.0, 0
    elif count <= EXACT_PERMUTATIONS:
        per_stratum = [
            np.array([[1.0 if i in chosen else 0.0 for i in range(a + b)] for chosen in combinations(range(a + b), a)])
            for a, b in sizes
        ]
        rows = list(product(*[range(len(m)) for m in per_stratum]))
        labels = [m[[r[k] for r in rows]] for k, m in enumerate(per_stratum)]
        p, drawn = _extreme(labels, built, z_obs) / len(rows), 0  # the observed labels among them
    else:
        rng = np.random.default_rng(seed)
        labels = [(np.argsort(rng.random((permutations, a + b)), axis=1) < a).astype(float) for a, b in sizes]
        p, drawn = (1 + _extreme(labels, built, z_obs)) / (1 + permutations), permutations
    ratio = interval = None
    if v_obs > 0:
        log_ratio = -u_obs / v_obs  # B against A: A's excess of violations lowers it
        half = z / math.sqrt(v_obs)
        ratio, interval = math.exp(log_ratio), (math.exp(log_ratio - half), math.exp(log_ratio + half))
    return LogRank(
        observed_a, expected_a, observed_b, expected_b, z_obs, min(1.0, p), ratio, interval, len(used), drawn
    )


def _extreme(labels: list[np.ndarray], built: list[tuple[np.ndarray, np.ndarray]], z_obs: float) -> int:
    """How many label assignments have |z| at least the observed one (two-sided)."""
    u, v = _statistics([(lab, r, d) for lab, (r, d) in zip(labels, built, strict=True)])
    z = np.divide(u, np.sqrt(v), out=np.zeros_like(u), where=v > 0)
    threshold = abs(z_obs) - TIE * max(1.0, abs(z_obs))
    return int(np.sum(np.abs(z) >= threshold))
