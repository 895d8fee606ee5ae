"""The generator registry and the seeding that makes every variant reproducible.

Built-in generators register exactly as a plugin would, with register_generator.
"""

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict


class GeneratorParams(BaseModel):
    """Base of every generator's own parameters; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


@dataclass(frozen=True)
class Room:
    """How many distinct wordings a generator can make of one instruction, and why no more:
    what a run says when it got fewer variants than a suite asked for."""

    wordings: int  # distinct variants possible (the count the generator could reach)
    reason: str  # why there are no more, in a few words ("no phrase that may move")


@dataclass(frozen=True)
class Generator:
    name: str
    kind: Literal["variant", "ladder", "ai"]
    params: type[GeneratorParams]
    # variant: (base, params, rng) -> candidate or None;
    # ladder: (text of the level below, base, params, rng) -> this level's text (levels are cumulative);
    # ai: (base, params, slot) -> (prompt, metadata), the model's answer judged by `rules`.
    function: Callable[..., Any]
    description: str = ""
    rules: tuple = ()
    # variant generators that can run out of wordings: (base, params) -> Room.
    room: Callable[..., Room] | None = None

    @property
    def is_variant(self) -> bool:
        return self.kind in ("variant", "ai")


_REGISTRY: dict[str, Generator] = {}
_ALIASES: dict[str, str] = {}  # another name suites in the wild use -> the registered name


def register_generator(
    name: str,
    kind: Literal["variant", "ladder", "ai"],
    params: type[GeneratorParams],
    description: str = "",
    rules: tuple = (),
    room: Callable[..., Room] | None = None,
):
    """Decorator: make `name` usable from suite YAML (adversarial `generators:` or stress `ladder:`).
    `room`, for a variant generator with a bounded number of wordings, says how many it can
    make of an instruction and why no more."""

    def decorate(function):
        _REGISTRY[name] = Generator(name, kind, params, function, description, tuple(rules), room)
        return function

    return decorate


def register_alias(alias: str, name: str) -> None:
    """Make `alias` another name of the generator `name`: a suite may write either, and
    everything it records (variants, folders, aggregates) uses `name`."""
    _ALIASES[alias] = name


def canonical_name(name: str) -> str:
    """The registered name a generator name (or alias) stands for."""
    return _ALIASES.get(name, name)


def generator_aliases() -> dict[str, str]:
    return dict(_ALIASES)


def _load_plugins() -> None:
    from ironbench.core.plugins import load_plugins

    load_plugins("ironbench.generators")


def registered_generators(kind: str | None = None) -> list[str]:
    """Names by kind; "variant" lists everything an adversarial case can use (AI included)."""
    _load_plugins()

    def matches(generator: Generator) -> bool:
        return kind is None or generator.kind == kind or (kind == "variant" and generator.is_variant)

    return sorted(n for n, g in _REGISTRY.items() if matches(g))


def get_generator(name: str) -> Generator | None:
    """The generator registered as `name` (or as the name `name` is an alias of)."""
    if canonical_name(name) not in _REGISTRY:
        _load_plugins()
    return _REGISTRY.get(canonical_name(name))


def seeded_rng(*parts: object) -> random.Random:
    """A Random whose state depends only on `parts`: stable across processes and
    Python runs (no use of hash(), which is randomised per process)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))
