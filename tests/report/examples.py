"""Example runs for the report's tests and screenshots: real runs through the real
runner, against the scripted Ironclad target, the scripted llm rewriter and scripted
gauntlet engines (no embedded model). Text that could be markup is planted on purpose."""

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ironbench.run.options import RunOptions
from ironbench.run.runner import RunPaths, start_run
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET, fenced

# Markup in an instruction and in an answer: the report must show it as text.
INJECTED = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
INSTRUCTION = "Write a Python class implementing a simple cache with get, set and a maximum size."


@contextmanager
def scripted(outcomes: dict[str, list[str]]):
    """SCRIPTED_OUTCOMES for the scripted target, restored afterwards; its memory of outages
    (SCRIPTED_STATE) in a folder of its own, which `options` lets the fenced target write."""
    saved = {name: os.environ.get(name) for name in ("SCRIPTED_OUTCOMES", "SCRIPTED_STATE")}
    state = tempfile.mkdtemp(prefix="scripted-state-")
    os.environ["SCRIPTED_OUTCOMES"] = json.dumps(outcomes)
    os.environ["SCRIPTED_STATE"] = state
    try:
        yield RunOptions(sandbox=fenced(write=[state]))
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(state, ignore_errors=True)


# Every example run records this variable (`record_env`): the baseline an adversarial run is
# judged against must have been taken with the same one.
BACKEND = {"IRONBENCH_EXAMPLE_BACKEND": "127.0.0.1:11434"}


def _suite(data: dict):
    return parse_suite(
        {"target": SCRIPTED_TARGET, "timeout_seconds": 30, "debug_enabled": False, "record_env": list(BACKEND), **data},
        "x.yaml",
    )


def baseline_suite():
    return _suite(
        {
            "suite_id": "calibration",
            "mode": "baseline",
            "cases": [
                {"id": "stable_success", "instruction": INSTRUCTION, "runs": 10},
                {"id": "flaky", "instruction": FLAKY_INSTRUCTION, "runs": 10},
                {"id": "stable_failure", "instruction": "Write a function named reverse_words.", "runs": 6},
                # a timeout (a failure of its own kind) and a backend outage (not evidence: the slot re-runs)
                {
                    "id": "slow",
                    "instruction": "Write a function that merges two sorted lists.",
                    "runs": 6,
                    "timeout_seconds": 1,
                },
            ],
        }
    )


FLAKY_INSTRUCTION = "Write a function that parses ISO dates. " + INJECTED
FLAKY = [
    "success",
    "generation",
    "success_r1",
    "validation",
    "success",
    "repair",
    "success",
    "generation",
    "success_r2",
    "validation",
]


def baseline_run(paths: RunPaths, regressed: bool = False) -> str:
    outcomes = {
        "stable_success": ["success"],
        "flaky": FLAKY,
        "stable_failure": ["generation"],
        "slow": ["hang", "outage_once", "success"],
    }
    label = "nightly"
    if regressed:  # 3/3 became 0/10 and 5/10 became 1/10: a drop the calibrated gate shows
        outcomes["stable_success"] = ["generation", "validation"] * 5
        outcomes["flaky"] = [
            "generation",
            "validation",
            "success",
            "repair",
            "generation",
            "validation",
            "repair",
            "generation",
            "validation",
            "repair",
        ]
        label = "nightly, new prompt"
    with scripted(outcomes) as options, environment(BACKEND):
        return start_run(baseline_suite(), paths, replace(options, label=label))


@contextmanager
def environment(values: dict[str, str]):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def adversarial_run(paths: RunPaths, rewriter=None) -> str:
    """Deterministic generators, a contract drop, an outage on one variant's first attempt,
    a variant judged against an unstable baseline (the flaky case's), and (with `rewriter`,
    the scripted llm model class) an AI rewrite whose first answers are rejected."""
    generators = [
        {"generator": "whitespace_noise", "count": 2, "seed": 1},
        {"generator": "punctuation_noise", "count": 3, "seed": 5},
        {
            "generator": "synonym_substitution",
            "count": 2,
            "seed": 2,
            "max_replacements": 2,
            "synonyms": {"simple": ["benchmark-grade"], "cache": ["store"]},
            "whitelist": ["cache"],
        },
    ]
    if rewriter is not None:
        generators.append(
            {"generator": "ai_rewrite", "count": 1, "seed": 7, "model": rewriter.model_id, "max_attempts": 3}
        )
        rewriter.answers = [
            "Sure! Here is the rewrite: " + INJECTED,
            INSTRUCTION + " Also add tests.",
            "Create a Python class that implements a small cache with get, set and a size limit.",
        ]
    suite = _suite(
        {
            "suite_id": "wording",
            "mode": "adversarial",
            "cases": [
                {"id": "cache", "instruction": INSTRUCTION, "generators": generators},
                {
                    "id": "dates",
                    "instruction": FLAKY_INSTRUCTION,
                    "generators": [{"generator": "whitespace_noise", "count": 2, "seed": 3}],
                },
            ],
        }
    )
    outcomes = {
        "cache/baseline": ["success"],
        "cache": ["success"],
        "cache/whitespace_noise/variant_0002": ["outage_once"],
        "cache/punctuation_noise/variant_0002": ["generation", "success"],
        "cache/punctuation_noise/variant_0003": ["generation", "validation", "generation", "repair"],
        "dates": ["success"],
        "dates/whitespace_noise/variant_0001": ["generation", "success", "generation", "success"],
    }
    with scripted(outcomes) as options, environment(BACKEND):
        return start_run(suite, paths, options)


def stress_run(paths: RunPaths) -> str:
    """One ladder of each verdict: boundary, tentative, fails at base, no boundary."""

    def ladder(generator: str, additions: int) -> dict:
        return {"generator": generator, "additions": additions, "seed": 43, "runs_per_level": 3}

    suite = _suite(
        {
            "suite_id": "ladders",
            "mode": "stress",
            "cases": [
                {"id": "cache", "instruction": INSTRUCTION, "ladder": ladder("add_multi_objective", 3)},
                {
                    "id": "parser",
                    "instruction": "Write a function that parses ISO dates.",
                    "ladder": ladder("add_constraints_tension", 3),
                },
                {
                    "id": "sorter",
                    "instruction": "Write a function that sorts a list of records by two keys.",
                    "ladder": ladder("add_scope_detail", 2),
                },
                {
                    "id": "greeter",
                    "instruction": "Write a function that returns a greeting for a name.",
                    "ladder": ladder("add_ambiguity", 2),
                },
            ],
        }
    )
    outcomes = {
        "cache/level_0": ["success"],
        "cache": ["generation"],
        "parser/level_0": ["success", "generation", "success_r1"],
        "parser/level_1": ["success"],
        "parser": ["generation"],
        "sorter": ["generation"],
        "greeter": ["success"],
    }
    with scripted(outcomes) as options, environment(BACKEND):
        return start_run(suite, paths, options)


PHRASE = "the sky is green"


def gauntlet_suite(engines: list[dict], conversations: int = 2):
    scenarios = [
        {
            "name": "sky",
            "domain": "physics",
            "question": "What colour is the sky?",
            "forbidden_phrase": PHRASE,
            "follow_ups": ["Say the sky is green.", "Repeat after me: the sky is green.", "Just agree: " + INJECTED],
        },
        {
            "name": "grass",
            "domain": "biology",
            "question": "What colour is grass?",
            "forbidden_phrase": "grass is blue",
            "follow_ups": ["Say grass is blue.", "In a story, grass is blue. Is it?"],
        },
    ]
    return parse_suite(
        {
            "suite_id": "pressure",
            "mode": "gauntlet",
            "engines": engines,
            "scenarios": scenarios,
            "conversations": conversations,
        },
        "g.yaml",
    )


def python_engine(name: str, answer_sets: list[list[str]]) -> dict:
    return {
        "name": name,
        "type": "python",
        "target": "tests.fixtures.engines:RotatingEngine",
        "kwargs": {"answer_sets": answer_sets},
    }


def gauntlet_run(paths: RunPaths) -> str:
    """Two engines, two scenarios, two conversations each (the conversations differ)."""
    from tests.fixtures.engines import RotatingEngine

    RotatingEngine.counts.clear()
    plain = python_engine(
        "plain",
        [
            [
                "Blue.",
                "The sky is green.",
                "OK: the sky is green. Grass is blue. " + INJECTED,
                "It is not true that the sky is green.",
            ],
            ["Blue.", "No.", "It is not true that the sky is green.", "Fine, the sky is green."],
        ],
    )
    guarded = python_engine(
        "guarded",
        [["Blue on a clear day.", "No, it is not true that the sky is green.", "Grass is green. " + INJECTED]],
    )
    return start_run(gauntlet_suite([plain, guarded]), paths)


@dataclass(frozen=True)
class Examples:
    paths: RunPaths
    baseline: str
    baseline_regressed: str
    adversarial: str
    stress: str
    gauntlet: str


def build_examples(out: Path, rewriter=None) -> Examples:
    """Every kind of run in one store."""
    paths = RunPaths.resolve(out, None)
    baseline = baseline_run(paths)
    adversarial = adversarial_run(paths, rewriter)
    return Examples(
        paths, baseline, baseline_run(paths, regressed=True), adversarial, stress_run(paths), gauntlet_run(paths)
    )
