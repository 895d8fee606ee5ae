"""Variant generators: deterministic noise, stress ladders (and, by plugin, AI rewrites)."""

from ironbench.generators import ai, deterministic, shuffle, stress, synonyms  # noqa: F401
from ironbench.generators.registry import (  # noqa: F401  (registers the built-ins)
    get_generator,
    register_generator,
    registered_generators,
)
