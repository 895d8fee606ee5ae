"""The spec's six deterministic generators. Each is a pure function of
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


@cache
def synonym_data() -> tuple[dict[str, list[str]], frozenset[str]]:
    data = yaml.safe_load((DATA / "synonyms.yaml").read_text(encoding="utf-8"))
    return data["synonyms"], frozenset(t.lower() for t in data["domain_terms"])


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


# lexical_shuffle -----------------------------------------------------------------


class LexicalShuffle(GeneratorParams):
    max_swaps: Annotated[int, Field(strict=True, ge=1, le=10)] = 1


_COORDINATORS = {"and", "or"}
_PLAIN_WORD = re.compile(r"^[a-z][a-z-]*$")


def swap_sites(words: list[str]) -> list[int]:
    """Indexes i where words[i] and words[i+2] are plain lowercase words joined by a
    coordinator ("get and set", "get, set"): swapping them keeps the sentence sound.
    The first word never moves: it carries the sentence's capital and its verb."""
    sites = []
    for i in range(1, len(words) - 2):
        left, middle, right = words[i], words[i + 1], words[i + 2]
        if middle.lower() in _COORDINATORS and _PLAIN_WORD.match(left) and _PLAIN_WORD.match(right.rstrip(",.")):
            sites.append(i)
    for i in range(1, len(words) - 1):  # "get, set": a comma-joined pair
        if words[i].endswith(",") and _PLAIN_WORD.match(words[i][:-1]) and _PLAIN_WORD.match(words[i + 1]):
            sites.append(-(i + 1))
    return sites


@register_generator(
    "lexical_shuffle",
    "variant",
    LexicalShuffle,
    "swap adjacent coordinated words where safe; same words, different order",
)
def lexical_shuffle(base: str, params: LexicalShuffle, rng: random.Random) -> str | None:
    words = base.split(" ")
    sites = swap_sites(words)
    if not sites:
        return None
    swaps = rng.randint(1, min(params.max_swaps, len(sites)))
    for site in rng.sample(sites, swaps):
        if site >= 0:
            left, right = site, site + 2
            tail = words[right][len(words[right].rstrip(",.")) :]
            words[left], words[right] = words[right].rstrip(",."), words[left] + tail
        else:
            left = -site - 1
            words[left], words[left + 1] = words[left + 1] + ",", words[left][:-1]
    return " ".join(words)


# synonym_substitution ------------------------------------------------------------


class SynonymSubstitution(GeneratorParams):
    max_replacements: Annotated[int, Field(strict=True, ge=1, le=10)] = 2
    synonyms: dict[str, list[str]] = {}  # noqa: RUF012 (pydantic copies field defaults)
    whitelist: list[str] = []  # noqa: RUF012 (pydantic copies field defaults)


_WORD = re.compile(r"[A-Za-z][A-Za-z-]*")


def synonym_map(params: SynonymSubstitution) -> tuple[dict[str, list[str]], frozenset[str]]:
    base_map, domain = synonym_data()
    merged = {k.lower(): list(v) for k, v in base_map.items()}
    for word, options in params.synonyms.items():
        merged.setdefault(word.lower(), []).extend(o for o in options if o not in merged.get(word.lower(), []))
    protected = domain - {w.lower() for w in params.whitelist}
    return merged, protected


@register_generator(
    "synonym_substitution",
    "variant",
    SynonymSubstitution,
    "replace up to max_replacements words from a controlled synonym map; domain terms kept",
)
def synonym_substitution(base: str, params: SynonymSubstitution, rng: random.Random) -> str | None:
    mapping, protected = synonym_map(params)
    candidates = [
        m for m in _WORD.finditer(base) if m.group().lower() in mapping and m.group().lower() not in protected
    ]
    if not candidates:
        return None
    chosen = sorted(
        rng.sample(candidates, rng.randint(1, min(params.max_replacements, len(candidates)))), key=lambda m: m.start()
    )
    out, last = [], 0
    for match in chosen:
        word = match.group()
        replacement = rng.choice(mapping[word.lower()])
        if word[0].isupper():
            replacement = replacement[0].upper() + replacement[1:]
        out += [base[last : match.start()], replacement]
        last = match.end()
    return "".join(out) + base[last:]


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
