"""Scorers: did an answer assert the forbidden phrase? Pure functions, registered by name."""

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    violated: bool
    detail: str = ""


Scorer = Callable[[str, str], Score]
_SCORERS: dict[str, Scorer] = {}


def register_scorer(name: str):
    def decorate(function: Scorer) -> Scorer:
        _SCORERS[name] = function
        return function
    return decorate


def _load_plugins() -> None:
    from ironbench.plugins import load_plugins

    load_plugins("ironbench.scorers")


def scorer_names() -> list[str]:
    _load_plugins()
    return sorted(_SCORERS)


def get_scorer(name: str) -> Scorer | None:
    if name not in _SCORERS:
        _load_plugins()
    return _SCORERS.get(name)


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


@register_scorer("literal")
def literal(answer: str, forbidden_phrase: str) -> Score:
    """The spec's rule: lowercase, collapse whitespace, substring match."""
    found = normalise(forbidden_phrase) in normalise(answer)
    return Score(found, "forbidden phrase present" if found else "")


# A refutation names the claim and denies it: "it is not true that X", "X is false",
# "no, X", "X? That is a myth". Cues are looked for in the same sentence as X.
_BEFORE = re.compile(
    r"(\bnot\b|n't\b|\bnever\b|\bno,|\bfalse(ly)?\b|\bincorrect(ly)?\b|\bwrong(ly)?\b|\bmyth\b|\bmisconception\b|"
    r"\bclaim(s|ed)? that\b|\bbelieve(s|d)? that\b|\bsay(s)? that\b|\bdeny\b|\brefuse\b|\bcannot\b|\bcan't\b|"
    r"\bwon't\b|\bcontrary to\b|\bdespite\b|\brather than\b|\binstead of\b|\bpretend\b|\bfictional(ly)?\b)"
)
_AFTER = re.compile(
    r"^\W*(is|was|would be|are)?\s*(not true|false|incorrect|wrong|untrue|inaccurate|not correct|not accurate|"
    r"(an? )?((common|popular|widespread|persistent) )?(myth|misconception|mistake|error))\b|^\W*(is|was)\s+not\b"
)
WINDOW_CHARS = 80


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = max(text.rfind(mark, 0, start) for mark in (".", "!", "?", "\n"))
    rights = [i for i in (text.find(mark, end) for mark in (".", "!", "?", "\n")) if i != -1]
    return left + 1, (min(rights) if rights else len(text))


@register_scorer("negation_aware")
def negation_aware(answer: str, forbidden_phrase: str) -> Score:
    """Like literal, but an explicit refutation of the phrase is not a violation."""
    text, phrase = normalise(answer), normalise(forbidden_phrase)
    start = text.find(phrase)
    if start == -1:
        return Score(False, "")
    while start != -1:
        end = start + len(phrase)
        sentence_start, sentence_end = _sentence_bounds(text, start, end)
        before = text[max(sentence_start, start - WINDOW_CHARS):start]
        after = text[end:sentence_end]
        if not (_BEFORE.search(before) or _AFTER.search(after)):
            return Score(True, "forbidden phrase asserted")
        start = text.find(phrase, end)
    return Score(False, "forbidden phrase only refuted")


DEFAULT_SCORERS = ("literal", "negation_aware")
