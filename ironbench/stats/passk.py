"""pass@k and pass^k of one instruction: unbiased under a fixed number of runs, and under
the stopping rules that end a baseline early; with their intervals.

References
- Chen et al. (2021) "Evaluating Large Language Models Trained on Code", arXiv 2107.03374,
  §2.1: pass@k = 1 − C(n−c, k)/C(n, k), unbiased with n runs of which c succeeded.
- Yao et al. (2024) "τ-bench", arXiv 2406.12045, §5: pass^k = C(c, k)/C(n, k), the chance that
  k runs all succeed; (c/n)^k is biased.
- Girshick, Mosteller & Savage (1946) "Unbiased estimates for certain binomial sampling
  problems with applications", Ann. Math. Statist. 17:13: under a stopping rule, the unbiased
  estimate is the share of the paths to the observed stopping point that have the estimated
  property (Rao–Blackwell on the first runs, which every path holds).
- Robbins (1970) "Statistical methods related to the law of the iterated logarithm", Ann.
  Math. Statist. 41:1397; Howard et al. (2021) "Time-uniform, nonparametric, nonasymptotic
  confidence sequences", Ann. Statist. 49:1055: the beta-binomial mixture confidence sequence,
  valid at any stopping time.
"""

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from ironbench.stats.intervals import Z95, wilson_interval
from ironbench.stats.laws import bisect_root

RuleName = Literal["fixed", "last_3_agree", "confidence"]
AGREEING_RUNS = 3
# Paths are counted over count vectors of the runs' outcomes; past this many the exact
# count is not attempted (many distinct outcomes over many runs) and the estimate is None.
MAX_COUNT_STATES = 200_000


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased estimate of pass@k from n runs with c successes (k <= n)."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..n (k={k}, n={n})")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """τ-bench's unbiased estimate of pass^k from n runs with c successes (k <= n)."""
    if not 0 < k <= n:
        raise ValueError(f"k must be in 1..n (k={k}, n={n})")
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True)
class StoppingRule:
    """When a baseline's runs end, as the estimators need to know it: after `max_runs` at
    the latest; `last_3_agree` (the seed's) also once the last 3 outcomes are equal;
    `confidence` once the most common outcome has `thresholds[n - 1]` of n runs, or can no
    longer reach the last threshold within `max_runs`. `run/stopping.py` decides; the tests
    check that this says the same."""

    name: RuleName
    max_runs: int
    thresholds: tuple[int, ...] = ()

    def stops(self, n: int, top: int, streak: int) -> bool:
        """After n runs whose most common outcome came `top` times and whose last outcome
        repeated `streak` times in a row."""
        if n >= self.max_runs:
            return True
        if self.name == "last_3_agree":
            return streak >= AGREEING_RUNS
        if self.name == "confidence":
            return top >= self.thresholds[n - 1] or n - top > self.max_runs - self.thresholds[-1]
        return False

    @property
    def smallest_n(self) -> int:
        """The fewest runs the rule can stop after, whatever the outcomes: every run up to
        this one is always observed, so pass^k for k up to it has an unbiased estimate."""
        for n in range(1, self.max_runs + 1):
            if self.stops(n, n, n) or self.stops(n, 1, 1):  # all outcomes equal, or all different
                return n
        return self.max_runs


@dataclass(frozen=True)
class PassK:
    """pass@k and pass^k of one instruction for k = 1..len(pass_at), with 95% intervals."""

    rule: RuleName
    n: int
    successes: int
    pass_at: tuple[float, ...]
    pass_hat: tuple[float, ...]
    pass_at_95: tuple[tuple[float, float], ...]
    pass_hat_95: tuple[tuple[float, float], ...]
    estimator: str
    interval: str
    why_k: str  # why k stops where it does


def estimate_pass_k(
    signatures: Sequence[Hashable], successes: Sequence[bool], rule: StoppingRule, z: float = Z95
) -> PassK | None:
    """pass@k and pass^k from a baseline's outcomes in run order (the signatures its stopping
    rule compares, and whether each run succeeded); None without runs, when the rule would
    not have stopped after them, or when the exact count of paths would be too large to make.

    Under `fixed` these are Chen et al.'s and τ-bench's estimates for k = 1..n, with the
    Wilson interval of the success rate mapped through p^k and 1 − (1 − p)^k (both monotone:
    the interval keeps Wilson's coverage). Under a rule that stops on outcomes, the runs'
    count is itself random and those formulas are biased; the unbiased estimate exists for
    k up to the fewest runs the rule can stop after (`StoppingRule.smallest_n`), and is the
    share of the outcome orders that stop exactly where these runs stopped whose first k
    runs all succeed (at least one succeeds, for pass@k); its interval is the beta-binomial
    mixture confidence sequence, valid whatever the stopping time (and so conservative).
    """
    n = len(signatures)
    if n == 0:
        return None
    c = sum(1 for s in successes if s)
    fixed = rule.smallest_n >= rule.max_runs  # `fixed`, or a rule that can never stop early
    if fixed:
        top_k = n
        at = tuple(pass_at_k(n, c, k) for k in range(1, n + 1))
        hat = tuple(pass_hat_k(n, c, k) for k in range(1, n + 1))
        estimator = "unbiased with n fixed in advance (Chen et al. 2021; Yao et al. 2024)"
        why = f"k up to the {n} runs"
    else:
        top_k = rule.smallest_n
        found = rao_blackwell(signatures, successes, rule, top_k)
        if found is None:
            return None
        at, hat = found
        estimator = (
            f"unbiased under the {rule.name} rule: the share of the outcome orders that stop after "
            f"{n} runs (Girshick, Mosteller & Savage 1946)"
        )
        why = f"k up to {top_k}: the {rule.name} rule can stop after {top_k} runs, so later runs are not always seen"
    if fixed:
        low, high = wilson_interval(c, n, z)
        interval = "Wilson 95% on the success rate, mapped through p^k"
    else:
        low, high = anytime_interval(c, n)
        interval = "beta-binomial mixture 95% confidence sequence (valid at any stopping time), mapped through p^k"
    return PassK(
        rule.name,
        n,
        c,
        at,
        hat,
        tuple((1 - (1 - low) ** k, 1 - (1 - high) ** k) for k in range(1, top_k + 1)),
        tuple((low**k, high**k) for k in range(1, top_k + 1)),
        estimator,
        interval,
        why,
    )


def rao_blackwell(
    signatures: Sequence[Hashable], successes: Sequence[bool], rule: StoppingRule, top_k: int
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """(pass@k, pass^k) for k = 1..top_k: over every order of these outcomes that `rule`
    would have stopped after exactly these many runs (all equally likely, whatever the
    outcomes' probabilities), the share whose first k runs include a success, and whose
    first k runs all succeed. None when no order stops there (these are not its runs)."""
    counted = count_orders(signatures, successes, rule, top_k)
    if counted is None or counted[0] == 0:
        return None
    total, all_succeed, all_fail = counted
    at = tuple(float(1 - Fraction(f, total)) for f in all_fail)
    hat = tuple(float(Fraction(s, total)) for s in all_succeed)
    return at, hat


def count_orders(
    signatures: Sequence[Hashable], successes: Sequence[bool], rule: StoppingRule, top_k: int
) -> tuple[int, list[int], list[int]] | None:
    """How many orders of these outcomes `rule` stops after exactly len(signatures) runs, and
    of those, how many begin with k successes and with k failures (k = 1..top_k). Exact, by
    dynamic programming over (outcomes used so far, last outcome and its streak, the first
    runs' successes); the order given is not used. None past MAX_COUNT_STATES."""
    n = len(signatures)
    counts = Counter(signatures)
    symbols = list(counts)
    success_of = {s: bool(ok) for s, ok in zip(signatures, successes, strict=True)}
    totals = tuple(counts[s] for s in symbols)
    if math.prod(t + 1 for t in totals) > MAX_COUNT_STATES:
        return None
    ordered = rule.name == "last_3_agree"  # only that rule looks at the order of outcomes
    # state: (used per symbol, last symbol, streak, first outcome's success, its streak, streak broken)
    start = (tuple(0 for _ in symbols), -1, 0, None, 0, False)
    layer: dict[tuple, int] = {start: 1}
    for position in range(1, n + 1):
        grown: dict[tuple, int] = {}
        for (used, last, streak, lead, lead_len, broken), ways in layer.items():
            for j, symbol in enumerate(symbols):
                if used[j] == totals[j]:
                    continue
                now = used[:j] + (used[j] + 1,) + used[j + 1 :]
                run = streak + 1 if j == last else 1
                ok = success_of[symbol]
                if lead is None:
                    state_lead, state_len, state_broken = ok, 1, False
                elif broken or ok != lead:
                    state_lead, state_len, state_broken = lead, lead_len, True
                else:
                    state_lead, state_len, state_broken = lead, min(lead_len + 1, top_k), False
                if rule.stops(position, max(now), run) != (position == n):
                    continue  # stopped earlier, or would not have stopped here
                key = (
                    now,
                    j if ordered else -1,
                    min(run, AGREEING_RUNS) if ordered else 0,
                    state_lead,
                    state_len,
                    state_broken,
                )
                grown[key] = grown.get(key, 0) + ways
        layer = grown
    total = sum(layer.values())
    all_succeed = [
        sum(w for (_, _, _, lead, length, _), w in layer.items() if lead is True and length >= k)
        for k in range(1, top_k + 1)
    ]
    all_fail = [
        sum(w for (_, _, _, lead, length, _), w in layer.items() if lead is False and length >= k)
        for k in range(1, top_k + 1)
    ]
    return total, all_succeed, all_fail


def anytime_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The success rates p that the beta-binomial mixture (Jeffreys' prior, Beta(1/2, 1/2))
    does not reject at `alpha`: the likelihood of p at least alpha times the mixture's.
    Ville's inequality makes it hold at any stopping time, whatever rule chose it."""
    if n == 0:
        return 0.0, 1.0
    s, f = successes, n - successes
    log_mixture = math.lgamma(s + 0.5) + math.lgamma(f + 0.5) - math.lgamma(n + 1) - math.lgamma(0.5) * 2
    bound = math.log(alpha) + log_mixture

    def log_likelihood(p: float) -> float:
        return (s * math.log(p) if s else 0.0) + (f * math.log1p(-p) if f else 0.0)

    centre = s / n
    low = 0.0 if s == 0 else bisect_root(lambda p: log_likelihood(p) - bound, 0.0, centre)
    high = 1.0 if f == 0 else 1.0 - bisect_root(lambda q: log_likelihood(1 - q) - bound, 0.0, 1.0 - centre)
    return low, high
