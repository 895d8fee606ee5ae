"""The run loop's own cost per invocation, under each stopping rule (not collected by pytest).

Run: python tests/perf/bench_loop.py [--invocations 2000] [--before SRC_TREE]

A Python target that sleeps 60 ms is spawned N times bare (a fresh working directory
each, as the harness gives it), then run N times through `ironbench run -q --no-report
--jobs 1` under each baseline stopping rule: the seed's (last 3 agree; the target never
lets 3 agree, so every case spends its 10 runs), `confidence` (the target always succeeds)
and `fixed` (20 runs per case). Measured side by side in one process, interleaved:

    overhead per invocation = (harness wall time - N x bare wall time per spawn) / N

with N bare spawns measured right before each harness run (so load drift on a shared
machine hits both alike); the same in CPU time of the child processes; and, within the
run itself, the loop's gap: the run's time from `run_started` to `run_finished` less
the sum of its invocations' own durations (each measured by the harness from spawn to
exit), per invocation: what the harness adds between one target's exit and the next
one's start, immune to drift between separate measurements. With
`--before DIR` (e.g. `git archive main | tar -x -C /tmp/before`), that source tree's
ironbench runs the same suites in the same session, for a before/after ratio.
"""

import argparse
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TARGET = (
    "import os, sys, time\n"
    "time.sleep(float(os.environ.get('BENCH_SLEEP_S', '0.06')))\n"
    "if os.environ.get('BENCH_ALWAYS') or int(os.environ.get('IRONBENCH_RUN_INDEX', '1')) % 2:\n"
    "    sys.exit(0)\n"
    "sys.exit(1)\n"
)
RUNS = 20
SEED_RUNS = 10  # the seed's rule allows at most 10 runs per case


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _confidence_runs() -> int:
    """Runs per case the confidence rule takes when every run succeeds."""
    sys.path.insert(0, str(REPO))
    from ironbench.stats import confidence_thresholds

    limits = confidence_thresholds(0.8, 0.95, RUNS)
    return next(n for n in range(1, RUNS + 1) if n >= limits[n - 1])


def suites(workdir: Path, target: Path, invocations: int) -> dict[str, tuple[Path, dict[str, str], int]]:
    """Per rule: its suite, the target's environment, and the invocations it will make."""
    out = {}
    confidence = _confidence_runs()
    for rule, stop, per_case, env in (
        ("seed", None, SEED_RUNS, {}),
        ("confidence", {"rule": "confidence", "reproduce": 0.8, "confidence": 0.95, "max_runs": RUNS}, confidence,
         {"BENCH_ALWAYS": "1"}),
        ("fixed", {"rule": "fixed", "runs": RUNS}, RUNS, {}),
    ):  # fmt: skip
        cases = max(1, invocations // per_case)
        data = {
            "suite_id": f"loop_{rule}",
            "mode": "baseline",
            "debug_enabled": False,
            "timeout_seconds": 60,
            "rules": "exit-code",
            "target": [sys.executable, str(target), "{instruction}"],
            "cases": [
                {
                    "id": f"case_{k:04d}",
                    "instruction": f"Write function number {k}.",
                    **({} if stop else {"runs": SEED_RUNS}),
                }
                for k in range(cases)
            ],
        }
        if stop:
            data["stop"] = stop
        path = workdir / f"{rule}.yaml"
        path.write_text(yaml.safe_dump(data))
        out[rule] = (path, env, cases * per_case)
    return out


def bare(workdir: Path, target: Path, n: int) -> tuple[float, float]:
    root = workdir / "bare"
    shutil.rmtree(root, ignore_errors=True)
    cpu, started = _children_cpu(), time.perf_counter()
    for i in range(n):
        cwd = root / f"{i:05d}"
        cwd.mkdir(parents=True)
        subprocess.run(
            [sys.executable, str(target), f"Write function number {i}."],
            cwd=cwd,
            capture_output=True,
            env={**os.environ, "IRONBENCH_RUN_INDEX": str(i % RUNS + 1)},
            check=False,
        )
    return time.perf_counter() - started, _children_cpu() - cpu


def harness(workdir: Path, suite: Path, env: dict[str, str], tree: Path, tag: str) -> tuple[float, float, int, float]:
    out = workdir / f"out_{tag}"
    shutil.rmtree(out, ignore_errors=True)
    environment = {**os.environ, **env, "PYTHONPATH": str(tree)}
    command = [sys.executable, "-m", "ironbench.cli.main"]
    subprocess.run([*command, "db", "upgrade", "--out", str(out)], check=True, capture_output=True, cwd=tree,
                   env=environment)  # fmt: skip
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run([*command, "run", str(suite), "--out", str(out), "-q", "--no-report", "--jobs", "1"], check=True,
                   capture_output=True, cwd=tree, env=environment)  # fmt: skip
    elapsed, used = time.perf_counter() - started, _children_cpu() - cpu
    with sqlite3.connect(out / "ironbench.db") as conn:
        count, durations = conn.execute("SELECT count(*), sum(duration_ms) FROM invocations").fetchone()
        span = conn.execute(
            "SELECT (julianday(max(timestamp_utc)) - julianday(min(timestamp_utc))) * 86400000 FROM events "
            "WHERE type IN ('run_started', 'run_finished')"
        ).fetchone()[0]
    shutil.rmtree(out, ignore_errors=True)
    return elapsed, used, count, (span - durations) / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--invocations", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--before", type=Path, help="an earlier source tree to measure side by side")
    args = parser.parse_args()
    trees = {"now": REPO, **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        target = workdir / "target.py"
        target.write_text(TARGET)
        plan = suites(workdir, target, args.invocations)
        rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        spawn: list[tuple[float, float]] = []
        for _ in range(args.repeats):
            for rule, (suite, env, _) in plan.items():
                for name, tree in trees.items():
                    # bare spawns right before each harness run: drift on the machine hits both alike
                    wall, cpu = bare(workdir, target, args.invocations)
                    per_wall, per_cpu = wall / args.invocations, cpu / args.invocations
                    spawn.append((per_wall, per_cpu))
                    wall, cpu, count, gap = harness(workdir, suite, env, tree, f"{name}_{rule}")
                    rows.setdefault((rule, name), []).append(
                        ((wall - count * per_wall) / count * 1000, (cpu - count * per_cpu) / count * 1000, gap)
                    )
                    print(
                        f"  {rule:<10} {name:<6} {count} invocations: {wall:.1f} s wall, {cpu:.1f} s CPU "
                        f"(bare spawns just before: {per_wall * 1000:.1f} ms wall, {per_cpu * 1000:.1f} ms CPU each)",
                        flush=True,
                    )
        print(
            f"bare spawn of the 60 ms target, median: {statistics.median(s[0] for s in spawn) * 1000:.1f} ms wall, "
            f"{statistics.median(s[1] for s in spawn) * 1000:.1f} ms CPU"
        )
        print("per invocation (ms; goal <= 5): beyond the bare spawns (wall, CPU), and the loop's gap in the run")
        print(f"{'rule':<11}" + "".join(f"{n + ' wall':>13}{n + ' CPU':>12}{n + ' gap':>12}" for n in trees))
        for rule in plan:
            cells = ""
            for name in trees:
                values = rows[(rule, name)]
                for k, width in ((0, 13), (1, 12), (2, 12)):
                    cells += f"{statistics.median(v[k] for v in values):>{width}.2f}"
            print(f"{rule:<11}{cells}")


if __name__ == "__main__":
    main()
