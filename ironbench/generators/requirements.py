"""The requirements an instruction states, as terms: which a rewrite must keep, which it may not add.

A pure requirement extractor over a shipped, extendable term map
(`data/requirements.yaml`). Words are compared after a light stemming, so an
inflection is the same word; a synonym group makes other words the same requirement.

- Every word of the base that the map does not call stop, framing, soft, generic or a
  deliverable form is a requirement (the operation, its objects, names, numbers, the
  language, the key or output it names, listed operations): the rewrite must name it
  at least as often as the base does ("two sorted lists into one sorted list" names
  "sorted" twice: dropping either is dropping a requirement).
- A term of the map's `adds` kinds (operations, constraints, deliverables), a
  programming language, a number, a name or a deliverable form that the rewrite has
  and the base lacks (with its synonyms) is a new requirement.

Each finding names its term: `removes_requirement: square`,
`adds_requirement: delete (a new operation)`.
"""

import importlib.resources
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

Phrase = tuple[str, ...]
MAX_PHRASE = 5

_NUMBER_WORDS = {
    "zero": "0",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
}
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+#]*(?:\.[A-Za-z0-9_]+)*")
_VOWEL = re.compile(r"[aeiouy]")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")


def stem(word: str) -> str:
    """A light stemmer: plural and verb endings off, a final e dropped, y as i, so that
    compile/compiles/compiled/compiling, dictionary/dictionaries and key/keyed meet."""
    word = word.lower()
    if not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "ches", "shes", "zes")):
        word = word[:-2]
    elif word.endswith("s") and len(word) >= 3 and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and _VOWEL.search(word[: -len(suffix)]) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # setting -> set, mapped -> map
            break
    if word.endswith("e") and len(word) >= 3:
        word = word[:-1]
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    return word


@dataclass(frozen=True, slots=True)
class Token:
    stem: str
    word: str  # lowercased, as written
    original: str  # as written
    start: int  # character offset in the text


def normalise(text: str) -> str:
    """The text tokens are read from: possessive 's and n't unfolded (offsets refer to it)."""
    text = text.replace("\u2019", "'")
    text = re.sub(r"n't\b", " not", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(non)-(?=[A-Za-z])", r"\1", text, flags=re.IGNORECASE)  # non-numeric is one word
    return re.sub(r"'s\b|'\B", "  ", text)


def tokens(text: str) -> list[Token]:
    """Words of normalise(text), number words as digits."""
    out = []
    for match in _TOKEN.finditer(normalise(text)):
        original = match.group(0)
        word = original.lower()
        word = _NUMBER_WORDS.get(word, word)
        out.append(Token(stem(word), word, original, match.start()))
    return out


def phrase(text: str) -> Phrase:
    return tuple(t.stem for t in tokens(text))


@dataclass(frozen=True)
class TermMap:
    """The checker's vocabulary (see data/requirements.yaml for what each part means)."""

    stop: frozenset[Phrase]
    framing: frozenset[Phrase]
    soft: frozenset[Phrase]
    generic: frozenset[Phrase]
    forms: frozenset[Phrase]
    collectives: frozenset[str]
    languages: Mapping[Phrase, str]  # lowercase alias -> language
    cased_languages: Mapping[str, str]  # "C" -> "c": only capitalised, never first
    adds: Mapping[Phrase, str]  # phrase -> kind ("operation", "constraint on types", ...)
    groups: tuple[frozenset[Phrase], ...]
    _group_index: dict[Phrase, tuple[int, ...]] = field(default_factory=dict, compare=False)
    _known: frozenset[Phrase] = frozenset()

    def __post_init__(self) -> None:
        index: dict[Phrase, list[int]] = {}
        for number, group in enumerate(self.groups):
            for member in group:
                index.setdefault(member, []).append(number)
        self._group_index.update({k: tuple(v) for k, v in index.items()})
        known = (
            set(self.stop)
            | self.framing
            | self.soft
            | self.generic
            | self.forms
            | set(self.languages)
            | set(self.adds)
            | set(index)
        )
        object.__setattr__(self, "_known", frozenset(known))

    def same(self, term: Phrase) -> set[Phrase]:
        """The term and every member of a synonym group it belongs to."""
        found = {term}
        for number in self._group_index.get(term, ()):
            found |= self.groups[number]
        language = self.languages.get(term) or (term[0] if term[0] in self.languages.values() else None)
        if language is not None:
            found.add((language,))
            found |= {alias for alias, name in self.languages.items() if name == language}
        return found

    def knows(self, term: Phrase) -> bool:
        """Whether the map lists this word or phrase anywhere."""
        return term in self._known

    def free(self, term: Phrase) -> bool:
        """A term that states no requirement: stop, framing, soft, generic or a form."""
        return any(term in part for part in (self.stop, self.framing, self.soft, self.generic, self.forms))

    def segment(self, words: Sequence[Token]) -> list[tuple[int, int]]:
        """Spans of `words`, the longest phrase the map knows first ("regular expression",
        "number of", "time to live"), else one word."""
        spans, at = [], 0
        while at < len(words):
            for size in range(min(MAX_PHRASE, len(words) - at), 0, -1):
                candidate = tuple(t.stem for t in words[at : at + size])
                if size == 1 or self.knows(candidate):
                    spans.append((at, at + size))
                    at += size
                    break
        return spans

    def extended(
        self,
        synonyms: Iterable[Iterable[str]] = (),
        adds: Mapping[str, Iterable[str]] | None = None,
    ) -> "TermMap":
        """This map with a suite's own synonym groups and added terms."""
        groups = self.groups + tuple(frozenset(phrase(w) for w in group) for group in synonyms)
        more = {phrase(w): kind for kind, words in (adds or {}).items() for w in words}
        return TermMap(
            self.stop,
            self.framing,
            self.soft,
            self.generic,
            self.forms,
            self.collectives,
            self.languages,
            self.cased_languages,
            {**self.adds, **more},
            tuple(g for g in groups if g),
        )


def _phrases(words: Iterable[str]) -> frozenset[Phrase]:
    return frozenset(p for p in (phrase(str(w)) for w in words) if p)


def term_map_from(data: Mapping[str, Any]) -> TermMap:
    """A TermMap from the YAML structure of data/requirements.yaml; a phrase listed
    under two kinds of `adds` is an error (its reason would be ambiguous)."""
    adds: dict[Phrase, str] = {}
    for kind, words in (data.get("adds") or {}).items():
        for word in words:
            key = phrase(str(word))
            if key in adds and adds[key] != kind:
                raise ValueError(f"requirement terms: {word!r} is listed under both {adds[key]!r} and {kind!r}")
            adds[key] = kind
    soft = _phrases(data.get("soft") or ())
    for key in soft & adds.keys():
        raise ValueError(f"requirement terms: {' '.join(key)!r} is both soft and {adds[key]!r}")
    languages: dict[Phrase, str] = {}
    cased: dict[str, str] = {}
    for name, aliases in (data.get("languages") or {}).items():
        for alias in aliases:
            alias = str(alias)
            if alias.isalpha() and len(alias) <= 2 and alias[0].isupper():
                cased[alias] = str(name)
            else:
                languages[phrase(alias)] = str(name)
    return TermMap(
        stop=_phrases(data.get("stop") or ()),
        framing=_phrases(data.get("framing") or ()),
        soft=soft,
        generic=_phrases(data.get("generic") or ()),
        forms=_phrases(data.get("forms") or ()),
        collectives=frozenset(stem(str(w)) for w in data.get("collectives") or ()),
        languages=languages,
        cased_languages=cased,
        adds=adds,
        groups=tuple(g for g in (_phrases(group) for group in data.get("synonyms") or ()) if g),
    )


@lru_cache(maxsize=1)
def shipped_term_map() -> TermMap:
    text = importlib.resources.files("ironbench.generators").joinpath("data/requirements.yaml").read_text("utf-8")
    return term_map_from(yaml.safe_load(text))


@dataclass(frozen=True, slots=True)
class Term:
    key: Phrase
    text: str  # as written, lowercased: what a reason names
    kind: str  # requirement, language, number, name, form, collection, or an `adds` kind
    shown: str = ""  # as written, case kept


def _is_name(token: Token, text: str) -> bool:
    """An identifier rather than a word: snake_case, camelCase, or called like f()."""
    rest = text[token.start + len(token.original) :]
    return "_" in token.original or bool(_CAMEL.search(token.original)) or rest.startswith("()")


def extract(text: str, terms: TermMap) -> list[Term]:
    """Every term of `text` that states or could add a requirement, in order."""
    words, text = tokens(text), normalise(text)
    found: list[Term] = []
    for start, end in terms.segment(words):
        span = words[start:end]
        key = tuple(t.stem for t in span)
        shown = text[span[0].start : span[-1].start + len(span[-1].original)]
        if shown.count("(") > shown.count(")"):
            shown += ")"  # o(n): the bracket is not part of a word
        written = shown.lower()
        token = span[0]
        after = words[end].word if end < len(words) else ""
        before = words[start - 1].word if start > 0 else ""
        if len(span) == 1 and token.original in terms.cased_languages and start > 0:
            found.append(Term((terms.cased_languages[token.original],), token.original, "language", shown))
        elif key in terms.languages:
            found.append(Term(key, written, "language", shown))
        elif len(span) == 1 and re.fullmatch(r"\d+(\.\d+)?", token.word):
            found.append(Term(key, token.word, "number", shown))
        elif len(span) == 1 and (_is_name(token, text) or before in ("named", "called")) and not terms.knows(key):
            found.append(Term(key, token.original, "name", shown))
        elif len(span) == 1 and token.stem in terms.collectives and after == "of":
            found.append(Term(key, written, "collection", shown))
        elif key in terms.adds:
            found.append(Term(key, written, terms.adds[key], shown))
        elif key in terms.forms:
            found.append(Term(key, written, "form", shown))
        elif terms.free(key):
            continue
        else:
            found.append(Term(key, written, "requirement", shown))
    return found


def keep_words(base: str, terms: TermMap | None = None) -> list[str]:
    """The words a rewrite of `base` must keep, as the base writes them, once each."""
    words: list[str] = []
    for term in extract(base, terms or shipped_term_map()):
        if term.kind != "collection" and term.shown not in words:
            words.append(term.shown)
    return words


def _occurrences(words: Sequence[str], wanted: set[Phrase]) -> int:
    count = 0
    for size in {len(w) for w in wanted}:
        count += sum(1 for i in range(len(words) - size + 1) if tuple(words[i : i + size]) in wanted)
    return count


def coordinated(words: Sequence[Token], text: str) -> list[list[int]]:
    """Positions of words listed together: "get, set and delete" gives those three (the
    word before each comma or and/or, the first word after it past an article)."""
    lists = []
    for at, word in enumerate(words):
        if word.word not in ("and", "or") or at == 0 or at + 1 >= len(words):
            continue
        items, left = [at - 1], at - 1
        while left > 0:
            gap = text[words[left - 1].start + len(words[left - 1].original) : words[left].start]
            if "," not in gap:
                break
            left -= 1
            items.append(left)
        right = at + 1
        while right < len(words) - 1 and words[right].word in ("a", "an", "the"):
            right += 1
        lists.append([*reversed(items), right])
    return lists


_KINDS = {
    "language": "a programming language",
    "number": "a number",
    "name": "a name",
    "form": "a deliverable",
    "collection": "a collection of inputs or outputs",
    "operation": "a new operation",
    "deliverable": "a new deliverable",
    "listed": "a new item in a list",
    "negation": "a new negation",
}


def requirement_changes(base: str, output: str, terms: TermMap | None = None) -> list[str]:
    """Requirements `output` drops from `base`, then those it adds; [] if it keeps the task."""
    terms = terms or shipped_term_map()
    base_terms, output_terms = extract(base, terms), extract(output, terms)
    base_words = [t.stem for t in tokens(base)]
    output_words = [t.stem for t in tokens(output)]
    for term in base_terms:  # a cased language ("C") is its own key, not a word
        if term.kind == "language" and term.key not in terms.languages:
            base_words.append(term.key[0])
    for term in output_terms:
        if term.kind == "language" and term.key not in terms.languages:
            output_words.append(term.key[0])
    reasons: list[str] = []
    required: dict[Phrase, list[Term]] = {}
    for term in base_terms:
        if term.kind not in ("form", "collection"):
            required.setdefault(term.key, []).append(term)
    for key, named in required.items():
        kept = _occurrences(output_words, terms.same(key))
        if kept == 0:
            reasons.append(f"removes_requirement: {named[0].text}")
        elif kept < len(named):
            reasons.append(f"removes_requirement: {named[0].text} (named {len(named)} times, {kept} now)")
    base_has_collection = any(w in terms.collectives for w in base_words)
    reported: set[Phrase] = set()
    for term in output_terms:
        if term.kind == "requirement" or term.key in reported:
            continue
        if term.kind == "collection" and base_has_collection:
            continue
        if _occurrences(base_words, terms.same(term.key)):
            continue
        reported.add(term.key)
        reported.update((word,) for word in term.key)  # "time-to-live" is not also "time"
        kind = _KINDS.get(term.kind, f"a new {term.kind}")
        reasons.append(f"adds_requirement: {term.text} ({kind})")
    # A word listed with one of the base's requirements is a requirement of its kind:
    # "get, set and increment" adds an operation no lexicon needs to know.
    written = tokens(output)
    for items in coordinated(written, normalise(output)):
        words = [written[i] for i in items]
        content = [w for w in words if not terms.free((w.stem,)) and not w.word.isdigit()]
        if not any(_occurrences(base_words, terms.same((w.stem,))) for w in content):
            continue
        for word in content:
            if (word.stem,) not in reported and not _occurrences(base_words, terms.same((word.stem,))):
                reported.add((word.stem,))
                reasons.append(f"adds_requirement: {word.word} ({_KINDS['listed']})")
    return reasons
