"""The AI-rewrite guard on the labelled rewrites (not collected by pytest).

Run: python tests/perf/bench_ai_guard.py [--judge MODEL] [--part development|held_out]

(a) The harness rules (requirement checks included): precision and recall of their
    rejections on each part of tests/fixtures/ai_rewrites/, and what they miss by kind.
(b) With --judge: the semantic judge alone on the same rewrites (both directions, as a
    run asks it), then rules and judge together, side by side, with the time per verdict.
    The judge's answers are cached in a throwaway store, so a rerun costs nothing.
"""

import argparse
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ironbench.llms.access import ModelClient
from ironbench.run.ai_generation import ask_judge
from tests.generators.test_labelled_rewrites import ALL, Figures, Item


def tally(items: list[Item], rejected: list[bool]) -> Figures:
    pairs = list(zip((i.reject for i in items), rejected, strict=True))
    return Figures(
        sum(t and r for t, r in pairs),
        sum(t and not r for t, r in pairs),
        sum(r and not t for t, r in pairs),
        sum(not t and not r for t, r in pairs),
    )


def misses(items: list[Item], rejected: list[bool]) -> str:
    wrong = Counter(i.kind for i, r in zip(items, rejected, strict=True) if r != i.reject)
    return ", ".join(f"{kind} {n}" for kind, n in wrong.most_common()) or "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default=None, help="an llm model id to measure as ai_judge")
    parser.add_argument("--part", choices=list(ALL), action="append", help="only this part (repeatable)")
    args = parser.parse_args()
    parts = args.part or list(ALL)
    with tempfile.TemporaryDirectory(prefix="ironbench-bench-guard-") as tmp:
        cache = sqlite3.connect(Path(tmp) / "calls.db")
        cache.execute(
            "CREATE TABLE model_calls (key TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT, options TEXT, "
            "attempt INTEGER, response TEXT, duration_ms INTEGER, created_utc TEXT)"
        )
        client = ModelClient(args.judge, cache) if args.judge else None
        for part in parts:
            items = ALL[part]
            rules = [bool(i.verdict()) for i in items]
            print(
                f"{part} ({len(items)} rewrites): rules: {tally(items, rules)}; wrong by kind: {misses(items, rules)}"
            )
            if client is None:
                continue
            started = time.perf_counter()
            verdicts = [ask_judge(client, i.base, i.rewrite) for i in items]
            per = (time.perf_counter() - started) / len(items)
            judge = [v.same_task is not True for v in verdicts]
            unread = sum(v.same_task is None for v in verdicts)
            print(
                f"{part}: judge {args.judge} alone: {tally(items, judge)}; no verdict {unread}; "
                f"{per:.2f} s per rewrite; wrong by kind: {misses(items, judge)}"
            )
            both = [r or j for r, j in zip(rules, judge, strict=True)]
            print(f"{part}: rules then judge: {tally(items, both)}; wrong by kind: {misses(items, both)}")


if __name__ == "__main__":
    main()
