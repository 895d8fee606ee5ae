"""The fence's cost per invocation, beside bubblewrap's own floor (not collected by pytest).
Run: python tests/perf/bench_fence.py

Whole `ironbench run` commands of a `python -S` target (it prints one line; the exit-code rules
read it), 600 invocations each, `--jobs 1`, with `--sandbox on` (full) against `--sandbox off`,
alternated round by round in one process so that both meet the same machine; the cost per
invocation is the difference of each round's pair divided by the invocations (goal: at most
5 ms), quoted as the median with the lowest and highest pair. Optionally (`--endpoint`) the same
with a model gateway's port allowed, where each invocation gets a network namespace from the
run's netgate instead of an empty one, and (`--partial`) at partial.

Beside it, the floor: the same target spawned bare, inside bubblewrap with every namespace the
fence unshares (its options, its seccomp filter, the answer key hidden, no harness around it),
and through the fence's own start, alternated spawn by spawn, in wall and processor time (the
processor time moves less with the load of a shared machine than the wall time does).

    python tests/perf/bench_fence.py --invocations 600 --rounds 3 --spawns 300 [--partial] [--endpoint]
"""

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TARGET = "import sys\nprint('[SUCCESS] done', len(sys.argv))\n"
CASES = 10


def suite(folder: Path, invocations: int, script: Path) -> Path:
    data = {
        "suite_id": "fence_cost",
        "mode": "baseline",
        "timeout_seconds": 30,
        "debug_enabled": False,
        "target": [sys.executable, "-S", str(script), "{instruction}"],
        "rules": "exit-code",
        "stop": {"rule": "fixed", "runs": invocations // CASES},
        "cases": [{"id": f"c{i}", "instruction": f"Write function number {i}."} for i in range(CASES)],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def timed_run(suite_path: Path, out: Path, *options: str) -> tuple[float, float]:
    """Seconds of wall time and of processor time (the whole tree of processes, every target
    included) of one whole run."""
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "ironbench.cli.main", "run", str(suite_path), "--out", str(out), "-q"]
    level = [o.removeprefix("level=") for o in options if o.startswith("level=")]
    options = tuple(o for o in options if not o.startswith("level="))
    env = {**os.environ, "IRONBENCH_FENCE_LEVEL": level[0]} if level else None
    began, used = time.perf_counter(), _children_cpu()
    command += ["--no-report", "--jobs", "1", *options]
    subprocess.run(command, check=True, capture_output=True, cwd=REPO, env=env)
    return time.perf_counter() - began, _children_cpu() - used


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def floor(script: Path, workdir: Path, spawns: int) -> dict[str, tuple[list[float], list[float]]]:
    """Milliseconds of wall and of processor time per spawn of the target: bare, in bubblewrap
    as the fence starts it (its options and seccomp filter, no harness around it), and through
    the fence's own start (`Fence.start`), alternated spawn by spawn."""
    from ironbench.sandbox import Fence, SandboxPolicy
    from ironbench.sandbox.bubblewrap import options
    from ironbench.sandbox.seccomp import assemble, base_rules

    fence = Fence(SandboxPolicy(mode="on", hidden=(str(workdir.parent),)))
    machine, plan = fence.machine, fence.plan
    assert machine.bwrap is not None, "bubblewrap does not run here"
    existing = tuple(h for h in plan.hidden if os.path.lexists(h))
    argv = [sys.executable, "-S", str(script), "x"]
    found = options(plan, fence.needs(argv), str(workdir), existing)
    program = assemble(base_rules())
    quiet = (subprocess.DEVNULL, subprocess.DEVNULL, subprocess.DEVNULL)

    def bare() -> None:
        subprocess.run(argv, cwd=workdir, stdout=subprocess.DEVNULL, check=True)

    def bubblewrap() -> None:
        read, write = os.pipe()
        os.write(write, program)
        os.close(write)
        command = [machine.bwrap, *found, "--unshare-net", "--seccomp", str(read), "--", *argv]
        subprocess.run(command, cwd=workdir, stdout=subprocess.DEVNULL, check=True, pass_fds=(read,))
        os.close(read)

    def fenced() -> None:
        started = fence.start(argv, workdir, fence.environment({}), quiet)
        started.process.wait()
        started.release()

    ways = {"bare": bare, "bubblewrap": bubblewrap, "fence": fenced}
    found_times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in ways}
    for _ in range(spawns):
        for name, spawn in ways.items():
            began, used = time.perf_counter(), _process_time()
            spawn()
            found_times[name][0].append((time.perf_counter() - began) * 1000)
            found_times[name][1].append((_process_time() - used) * 1000)
    fence.close()
    return found_times


def _process_time() -> float:
    """This process's processor time and its reaped children's."""
    mine, theirs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + theirs.ru_utime + theirs.ru_stime


def spread(values: list[float]) -> str:
    """The median, with the lowest and highest value (and the quartiles when there are many)."""
    found = f"median {statistics.median(values):+6.2f}  (min {min(values):+6.2f}, max {max(values):+6.2f}"
    if len(values) >= 20:
        low, _, high = statistics.quantiles(values)
        found += f"; quartiles {low:+.2f}, {high:+.2f}"
    return found + ")"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--invocations", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spawns", type=int, default=300)
    parser.add_argument("--endpoint", action="store_true", help="also with one endpoint allowed (the netgate)")
    parser.add_argument("--partial", action="store_true", help="also at partial (Landlock, seccomp, supervisor)")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        script = work / "target.py"
        script.write_text(TARGET)
        path = suite(work, args.invocations, script)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        variants = {"off": ["--sandbox", "off"], "on": ["--sandbox", "on"]}
        if args.partial:
            variants["partial"] = ["level=partial"]
        if args.endpoint:
            variants["on, one endpoint"] = ["--sandbox", "on", "--allow-net", f"127.0.0.1:{listener.getsockname()[1]}"]
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        cpu: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, options in variants.items():
                wall, used = timed_run(path, work / "out", *options)
                seconds[name].append(wall)
                cpu[name].append(used)
        listener.close()
        workdir = work / "out" / "workdir"
        workdir.mkdir(parents=True, exist_ok=True)
        spawned = floor(script, workdir, args.spawns)
    n = args.invocations
    print(f"{n} invocations of `python -S target.py`, --jobs 1, {args.rounds} rounds of whole commands")
    for name, values in seconds.items():
        print(f"  {name:<18} {statistics.median(values):7.2f} s  ({statistics.median(values) / n * 1000:.2f} ms each)")
    for name in variants:
        if name == "off":
            continue
        extra = [(on - off) / n * 1000 for on, off in zip(seconds[name], seconds["off"], strict=True)]
        ratio = [on / off for on, off in zip(seconds[name], seconds["off"], strict=True)]
        busy = [(on - off) / n * 1000 for on, off in zip(cpu[name], cpu["off"], strict=True)]
        print(f"  {name} against off, ms per invocation: {spread(extra)}; ratio {statistics.median(ratio):.2f}")
        print(f"    processor time, ms per invocation: {spread(busy)}")
    if load_before:
        print(
            f"load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after (2 cores shared with other work)"
        )
    print(f"the floor, {args.spawns} spawns each way, alternated (median spawn: bare {_median(spawned, 'bare')} ms):")
    for above, below in (("bubblewrap", "bare"), ("fence", "bubblewrap")):
        wall = [a - b for a, b in zip(spawned[above][0], spawned[below][0], strict=True)]
        busy = [a - b for a, b in zip(spawned[above][1], spawned[below][1], strict=True)]
        print(f"  {above} over {below}, ms per spawn: wall {spread(wall)}")
        print(f"  {' ' * len(above + below)}            processor {spread(busy)}")


def _median(spawned: dict, name: str) -> str:
    return f"{statistics.median(spawned[name][0]):.2f}"


if __name__ == "__main__":
    main()
