"""Harness memory under an output flood (not collected by pytest). Run: python tests/perf/bench_rss.py

`ironbench run` against a target printing 1 GiB (and 100 MiB) to stdout, side by side
with the same run against a quiet target: the peak RSS of the harness process (goal
< 200 MB whatever the target prints), and the wall time.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TARGET = (
    "import sys\n"
    "remaining = int(sys.argv[1])\n"
    "block = b'x' * 1023 + b'\\n'\n"
    "block = block * 64\n"
    "while remaining > 0:\n"
    "    sys.stdout.buffer.write(block[:remaining]); remaining -= len(block)\n"
    "print('[SUCCESS] Verified brick saved to: b.py', flush=True)\n"
)


def harness_run(workdir: Path, output_bytes: int) -> tuple[float, float]:
    """(peak RSS of the ironbench process in MB, seconds) for one run of one invocation."""
    target = workdir / "flood.py"
    target.write_text(TARGET)
    suite = workdir / f"flood_{output_bytes}.yaml"
    suite.write_text(
        "suite_id: flood\nmode: baseline\ntimeout_seconds: 600\ndebug_enabled: false\n"
        f"target: [{sys.executable!r}, {str(target)!r}, '{output_bytes}', '{{instruction}}']\n"
        "cases:\n  - {id: flood, instruction: Write a function named flood., runs: 1}\n"
    )
    out = workdir / f"out_{output_bytes}"
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "ironbench.cli.main", "run", str(suite), "--out", str(out), "-q"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # wait4 reports the harness process's own peak (and that of the children it reaped:
    # the target, which streams from a 64 KiB block and stays small).
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"ironbench run failed: {process.stderr.read().decode()}")
    return usage.ru_maxrss / 1024, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=1.0, help="size of the big flood in GiB")
    args = parser.parse_args()
    sizes = [("quiet target", 0), ("100 MiB flood", 100 * 2**20), (f"{args.gib:g} GiB flood", int(args.gib * 2**30))]
    with tempfile.TemporaryDirectory() as tmp:
        results = [(name, *harness_run(Path(tmp), size)) for name, size in sizes]
    quiet_rss = results[0][1]
    print("peak RSS of `ironbench run` (one invocation), side by side:")
    for name, rss, seconds in results:
        print(f"  {name:>15}: {rss:6.1f} MB  ({rss / quiet_rss:.2f}x quiet)  {seconds:6.2f} s   goal < 200 MB")


if __name__ == "__main__":
    main()
