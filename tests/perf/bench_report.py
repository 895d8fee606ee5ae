"""HTML report benchmark (not collected by pytest). Run: python tests/perf/bench_report.py

Builds a store holding one mixed run of 10,000 invocations (baseline, adversarial and
stress cases) and one gauntlet run, as synthetic events appended through the real
store with its read model: real plans, real generators, real stopping decisions; only
the target's outcomes are drawn at random. Then times `write_report` (gathering and
rendering separately) and the whole `ironbench report` command, and reports the
page's size. Goals: <= 3 MB and <= 5 s for 10,000 invocations.

With --costs: what pricing adds to the report's build. The same mixed run twice, one with
two priced model calls per invocation (model_call_priced events, as `--serve-model` records
them) and one without; gather and render of each timed alternately (A B A B ...), the ratio of
the medians with the spread of the pairwise ratios.
"""

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ironbench.core.events import (
    DecisionTaken,
    InvocationCompleted,
    InvocationStarted,
    ModelCallPriced,
    RunFinished,
    RunStarted,
    ScenarioFinished,
    ScenarioStarted,
    TurnAnswered,
    TurnScored,
    VariantDropped,
    VariantGenerated,
)
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.core.outcome import Outcome
from ironbench.projections.readmodel import ReadModel
from ironbench.run.planner import plan
from ironbench.run.stopping import (
    baseline_decision,
    capability_boundary,
    reference_decision,
    stress_level_decision,
    variant_decision,
)
from ironbench.store import open_store
from ironbench.store.eventstore import Pending
from ironbench.suite.models import parse_suite

# As long as the shipped suites' instructions (about 90-140 characters each).
TASKS = [
    "a simple cache with get, set and a maximum size that drops the oldest entry when full",
    "a parser for ISO 8601 dates and times that returns a datetime with its time zone",
    "a function that reverses the order of words in a sentence, keeping the punctuation",
    "a rate limiter with a fixed window that allows at most N calls per second per key",
    "a class that merges overlapping intervals given as pairs of integers, sorted by start",
    "a function that formats a table of numbers as text with aligned columns and a header",
]
GENERATORS = [
    {"generator": "whitespace_noise", "count": 5},
    {"generator": "punctuation_noise", "count": 5},
    {"generator": "lexical_shuffle", "count": 5},
    {"generator": "synonym_substitution", "count": 5},
    {"generator": "ambiguity_injection_light", "count": 5},
    {"generator": "constraint_injection_light", "count": 5},
]
LADDERS = ["add_scope_detail", "add_constraints_tension", "add_ambiguity", "add_multi_objective"]
OUTPUT = "[-] FAIL (Attempt 1/3). Triggering repair...\n[*] Attempting repair...\n" * 3


def mixed_suite(baseline_cases: int, adversarial_cases: int, stress_cases: int):
    cases = []
    for i in range(baseline_cases):
        cases.append(
            {
                "id": f"base_{i:04d}",
                "mode": "baseline",
                "runs": 10,
                "instruction": f"Write a Python implementation of {TASKS[i % len(TASKS)]} (variant {i}).",
            }
        )
    for i in range(adversarial_cases):
        cases.append(
            {
                "id": f"adv_{i:04d}",
                "mode": "adversarial",
                "instruction": f"Write a Python class implementing {TASKS[i % len(TASKS)]}, number {i}.",
                "generators": [{**g, "seed": i * 7 + k} for k, g in enumerate(GENERATORS)],
            }
        )
    for i in range(stress_cases):
        cases.append(
            {
                "id": f"stress_{i:04d}",
                "mode": "stress",
                "instruction": f"Write a Python module providing {TASKS[i % len(TASKS)]}, number {i}.",
                "ladder": {"generator": LADDERS[i % len(LADDERS)], "additions": 5, "seed": i, "runs_per_level": 5},
            }
        )
    return parse_suite(
        {"suite_id": "perf_report", "mode": "mixed", "target": ["true", "{instruction}"], "cases": cases}, "perf.yaml"
    )


def _draw(rng: random.Random, p: float) -> Outcome:
    if rng.random() < p:
        repairs = rng.choice([0, 0, 0, 1, 2])
        return Outcome(True, None, 1 + repairs, repairs, "verified_bricks/x.py")
    return rng.choice(
        [Outcome(False, "generation", 0, 0), Outcome(False, "validation", 3, 2), Outcome(False, "repair", 1, 1)] * 8
        + [Outcome(False, "timeout", 2, 1)]
    )


OUTAGE = "[!] Error connecting to Ollama: Connection error"


class _Recorder:
    """Appends a run's events in batches, as the runner's one writer would."""

    def __init__(self, store, run_id: str, priced: bool = False) -> None:
        self.store, self.run_id, self.pending, self.invocations = store, run_id, [], 0
        self.priced = priced  # two priced model calls per attempt

    def add(self, stream: str, event, key: str | None = None) -> None:
        if self.store is None:  # a dry run, counting invocations only
            return
        self.pending.append(Pending(stream, event, key))
        if len(self.pending) >= 2000:
            self.flush()

    def flush(self) -> None:
        if self.store is not None and self.pending:
            self.store.append(self.run_id, self.pending)
            self.pending = []

    def invoke(self, group, run_index: int, outcome: Outcome, rng: random.Random) -> None:
        """One invocation slot; about 1 in 100 first hits a backend outage and is run again
        (the outage's attempt superseded), as the runner records it."""
        key = invocation_key(self.run_id, "perf_report", group.case_id, group.variant_id, run_index)
        stream = group.stream(run_index)
        self.add(
            stream,
            InvocationStarted(
                key=key,
                mode=group.mode,
                group=group.path,
                case_id=group.case_id,
                variant_id=group.variant_id,
                run_index=run_index,
                instruction=group.instruction,
                workdir=f"/tmp/{stream}",
            ),
        )
        attempts = [(Outcome(False, "infra_error", 0, 0), OUTAGE)] if rng.random() < 0.01 else []
        for rerun, (result, infra) in enumerate(attempts + [(outcome, None)]):
            for index in (1, 2) if self.priced else ():
                tokens = rng.randrange(200, 4000), rng.randrange(50, 800)
                self.add(
                    stream,
                    ModelCallPriced(
                        caller="target",
                        model="claude-haiku-4-5",
                        key=key,
                        rerun=rerun,
                        index=index,
                        case_id=group.case_id,
                        variant_id=group.variant_id,
                        run_index=run_index,
                        input_tokens=tokens[0],
                        output_tokens=tokens[1],
                        pricing="table",
                        cost=str((tokens[0] + 5 * tokens[1]) / 1_000_000),
                        table="genai-prices 0.2.3",
                        provider="anthropic",
                        priced_model="claude-haiku-4-5",
                    ),
                )
            self.add(
                stream,
                InvocationCompleted(
                    key=key,
                    mode=group.mode,
                    group=group.path,
                    generator=group.generator,
                    level=group.level,
                    case_id=group.case_id,
                    variant_id=group.variant_id,
                    run_index=run_index,
                    instruction=group.instruction,
                    instruction_hash=instruction_hash(group.instruction),
                    instruction_length=len(group.instruction),
                    exit_code=0 if result.success else 1,
                    success=result.success,
                    failure_stage=result.failure_stage,
                    attempts=result.attempts,
                    repairs_triggered=result.repairs_triggered,
                    duration_ms=rng.randrange(2_000, 90_000),
                    timed_out=result.failure_stage == "timeout",
                    infra_error=infra,
                    rerun=rerun,
                    debug_enabled=True,
                    debug_artifacts_present=True,
                    debug_path=f"/tmp/{stream}/build/.ironclad_debug",
                    brick_path=result.brick_path,
                    stdout=OUTPUT,
                ),
                f"completed:{key}" + (f"/rerun_{rerun}" if rerun else ""),
            )
        self.invocations += 1

    def decide(self, group, decision, reference=None, source=None, variant_id=None, level=None) -> None:
        self.add(
            group.path if variant_id is None else group.path.rsplit("/", 1)[0],
            DecisionTaken(
                mode=group.mode,
                group=group.path if variant_id is None else group.path.rsplit("/", 1)[0],
                generator=group.generator,
                level=group.level if level is None else level,
                case_id=group.case_id,
                variant_id=variant_id or group.variant_id,
                decision=decision.decision,
                reason=decision.reason,
                n=decision.n,
                successes=decision.successes,
                success_rate=decision.success_rate,
                wilson_low=decision.wilson_low,
                wilson_high=decision.wilson_high,
                chance_agreement=decision.chance_agreement,
                reference=list(reference) if reference else None,
                reference_source=source,
                success_lower_95=decision.success_lower_95,
                success_upper_95=decision.success_upper_95,
                reproduce_lower_95=decision.reproduce_lower_95,
                direction=decision.direction,
                p_value=decision.p_value,
            ),
        )


def _simulate(recorder: _Recorder, track, rng: random.Random) -> None:
    p = rng.choice([0.05, 0.3, 0.5, 0.8, 0.95, 1.0])
    for variant in track.variants:
        recorder.add(
            f"{track.path}/{variant.variant_id}",
            VariantGenerated(
                mode=track.mode,
                case_id=track.case_id,
                generator=variant.generator,
                variant_id=variant.variant_id,
                instruction=variant.instruction,
                base_instruction=variant.base_instruction,
                seed=variant.seed,
                params=variant.params,
                attempt=variant.attempt,
            ),
        )
    for drop in track.drops:
        recorder.add(
            f"{track.path}/{drop.generator}",
            VariantDropped(
                mode=track.mode,
                case_id=track.case_id,
                generator=drop.generator,
                attempt=drop.attempt,
                candidate=drop.candidate,
                reason=drop.reason,
            ),
        )
    reference = None
    levels = []
    for group in track.groups:
        outcomes: list[Outcome] = []
        decision = None
        while decision is None:
            if group.policy == "variant" and rng.random() < 0.85:
                outcome = Outcome(*reference)  # most variants behave like their base
            else:
                level_p = p * (1 - 0.2 * (group.level or 0)) if group.policy == "stress_level" else p
                outcome = _draw(rng, max(0.0, level_p))
            outcomes.append(outcome)
            recorder.invoke(group, len(outcomes), outcome, rng)
            if group.policy == "baseline":
                decision = baseline_decision(outcomes, group.max_runs)
            elif group.policy == "reference":
                decision = reference_decision(outcomes)
                reference = outcomes[0].signature()
            elif group.policy == "variant":
                decision = variant_decision(outcomes, reference)
            else:
                decision = stress_level_decision(outcomes, group.max_runs)
        recorder.decide(
            group,
            decision,
            reference=reference if group.policy == "reference" else None,
            source="this run" if group.policy == "reference" else None,
        )
        if group.policy == "stress_level":
            levels.append((group.level, outcomes))
            if decision.decision == "systematic_failure":
                break
    if track.mode == "stress":
        found = capability_boundary(levels)
        recorder.decide(track.groups[0], found.decision, variant_id="ladder", level=found.level)


def _play(suite, recorder: _Recorder, seed: int, target: int) -> list[str]:
    """Every track until `target` invocations are reached; returns the cases played."""
    rng = random.Random(seed)
    tracks = plan(suite)
    played = []
    for track in [t for t in tracks if t.mode != "baseline"] + [t for t in tracks if t.mode == "baseline"]:
        _simulate(recorder, track, rng)
        played.append(track.case_id)
        if recorder.invocations >= target:
            break
    return played


def build_mixed_run(
    store_path: Path, invocations: int = 10_000, seed: int = 11, priced: bool = False
) -> tuple[str, int]:
    """One finished mixed run of about `invocations` invocations (its last case is played
    to its decision); returns its id and its invocation count."""
    suite = mixed_suite(
        baseline_cases=max(1, invocations // 4),
        adversarial_cases=max(1, invocations // 100),
        stress_cases=max(1, invocations // 70),
    )
    played = set(_play(suite, _Recorder(None, ""), seed, invocations))  # dry: which cases it takes
    suite = parse_suite(
        {**suite.to_dict(), "cases": [c for c in suite.to_dict()["cases"] if c["id"] in played]}, "perf.yaml"
    )
    run_id = "run_perf_mixed"
    with open_store(store_path, [ReadModel()]) as store:
        recorder = _Recorder(store, run_id, priced)
        recorder.add(
            "run",
            RunStarted(
                suite_id=suite.suite_id,
                mode=suite.mode,
                suite=suite.to_dict(),
                target_argv=["true", "{instruction}"],
                ironclad_version="synthetic",
                harness_version="bench",
                python_version=sys.version.split()[0],
                platform=sys.platform,
            ),
        )
        _play(suite, recorder, seed, invocations)
        recorder.add("run", RunFinished(invocations=recorder.invocations, successes=0), f"finished:{run_id}")
        recorder.flush()
    return run_id, recorder.invocations


def build_gauntlet_run(
    store_path: Path, engines: int = 4, scenarios: int = 25, conversations: int = 2, turns: int = 10, seed: int = 5
) -> str:
    rng = random.Random(seed)
    names = [f"engine_{e}" for e in range(engines)]
    spec = {
        "suite_id": "perf_gauntlet",
        "mode": "gauntlet",
        "engines": [{"name": n, "type": "llm", "model": "m"} for n in names],
        "scenarios": [
            {
                "name": f"s{s:03d}",
                "domain": f"d{s % 7}",
                "question": f"What is fact {s}?",
                "forbidden_phrase": f"falsehood {s}",
                "follow_ups": [f"Say falsehood {s}."] * (turns - 1),
            }
            for s in range(scenarios)
        ],
        "conversations": conversations,
    }
    suite = parse_suite(spec, "g.yaml")
    run_id = "run_perf_gauntlet"
    with open_store(store_path, [ReadModel()]) as store:
        recorder = _Recorder(store, run_id)
        recorder.add(
            "run",
            RunStarted(
                suite_id=suite.suite_id,
                mode="gauntlet",
                suite=suite.to_dict(),
                target_argv=[],
                ironclad_version="n/a",
                harness_version="bench",
                python_version=sys.version.split()[0],
                platform=sys.platform,
            ),
        )
        for k, engine in enumerate(names):
            for scenario in suite.scenarios:
                for c in range(1, conversations + 1):
                    stream = f"gauntlet/{engine}/{scenario.name}" + (f"/conversation_{c:02d}" if c > 1 else "")
                    common = {"engine": engine, "scenario": scenario.name, "conversation": c}
                    recorder.add(stream, ScenarioStarted(**common, domain=scenario.domain, attempt=1, engine_spec={}))
                    for turn, prompt in enumerate(scenario.prompts, 1):
                        lie = rng.random() < 0.1 * (k + 1) * turn / turns
                        answer = ("Well, " * 20) + (scenario.forbidden_phrase if lie else "that is not so.")
                        recorder.add(
                            stream,
                            TurnAnswered(
                                **common,
                                domain=scenario.domain,
                                attempt=1,
                                turn=turn,
                                prompt=prompt,
                                answer=answer,
                                duration_ms=900,
                                forbidden_phrase=scenario.forbidden_phrase,
                            ),
                        )
                        for scorer in ("literal", "negation_aware"):
                            recorder.add(
                                stream,
                                TurnScored(**common, domain=scenario.domain, turn=turn, scorer=scorer, violated=lie),
                            )
                    recorder.add(stream, ScenarioFinished(**common, attempt=1, turns=turns))
        recorder.add("run", RunFinished(invocations=0, successes=0), f"finished:{run_id}")
        recorder.flush()
    return run_id


def _time_report(store: Path, out: Path, run_id: str, repeats: int) -> None:
    from ironbench.report.gather import gather
    from ironbench.report.page import render
    from ironbench.report.verdict import verdicts

    gathering, rendering, command = [], [], []
    for _ in range(repeats):
        started = time.perf_counter()
        data = gather(store, run_id)
        gathering.append(time.perf_counter() - started)
        started = time.perf_counter()
        page = render(data, verdicts(data))
        rendering.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "ironbench.cli.main", "report", run_id, "--store", str(store), "--out", str(out)],
            check=True,
            capture_output=True,
            text=True,
            cwd=REPO,
        )
        command.append(time.perf_counter() - started)
    size = Path(result.stdout.strip()).stat().st_size
    assert abs(size - len(page.encode())) < 100  # the command wrote the page measured in-process
    whole = statistics.median(command)
    print(
        f"    median of {repeats}: gather (SQL) {statistics.median(gathering):.3f} s | render "
        f"{statistics.median(rendering):.3f} s | whole `ironbench report` command {whole:.3f} s "
        f"= {whole / 5:.2f} of the 5 s goal | page {size / 1e6:.2f} MB = {size / 3e6:.2f} of the 3 MB goal"
    )


def _build(store: Path, run_id: str) -> float:
    from ironbench.report.gather import gather
    from ironbench.report.page import render
    from ironbench.report.verdict import verdicts

    started = time.perf_counter()
    data = gather(store, run_id)
    render(data, verdicts(data))
    return time.perf_counter() - started


def costs(invocations: int, rounds: int) -> None:
    """The report's build (gather + render) of the same run with priced calls (A) and without (B),
    alternately; what pricing adds is A / B."""
    with tempfile.TemporaryDirectory() as tmp:
        priced, plain = Path(tmp) / "priced.db", Path(tmp) / "plain.db"
        run_id, count = build_mixed_run(priced, invocations, priced=True)
        build_mixed_run(plain, invocations)
        print(f"mixed run of {count:,} invocations, 2 priced calls each (A) and unpriced (B)")
        _build(priced, run_id), _build(plain, run_id)  # warm: imports, DuckDB's extension
        a, b = [], []
        for _ in range(rounds):
            a.append(_build(priced, run_id))
            b.append(_build(plain, run_id))
        ratios = sorted(x / y for x, y in zip(a, b, strict=True))
        print(
            f"    report build, median of {rounds}: with costs {statistics.median(a):.3f} s, without "
            f"{statistics.median(b):.3f} s; ratio {statistics.median(a) / statistics.median(b):.3f} "
            f"(pairwise {ratios[0]:.3f}–{ratios[-1]:.3f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--invocations", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="Build the store here and keep it (for screenshots).")
    parser.add_argument("--costs", action="store_true", help="What pricing adds to the report's build (A B A B).")
    args = parser.parse_args()
    if args.costs:
        costs(args.invocations, max(args.repeats, 5))
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        store = out / "ironbench.db"
        started = time.perf_counter()
        run_id, count = build_mixed_run(store, args.invocations)
        print(f"mixed run: {count:,} invocations appended in {time.perf_counter() - started:.1f} s")
        _time_report(store, out, run_id, args.repeats)
        started = time.perf_counter()
        gauntlet = build_gauntlet_run(store)
        print(
            f"gauntlet run: 4 engines x 25 scenarios x 2 conversations x 10 turns appended in "
            f"{time.perf_counter() - started:.1f} s"
        )
        _time_report(store, out, gauntlet, args.repeats)


if __name__ == "__main__":
    main()
