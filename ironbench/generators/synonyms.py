"""synonym_substitution: words replaced by close synonyms from a controlled map
(data/synonyms.yaml), each where it is used as the part of speech its entry names and in
the same form ("returns" -> "gives back", "removing" -> "deleting").

Never replaced: code lines, quoted or backticked text, parenthesised groups, identifiers
(snake_case, camelCase, dotted names, words with digits, calls like foo()), numbers,
capitalised words away from the sentence's start, the Python type words, technical terms
and the words of fixed phrases ("greatest common divisor", "each other"). A suite extends
the map with `synonyms:` and lifts a protected word with `whitelist:`.
"""

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated

import yaml
from pydantic import Field

from ironbench.generators.reading import Reading, is_participle, read, third_person
from ironbench.generators.registry import GeneratorParams, Room, register_generator
from ironbench.generators.wording import DATA, Sentence, Token, sentences, word_classes


class SynonymSubstitution(GeneratorParams):
    max_replacements: Annotated[int, Field(strict=True, ge=1, le=10)] = 2
    synonyms: Annotated[
        dict[str, list[str]],
        Field(description="more entries of the map: a word or phrase, matched as written -> its synonyms"),
    ] = {}  # noqa: RUF012 (pydantic copies field defaults)
    whitelist: Annotated[
        list[str], Field(description="technical terms and Python type words that may be replaced after all")
    ] = []  # noqa: RUF012 (pydantic copies field defaults)


# The map -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """What a stretch of words may become, and where it holds."""

    options: tuple[str, ...]
    pos: str  # imperative, verb, noun, word (as written), relative
    form: str = "base"  # base, s, ing (verbs); singular, plural (nouns)
    requires: str = ""  # a word that must follow in the clause ("compile * into")


@dataclass(frozen=True)
class SynonymMap:
    entries: Mapping[tuple[str, ...], tuple[Entry, ...]]  # words as written (lower case) -> entries
    longest: int
    domain_terms: frozenset[str]
    fixed: frozenset[tuple[str, ...]]
    keys: tuple[str, ...] = field(default=())  # every word the map can replace, for messages


def ing_form(verb: str, irregular: Mapping[str, list[str]]) -> str:
    if verb in irregular:
        return irregular[verb][1]
    head, _, rest = verb.partition(" ")
    if head in irregular:
        return irregular[head][1] + (f" {rest}" if rest else "")
    if head.endswith("ie"):
        word = head[:-2] + "ying"
    elif head.endswith("e") and not head.endswith(("ee", "ye", "oe")) and len(head) > 2:
        word = head[:-1] + "ing"
    elif _doubles(head):
        word = head + head[-1] + "ing"
    else:
        word = head + "ing"
    return word + (f" {rest}" if rest else "")


def _doubles(word: str) -> bool:
    """A one-syllable word ending consonant-vowel-consonant doubles its last letter (split ->
    splitting); w, x and y never double."""
    vowels = "aeiou"
    groups = sum(1 for i, c in enumerate(word) if c in vowels and (i == 0 or word[i - 1] not in vowels))
    return (
        groups == 1
        and len(word) >= 3
        and word[-1] not in vowels + "wxy"
        and word[-2] in vowels
        and word[-3] not in vowels
    )


def s_form(verb: str, irregular: Mapping[str, list[str]]) -> str:
    if verb in irregular:
        return irregular[verb][0]
    head, _, rest = verb.partition(" ")
    if head in irregular:
        return irregular[head][0] + (f" {rest}" if rest else "")
    return third_person(head) + (f" {rest}" if rest else "")


def plural(noun: str) -> str:
    head, _, rest = noun.rpartition(" ")
    last = rest or noun
    if last.endswith(("s", "x", "z", "ch", "sh")):
        last += "es"
    elif last.endswith("y") and len(last) > 1 and last[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(text.lower().split())


def build_map(data: Mapping, extra: Mapping[str, list[str]] | None = None) -> SynonymMap:
    irregular: dict[str, list[str]] = {str(k): list(v) for k, v in (data.get("forms") or {}).items()}
    entries: dict[tuple[str, ...], list[Entry]] = {}

    def add(words: str, entry: Entry) -> None:
        key = _phrase(words)
        if key and entry.options and entry not in entries.setdefault(key, []):
            entries[key].append(entry)

    for key, options in (data.get("imperatives") or {}).items():
        add(str(key), Entry(tuple(str(o) for o in options), "imperative"))
    for key, options in (data.get("verbs") or {}).items():
        lemma, _, requires = str(key).partition(" * ")
        for form, make in (("base", lambda v: v), ("s", lambda v: s_form(v, irregular)), ("ing", None)):
            inflect = make if make is not None else (lambda v: ing_form(v, irregular))
            add(
                inflect(lemma),
                Entry(tuple(inflect(str(o)) for o in options), "verb", form, requires.strip()),
            )
    for key, options in (data.get("nouns") or {}).items():
        add(str(key), Entry(tuple(str(o) for o in options), "noun", "singular"))
        add(plural(str(key)), Entry(tuple(plural(str(o)) for o in options), "noun", "plural"))
    for section in ("adjectives", "words"):
        for key, options in (data.get(section) or {}).items():
            add(str(key), Entry(tuple(str(o) for o in options), "word"))
    for key, options in (data.get("relatives") or {}).items():
        add(str(key), Entry(tuple(str(o) for o in options), "relative"))
    for key, options in (extra or {}).items():
        merged = [o for o in options if o.strip()]
        if merged:
            add(key, Entry(tuple(merged), "word"))
    return SynonymMap(
        {k: tuple(v) for k, v in entries.items()},
        max(len(k) for k in entries) if entries else 1,
        frozenset(str(w).lower() for w in data.get("domain_terms") or ()),
        frozenset(_phrase(str(p)) for p in data.get("fixed") or ()),
        tuple(sorted(" ".join(k) for k in entries)),
    )


@cache
def map_data() -> dict:
    return yaml.safe_load((DATA / "synonyms.yaml").read_text(encoding="utf-8"))


@cache
def shipped_map() -> SynonymMap:
    return build_map(map_data())


def synonym_map(params: SynonymSubstitution) -> SynonymMap:
    """The shipped map, with the suite's own entries added."""
    if not params.synonyms:
        return shipped_map()
    return build_map(map_data(), {k.lower(): v for k, v in params.synonyms.items()})


# Where a word may be replaced -----------------------------------------------------------


@dataclass(frozen=True)
class Site:
    """Tokens [start, end) of sentence `sentence`, and what they may become."""

    sentence: int
    start: int
    end: int
    options: tuple[str, ...]


_MODALS = frozenset({"to", "can", "could", "should", "must", "will", "would", "may", "might", "shall", "please"})


def _protected(tokens: tuple[Token, ...], synonyms: SynonymMap, whitelist: frozenset[str]) -> list[bool]:
    """Per token: may not be replaced (see the module's docstring)."""
    classes = word_classes()
    protected = []
    for index, token in enumerate(tokens):
        w = token.lower
        protected.append(
            token.kind != "word"
            or (index > 0 and token.text[:1].isupper())
            or (token.text.isupper() and len(token.text) > 1)
            or (w in classes.python_words and w not in whitelist)
            or (w in synonyms.domain_terms and w not in whitelist)
        )
    words = [t.lower for t in tokens]
    for phrase in synonyms.fixed:
        size = len(phrase)
        for start in range(len(words) - size + 1):
            if tuple(words[start : start + size]) == phrase:
                for index in range(start, start + size):
                    protected[index] = True
    return protected


def _verb_positions(sentence: Sentence, reading: Reading) -> frozenset[int]:
    """Where a verb stands: the imperative, each clause's verb, a verb after "to" or a modal."""
    positions = {s.verb for s in reading.segments if s.verb is not None}
    if reading.main_verb is not None:
        positions.add(reading.main_verb)
    tokens = sentence.tokens
    for index in range(1, len(tokens)):
        if tokens[index - 1].lower in _MODALS and tokens[index].is_word:
            positions.add(index)
    return frozenset(positions)


def _relative_starts(reading: Reading) -> frozenset[int]:
    """Where "that" or "which" opens a restrictive relative clause (not after a comma)."""
    return frozenset(
        s.start
        for s in reading.segments
        if s.kind == "relative" and s.start > 0 and reading.body[s.start - 1].text != ","
    )


def _holds(
    entry: Entry,
    tokens: tuple[Token, ...],
    start: int,
    end: int,
    verbs: frozenset[int],
    relatives: frozenset[int],
    imperative: int | None,
) -> bool:
    """Whether the entry's part of speech and condition hold for tokens [start, end)."""
    determiners = word_classes().determiners
    before = tokens[start - 1].lower if start > 0 else ""
    if entry.pos == "verb":
        if entry.form == "ing":
            ok = before not in determiners and is_participle(tokens[start])
        else:
            ok = start in verbs
        if ok and entry.requires:
            ahead = [t.lower for t in tokens[end : end + 10]]
            stop = next((i for i, w in enumerate(ahead) if w in {",", ";", ".", "that", "which"}), len(ahead))
            ok = entry.requires in ahead[:stop]
        return ok
    if entry.pos == "noun":
        return start not in verbs and before not in _MODALS
    if entry.pos == "relative":
        return start in relatives
    if entry.pos == "imperative":
        return start == imperative
    return True


# A replacement never repeats a word beside it ("Count the count of ..."); these may repeat.
_SMALL_WORDS = frozenset({"a", "an", "the", "of", "to", "in", "on", "by", "with", "than", "as", "no", "not"})
_PARTICLES = frozenset({"back", "out", "up", "over", "off", "down", "away"})


def _split_particle(replacement: str, following: str) -> bool:
    """Whether a phrasal verb would stand before a pronoun it must go around ("gives back
    them" is not English: "gives them back" would move a word)."""
    last = replacement.rsplit(" ", 1)[-1].lower()
    return " " in replacement and last in _PARTICLES and following in word_classes().pronouns


def sites(instruction: str, params: SynonymSubstitution) -> list[Site]:
    """Every stretch of the instruction's prose the map may replace, in order."""
    synonyms = synonym_map(params)
    whitelist = frozenset(w.lower() for w in params.whitelist)
    found: list[Site] = []
    for number, sentence in enumerate(sentences(instruction)):
        tokens = sentence.tokens
        protected = _protected(tokens, synonyms, whitelist)
        reading = read(sentence)
        verbs = _verb_positions(sentence, reading)
        relatives = _relative_starts(reading)
        imperative = reading.main_verb
        index = 0
        while index < len(tokens):
            matched = False
            for size in range(min(synonyms.longest, len(tokens) - index), 0, -1):
                stretch = tokens[index : index + size]
                if any(protected[index : index + size]) or any(not t.is_word for t in stretch):
                    continue
                key = tuple(t.lower for t in stretch)
                options: list[str] = []
                following = tokens[index + size].lower if index + size < len(tokens) else ""
                nearby = {t.lower for t in tokens[max(0, index - 2) : index + size + 2]} - set(key)
                for entry in synonyms.entries.get(key, ()):
                    if _holds(entry, tokens, index, index + size, verbs, relatives, imperative):
                        options += [
                            o
                            for o in entry.options
                            if o.lower() != " ".join(key)
                            and o not in options
                            and not _split_particle(o, following)
                            and not nearby & set(o.lower().split()) - _SMALL_WORDS
                        ]
                if options:
                    found.append(Site(number, index, index + size, tuple(options)))
                    index += size
                    matched = True
                    break
            if not matched:
                index += 1
    return found


# Making a variant ----------------------------------------------------------------------


def _cased(replacement: str, original: str) -> str:
    if original[:1].isupper():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _article(word: str) -> str:
    """The indefinite article a word takes ("an item", "a unique", "an hour")."""
    w = word.lower()
    if w.startswith(("uni", "use", "usu", "uti", "eu", "one", "once")):
        return "a"
    if w.startswith(("hour", "honest", "honour", "honor")):
        return "an"
    return "an" if w[:1] in "aeiou" else "a"


def substitute(instruction: str, chosen: Iterable[tuple[Site, str]]) -> str:
    """The instruction with each site's tokens replaced, an "a"/"an" before one agreeing."""
    found = sentences(instruction)
    edits: list[tuple[int, int, str]] = []  # (start offset, end offset, text)
    for site, replacement in chosen:
        tokens = found[site.sentence].tokens
        first = tokens[site.start]
        text = _cased(replacement, first.text)
        edits.append((first.start, tokens[site.end - 1].end, text))
        if site.start > 0 and tokens[site.start - 1].lower in ("a", "an"):
            article = tokens[site.start - 1]
            wanted = _article(text)
            if article.lower != wanted:
                edits.append((article.start, article.end, _cased(wanted, article.text)))
    out, last = [], 0
    for start, end, text in sorted(edits):
        out += [instruction[last:start], text]
        last = end
    return "".join(out) + instruction[last:]


def synonym_room(base: str, params: SynonymSubstitution) -> Room:
    """How many distinct substitutions the instruction has (up to max_replacements of its
    words the map has, each by any of its synonyms), and why no more."""
    candidates = sites(base, params)
    if not candidates:
        return Room(0, "the synonym map has no word of this instruction outside protected text")
    # Choices of up to max_replacements sites, each site one of its options: the sums of the
    # elementary symmetric polynomials of the option counts.
    sums = [1] + [0] * params.max_replacements
    for site in candidates:
        for k in range(params.max_replacements, 0, -1):
            sums[k] += sums[k - 1] * len(site.options)
    words = "word" if len(candidates) == 1 else "words or phrases"
    return Room(sum(sums[1:]), f"the synonym map has {len(candidates)} {words} of this instruction")


@register_generator(
    "synonym_substitution",
    "variant",
    SynonymSubstitution,
    "replace up to max_replacements words or phrases from a controlled synonym map, each in its own "
    "part of speech and form; code, quoted text, identifiers, numbers, type words and technical terms kept",
    room=synonym_room,
)
def synonym_substitution(base: str, params: SynonymSubstitution, rng: random.Random) -> str | None:
    candidates = sites(base, params)
    if not candidates:
        return None
    chosen = sorted(
        rng.sample(candidates, rng.randint(1, min(params.max_replacements, len(candidates)))),
        key=lambda s: (s.sentence, s.start),
    )
    return substitute(base, [(site, rng.choice(site.options)) for site in chosen])
