"""The figures on the statistics page for the numbers the field reports (not collected by
pytest): each estimator's bias under each stopping rule (exact), its intervals' coverage,
and the false-positive rate and power of the survival and sensitivity comparisons (seeded
simulation, more repetitions than the tests run). Run: python tests/perf/field_figures.py
"""

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from ironbench.analysis.compare.sensitivity import compare_sensitivity
from ironbench.stats import binomial_pmf, confidence_thresholds, wilson_interval
from ironbench.stats.clustered import clustered_mean, clustered_ratio
from ironbench.stats.passk import StoppingRule, anytime_interval, count_orders, estimate_pass_k, pass_hat_k
from ironbench.stats.survival import first_violation, kaplan_meier, stratified_logrank

SEED = StoppingRule("last_3_agree", 10)
CONFIDENCE = StoppingRule("confidence", 30, confidence_thresholds(0.8, 0.95, 30))


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def signed(x: float) -> str:
    return f"{100 * x:+.1f} pp"


def exact_bias(rule: StoppingRule, p: float, kmax: int) -> tuple[list[float], list[float]]:
    """Over every (runs, successes) the rule can stop at, each weighted by its chance."""
    ours, naive = [0.0] * kmax, [0.0] * kmax
    for n in range(1, rule.max_runs + 1):
        for c in range(n + 1):
            runs = ["S"] * c + ["F"] * (n - c)
            ok = [r == "S" for r in runs]
            orders, _, _ = count_orders(runs, ok, rule, kmax)
            if not orders:
                continue
            weight = orders * p**c * (1 - p) ** (n - c)
            found = estimate_pass_k(runs, ok, rule)
            for k in range(1, kmax + 1):
                ours[k - 1] += weight * found.pass_hat[k - 1]
                naive[k - 1] += weight * pass_hat_k(n, c, k)
    return [e - p**k for k, e in enumerate(ours, 1)], [e - p**k for k, e in enumerate(naive, 1)]


def bias_table() -> str:
    rows = []
    for name, rule in (("last_3_agree, runs: 10", SEED), ("confidence, reproduce 0.8, max_runs 30", CONFIDENCE)):
        kmax = min(3, rule.smallest_n)
        for p in (0.3, 0.5, 0.7, 0.9):
            ours, naive = exact_bias(rule, p, kmax)
            rows.append(
                [name, pct(p)] + [f"{signed(naive[k])} / {signed(ours[k])}" if k < kmax else "–" for k in range(3)]
            )
    return table(["rule", "success rate", "pass^1", "pass^2", "pass^3"], rows)


def fixed_coverage(n: int, k: int) -> tuple[float, float]:
    grid = np.arange(0.05, 0.951, 0.05)
    values = []
    for p in grid:
        pmf = binomial_pmf(n, p)
        values.append(
            sum(pmf[c] for c in range(n + 1) if wilson_interval(c, n)[0] ** k <= p**k <= wilson_interval(c, n)[1] ** k)
        )
    return float(np.mean(values)), float(np.min(values))


def anytime_coverage(p: float) -> float:
    covered = 0.0
    for n in range(1, SEED.max_runs + 1):
        for c in range(n + 1):
            runs = ["S"] * c + ["F"] * (n - c)
            orders, _, _ = count_orders(runs, [r == "S" for r in runs], SEED, 1)
            low, high = anytime_interval(c, n)
            covered += orders * p**c * (1 - p) ** (n - c) * (low <= p <= high)
    return covered


def beta_moment(a: float, b: float, k: int) -> float:
    return math.exp(math.lgamma(a + k) + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(a + b + k))


def across_coverage(a: float, b: float, cases: int, runs: int, k: int, reps: int = 4000) -> float:
    rng = np.random.default_rng(17)
    hits = 0
    for _ in range(reps):
        successes = rng.binomial(runs, rng.beta(a, b, cases))
        found = clustered_mean([pass_hat_k(runs, int(c), k) for c in successes], units=[runs] * cases)
        hits += found.low <= beta_moment(a, b, k) <= found.high
    return hits / reps


def coverage_tables() -> str:
    fixed = table(
        ["runs (fixed)", "k = 1", "k = 2", "k = 3"],
        [
            [n] + [f"{pct(fixed_coverage(n, k)[0])} (min {pct(fixed_coverage(n, k)[1])})" for k in (1, 2, 3)]
            for n in (5, 10, 20)
        ],
    )
    anytime = table(
        ["success rate", "coverage"], [[pct(p), pct(anytime_coverage(p))] for p in (0.1, 0.3, 0.5, 0.7, 0.9)]
    )
    rows = []
    for a, b, label in ((2, 2, "Beta(2, 2)"), (0.5, 0.5, "Beta(½, ½)"), (5, 1, "Beta(5, 1)"), (1, 3, "Beta(1, 3)")):
        for cases in (10, 20, 30):
            rows.append([label, cases] + [pct(across_coverage(a, b, cases, 10, k)) for k in (1, 2, 3)])
    across = table(["success rates across cases", "cases", "pass^1", "pass^2", "pass^3"], rows)
    return f"{fixed}\n\n{anytime}\n\n{across}"


def conversation(rng, hazard: float, turns: int = 8) -> tuple[int, bool]:
    return first_violation(list(rng.random(turns) < hazard))


def km_coverage() -> str:
    rows = []
    for n, hazard in ((20, 0.15), (50, 0.15), (50, 0.3), (100, 0.1)):
        rng = np.random.default_rng(7)
        hits, reps = np.zeros(9), 3000
        for _ in range(reps):
            times = [conversation(rng, hazard) for _ in range(n)]
            curve = kaplan_meier([t for t, _ in times], [e for _, e in times])
            for t in range(1, min(8, len(curve.low) - 1) + 1):
                hits[t] += curve.low[t] <= (1 - hazard) ** t <= curve.high[t]
        coverage = hits[1:] / reps
        rows.append([n, pct(hazard), pct(coverage.mean()), f"{pct(coverage.min())}–{pct(coverage.max())}"])
    return table(["conversations", "violation chance per turn", "mean over turns 1–8", "range"], rows)


def logrank_table() -> str:
    rows = []
    for conversations in (1, 3, 5):
        rng = np.random.default_rng(11)
        null = alt2 = alt3 = 0
        reps = 4000
        for rep in range(reps):
            hazards = rng.uniform(0.05, 0.3, 7)
            for factor, counter in ((1, "null"), (2, "alt2"), (3, "alt3")):
                strata = []
                for h in hazards:
                    a = [conversation(rng, min(0.95, h * factor)) for _ in range(conversations)]
                    b = [conversation(rng, h) for _ in range(conversations)]
                    strata.append(([t for t, _ in a], [e for _, e in a], [t for t, _ in b], [e for _, e in b]))
                rejected = stratified_logrank(strata, permutations=199, seed=rep).p_value <= 0.05
                if counter == "null":
                    null += rejected
                elif counter == "alt2":
                    alt2 += rejected
                else:
                    alt3 += rejected
        rows.append([7, conversations, pct(null / reps), pct(alt2 / reps), pct(alt3 / reps)])
    return table(
        ["scenarios", "conversations per engine and scenario", "false positives", "power, hazard ×2", "power, ×3"], rows
    )


def sensitivity_table() -> str:
    rows = []
    for cases, variants in ((3, 5), (6, 5), (10, 5), (20, 5), (10, 10)):
        rng = np.random.default_rng(29)
        reps, null, alt = 4000, 0, 0
        for _ in range(reps):
            rates = {f"c{i}": float(r) for i, r in enumerate(rng.uniform(0.05, 0.4, cases))}

            def cells(rates, rng=rng, variants=variants):
                return {(c, "g"): (int(rng.binomial(variants, r)), variants) for c, r in rates.items()}

            null += compare_sensitivity(cells(rates), cells(rates))[0].verdict != "cannot be told apart"
            doubled = {c: min(1.0, 2 * r) for c, r in rates.items()}
            alt += compare_sensitivity(cells(rates), cells(doubled))[0].verdict == "more sensitive"
        rows.append([cases, variants, pct(null / reps), pct(alt / reps)])
    return table(["cases", "variants per case and side", "false alarms", "power, material rate ×2"], rows)


def robustness_table() -> str:
    rows = []
    for cases in (10, 20, 40):
        rng = np.random.default_rng(19)
        flips_hits = drop_hits = 0
        reps = 3000
        population = np.random.default_rng(1).beta(4, 1, 400_000)
        truth = (population.mean() - ((0.9 * population) ** 5).mean()) / population.mean()
        for _ in range(reps):
            rates, variants = rng.beta(1, 4, cases), rng.integers(3, 7, cases)
            found = clustered_mean(rng.binomial(variants, rates) / variants, weights=variants)
            flips_hits += found.low <= 0.2 <= found.high
            p = rng.beta(4, 1, cases)
            base = (rng.random(cases) < p).astype(float)
            worst = np.all(rng.random((cases, 5)) < 0.9 * p[:, None], axis=1)
            drop = clustered_ratio(base - worst, base)
            drop_hits += drop is not None and drop[1] <= truth <= drop[2]
        rows.append([cases, pct(flips_hits / reps), pct(drop_hits / reps)])
    return table(["cases", "flip rate (pooled, case as cluster)", "robust drop (ratio of case means)"], rows)


if __name__ == "__main__":
    for title, make in (
        ("Bias of pass^k (published formula / ironbench's), exact", bias_table),
        ("Coverage of pass^k intervals", coverage_tables),
        ("Kaplan–Meier band coverage", km_coverage),
        ("Stratified log-rank", logrank_table),
        ("compare: sensitivity per generator", sensitivity_table),
        ("Robustness intervals across cases", robustness_table),
    ):
        print(f"### {title}\n\n{make()}\n", flush=True)
