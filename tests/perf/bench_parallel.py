"""Parallel execution benchmark (not collected by pytest). Run: python tests/perf/bench_parallel.py

Sleeping targets: what is measured is scheduling (how many invocations overlap), not CPU.
Side by side, in one run, each the median of --repeats whole `ironbench run` commands:

(a) 64 invocations of a 0.5 s target (16 cases x 4 runs, never 3 alike): --jobs 8 / --jobs 1 (goal >= 7x)
(b) 4 cases x 3 agreeing runs of a 1 s target: --jobs 12 / --jobs 1 (goal >= 5x); before runs
    within a case overlapped this was at most 4x
(c) suite (b) on a 2-worker loopback Dask cluster (6 threads each) / local --jobs 12
"""

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.fixtures.dask_cluster import LoopbackCluster

# A shell target: no interpreter start-up in the way. Odd runs succeed, even runs fail
# the generation stage, so (a)'s cases never see 3 alike and spend all 4 runs.
ALTERNATING = (
    "sleep {sleep}; if [ $((IRONBENCH_RUN_INDEX % 2)) = 1 ]; "
    'then echo "[SUCCESS] Verified brick saved to: b.py"; '
    'else echo "[X] INCINERATED: Output invalid."; exit 1; fi'
)
AGREEING = 'sleep {sleep}; echo "[SUCCESS] Verified brick saved to: b.py"'


def suite_file(folder: Path, name: str, script: str, sleep: float, cases: int, runs: int) -> Path:
    suite = {
        "suite_id": name,
        "mode": "baseline",
        "debug_enabled": False,
        "timeout_seconds": 60,
        "target": ["sh", "-c", script.format(sleep=sleep), "{instruction}"],
        "cases": [
            {"id": f"case_{i:02d}", "instruction": f"Write function number {i}.", "runs": runs} for i in range(cases)
        ],
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def run(suite: Path, out: Path, *options: str, env: dict | None = None) -> tuple[float, float, int]:
    """Seconds of the whole command, seconds from its run_started to its run_finished event
    (without Python's start-up and the closing verdict), and invocations recorded."""
    subprocess.run(
        [sys.executable, "-m", "ironbench.cli.main", "db", "upgrade", "--out", str(out)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ironbench.cli.main",
            "run",
            str(suite),
            "--out",
            str(out),
            "-q",
            "--no-report",
            *options,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "IRONBENCH_SCHEDULER": "", **(env or {})},
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode:
        raise SystemExit(f"ironbench run {' '.join(options)} failed:\n{result.stderr}")
    run_id = result.stdout.strip()
    with sqlite3.connect(out / "ironbench.db") as conn:
        count = conn.execute("SELECT count(*) FROM invocations WHERE run_id = ?", (run_id,)).fetchone()[0]
        first, last = conn.execute(
            "SELECT min(timestamp_utc), max(timestamp_utc) FROM events WHERE run_id = ? AND "
            "type IN ('run_started', 'run_finished')",
            (run_id,),
        ).fetchone()
    inside = (datetime.fromisoformat(last.rstrip("Z")) - datetime.fromisoformat(first.rstrip("Z"))).total_seconds()
    return elapsed, inside, count


def compare(label: str, repeats: int, slow: tuple, fast: tuple, goal: str) -> None:
    """slow/fast: (name, suite, out folder, options, env); interleaved so drift hits both alike."""
    times: dict[str, list[float]] = {slow[0]: [], fast[0]: []}
    insides: dict[str, list[float]] = {slow[0]: [], fast[0]: []}
    counts = set()
    for k in range(repeats):
        for name, suite, folder, options, env in (slow, fast):
            elapsed, inside, count = run(suite, folder / f"{name.replace(' ', '_')}_{k}", *options, env=env)
            times[name].append(elapsed)
            insides[name].append(inside)
            counts.add(count)
    a, b = statistics.median(times[slow[0]]), statistics.median(times[fast[0]])
    ia, ib = statistics.median(insides[slow[0]]), statistics.median(insides[fast[0]])
    print(
        f"{label}: {slow[0]} {a:.2f} s | {fast[0]} {b:.2f} s | ratio {a / b:.2f}x ({goal}) | the run alone "
        f"(run_started to run_finished) {ia:.2f} s / {ib:.2f} s = {ia / ib:.2f}x | invocations {sorted(counts)} | "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"cores {os.cpu_count()}, load average at start {os.getloadavg()[0]:.1f}; median of {args.repeats}", flush=True
    )
    with tempfile.TemporaryDirectory(prefix="ironbench-bench-parallel-") as tmp:
        folder = Path(tmp)
        many = suite_file(folder, "many", ALTERNATING, 0.5, 16, 4)
        few = suite_file(folder, "few", AGREEING, 1.0, 4, 10)
        compare(
            "(a) 64 x 0.5 s",
            args.repeats,
            ("--jobs 1", many, folder, ["--jobs", "1"], None),
            ("--jobs 8", many, folder, ["--jobs", "8"], None),
            "goal >= 7x",
        )
        compare(
            "(b) 4 cases x 3 runs of 1 s",
            args.repeats,
            ("--jobs 1", few, folder, ["--jobs", "1"], None),
            ("--jobs 12", few, folder, ["--jobs", "12"], None),
            "goal >= 5x",
        )
        (folder / "cluster").mkdir()
        cluster = LoopbackCluster(folder / "cluster")
        try:
            cluster.worker("w1", 6)
            cluster.worker("w2", 6)
            cluster.wait_for_workers(2)
            compare(
                "(c) suite (b), cluster vs local",
                args.repeats,
                ("local --jobs 12", few, folder, ["--jobs", "12"], None),
                ("2-worker cluster", few, folder, ["--scheduler", cluster.address], None),
                "local / cluster",
            )
        finally:
            cluster.stop()


if __name__ == "__main__":
    main()
