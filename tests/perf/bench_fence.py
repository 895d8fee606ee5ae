"""The fence's cost per invocation (not collected by pytest). Run: python tests/perf/bench_fence.py

Whole `ironbench run` commands of a trivial target (`true {instruction}`, read by the exit-code
rules), `--jobs 1`, with `--sandbox on` against `--sandbox off`, alternated round by round in
one process so both meet the same machine; the cost per invocation is the difference of the two
medians divided by the invocations (goal: at most 5 ms). Also the same with a model gateway's
port allowed (`--allow-net`), where each invocation gets a network namespace from the run's
netgate instead of an empty one.

    python tests/perf/bench_fence.py --invocations 100 --rounds 5
"""

import argparse
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


def suite(folder: Path, invocations: int) -> Path:
    cases = 10
    data = {
        "suite_id": "fence_cost",
        "mode": "baseline",
        "timeout_seconds": 30,
        "debug_enabled": False,
        "target": [shutil.which("true") or "/bin/true", "{instruction}"],
        "rules": "exit-code",
        "stop": {"rule": "fixed", "runs": invocations // cases},
        "cases": [{"id": f"c{i}", "instruction": f"Write function number {i}."} for i in range(cases)],
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def timed_run(suite_path: Path, out: Path, *options: str) -> float:
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "ironbench.cli.main", "run", str(suite_path), "--out", str(out), "-q"]
    began = time.perf_counter()
    subprocess.run([*command, "--no-report", "--jobs", "1", *options], check=True, capture_output=True, cwd=REPO)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--invocations", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        path = suite(work, args.invocations)
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        endpoint = f"127.0.0.1:{listener.getsockname()[1]}"
        variants = {
            "off": ["--sandbox", "off"],
            "on": ["--sandbox", "on"],
            "on, one endpoint": ["--sandbox", "on", "--allow-net", endpoint],
        }
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, options in variants.items():
                seconds[name].append(timed_run(path, work / "out", *options))
        listener.close()
    off = statistics.median(seconds["off"])
    print(f"{args.invocations} invocations of `true`, --jobs 1, median of {args.rounds} whole commands")
    for name, values in seconds.items():
        median = statistics.median(values)
        extra = (median - off) / args.invocations * 1000
        print(f"  {name:<18} {median:7.2f} s  ({extra:+.2f} ms per invocation against off)")


if __name__ == "__main__":
    main()
