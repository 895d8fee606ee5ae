"""The sequential gate end to end, through `ironbench run --against` (not collected by pytest).

Run: python tests/perf/bench_gate_e2e.py [--repeats 20] [--jobs 2]

10 cases of a coin-flip target (tests/fixtures/coin_target.py) at 80% success. Each repeat
stores main's run (fixed at 8 runs per case: what `ironbench plan --p 0.8 --drop 0.2
--cases 10` asks for), then runs the branch `--against` it with `--drop 0.2`, once at 80%
success (no drop) and once at 50% (a 30-point drop), each with fresh flips. Printed: the
exits (0 not regressed, 1 regressed) and B's invocations, against the fixed design's 80.
"""

import argparse
import os
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
COIN = REPO / "tests" / "fixtures" / "coin_target.py"
CASES, RUNS, DROP = 10, 8, 0.2


def ironbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ironbench.cli.main", *args], capture_output=True, text=True, cwd=REPO, check=False
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "coin.yaml"
        suite.write_text(
            yaml.safe_dump(
                {
                    "suite_id": "coin",
                    "mode": "baseline",
                    "timeout_seconds": 30,
                    "debug_enabled": False,
                    "rules": "exit-code",
                    "stop": {"rule": "fixed", "runs": RUNS},
                    "cases": [{"id": f"case_{k:02d}", "instruction": f"Task {k}."} for k in range(CASES)],
                }
            )
        )
        out = Path(tmp) / "out"
        results: dict[float, list[tuple[int, int]]] = {0.8: [], 0.5: []}
        for repeat in range(args.repeats):
            target = lambda rate, seed: (
                f"{shlex.join([sys.executable, str(COIN), str(rate), str(seed)])} {{instruction}}"
            )
            main_run = ironbench(
                "run", str(suite), "--target", target(0.8, f"main{repeat}"), "--out", str(out), "-q", "--no-report",
                "--jobs", str(args.jobs),
            )  # fmt: skip
            assert main_run.returncode == 0, main_run.stderr
            run_a = main_run.stdout.strip()
            for rate, rows in results.items():
                branch = ironbench(
                    "run", str(suite), "--target", target(rate, f"branch{repeat}_{rate}"), "--against", run_a,
                    "--drop", str(DROP), "--out", str(out), "-q", "--no-report", "--jobs", str(args.jobs),
                )  # fmt: skip
                assert branch.returncode in (0, 1), branch.stderr
                with sqlite3.connect(out / "ironbench.db") as conn:
                    count = conn.execute(
                        "SELECT count(*) FROM invocations WHERE run_id = ?", (branch.stdout.strip(),)
                    ).fetchone()[0]
                rows.append((branch.returncode, count))
                print(f"repeat {repeat + 1}: branch at {rate:.0%}: exit {branch.returncode}, {count} invocations",
                      flush=True)  # fmt: skip
    fixed = CASES * RUNS
    print(f"\n{CASES} cases, main at 80%, --drop {DROP}; the fixed design runs {fixed} invocations of the branch")
    print("| branch | exit 0 (not regressed) | exit 1 (regressed) | invocations: mean (min-max) | vs fixed |")
    print("| --- | --- | --- | --- | --- |")
    for rate, rows in results.items():
        exits = Counter(code for code, _ in rows)
        counts = [count for _, count in rows]
        print(
            f"| {rate:.0%} success | {exits[0]} | {exits[1]} | {statistics.mean(counts):.1f} "
            f"({min(counts)}-{max(counts)}) | {statistics.mean(counts) / fixed:.0%} |"
        )


if __name__ == "__main__":
    os.environ.pop("IRONBENCH_SCHEDULER", None)
    main()
