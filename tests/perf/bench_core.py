"""Core performance benchmark (not collected by pytest). Run: python tests/perf/bench_core.py

(a) 200 invocations of a no-op target through `ironbench run` against the same 200
    spawns done bare, measured side by side, as a ratio (goal <= 1.05).
(b) failure_breakdown.sql over a synthetic store of 1,000,000 completed invocations:
    in-process (goal <= 0.5 s) and as a whole `ironbench query` command (goal <= 1.5 s).
"""

import argparse
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
# Odd runs succeed, even runs print nothing: no three runs in a row agree, so every
# case spends all its runs and the run count is exact.
NOOP = (
    "import os, sys\n"
    "if int(os.environ.get('IRONBENCH_RUN_INDEX', '1')) % 2:\n"
    "    print('[SUCCESS] Verified brick saved to: b.py'); sys.exit(0)\n"
    "sys.exit(1)\n"
)
CASES, RUNS = 20, 10


def bench_invocations(workdir: Path, repeats: int) -> None:
    target = workdir / "noop_target.py"
    target.write_text(NOOP)
    argv = [sys.executable, str(target)]
    suite = {
        "suite_id": "perf",
        "mode": "baseline",
        "debug_enabled": False,
        "timeout_seconds": 60,
        "target": argv + ["{instruction}"],
        "cases": [
            {"id": f"case_{i:02d}", "instruction": f"Write function number {i}.", "runs": RUNS} for i in range(CASES)
        ],
    }
    suite_path = workdir / "perf.yaml"
    suite_path.write_text(yaml.safe_dump(suite))
    total = CASES * RUNS

    def bare() -> float:
        started = time.perf_counter()
        for i in range(total):
            cwd = workdir / "bare" / f"{i:03d}"
            cwd.mkdir(parents=True)
            subprocess.run(
                argv + [f"Write function number {i % CASES}."],
                cwd=cwd,
                capture_output=True,
                env={**os.environ, "IRONBENCH_RUN_INDEX": str(i % RUNS + 1)},
                check=False,
            )
        return time.perf_counter() - started

    def harness(k: int, cold: bool = False) -> float:
        out = workdir / f"out{k}"
        if not cold:  # the store exists, as it does from a user's second run on
            subprocess.run(
                [sys.executable, "-m", "ironbench.cli.main", "db", "upgrade", "--out", str(out)],
                check=True,
                capture_output=True,
                cwd=REPO,
            )
        started = time.perf_counter()
        # --no-report: this measures the harness around the target; the report's own cost
        # is measured by bench_report.py.
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ironbench.cli.main",
                "run",
                str(suite_path),
                "--out",
                str(out),
                "-q",
                "--no-report",
            ],
            check=True,
            capture_output=True,
            cwd=REPO,
        )
        elapsed = time.perf_counter() - started
        with sqlite3.connect(out / "ironbench.db") as conn:
            count = conn.execute("SELECT count(*) FROM invocations").fetchone()[0]
        assert count == total, f"expected {total} invocations, got {count}"
        return elapsed

    bare_times, harness_times = [], []
    for k in range(repeats):  # interleaved, so drift on the machine hits both alike
        import shutil

        shutil.rmtree(workdir / "bare", ignore_errors=True)
        bare_times.append(bare())
        harness_times.append(harness(k))
    cold = harness(repeats, cold=True)
    b, h = statistics.median(bare_times), statistics.median(harness_times)
    print(
        f"(a) {total} invocations, median of {repeats}: bare spawns {b:.3f} s | ironbench run {h:.3f} s "
        f"| ratio {h / b:.3f} (goal <= 1.05) | overhead per invocation, start-up included, "
        f"{(h - b) / total * 1000:.2f} ms"
    )
    print(f"    first run on a new store (alembic creates the schema): {cold:.3f} s | ratio {cold / b:.3f}")


def build_synthetic_store(path: Path, rows: int) -> None:
    from ironbench.store import open_store

    open_store(path).close()
    rng = random.Random(7)
    stages = [None, None, None, "generation", "validation", "repair", "unknown"]
    conn = sqlite3.connect(path)
    with conn:
        runs = [f"run_synth_{r:03d}" for r in range(100)]
        conn.executemany(
            "INSERT INTO runs(run_id, suite_id, mode, status, started_utc, finished_utc, target, "
            "ironclad_version) VALUES (?,?,?,?,?,?,?,?)",
            [(r, "synthetic", "baseline", "finished", "2026-01-01T00:00:00Z", None, "x", "v") for r in runs],
        )

        def generate():
            for i in range(rows):
                stage = stages[rng.randrange(len(stages))]
                yield (
                    f"k{i}",
                    runs[i % 100],
                    "synthetic",
                    "baseline",
                    f"case_{i % 50:02d}",
                    "base",
                    i % 10 + 1,
                    "h",
                    80,
                    stage is None,
                    stage,
                    rng.randrange(5),
                    rng.randrange(4),
                    rng.randrange(100, 5000),
                    stage == "unknown" and i % 3 == 0,
                    None,
                    0 if stage is None else 1,
                    True,
                    "2026-01-01T00:00:00Z",
                    i,
                    f"baseline/case_{i % 50:02d}",
                    None,
                    None,
                    "baseline",
                )

        conn.executemany(
            "INSERT INTO invocations(invocation_key, run_id, suite_id, mode, case_id, variant_id, run_index, "
            "instruction_hash, instruction_length, success, failure_stage, attempts, repairs_triggered, duration_ms, "
            "timed_out, harness_error, exit_code, debug_artifacts_present, timestamp_utc, seq, group_path, generator, "
            "level, case_mode) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            generate(),
        )
    conn.close()  # checkpoints the WAL, as a writer's normal end does


def bench_query(workdir: Path, rows: int, repeats: int) -> None:
    from ironbench.analysis.query import run_query

    store = workdir / "synthetic.db"
    started = time.perf_counter()
    build_synthetic_store(store, rows)
    print(f"(b) synthetic store: {rows:,} invocations built in {time.perf_counter() - started:.1f} s")
    in_process, whole = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        result = run_query(store, "failure_breakdown.sql")
        in_process.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "ironbench.cli.main", "query", "failure_breakdown.sql", "--store", str(store)],
            check=True,
            capture_output=True,
            cwd=REPO,
        )
        whole.append(time.perf_counter() - started)
    assert result.rows
    print(
        f"    failure_breakdown.sql, median of {repeats}: in-process {statistics.median(in_process):.3f} s "
        f"(goal <= 0.5) | whole `ironbench query` command {statistics.median(whole):.3f} s (goal <= 1.5)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["invocations", "query"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "invocations"):
            bench_invocations(Path(tmp), args.repeats)
        if args.only in (None, "query"):
            bench_query(Path(tmp), args.rows, args.repeats)


if __name__ == "__main__":
    main()
