"""The sequential regression gate over the full grid (not collected by pytest).

Run: python tests/perf/bench_gate.py [--margin 0.1] [--gates 2000] [--rates 0.5,0.7,0.9] [--cases 3,10,50]

Every point simulates `--gates` gates through the gate's own decision code
(ironbench/stats/gate_simulation.py): A's runs drawn at its rate with their own noise
(the fixed design's size per case, as a main run planned with `plan`), the gate designed
from them, B drawn round by round at the rate less the true drop, stopped where the gate
says; a gate still open at the cap is decided by compare's fixed-design test. Printed per
point: false alarms (drop 0) or power, B's invocations against the fixed design's, and
whether each goal holds (false alarms <= alpha and power >= the target within three
simulation standard errors; invocations <= 60% at no drop, <= 50% at twice the margin,
<= 105% everywhere).
"""

import argparse
import math
import time

from ironbench.stats.gate_simulation import simulate_gate

ALPHA, POWER = 0.05, 0.8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--margin", type=float, default=0.1)
    parser.add_argument("--gates", type=int, default=2000)
    parser.add_argument("--rates", default="0.5,0.7,0.9")
    parser.add_argument("--cases", default="3,10,50")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    margin, gates = args.margin, args.gates
    band = lambda p: 3 * math.sqrt(p * (1 - p) / gates)
    print(f"margin (--drop) {margin:.0%}, alpha {ALPHA}, power {POWER:.0%}, {gates} simulated gates per point")
    print(
        "| A's rate | cases | A runs/case | fixed design (runs/case) | false alarms | at half margin | "
        "power at margin | at twice margin | B invocations vs fixed: 0 / half / margin / twice | undecided |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    failures = []
    started = time.perf_counter()
    for rate in (float(r) for r in args.rates.split(",")):
        for cases in (int(c) for c in args.cases.split(",")):
            results = [
                simulate_gate(rate, drop, cases, margin, gates, ALPHA, POWER, seed=args.seed + k)
                for k, drop in enumerate((0.0, margin / 2, margin, 2 * margin))
            ]
            null, half, at_margin, twice = results
            ratios = [r.ratio for r in results]
            checks = {
                "false alarms": null.regressed <= ALPHA + band(ALPHA),
                "power": at_margin.regressed >= POWER - band(POWER),
                "60% at no drop": null.ratio <= 0.6,
                "50% at twice the margin": twice.ratio <= 0.5,
                "105% everywhere": max(ratios) <= 1.05,
            }
            failures += [f"{rate}/{cases}: {name}" for name, ok in checks.items() if not ok]
            print(
                f"| {rate:.1f} | {cases} | {null.a_runs} | {null.cap:.1f} | {null.regressed:.3f} | "
                f"{half.regressed:.3f} | {at_margin.regressed:.3f} | {twice.regressed:.3f} | "
                f"{' / '.join(f'{r:.0%}' for r in ratios)} | {max(r.undecided for r in results):.1%} |",
                flush=True,
            )
    print(f"({time.perf_counter() - started:.0f} s; bands: false alarms <= {ALPHA + band(ALPHA):.3f}, "
          f"power >= {POWER - band(POWER):.3f})")  # fmt: skip
    print("every goal holds" if not failures else "goals missed: " + "; ".join(failures))


if __name__ == "__main__":
    main()
