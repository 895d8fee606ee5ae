"""Stress ladders: level N is the base instruction plus N cumulative additions."""

import random
from typing import Annotated

from pydantic import Field

from ironbench.generators.deterministic import _body_and_end, phrases
from ironbench.generators.registry import GeneratorParams, register_generator

MAX_LEVELS = 10


class LadderParams(GeneratorParams):
    # An int draws that many additions from the generator's bank (seeded order);
    # a list gives the additions verbatim, one per level.
    additions: (
        Annotated[int, Field(strict=True, ge=1, le=MAX_LEVELS)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_LEVELS)]
    ) = 3


def _ladder(bank: str):
    def build(base: str, params: LadderParams, rng: random.Random) -> list[str]:
        if isinstance(params.additions, list):
            additions = list(params.additions)
        else:
            pool = list(phrases(bank))
            rng.shuffle(pool)
            additions = pool[: params.additions]
        body, end = _body_and_end(base)
        levels, text = [], f"{body}{end}"
        for addition in additions:
            text = f"{text} {addition}"
            levels.append(text)
        return levels

    return build


for _name, _description in [
    ("add_scope_detail", "each level adds one more piece of scope detail"),
    ("add_constraints_tension", "each level adds one more constraint in tension with the others"),
    ("add_ambiguity", "each level adds one more ambiguous requirement"),
    ("add_multi_objective", "each level adds one more objective"),
]:
    register_generator(_name, "ladder", LadderParams, _description)(_ladder(_name))
