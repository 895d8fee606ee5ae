"""Variant generators: deterministic noise, stress ladders (and, by plugin, AI rewrites)."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.generators import ai, deterministic, stress  # noqa: F401
from ironbench.generators.registry import (  # noqa: F401  (registers the built-ins)
    get_generator,
    register_generator,
    registered_generators,
)

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.generators.ai import AiParams as AiParams
    from ironbench.generators.ai import requirement_terms as requirement_terms
    from ironbench.generators.ai_judge import JUDGE_OPTIONS as JUDGE_OPTIONS
    from ironbench.generators.ai_judge import JUDGE_SYSTEM as JUDGE_SYSTEM
    from ironbench.generators.ai_judge import JudgeVerdict as JudgeVerdict
    from ironbench.generators.ai_judge import judge_questions as judge_questions
    from ironbench.generators.ai_validation import normalise_output as normalise_output
    from ironbench.generators.ai_validation import one_sentence_grammar as one_sentence_grammar
    from ironbench.generators.ai_validation import validate_rewrite as validate_rewrite
    from ironbench.generators.registry import Generator as Generator
    from ironbench.generators.registry import GeneratorParams as GeneratorParams
    from ironbench.generators.registry import canonical_name as canonical_name
    from ironbench.generators.registry import generator_aliases as generator_aliases
    from ironbench.generators.registry import seeded_rng as seeded_rng

_EXPORTS = {
    "AiParams": "ai",
    "Generator": "registry",
    "GeneratorParams": "registry",
    "JUDGE_OPTIONS": "ai_judge",
    "JUDGE_SYSTEM": "ai_judge",
    "JudgeVerdict": "ai_judge",
    "canonical_name": "registry",
    "generator_aliases": "registry",
    "judge_questions": "ai_judge",
    "normalise_output": "ai_validation",
    "one_sentence_grammar": "ai_validation",
    "requirement_terms": "ai",
    "seeded_rng": "registry",
    "validate_rewrite": "ai_validation",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ = list(_EXPORTS)
