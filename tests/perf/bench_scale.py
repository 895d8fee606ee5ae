"""Scale benchmark (not collected by pytest). Run: python tests/perf/bench_scale.py

Every figure is a whole `ironbench` command in its own process, on stores built by the
synthetic builders (real events through the real store and read model; only the
target's outcomes are drawn at random), printed with its goal and its ratio to it:

(a) `compare A B` of two baseline runs, 10 runs per case on each side, at 100, 1,000 and
    10,000 cases (goals: <= 3 s at 1,000, <= 30 s at 10,000), with the growth per 10x;
    also with --gate cases --fail-on change --junit and --format json at the largest size.
(b) `run --jobs 1` of a no-op target, 3 runs per case, against the same number of bare
    spawns, side by side: 300 and 3,000 invocations (goal <= 1.15x at both); the harness's
    cost per invocation, also beyond its fixed start-up (a 3-invocation run's extra time).
(c) `report` of a mixed run of 100,000 invocations (goals: <= 10 s, <= 5 MB).
(d) `project --rebuild` of mixed runs of 10,000 and 20,000 invocations (goal <= 5 s at
    20,000), as seconds per 10,000 invocations, beside its floor on this disk: the same
    files replaced by a bare loop (a rebuild in place writes every file of the tree again,
    beside it, then renames it over the old one).
(e) A store of 1,000,000 invocations over 100 runs: `runs`, `show RUN` and
    `query failure_breakdown.sql` (goal <= 2 s each).
(f) The overall MDE by the normal approximation against the simulated exact one, over a
    grid of suites from 10 to 300 cases (goal: within 1 percentage point).

With --before DIR (a source tree of an earlier commit, e.g. made with
`git archive <commit> | tar -x -C DIR`), each command also runs with that tree's
ironbench on the same store, side by side, and the speed-up is printed; --timeout caps
how long an earlier command may take (it is reported as killed past it).
Smaller sizes: --compare-cases 100,300 --run-cases 100 --report-invocations 20000, etc.
"""

import argparse
import itertools
import os
import random
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
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_core import NOOP, build_synthetic_store
from bench_report import _Recorder, build_mixed_run

from ironbench.core.events import RunFinished, RunStarted
from ironbench.core.outcome import Outcome
from ironbench.projections.readmodel import ReadModel
from ironbench.run.planner import plan
from ironbench.store import open_store
from ironbench.suite.models import parse_suite

RATES = [0.05, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0]
FAILURES = [Outcome(False, "generation", 0, 0), Outcome(False, "validation", 3, 2), Outcome(False, "repair", 1, 1)]


class Timed:
    """A whole command's seconds (and the CPU seconds it used: on a shared machine the wall
    clock also counts other people's work), or how long it ran before it was killed."""

    def __init__(self, seconds: float, killed: bool = False, output: str = "", cpu: float = 0.0) -> None:
        self.seconds, self.killed, self.output, self.cpu = seconds, killed, output, cpu

    def __str__(self) -> str:
        return f"> {self.seconds:.0f} s (killed)" if self.killed else f"{self.seconds:.2f} s (cpu {self.cpu:.2f} s)"


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def command(args: list[str], tree: Path = REPO, timeout: float | None = None, check: bool = True) -> Timed:
    """`ironbench ARGS` run by the source tree `tree` (cwd first on sys.path with -m)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "200"}
    cpu = _children_cpu()
    started = time.perf_counter()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "ironbench.cli.main", *args],
            check=False,
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Timed(time.perf_counter() - started, killed=True)
    elapsed = time.perf_counter() - started
    if check and result.returncode not in (0, 1):
        raise SystemExit(f"ironbench {' '.join(args)} (tree {tree}) exited {result.returncode}: {result.stderr}")
    return Timed(elapsed, output=result.stdout, cpu=_children_cpu() - cpu)


def goal(seconds: float, limit: float, unit: str = "s") -> str:
    return f"goal <= {limit:g} {unit}, ratio {seconds / limit:.2f}"


REPEATS = 1  # --repeats: each command's median of this many, interleaved with the earlier tree's


def median_of(args: list[str], tree: Path = REPO, timeout: float | None = None, settle=None) -> Timed:
    runs: list[Timed] = []
    for _ in range(REPEATS):
        if settle is not None:
            settle()
        runs.append(command(args, tree, timeout))
        if runs[-1].killed:
            return runs[-1]
    return Timed(
        statistics.median(run.seconds for run in runs),
        output=runs[-1].output,
        cpu=statistics.median(run.cpu for run in runs),
    )


def side_by_side(
    label: str, args: list[str], before: Path | None, timeout: float, limit: float | None, settle=None
) -> Timed:
    """The command now and, with --before, with the earlier tree; prints both and the speed-up.
    `settle` runs before each (e.g. os.sync, so no command inherits another's dirty blocks)."""
    now = median_of(args, settle=settle)
    line = f"    {label}: {now}" + (f" ({goal(now.seconds, limit)})" if limit else "")
    if before is not None:
        then = median_of(args, before, timeout, settle)
        speed = f"{then.seconds / now.seconds:.0f}x faster" if not then.killed else "earlier tree killed"
        line += f" | before: {then} | {speed}"
    print(line, flush=True)
    return now


# -- (a) compare ------------------------------------------------------------------------


def build_compare_runs(store_path: Path, cases: int, runs: int = 10, seed: int = 3) -> tuple[str, str]:
    """Two finished baseline runs of the same `cases`, `runs` invocations per case each; B
    drops by 20 points in one case in 20 (a regression to find), the rest unchanged."""
    rng = random.Random(seed)
    suite = parse_suite(
        {
            "suite_id": "perf_compare",
            "mode": "baseline",
            "target": ["true", "{instruction}"],
            "cases": [
                {"id": f"case_{i:05d}", "instruction": f"Write function number {i}.", "runs": runs}
                for i in range(cases)
            ],
        },
        "compare.yaml",
    )
    groups = [track.groups[0] for track in plan(suite)]
    rates = [rng.choice(RATES) for _ in groups]
    ids = []
    with open_store(store_path, [ReadModel()]) as store:
        for side in ("a", "b"):
            run_id = f"run_compare_{side}"
            recorder = _Recorder(store, run_id)
            recorder.add(
                "run",
                RunStarted(
                    suite_id=suite.suite_id,
                    mode="baseline",
                    suite=suite.to_dict(),
                    target_argv=["true", "{instruction}"],
                    ironclad_version="synthetic",
                    harness_version="bench",
                    python_version=sys.version.split()[0],
                    platform=sys.platform,
                ),
            )
            for k, (group, rate) in enumerate(zip(groups, rates, strict=True)):
                if side == "b" and k % 20 == 0:
                    rate = max(0.0, rate - 0.2)
                for index in range(1, runs + 1):
                    success = rng.random() < rate
                    outcome = Outcome(True, None, 1, 0, "b.py") if success else rng.choice(FAILURES)
                    recorder.invoke(group, index, outcome, rng)
            recorder.add("run", RunFinished(invocations=recorder.invocations, successes=0), f"finished:{run_id}")
            recorder.flush()
            ids.append(run_id)
    return ids[0], ids[1]


def bench_compare(work: Path, sizes: list[int], before: Path | None, timeout: float) -> None:
    print("(a) compare A B: two baseline runs, 10 runs per case on each side", flush=True)
    times = {}
    for cases in sizes:
        store = work / f"compare_{cases}.db"
        started = time.perf_counter()
        run_a, run_b = build_compare_runs(store, cases)
        print(f"  {cases:,} cases ({2 * cases * 10:,} invocations) built in {time.perf_counter() - started:.0f} s")
        limit = {1_000: 3.0, 10_000: 30.0}.get(cases)
        base = ["compare", run_a, run_b, "--store", str(store)]
        times[cases] = side_by_side("compare", base, before, timeout, limit).seconds
        if cases == max(sizes):
            junit = work / "compare.xml"
            side_by_side(
                "compare --gate cases --fail-on change --junit FILE",
                [*base, "--gate", "cases", "--fail-on", "change", "--junit", str(junit)],
                before,
                timeout,
                limit,
            )
            side_by_side("compare --format json", [*base, "--format", "json"], before, timeout, limit)
        store.unlink()
    for small, large in itertools.pairwise(sorted(times)):
        print(
            f"  growth {small:,} -> {large:,} cases ({large / small:.0f}x): {times[large] / times[small]:.1f}x the time"
        )


# -- (b) the run loop -------------------------------------------------------------------


BARE = """
import os, subprocess, sys, time
argv, work, total = sys.argv[1:3], sys.argv[3], int(sys.argv[4])
started = time.perf_counter()
for i in range(total):
    cwd = os.path.join(work, f"{i:05d}")
    os.makedirs(cwd)
    subprocess.run(argv + [f"Write function number {i // 3}."], cwd=cwd, capture_output=True,
                   env={**os.environ, "IRONBENCH_RUN_INDEX": str(i % 3 + 1)}, check=False)
print(time.perf_counter() - started)
"""


def _bare(work: Path, argv: list[str], total: int) -> float:
    """`total` spawns of the target, each in a fresh directory, from a bare interpreter (not
    this one, which holds the store builders: a larger process is slower to fork)."""
    shutil.rmtree(work / "bare", ignore_errors=True)
    result = subprocess.run(
        [sys.executable, "-c", BARE, *argv, str(work / "bare"), str(total)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(result.stdout)


def _harness(work: Path, tree: Path, suite_path: Path, total: int) -> float:
    """Seconds of `ironbench run --jobs 1` (the store exists, as from a user's second run on)."""
    out = work / "run_out"
    shutil.rmtree(out, ignore_errors=True)
    command(["db", "upgrade", "--out", str(out)], tree)
    started = time.perf_counter()
    command(["run", str(suite_path), "--out", str(out), "-q", "--no-report", "--jobs", "1"], tree)
    elapsed = time.perf_counter() - started
    with sqlite3.connect(out / "ironbench.db") as conn:
        count = conn.execute("SELECT count(*) FROM invocations").fetchone()[0]
    assert count == total, f"expected {total} invocations, got {count}"
    shutil.rmtree(out)
    return elapsed


def _run_suite(work: Path, argv: list[str], cases: int) -> Path:
    suite = {
        "suite_id": "perf_run",
        "mode": "baseline",
        "debug_enabled": False,
        "timeout_seconds": 60,
        "target": argv + ["{instruction}"],
        "cases": [
            {"id": f"case_{i:05d}", "instruction": f"Write function number {i}.", "runs": 3} for i in range(cases)
        ],
    }
    path = work / f"run_{cases}.yaml"
    path.write_text(yaml.safe_dump(suite))
    return path


def bench_run(work: Path, sizes: list[int], before: Path | None, repeats: int) -> None:
    print("(b) run --jobs 1 of a no-op target, 3 runs per case, against bare spawns", flush=True)
    target = work / "noop_target.py"
    target.write_text(NOOP)
    argv = [sys.executable, str(target)]
    trees = {"now": REPO, **({"before": before} if before is not None else {})}
    # What a run costs whatever its size (Python, imports, the store, the closing events):
    # one case of 3 invocations against 3 bare spawns, the median of 5.
    one = _run_suite(work, argv, 1)
    fixed = {
        label: statistics.median(_harness(work, tree, one, 3) - _bare(work, argv, 3) for _ in range(5))
        for label, tree in trees.items()
    }
    print("  start-up: " + ", ".join(f"{label} {seconds:.2f} s" for label, seconds in fixed.items()), flush=True)
    for cases in sizes:
        suite_path = _run_suite(work, argv, cases)
        total = cases * 3
        bares: list[float] = []
        harness: dict[str, list[float]] = {label: [] for label in trees}
        for _ in range(repeats):  # interleaved, so drift on the machine hits all alike
            bares.append(_bare(work, argv, total))
            for label, tree in trees.items():
                harness[label].append(_harness(work, tree, suite_path, total))
        b = statistics.median(bares)
        figures = []
        for label, times in harness.items():
            h = statistics.median(times)
            figures.append(
                f"{label}: ironbench run {h:.1f} s, ratio {h / b:.3f}"
                + (f" (goal <= 1.15, {h / b / 1.15:.2f} of it)" if label == "now" else "")
                + f", harness per invocation {(h - b) / total * 1000:.1f} ms, "
                f"{(h - b - fixed[label]) / total * 1000:.1f} ms beyond its start-up"
            )
        print(
            f"  {total:,} invocations ({cases:,} cases x 3), median of {repeats}: bare spawns {b:.1f} s | "
            + " | ".join(figures),
            flush=True,
        )
    shutil.rmtree(work / "bare", ignore_errors=True)


# -- (c) report, (d) rebuild ----------------------------------------------------------------


def bench_report(work: Path, invocations: int, before: Path | None, timeout: float) -> None:
    print(f"(c) report of a mixed run of {invocations:,} invocations", flush=True)
    store = work / "report.db"
    started = time.perf_counter()
    run_id, count = build_mixed_run(store, invocations)
    print(f"  {count:,} invocations built in {time.perf_counter() - started:.0f} s")
    for label, tree in [("now", REPO)] + ([("before", before)] if before else []):
        page = work / f"report_{label}.html"
        timed = command(["report", run_id, "--store", str(store), "--out", str(work), "-o", str(page)], tree, timeout)
        size = page.stat().st_size / 1e6 if page.exists() and not timed.killed else float("nan")
        print(
            f"    {label}: {timed} ({goal(timed.seconds, 10)}) | page {size:.2f} MB ({goal(size, 5, 'MB')})",
            flush=True,
        )
    store.unlink()


REWRITE = """
import os, sys, time
started, files = time.perf_counter(), 0
for folder, _, names in os.walk(sys.argv[1]):
    for name in names:
        if name.endswith(".html"):
            continue
        path = os.path.join(folder, name)
        with open(path, "rb") as held:
            data = held.read()
        partial = os.path.join(folder, "." + name + ".tmp")
        with open(partial, "wb") as out:
            out.write(data)
        os.replace(partial, path)
        files += 1
print(time.perf_counter() - started, files)
"""


def _rewrite(folder: Path) -> tuple[float, int]:
    """Seconds to replace every file of a run's tree with itself, as a rebuild in place must
    (written beside it, renamed over it): the floor of a rebuild on this disk."""
    result = subprocess.run([sys.executable, "-c", REWRITE, str(folder)], capture_output=True, text=True, check=True)
    seconds, files = result.stdout.split()
    return float(seconds), int(files)


def bench_rebuild(work: Path, sizes: list[int], before: Path | None, timeout: float) -> None:
    print("(d) project --rebuild of a mixed run (in place: every file of the tree written again)", flush=True)
    for invocations in sizes:
        store = work / f"rebuild_{invocations}.db"
        run_id, count = build_mixed_run(store, invocations)
        out = work / f"rebuild_out_{invocations}"
        command(["project", run_id, "--store", str(store), "--out", str(out)])  # the tree exists, as after a run
        os.sync()  # each measure starts from a tree on disk, not in the page cache's dirty blocks
        floor, files = _rewrite(out / run_id)
        now = side_by_side(
            f"{count:,} invocations",
            ["project", run_id, "--rebuild", "--store", str(store), "--out", str(out)],
            before,
            timeout,
            5.0 if invocations == 20_000 else None,
            settle=os.sync,
        )
        print(
            f"      {now.seconds / count * 10_000:.2f} s per 10,000 invocations | replacing its {files:,} files "
            f"alone (bare Python, same disk): {floor:.2f} s, so the rebuild is {now.seconds / floor:.2f}x that floor",
            flush=True,
        )
        store.unlink()
        shutil.rmtree(out)


# -- (e) reads over a large store ---------------------------------------------------------------


def bench_reads(work: Path, rows: int, before: Path | None, timeout: float) -> None:
    print(f"(e) reads over a store of {rows:,} invocations in 100 runs", flush=True)
    store = work / "reads.db"
    started = time.perf_counter()
    build_synthetic_store(store, rows)
    print(f"  built in {time.perf_counter() - started:.0f} s")
    for label, args in (
        ("runs", ["runs"]),
        ("show RUN", ["show", "run_synth_042"]),
        ("query failure_breakdown.sql", ["query", "failure_breakdown.sql"]),
    ):
        side_by_side(label, [*args, "--store", str(store)], before, timeout, 2.0)
    store.unlink()


# -- (f) the MDE's approximation against the simulated exact figure ----------------------------

MDE_GRID = [  # (cases, runs per case: low, high + 1), two suites each
    (10, (9, 12)),
    (20, (10, 11)),
    (20, (5, 6)),
    (40, (2, 5)),
    (40, (10, 11)),
    (94, (10, 11)),  # the 1,000-invocation store compares about this many
    (200, (2, 4)),
    (300, (1, 5)),
]


def bench_mde(grid: list[tuple[int, tuple[int, int]]]) -> None:
    """The overall MDE by the normal approximation against the same MDE simulated with the
    exact test (1,000 seeded data sets per drop: the figure compare gave before), in points."""
    import numpy as np

    from ironbench.stats import stratified_min_detectable_drop, stratified_power_method
    from tests.stats.reference import stratified_min_detectable_drop as simulated_exact

    print("(f) overall MDE: normal approximation against the simulated exact test", flush=True)
    errors = []
    for cases, runs in grid:
        for seed in (1, 2):
            rng = np.random.default_rng(seed)
            sizes = [(int(rng.integers(*runs)), int(rng.integers(*runs))) for _ in range(cases)]
            rates = [int(rng.binomial(n, rng.choice(RATES))) / n for n, _ in sizes]
            started = time.perf_counter()
            exact = simulated_exact(sizes, rates, 0.05)
            exact_s = time.perf_counter() - started
            started = time.perf_counter()
            found = stratified_min_detectable_drop(sizes, rates, 0.05)
            found_s = time.perf_counter() - started
            if exact is None or found is None:
                print(f"    {cases} cases, {runs[0]}-{runs[1] - 1} runs: exact {exact}, approximate {found}")
                continue
            errors.append(abs(found - exact))
            print(
                f"    {cases:>3} cases, {runs[0]}-{runs[1] - 1} runs, seed {seed}: simulated exact {exact:.2%} "
                f"({exact_s:.1f} s) | {stratified_power_method(sizes).split(' to ')[0]} {found:.2%} ({found_s:.3f} s) | "
                f"error {100 * (found - exact):+.2f} pp",
                flush=True,
            )
    print(f"  largest error {100 * max(errors):.2f} pp (goal <= 1 pp, ratio {100 * max(errors):.2f})")


def _sizes(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="Comma-separated parts: compare, run, report, rebuild, reads, mde.")
    parser.add_argument("--compare-cases", type=_sizes, default=[100, 1_000, 10_000])
    parser.add_argument("--run-cases", type=_sizes, default=[100, 1_000])
    parser.add_argument("--run-repeats", type=int, default=1)
    parser.add_argument("--report-invocations", type=int, default=100_000)
    parser.add_argument("--rebuild-invocations", type=_sizes, default=[10_000, 20_000])
    parser.add_argument("--read-rows", type=int, default=1_000_000)
    parser.add_argument("--before", type=Path, help="An earlier source tree to run side by side.")
    parser.add_argument("--timeout", type=float, default=300.0, help="Seconds an earlier command may take.")
    parser.add_argument("--repeats", type=int, default=1, help="Each command's median of this many runs.")
    parser.add_argument("--small-mde-grid", action="store_true", help="(f) up to 40 cases only.")
    args = parser.parse_args()
    global REPEATS
    REPEATS = args.repeats
    parts = set((args.only or "compare,run,report,rebuild,reads,mde").split(","))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "compare" in parts:
            bench_compare(work, args.compare_cases, args.before, args.timeout)
        if "run" in parts:
            bench_run(work, args.run_cases, args.before, args.run_repeats)
        if "report" in parts:
            bench_report(work, args.report_invocations, args.before, args.timeout)
        if "rebuild" in parts:
            bench_rebuild(work, args.rebuild_invocations, args.before, args.timeout)
        if "reads" in parts:
            bench_reads(work, args.read_rows, args.before, args.timeout)
        if "mde" in parts:
            bench_mde(MDE_GRID if not args.small_mde_grid else MDE_GRID[:4])


if __name__ == "__main__":
    main()
