"""The statistics figures of docs/concepts/statistics.md, regenerated (not collected by pytest).

Run: python tests/perf/stats_figures.py [--sims 20000] [--write]
Prints the tables between the page's `stats-figures` markers; --write replaces them there.
Exact tables (stopping rules, stress boundaries) are exact; the compare gate and the
variant verdict are seeded Monte Carlo with `--sims` repetitions per row (standard error
at most 0.35 percentage points at 20000). tests/run/test_operating.py checks the page's
figures against a quick rerun.
"""

import argparse
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ironbench.run.operating import (
    boundary_power,
    confidence_rule_oc,
    false_boundary_rate,
    gate_rates,
    seed_rule_oc,
    variant_verdict_rates,
    worst_false_boundary_rate,
)

BEGIN, END = "<!-- stats-figures:begin -->", "<!-- stats-figures:end -->"
ALPHA = 0.05
NULL_CONFIGS = [(5, 3, 0.5), (5, 10, 0.5), (20, 3, 0.5), (20, 10, 0.5), (5, 10, 0.9), (20, 10, 0.9)]
UNIFORM = [(5, 3), (5, 10), (20, 10)]  # every case 90% -> 70%
ONE_CASE = [(5, 10), (20, 10)]  # one case 90% -> 20%, the others stay at 90%
STOPPING_RATES = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
CONFIDENCE = (0.8, 0.95, 30)
LADDERS = [(3, 3), (3, 5), (10, 3), (10, 5), (12, 5)]  # no level above 12 can be a boundary
POWER = [(3, 3), (3, 5), (10, 3), (10, 5)]  # base 90%, from level k on 10%
VARIANTS = [(0.5, 0.5), (0.7, 0.7), (0.7, 0.0), (0.7, 1.0)]


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def gate_null_rows(sims: int) -> list[list[str]]:
    rows = []
    for cases, runs, p in NULL_CONFIGS:
        rates = gate_rates(cases, runs, [p] * cases, [p] * cases, ALPHA, sims, seed=cases * 1000 + runs)
        rows.append([str(cases), str(runs), pct(p), pct(rates["seed"]), pct(rates["overall"]), pct(rates["cases"])])
    return rows


def gate_power_rows(sims: int) -> list[list[str]]:
    rows = []
    for cases, runs in UNIFORM:
        rates = gate_rates(cases, runs, [0.9] * cases, [0.7] * cases, ALPHA, sims, seed=cases * 1000 + runs + 1)
        rows.append(["every case 90% → 70%", str(cases), str(runs), pct(rates["overall"]), pct(rates["cases"])])
    for cases, runs in ONE_CASE:
        rates = gate_rates(
            cases, runs, [0.9] * cases, [0.2] + [0.9] * (cases - 1), ALPHA, sims, seed=cases * 1000 + runs + 2
        )
        rows.append(["one case 90% → 20%", str(cases), str(runs), pct(rates["overall"]), pct(rates["cases"])])
    return rows


def stopping_rows() -> list[list[str]]:
    rows = []
    for p in STOPPING_RATES:
        seed = seed_rule_oc(p)
        strict = confidence_rule_oc(p, *CONFIDENCE)
        rows.append(
            [
                pct(p),
                pct(seed.stable),
                pct(seed.stable - seed.stable_on_success),
                f"{seed.expected_runs:.1f}",
                pct(strict.stable),
                f"{strict.expected_runs:.1f}",
            ]
        )
    return rows


def boundary_rows() -> list[list[str]]:
    rows = []
    for levels, runs in LADDERS:
        rows.append(
            [
                str(levels),
                str(runs),
                pct(false_boundary_rate(0.5, levels, runs, rule="seed")),
                pct(false_boundary_rate(0.5, levels, runs)),
                pct(worst_false_boundary_rate(levels, runs)[0]),
                pct(worst_false_boundary_rate(levels, runs, stop_at_boundary=False)[0]),
            ]
        )
    return rows


def every_level_at_alpha() -> float:
    """The rejected alternative: every level tested at alpha (a fixed-sequence reading)."""
    return worst_false_boundary_rate(10, 5, threshold=lambda level, alpha: alpha)[0]


def power_rows() -> list[list[str]]:
    rows = []
    for levels, runs in POWER:
        for at in sorted({1, 2, 3, levels}):
            power = boundary_power(0.9, 0.1, at, levels, runs)
            rows.append([str(levels), str(runs), str(at), pct(power.found), pct(power.tentative), pct(power.below)])
    return rows


def variant_rows(sims: int) -> list[list[str]]:
    rows = []
    for index, (baseline, variant) in enumerate(VARIANTS):
        rates = variant_verdict_rates(baseline, variant, sims=sims, seed=index)
        rows.append([pct(baseline), pct(variant), pct(rates["seed"]), pct(rates["ironbench"])])
    return rows


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def markdown(sims: int) -> str:
    return "\n\n".join(
        [
            BEGIN,
            (
                f"False alarms of `compare` between two runs of identical systems (alpha 0.05, {sims} simulated pairs "
                "per row; the seed's gate failed when the stratified test *or any single case* had p < alpha):"
            ),
            table(
                ["cases", "runs per side", "success rate", "seed's gate", "`--gate overall`", "`--gate cases`"],
                gate_null_rows(sims),
            ),
            f"Power of the gate (alpha 0.05, {sims} simulated pairs per row):",
            table(
                ["B against A", "cases", "runs per side", "`--gate overall`", "`--gate cases`"], gate_power_rows(sims)
            ),
            (
                "Baseline stopping, exact, when every run succeeds with the given probability and otherwise fails the "
                "same way: the seed's rule (last 3 agree, at most 10 runs) and `stop: {rule: confidence, reproduce: 0.8, "
                "max_runs: 30}`:"
            ),
            table(
                [
                    "success rate",
                    "seed: stable within 10 runs",
                    "seed: stable on failure",
                    "seed: mean runs",
                    "confidence: stable",
                    "confidence: mean runs",
                ],
                stopping_rows(),
            ),
            (
                "False capability boundaries, exact, when level 0 and every level succeed equally often (the seed "
                "named the first systematic failure; ironbench also needs it significantly worse than level 0, level j "
                "at 0.05/j); worst over success rates 1%–99%, climbing stopped at the first systematic failure "
                "(`stop_at_boundary`, the default) or not:"
            ),
            table(
                [
                    "levels",
                    "runs per level",
                    "seed's rule at 50%",
                    "ironbench at 50%",
                    "ironbench, worst rate",
                    "worst, `stop_at_boundary: false`",
                ],
                boundary_rows(),
            ),
            (
                "Testing every level at 0.05 instead (a fixed-sequence reading: the ladder climbs past levels that "
                f"do not fail, so it does not apply) would name a false boundary up to {pct(every_level_at_alpha())} of "
                "the time over 10 levels of 5 runs."
            ),
            (
                "Power to find a real boundary, exact: level 0 and the levels below level k succeed 90% of the time, "
                "level k and above 10%; how often the verdict is `boundary` at level k, `tentative` at level k, or a "
                "(false) boundary below it:"
            ),
            table(
                ["levels", "runs per level", "k", "boundary at k", "tentative at k", "boundary below k"], power_rows()
            ),
            (
                f"Adversarial variants judged against an `exhausted` baseline of 10 runs ({sims} simulated variants per "
                "row): how often the verdict is `structural`:"
            ),
            table(["baseline success", "variant success", "seed's rule", "ironbench"], variant_rows(sims)),
            END,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sims", type=int, default=20000)
    parser.add_argument("--write", action="store_true", help="replace the figures in docs/concepts/statistics.md")
    args = parser.parse_args()
    started = time.perf_counter()
    block = markdown(args.sims)
    print(block)
    print(f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    if args.write:
        page = REPO / "docs" / "concepts" / "statistics.md"
        text = page.read_text(encoding="utf-8")
        page.write_text(
            re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.DOTALL), encoding="utf-8"
        )


if __name__ == "__main__":
    main()
