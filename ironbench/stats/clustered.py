"""Figures across cases when a case's runs or variants are not independent: the case is the cluster.

References
- Liang & Zeger (1986) "Longitudinal data analysis using generalized linear models",
  Biometrika 73:13: the cluster-robust (sandwich) variance of a mean or ratio, with the
  small-sample factor m/(m − 1) (CR1).
- Miller (2024) "Adding error bars to evals: a statistical approach to language model
  evaluations", arXiv 2411.00640, §2–3: questions as draws from a super-population, and
  clustered standard errors when questions come in related groups.
- Kish (1965) "Survey Sampling", §8.2 (design effect, effective sample size); Korn &
  Graubard (1998) "Confidence intervals for proportions with small expected number of
  positive counts estimated from survey data", Survey Methodology 24:193: the Wilson interval
  at the effective sample size, the design effect held at least 1.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ironbench.stats.intervals import Z95, _wilson
from ironbench.stats.laws import t_quantile


@dataclass(frozen=True)
class Clustered:
    """An estimate across `clusters` cases with its 95% interval; `n` the units it counts
    (runs, variants or cases) and `effective_n` what they are worth once cases are clusters."""

    estimate: float
    low: float
    high: float
    n: int
    clusters: int
    effective_n: float

    def to_dict(self) -> dict:
        return {
            "estimate": round(self.estimate, 6),
            "ci_95": [round(self.low, 6), round(self.high, 6)],
            "n": self.n,
            "cases": self.clusters,
            "effective_n": round(self.effective_n, 2),
        }


def clustered_mean(
    values: Sequence[float], weights: Sequence[float] | None = None, units: Sequence[int] | None = None, z: float = Z95
) -> Clustered | None:
    """The weighted mean of per-case values in [0, 1] (a pooled rate Σx/Σn is values x/n with
    weights n), with the Wilson interval at Kish's effective sample size p(1 − p)/V, V the
    cluster-robust variance over cases. The effective size is never more than `units` (the
    runs or variants behind the values; default the weights): cases that agree cannot make
    their runs worth more than independent ones (Korn & Graubard's design effect of at least
    1). With one case the spread between cases is unknown and its units are taken as they are.
    None without cases."""
    weights = [1.0] * len(values) if weights is None else list(weights)
    pairs = [(float(v), float(w)) for v, w in zip(values, weights, strict=True) if w > 0]
    if not pairs:
        return None
    m = len(pairs)
    total = sum(w for _, w in pairs)
    mean = sum(v * w for v, w in pairs) / total
    cap = float(sum(units)) if units is not None else total
    variance = (m / (m - 1)) * sum((w * (v - mean)) ** 2 for v, w in pairs) / total**2 if m > 1 else 0.0
    spread = mean * (1 - mean)
    effective = cap if variance <= 0 or spread <= 0 else min(cap, spread / variance)
    if m > 1:  # Korn & Graubard: the normal quantile gives way to t with m − 1 degrees of freedom
        effective *= (z / t_quantile(0.5 * (1 + math.erf(z / math.sqrt(2))), m - 1)) ** 2
    low, high = _wilson(mean, effective, z) if effective > 0 else (0.0, 1.0)
    return Clustered(mean, low, high, round(cap), m, effective)


def clustered_ratio(
    numerators: Sequence[float], denominators: Sequence[float], z: float = Z95
) -> tuple[float, float, float] | None:
    """Σ numerators / Σ denominators over cases with an interval from the cluster-robust
    (delta-method) variance and Student's t with m − 1 degrees of freedom: for ratios that
    are not a share of units (the robust drop).
    None when the denominators sum to 0; the interval is the estimate alone with one case."""
    total = float(sum(denominators))
    if total <= 0:
        return None
    ratio = float(sum(numerators)) / total
    m = len(numerators)
    if m < 2:
        return ratio, ratio, ratio
    variance = (m / (m - 1)) * sum((a - ratio * b) ** 2 for a, b in zip(numerators, denominators, strict=True))
    half = t_quantile(0.5 * (1 + math.erf(z / math.sqrt(2))), m - 1) * math.sqrt(variance) / total
    return ratio, ratio - half, ratio + half


def clustered_mean_t(
    values: Sequence[float], clusters: Sequence[object], z: float = Z95
) -> tuple[float, float, float] | None:
    """The mean of unbounded per-unit values (flips per conversation) with an interval from
    the cluster-robust variance (units of one cluster summed before squaring) and Student's t
    with clusters − 1 degrees of freedom; with one cluster, the units' own spread (t, n − 1).
    None without values; the interval is the mean alone with one value."""
    n = len(values)
    if n == 0:
        return None
    mean = sum(values) / n
    sums: dict[object, float] = {}
    for value, cluster in zip(values, clusters, strict=True):
        sums[cluster] = sums.get(cluster, 0.0) + value - mean
    g = len(sums)
    if g > 1:
        variance, df = (g / (g - 1)) * sum(r * r for r in sums.values()) / n**2, g - 1
    elif n > 1:
        variance, df = sum((v - mean) ** 2 for v in values) / (n - 1) / n, n - 1
    else:
        return mean, mean, mean
    half = t_quantile(0.5 * (1 + math.erf(z / math.sqrt(2))), df) * math.sqrt(variance)
    return mean, mean - half, mean + half
