"""Stress ladders: each level adds its own generator's additions to the level below.

Levels are cumulative: level k is level k-1 plus what level k adds, so a ladder of
scope detail, then tension, then ambiguity, then more deliverables climbs as the
spec draws it. An addition that reads as a clause ("where appropriate": it starts in
lower case) joins the sentence before its final mark; any other is a sentence of its own.
"""

import random
from typing import Annotated

from pydantic import Field

from ironbench.generators.deterministic import _body_and_end, phrases
from ironbench.generators.registry import GeneratorParams, register_generator

MAX_LEVELS = 10


class LadderParams(GeneratorParams):
    # A list: these additions, verbatim, in order. A number: that many drawn from the
    # generator's bank in a seeded order, skipping any the level below already holds, so
    # levels of one generator and seed draw one after another and never repeat.
    additions: (
        Annotated[int, Field(strict=True, ge=1, le=MAX_LEVELS)]
        | Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=MAX_LEVELS)]
    ) = 1


def attach(text: str, addition: str) -> str:
    """`text` with one addition: a clause before its final mark, else a sentence after it."""
    body, end = _body_and_end(text)
    addition = addition.strip()
    if addition[:1].islower():
        return f"{body}, {addition.rstrip('.!?,;: ')}{end}"
    return f"{body}{end} {addition}"


def _level(bank: str):
    def build(below: str, base: str, params: LadderParams, rng: random.Random) -> str:
        if isinstance(params.additions, list):
            additions = list(params.additions)
        else:
            pool = list(phrases(bank))
            rng.shuffle(pool)
            additions = [p for p in pool if p not in below][: params.additions]
        text = below
        for addition in additions:
            text = attach(text, addition)
        return text

    return build


for _name, _description in [
    ("add_scope_detail", "a level that adds scope detail (clarifications, same task)"),
    ("add_constraints_tension", "a level that adds soft preferences in tension with each other"),
    ("add_ambiguity", "a level that adds judgment calls the model must interpret"),
    ("add_multi_objective", "a level that adds deliverables"),
]:
    register_generator(_name, "ladder", LadderParams, _description)(_level(_name))
