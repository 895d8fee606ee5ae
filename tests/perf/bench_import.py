"""Import throughput (not collected by pytest). Run: python tests/perf/bench_import.py [--scale 1 10 100]

An outputs tree in the wild's shape (suite id for the mode, stdout inside summary.json, the
real Ironclad transcripts) of 105 invocations per run, at 1x (1 run), 10x and 100x; then the
store it made, imported into an empty one. Each figure is the whole `ironbench import`
command (start-up, reading, re-deriving, one transaction per run, the output tree), side by
side in one process, as seconds and invocations per second, and the ratio of the per-invocation
cost to the 1x one (linear: near 1). Also a second import of the same tree (nothing to add).
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.fixtures.outputs_trees import wild_tree

CASES_PER_RUN = 15  # x 7 transcripts = 105 invocations a run


def ironbench(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ironbench.cli.main", *args], cwd=REPO, check=True, capture_output=True)
    return time.perf_counter() - started


def tree(root: Path, runs: int) -> int:
    for k in range(runs):
        wild_tree(root, run_id=f"run_20260111_{k // 60:04d}{k % 60:02d}", cases=CASES_PER_RUN)
    return runs * CASES_PER_RUN * 7


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scale", type=int, nargs="+", default=[1, 10, 100])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ironbench-bench-import-") as tmp:
        for scale in args.scale:
            work = Path(tmp) / f"x{scale}"
            n = tree(work / "tree", scale)
            outputs = ironbench("import", str(work / "tree"), "--out", str(work / "a"))
            again = ironbench("import", str(work / "tree"), "--out", str(work / "a"))
            store = ironbench("import", str(work / "a" / "ironbench.db"), "--out", str(work / "b"))
            rows.append((scale, n, outputs, again, store))
            shutil.rmtree(work)
    print(
        f"{'scale':>6} {'invocations':>11} {'tree s':>8} {'inv/s':>8} {'ms/inv':>7} "
        f"{'again s':>8} {'store s':>8} {'inv/s':>8} {'ms/inv':>7}"
    )
    previous = None
    for scale, n, outputs, again, store in rows:
        # the marginal cost of an invocation since the smaller scale: equal at every scale when
        # the import is linear (a fixed start-up, about the 1x figure, is left out of it)
        marginal = (
            ("-", "-")
            if previous is None
            else tuple(
                f"{1000 * (t - pt) / (n - previous[0]):.2f}" for t, pt in ((outputs, previous[1]), (store, previous[2]))
            )
        )
        print(
            f"{scale:>5}x {n:>11} {outputs:>8.2f} {n / outputs:>8.0f} {marginal[0]:>7} "
            f"{again:>8.2f} {store:>8.2f} {n / store:>8.0f} {marginal[1]:>7}"
        )
        previous = (n, outputs, store)


if __name__ == "__main__":
    main()
