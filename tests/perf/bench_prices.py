"""What pricing adds per model call (not collected by pytest). Goal: under 0.1 ms.

Run: python tests/perf/bench_prices.py [--calls 20000] [--rounds 7]

(a) Pricing alone: a call of a model the table prices (claude-haiku-4-5), priced by ironbench's
    PriceBook (what a run does) and by genai-prices' own calc_price (its cost without the fast
    path), and a call made into its model_call_priced event by a run's Spending (price, event,
    total). Rounds alternate; per call, the median and the spread of the rounds.
(b) Recording it: the same calls appended as model_called events alone (B), and each with its
    model_call_priced event (A), to a real store with its read model, in the batches a run
    appends; rounds alternate A B A B; per call, what A adds, median and spread.
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from genai_prices import Usage, calc_price

from ironbench.core.events import ModelCalled, RunStarted
from ironbench.core.prices import PriceBook
from ironbench.core.spending import Spending
from ironbench.projections.readmodel import ReadModel
from ironbench.store import Pending, open_store

MODEL = "claude-haiku-4-5"


def tokens(calls: int) -> list[tuple[int, int, int]]:
    return [(1000 + (k * 37) % 5000, 100 + (k * 13) % 900, (k * 7) % 500) for k in range(calls)]


def per_call(work, calls: list) -> float:
    started = time.perf_counter()
    work(calls)
    return (time.perf_counter() - started) / len(calls) * 1000


def pricing(calls: int, rounds: int) -> None:
    usage = tokens(calls)
    book = PriceBook()
    spending = Spending(PriceBook())
    book.price(MODEL, 1, 1), spending.priced("target", MODEL, 1, 1)  # the model looked up once, as a run does

    def ours(items):
        for i, o, c in items:
            book.price(MODEL, i, o, c)

    def theirs(items):
        for i, o, c in items:
            calc_price(Usage(input_tokens=i, output_tokens=o, cache_read_tokens=c or None), MODEL)

    def events(items):
        for k, (i, o, c) in enumerate(items):
            spending.priced("target", MODEL, i, o, c, 0.5, key="run/k", index=k, case_id="c", variant_id="base")

    found: dict[str, list[float]] = {"PriceBook.price": [], "genai-prices calc_price": [], "Spending.priced": []}
    for _ in range(rounds):
        found["PriceBook.price"].append(per_call(ours, usage))
        found["genai-prices calc_price"].append(per_call(theirs, usage[: max(1, calls // 10)]))
        found["Spending.priced"].append(per_call(events, usage))
    print(f"(a) pricing, per call, median of {rounds} rounds [spread]:")
    for name, values in found.items():
        print(
            f"    {name:26s} {statistics.median(values) * 1000:7.2f} µs [{min(values) * 1000:.2f}–{max(values) * 1000:.2f}]"
        )


def recording(calls: int, rounds: int, batch: int = 50) -> None:
    usage = tokens(calls)
    spending = Spending(PriceBook())
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "ironbench.db", [ReadModel()])
        started = RunStarted(
            suite_id="s",
            mode="baseline",
            suite={"suite_id": "s", "mode": "baseline", "cases": []},
            target_argv=["t", "{instruction}"],
            ironclad_version="x",
            harness_version="x",
            python_version="x",
            platform="x",
        )
        a, b = [], []
        with store:
            for r in range(rounds):
                for priced, times in ((True, a), (False, b)):
                    run_id = f"run_{r}_{priced}"
                    store.append(run_id, [Pending("run", started)])
                    begun = time.perf_counter()
                    for first in range(0, calls, batch):
                        pending = []
                        for k, (i, o, c) in enumerate(usage[first : first + batch], start=first):
                            where = {"key": f"{run_id}/k{k // 3}", "rerun": 0, "index": k % 3 + 1}
                            call = ModelCalled(
                                **where,
                                case_id="c",
                                variant_id="base",
                                run_index=k // 3,
                                api="openai.chat",
                                requested_model=MODEL,
                                served_model=MODEL,
                                messages=[{"role": "user", "content": "hi"}],
                                options={},
                                answer="ok",
                                prompt_tokens=i,
                                completion_tokens=o,
                                latency_ms=500.0,
                            )
                            pending.append(Pending(f"baseline/c/run_{k // 3:03d}", call))
                            if priced:
                                event = spending.priced(
                                    "target", MODEL, i, o, c, 0.5, case_id="c", variant_id="base", **where
                                )
                                pending.append(Pending(f"baseline/c/run_{k // 3:03d}", event))
                        store.append(run_id, pending)
                    times.append((time.perf_counter() - begun) / calls * 1000)
    added = [x - y for x, y in zip(a, b, strict=True)]
    print(f"(b) recording, per call, median of {rounds} rounds (A B A B) [spread]:")
    print(
        f"    model_called alone          {statistics.median(b) * 1000:7.1f} µs [{min(b) * 1000:.1f}–{max(b) * 1000:.1f}]"
    )
    print(
        f"    with model_call_priced      {statistics.median(a) * 1000:7.1f} µs [{min(a) * 1000:.1f}–{max(a) * 1000:.1f}]"
    )
    print(
        f"    added by pricing            {statistics.median(added) * 1000:7.1f} µs "
        f"[{min(added) * 1000:.1f}–{max(added) * 1000:.1f}]; ratio {statistics.median(a) / statistics.median(b):.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    pricing(args.calls, args.rounds)
    recording(min(args.calls, 6_000), args.rounds)


if __name__ == "__main__":
    main()
