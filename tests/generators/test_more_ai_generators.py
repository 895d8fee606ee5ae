"""The five AI generators in use beyond the spec, and `ai_rewrite_style`: registered like the
spec's four, prompted with the spec's sentence, and held by the same guard plus their own rule."""

import pytest

from ironbench.core.events import AiOutputRejected, VariantGenerated
from ironbench.generators import get_generator, registered_generators
from ironbench.generators.ai import PRESERVE
from ironbench.generators.ai_validation import validate_rewrite
from ironbench.run.runner import start_run
from ironbench.store.eventstore import open_store
from ironbench.suite.models import parse_suite
from ironbench.suite.schema import suite_schema
from tests.conftest import SCRIPTED_TARGET

SQUARE = "Write a Python function that returns the square of a number."
DATES = "Write a Python function that parses dates in common formats where appropriate."
MORE = (
    "ai_constraint_surface_without_adding",
    "ai_minimalism_pass",
    "ai_elaboration_pass",
    "ai_adversarial_style_mismatch",
    "ai_ambiguity_preserving_rewrite",
)
# generator -> (base, a rewrite it keeps, a rewrite its own rule refuses, what the refusal says)
CASES = {
    "ai_constraint_surface_without_adding": (
        SQUARE,
        "Write a Python function that takes a number and returns the square of that number.",
        "Write a Python function that returns the square of a number and caches every result.",
        "adds_requirement: caches",
    ),
    "ai_minimalism_pass": (
        SQUARE,
        "Write a Python function returning the square of a number.",
        "Please write a Python function that takes a number and returns the square of that number.",
        "not minimal",
    ),
    "ai_elaboration_pass": (
        SQUARE,
        "Please write a Python function that takes a number and returns the square of that number.",
        "Write a Python function squaring a number.",
        "not an elaboration",
    ),
    "ai_adversarial_style_mismatch": (
        SQUARE,
        "hey so can u write a python function that returns the square of a number thx",
        "hey so can u write a python function that returns the square of a number and saves it to a file",
        "adds_requirement",
    ),
    "ai_ambiguity_preserving_rewrite": (
        DATES,
        "Create a Python function that parses dates in usual formats as needed.",
        "Create a Python function that parses dates written as year, month and day.",
        "ambiguity removed",
    ),
}


@pytest.mark.parametrize("name", MORE)
def test_registered_prompted_and_guarded_like_the_specs_four(name):
    generator = get_generator(name)
    assert generator is not None and generator.kind == "ai" and name in registered_generators("variant")
    base, kept, refused, why = CASES[name]
    prompt, metadata = generator.function(base, generator.params(), 1)
    assert PRESERVE in prompt and prompt.rstrip().endswith(f"Instruction: {base}\nRewrite:") and metadata["openings"]
    assert validate_rewrite(base, kept, generator.rules) == []
    assert any(why in reason for reason in validate_rewrite(base, refused, generator.rules))
    # the guard every AI rewrite answers to: harness words and new deliverables are refused
    assert any("forbidden token" in r for r in validate_rewrite(base, f"{kept} Add tests.", generator.rules))
    names = suite_schema()["$defs"]["VariantEntry"]["properties"]["generator"]["enum"]
    assert name in names and "ai_rewrite_style" in names


def test_an_ai_generator_beyond_the_spec_runs_and_ai_rewrite_style_is_ai_rewrite(paths, script, scripted_model):
    script({"c": ["success"]})
    kept = CASES["ai_minimalism_pass"][1]
    scripted_model.answers = [CASES["ai_minimalism_pass"][2], kept, SQUARE.replace("Write", "Create")]
    suite = parse_suite(
        {
            "suite_id": "ai",
            "category": "adversarial",
            "target": SCRIPTED_TARGET,
            "cases": [
                {
                    "id": "c",
                    "base_instruction": SQUARE,
                    "variants": [
                        {
                            "generator": "ai_minimalism_pass",
                            "params": {"count": 1, "model": "scripted-rewriter"},
                            "seed": 1,
                        },
                        {
                            "generator": "ai_rewrite_style",
                            "params": {"count": 1, "model": "scripted-rewriter"},
                            "seed": 2,
                        },
                    ],
                }
            ],
        },
        "ai.yaml",
    )
    run_id = start_run(suite, paths)
    with open_store(paths.store_path) as store:
        recorded = [e.event for e in store.read(run_id)]
    rejected = [e for e in recorded if isinstance(e, AiOutputRejected)]
    assert [r.generator for r in rejected] == ["ai_minimalism_pass"] and "not minimal" in rejected[0].failure_reasons[0]
    generated = {e.variant_id: e.instruction for e in recorded if isinstance(e, VariantGenerated)}
    assert generated == {
        "ai_minimalism_pass/variant_0001": kept,
        "ai_rewrite/variant_0001": SQUARE.replace("Write", "Create"),
    }
