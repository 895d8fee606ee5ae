"""The spec's deterministic noise and light-injection generators (lexical_shuffle is in
shuffle.py, synonym_substitution in synonyms.py). Each is a pure function of
(base instruction, params, rng); the rng is seeded from the suite's seed."""

import random
import re
from functools import cache
from importlib import resources
from typing import Annotated

import yaml
from pydantic import Field, model_validator

from ironbench.generators.registry import GeneratorParams, register_generator

DATA = resources.files("ironbench.generators") / "data"
Proportion = Annotated[float, Field(strict=False, ge=0.0, le=1.0)]


@cache
def phrases(bank: str) -> tuple[str, ...]:
    return tuple(yaml.safe_load((DATA / "phrases.yaml").read_text(encoding="utf-8"))[bank])


# whitespace_noise --------------------------------------------------------------


class WhitespaceNoise(GeneratorParams):
    intensity_min: Proportion = 0.02
    intensity_max: Proportion = 0.08

    @model_validator(mode="after")
    def _ordered(self):
        if self.intensity_min > self.intensity_max:
            raise ValueError("intensity_min must not exceed intensity_max")
        return self


_WHITESPACE = re.compile(r"\s+")


@register_generator(
    "whitespace_noise",
    "variant",
    WhitespaceNoise,
    "extra spaces, line breaks and tabs between tokens; tokens and order untouched",
)
def whitespace_noise(base: str, params: WhitespaceNoise, rng: random.Random) -> str | None:
    tokens = base.split()
    if not tokens:
        return None
    intensity = rng.uniform(params.intensity_min, params.intensity_max)
    insertions = max(1, round(intensity * len(base)))
    # Gaps: before the first token, between tokens, after the last. Whitespace goes
    # only into gaps, so no token is ever split or moved.
    gaps = [""] + [" "] * (len(tokens) - 1) + [""]
    for _ in range(insertions):
        gap = rng.randrange(len(gaps))
        gaps[gap] += rng.choice([" ", " ", "  ", "\n", "\t"])
    return "".join(gap + token for gap, token in zip(gaps[:-1], tokens, strict=True)) + gaps[-1]


# punctuation_noise ---------------------------------------------------------------


PunctuationIntensity = Annotated[float, Field(strict=False, ge=0.05, le=0.20)]


class PunctuationNoise(GeneratorParams):
    """Each word's chance of a mark inserted or removed is drawn per variant between
    intensity_min and intensity_max (the spec's 0.05-0.20); `intensity` sets both."""

    intensity_min: PunctuationIntensity = 0.1
    intensity_max: PunctuationIntensity = 0.1
    intensity: Annotated[
        PunctuationIntensity | None, Field(description="shorthand for intensity_min = intensity_max")
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _one_intensity(cls, data):
        if isinstance(data, dict) and data.get("intensity") is not None:
            value = data["intensity"]
            for bound in ("intensity_min", "intensity_max"):
                if bound in data and data[bound] != value:
                    raise ValueError(f"intensity and {bound} disagree: give intensity_min and intensity_max only")
            data = {**data, "intensity_min": value, "intensity_max": value}
        return data

    @model_validator(mode="after")
    def _ordered(self):
        if self.intensity_min > self.intensity_max:
            raise ValueError("intensity_min must not exceed intensity_max")
        return self


PUNCTUATION = ",.:"


def strip_punctuation_words(text: str) -> list[str]:
    """The words of `text` with the punctuation_noise marks removed."""
    return re.sub(f"[{re.escape(PUNCTUATION)}]", "", text).split()


@register_generator(
    "punctuation_noise",
    "variant",
    PunctuationNoise,
    "insert or remove commas, periods and colons at word ends; word order preserved",
)
def punctuation_noise(base: str, params: PunctuationNoise, rng: random.Random) -> str | None:
    parts = re.split(r"(\s+)", base)  # words at even indexes, whitespace at odd
    words = list(range(0, len(parts), 2))
    words = [i for i in words if parts[i]]
    if not words:
        return None
    changed = False
    # One fixed intensity draws nothing, so a suite giving `intensity` keeps its variants.
    intensity = (
        params.intensity_min
        if params.intensity_min == params.intensity_max
        else rng.uniform(params.intensity_min, params.intensity_max)
    )
    for i in words:
        if rng.random() >= intensity:
            continue
        word = parts[i]
        if word[-1] in PUNCTUATION and len(word) > 1:
            parts[i] = word[:-1]
        else:
            parts[i] = word + rng.choice(PUNCTUATION)
        changed = True
    if not changed:
        i = rng.choice(words)
        parts[i] = parts[i] + rng.choice(PUNCTUATION)
    return "".join(parts)


# light injections ----------------------------------------------------------------


class CountOnly(GeneratorParams):
    pass


def _body_and_end(base: str) -> tuple[str, str]:
    stripped = base.rstrip()
    if stripped and stripped[-1] in ".!?":
        return stripped[:-1], stripped[-1]
    return stripped, "."


@register_generator(
    "ambiguity_injection_light",
    "variant",
    CountOnly,
    "add one mild hedge (e.g. 'where appropriate'); no new goals, no scope increase",
)
def ambiguity_injection_light(base: str, params: CountOnly, rng: random.Random) -> str | None:
    body, end = _body_and_end(base)
    return f"{body}, {rng.choice(phrases('ambiguity_injection_light'))}{end}"


@register_generator(
    "constraint_injection_light",
    "variant",
    CountOnly,
    "add one mild constraint (e.g. 'Keep it simple.'); no conflicting goals",
)
def constraint_injection_light(base: str, params: CountOnly, rng: random.Random) -> str | None:
    body, end = _body_and_end(base)
    return f"{body}{end} {rng.choice(phrases('constraint_injection_light'))}"
