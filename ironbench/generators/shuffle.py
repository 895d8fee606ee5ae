"""lexical_shuffle: the spec's "swap adjacent phrases or reorder clauses where semantically
safe", by rules over the sentence's own structure. A shuffle changes order, never words:
only the capital of the sentence's first word and the commas around a moved phrase change.

Each sentence is read into verb phrases (the imperative's, a relative clause's after
"that", an infinitive's after "to"), the phrases that follow their object (a prepositional
phrase, a participle of manner, a subordinate clause), and coordinations. The moves:

- front a phrase of its clause: to the sentence's start ("Into regex objects, compile ...")
  or after the relative pronoun ("a function that, given a list, returns ...");
- a phrase of manner that scopes over the whole task may open a sentence whose verb only
  frames it ("Using two stacks, implement a queue.", "To reverse a string, write ...");
- a fronted phrase goes back to the end, or after the verb;
- a heavy object moves after the phrase that followed it ("compile into regex objects a
  list of ..."), and two phrases after one object change places;
- the object opens the sentence when a phrase follows it ("A list of ..., compile into ...");
- members of a coordination change places, except where their order is the answer's
  ("return the minimum and maximum", "a tuple of ...");
- a manner adverb moves between its verb's front and its clause's end.

The first verb stays an imperative in its own form, and no phrase leaves its clause except
to open the sentence.
"""

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Literal

import yaml
from pydantic import Field

from ironbench.generators.registry import GeneratorParams, Room, register_generator
from ironbench.generators.wording import (
    DATA,
    PROTECTED_KINDS,
    SENTENCE_END,
    Sentence,
    Token,
    capitalised,
    comma,
    decapitalised,
    sentences,
    splice,
    word_classes,
)


class LexicalShuffle(GeneratorParams):
    max_swaps: Annotated[int, Field(strict=True, ge=1, le=10)] = 1


@dataclass(frozen=True)
class ShuffleWords:
    complemented: frozenset[str]
    ing_words: frozenset[str]
    ed_words: frozenset[str]
    adverbial_participles: frozenset[str]
    scoping: frozenset[str]
    portable: frozenset[str]
    to_verbs: frozenset[str]  # base, third person and -ing forms
    movable_subordinators: frozenset[str]
    movable_adverbs: frozenset[str]
    output_verbs: frozenset[str]
    scoped: frozenset[str]
    ordered_words: frozenset[str]
    verbs: frozenset[str]  # base forms
    verb_forms: frozenset[str]  # base and third-person forms
    names: frozenset[str]


def third_person(verb: str) -> str:
    if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if verb.endswith("y") and len(verb) > 1 and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _ing(verb: str) -> str:
    """The -ing form, roughly: enough to recognise a verb of a closed list."""
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


@cache
def shuffle_words() -> ShuffleWords:
    data = yaml.safe_load((DATA / "wording.yaml").read_text(encoding="utf-8"))

    def group(key: str) -> frozenset[str]:
        return frozenset(str(w).lower() for w in data[key])

    verbs = group("verbs")
    return ShuffleWords(
        complemented=group("complemented"),
        ing_words=group("ing_words"),
        ed_words=group("ed_words"),
        adverbial_participles=group("adverbial_participles"),
        scoping=group("scoping"),
        portable=group("portable"),
        to_verbs=frozenset(f for v in group("to_verbs") for f in (v, third_person(v), _ing(v))),
        movable_subordinators=group("movable_subordinators"),
        movable_adverbs=group("movable_adverbs"),
        output_verbs=group("output_verbs"),
        scoped=group("scoped"),
        ordered_words=group("ordered_words"),
        verbs=verbs,
        verb_forms=verbs | {third_person(v) for v in verbs},
        names=frozenset(str(w) for w in data["names"]) | frozenset(str(w).capitalize() for w in data["names"]),
    )


# Reading a sentence --------------------------------------------------------------------


UnitKind = Literal["pp", "participle", "subordinate", "adverb"]
SegmentKind = Literal["main", "relative", "infinitive", "coordinated", "complement"]


@dataclass(frozen=True)
class Unit:
    """A phrase after a verb's object that may move as a whole: tokens [start, end)."""

    start: int
    end: int
    kind: UnitKind
    comma_before: bool = False  # written after a comma (", keeping the last value")


@dataclass(frozen=True)
class Segment:
    """One verb phrase: tokens [start, end), its verb at `verb` (None: not known)."""

    kind: SegmentKind
    start: int
    end: int
    verb: int | None
    units: tuple[Unit, ...] = ()
    object_end: int = -1  # where the verb's object ends and the first unit starts
    coordinated: bool = False  # one of several verb phrases joined by and/or
    opening: tuple[int, int] | None = None  # a phrase between commas before the verb


@dataclass(frozen=True)
class Reading:
    body: tuple[Token, ...]  # the sentence without its closing mark
    mark: tuple[Token, ...]  # the closing mark, if any
    fronted: int  # index of the comma closing a fronted phrase; -1: none
    segments: tuple[Segment, ...]
    main_verb: int | None  # the imperative's index; None: not an imperative sentence
    framing: bool  # the main verb only frames the task ("Write a function that ...")
    prefixed: bool = False  # a word of politeness before the imperative ("Please write ...")
    declarative: bool = False  # a statement: main_verb is its verb, after its subject

    @property
    def open_start(self) -> bool:
        """Whether a phrase may open the sentence: it has an imperative, and nothing opens it yet."""
        return self.fronted < 0 and self.main_verb is not None and not self.prefixed


def _word(token: Token) -> str:
    return token.lower if token.is_word else ""


def is_participle(token: Token) -> bool:
    words = shuffle_words()
    w = _word(token)
    return (len(w) > 4 and w.endswith("ing") and w not in words.ing_words) or (
        len(w) > 4 and w.endswith("ed") and w not in words.ed_words
    )


def nounish(token: Token) -> bool:
    """Whether the token can end a noun phrase: a phrase after it may belong to the verb."""
    if token.kind in PROTECTED_KINDS:
        return True
    if not token.is_word:
        return False
    w, words = token.lower, shuffle_words()
    return not (
        word_classes().closed(w)
        or (w.endswith("ly") and len(w) > 4)
        or w in words.complemented
        or w in words.movable_adverbs
        or is_participle(token)
    )


def _object_starter(token: Token) -> bool:
    """What can open a verb's object: a determiner, a pronoun, a number, protected text."""
    w = _word(token)
    classes = word_classes()
    return (
        token.kind in PROTECTED_KINDS
        or w in classes.determiners
        or w in classes.pronouns
        or w in classes.python_words
        or w in {"whether", "how", "all"}
    )


def _verb_after(body: tuple[Token, ...], index: int) -> int | None:
    """The index of a verb starting at `index` (a manner adverb before it skipped)."""
    if index < len(body) and _word(body[index]) in shuffle_words().movable_adverbs:
        index += 1
    if index < len(body) and body[index].is_word and not word_classes().closed(body[index].lower):
        return index
    return None


def _starts_vp(body: tuple[Token, ...], index: int, finite: bool) -> bool:
    """Whether a coordinated verb phrase starts at `index` (just after and/or)."""
    words = shuffle_words()
    token = body[index] if index < len(body) else None
    if token is None or not token.is_word:
        return False
    w = token.lower
    if index + 1 >= len(body) or is_participle(token):
        return False
    following = body[index + 1]
    if finite:  # "and supports addition": a third-person verb after a third-person verb
        return w in words.verb_forms and w not in words.verbs and (_object_starter(following) or nounish(following))
    # "and return a dict", "and strip whitespace" (but "insert and search methods" is a
    # coordination of nouns before a shared head)
    return w in words.verbs and (
        _object_starter(following) or (nounish(following) and following.lower not in word_classes().forms)
    )


# First words that look like an imperative but ask for nothing ("Need a helper to ...").
_NOT_IMPERATIVE = frozenset({"need", "want", "like", "wish", "hope", "would", "note", "assume", "suppose"})
# Verbs whose "if" clause is their object, not a condition ("tells me if ...").
_ASKING = frozenset(
    f
    for v in ("check", "tell", "ask", "determine", "decide", "know", "see", "verify", "test", "say", "show",
              "indicate", "report", "examine", "confirm", "detect", "find", "work", "figure", "wonder")
    for f in (v, third_person(v), _ing(v))
)  # fmt: skip
# Words that open a clause a verb takes as its object ("determine whether ...").
_COMPLEMENTIZERS = frozenset({"whether", "if", "how", "what", "which", "who", "when", "where", "why", "that"})
# Prepositions of two words: the first opens the phrase.
_COMPOUNDS = frozenset(
    {("according", "to"), ("based", "on"), ("depending", "on"), ("instead", "of"), ("together", "with"),
     ("along", "with"), ("apart", "from"), ("regardless", "of"), ("due", "to")}
)  # fmt: skip
# Words that point back: a phrase holding one never moves before what it points to.
_BACK_POINTING = frozenset({"it", "them", "its", "their", "itself", "themselves", "theirs"})
_PREFIXES = frozenset({"please", "kindly", "now", "then", "first", "also", "just", "simply", "next", "finally"})


def read(sentence: Sentence) -> Reading:
    tokens = sentence.tokens
    mark = tokens[-1:] if tokens and tokens[-1].kind == "punct" and tokens[-1].text in SENTENCE_END else ()
    body = tokens[: len(tokens) - len(mark)]
    classes, words = word_classes(), shuffle_words()
    fronted = _fronted(body)
    start = fronted + 1
    # "Please implement ...": the imperative follows a word of politeness, which keeps the
    # sentence's start.
    prefixed = fronted < 0 and len(body) > 1 and _word(body[0]) in _PREFIXES
    verb_at = start + 1 if prefixed else start
    main_verb = (
        verb_at if verb_at < len(body) and body[verb_at].is_word and not classes.closed(body[verb_at].lower) else None
    )
    if main_verb is not None and (is_participle(body[main_verb]) or _word(body[main_verb]) in _NOT_IMPERATIVE):
        main_verb = None
    # A declarative sentence ("The input is ...") is not an imperative: its auxiliary comes
    # before any clause of its own.
    for token in body[start:]:
        w = _word(token)
        if w in classes.relatives or w in classes.subordinators or token.text == ",":
            break
        if w in classes.auxiliaries:
            main_verb = None
            break
    # "The function returns ...", "This function should return ...": a statement's verb
    # after its subject reads like an imperative's for the phrases after its object.
    declarative = main_verb is None and fronted < 0 and not prefixed
    main_verb = _statement_verb(body) if declarative else main_verb
    declarative = declarative and main_verb is not None
    # "Write a function that ...", "Implement a trie with ...": the verb only says
    # "produce it", and a phrase after its object describes the deliverable.
    framing = main_verb is not None and body[main_verb].lower in classes.framing and not declarative
    segments = _segments(body, start, main_verb, words)
    return Reading(body, mark, fronted, tuple(segments), main_verb, framing, prefixed, declarative)


def _statement_verb(body: tuple[Token, ...]) -> int | None:
    """The verb of a statement whose subject is a short noun phrase or "it": "The function
    takes ...", "This function should return ...", "It returns ..." (never "is")."""
    classes, words = word_classes(), shuffle_words()
    if not body or _word(body[0]) not in (*classes.determiners, "it"):
        return None
    index = 1
    while index < min(len(body), 5) and nounish(body[index]) and _word(body[index]) not in words.verb_forms:
        index += 1
    base = index < len(body) and _word(body[index]) in ("should", "must", "will", "can", "shall", "may")
    if base:
        index += 1
    if index >= len(body) or (index == 1 and _word(body[0]) != "it"):
        return None
    w = _word(body[index])
    if base:
        return index if w in words.verbs else None
    return index if w in words.verb_forms and w not in words.verbs else None


def _fronted(body: tuple[Token, ...]) -> int:
    """The index of the comma closing a phrase that opens the sentence, or -1."""
    if len(body) < 4 or not body[0].is_word:
        return -1
    classes, words = word_classes(), shuffle_words()
    first = body[0].lower
    opener = (
        first in classes.prepositions
        or first in words.movable_subordinators
        or first in words.adverbial_participles
        or first in words.scoping
        or first in ("out", "given")
    )
    if not opener:
        return -1
    for index in range(1, len(body) - 1):
        if body[index].text == ",":
            following = body[index + 1]
            if following.is_word and not classes.closed(following.lower) and not is_participle(following):
                return index
            return -1
    return -1


def _closing_comma(body: tuple[Token, ...], comma_at: int) -> int:
    """For a comma at `comma_at` opening a short phrase before a verb, the index of the comma
    closing it (-1: none)."""
    if comma_at >= len(body) or body[comma_at].text != ",":
        return -1
    for index in range(comma_at + 2, min(len(body) - 1, comma_at + 10)):
        if body[index].text == ",":
            following = body[index + 1]
            return index if following.is_word and not word_classes().closed(following.lower) else -1
    return -1


def _segments(body: tuple[Token, ...], start: int, main_verb: int | None, words: ShuffleWords) -> list[Segment]:
    """The sentence's verb phrases and the units after their objects."""
    classes = word_classes()
    # Boundaries: where a relative clause, an infinitive, a coordinated verb phrase, a
    # subordinate clause or a comma-led participle starts.
    cuts: list[tuple[int, SegmentKind | UnitKind, int | None]] = [(start, "main", main_verb)]
    # the current verb phrase's verb is in the third person ("that returns", "The function takes")
    finite = main_verb is not None and _word(body[main_verb]) in words.verb_forms - words.verbs
    inside = False  # within a subordinate clause or participle phrase: it runs to the next comma
    openings: dict[int, tuple[int, int]] = {}  # a relative clause's opening phrase, by its start
    index = start + 1
    while index < len(body):
        token, w = body[index], _word(body[index])
        if token.text == ",":
            inside = False
        if inside:
            index += 1
            continue
        if w in classes.relatives and index > start and nounish(body[index - 1]):
            verb = _verb_after(body, index + 1)
            following = body[index + 1] if index + 1 < len(body) else None
            closing = _closing_comma(body, index + 1)
            if closing > 0:
                # "a function that, given a list, returns ...": the phrase opens the clause
                openings[index] = (index + 2, closing)
                cuts.append((index, "relative", closing + 1))
                finite = True
                index = closing + 1
                continue
            if (
                following is None
                or _object_starter(following)
                or not following.is_word
                or _word(body[index - 1]) in ("such", "so", "now", "except")
            ):
                cuts.append((index, "complement", None))
            else:
                cuts.append((index, "relative", verb))
                finite = True
        elif w == "to" and index + 2 < len(body) and _word(body[index + 1]) in words.verbs:
            after = body[index + 2]
            if (
                _object_starter(after)
                or nounish(after)
                or (is_participle(after) and index + 3 < len(body) and nounish(body[index + 3]))
                or _word(after) in classes.subordinators
                or _word(after) in classes.relatives
            ):
                cuts.append((index, "infinitive", index + 1))
                finite = False
        elif w in classes.coordinators and _starts_vp(body, index + 1, finite):
            cuts.append((index, "coordinated", index + 1))
        elif (w in words.movable_subordinators or (w in classes.subordinators and w != "whether")) and not (
            w == "if" and (_word(body[index - 1]) in _ASKING or _word(body[index - 2]) in _ASKING)
        ):
            cuts.append((index, "subordinate", None))
            inside = True
        elif (
            token.text == ","
            and index + 1 < len(body)
            and (_word(body[index + 1]) in words.adverbial_participles or is_participle(body[index + 1]))
        ):
            cuts.append((index, "participle", None))
            inside = True
            index += 1  # past the comma: the participle opens the unit
        index += 1
    segments: list[Segment] = []
    for number, (cut, kind, verb) in enumerate(cuts):
        end = cuts[number + 1][0] if number + 1 < len(cuts) else len(body)
        if kind in ("subordinate", "participle"):
            # A clause of its own, moved whole: a unit of the verb phrase before it.
            if segments:
                last = segments[-1]
                unit = Unit(cut + 1 if kind == "participle" else cut, end, kind, comma_before=kind == "participle")
                segments[-1] = Segment(
                    last.kind, last.start, end, last.verb, (*last.units, unit), last.object_end, last.coordinated
                )
            continue
        units, object_end = _units(body, verb, end, words) if verb is not None else ((), -1)
        segments.append(
            Segment(kind, cut, end, verb, units, object_end, opening=openings.get(cut))  # type: ignore[arg-type]
        )
    # Verb phrases joined by and/or: each is marked, and so is the one before the first join.
    marked = []
    for number, segment in enumerate(segments):
        joined = segment.kind == "coordinated" or (
            number + 1 < len(segments) and segments[number + 1].kind == "coordinated"
        )
        marked.append(
            Segment(
                segment.kind,
                segment.start,
                segment.end,
                segment.verb,
                segment.units,
                segment.object_end,
                joined,
                segment.opening,
            )
        )
    return marked


# Prepositions whose -ing word is a verb ("by replacing runs"); after others it is an
# adjective ("in descending order").
_GERUND_TAKERS = frozenset({"by", "without", "before", "after", "through", "via", "upon", "while", "when"})


def _opens_unit(body: tuple[Token, ...], index: int, words: ShuffleWords) -> UnitKind | None:
    """What kind of phrase opens at `index`, if any. A phrase never opens after a word it
    completes ("closest to zero", "such as", "sorted by key") or inside "at most"."""
    w = _word(body[index])
    before = body[index - 1] if index > 0 else None
    following = _word(body[index + 1]) if index + 1 < len(body) else ""
    if (w, following) in _COMPOUNDS:
        return "pp"  # "according to a mapping"
    if before is not None and (
        _word(before) in words.complemented or is_participle(before) or (_word(before), w) in _COMPOUNDS
    ):
        return None
    if w in word_classes().prepositions and w not in ("of", "than", "like"):
        if w == "at" and following in ("most", "least"):
            return None
        if (
            w in _GERUND_TAKERS
            and index + 1 < len(body)
            and (following in words.adverbial_participles or is_participle(body[index + 1]))
        ):
            return "participle"  # "by replacing ...", "without using ..." (but "in descending order")
        return "pp"
    if (w in words.adverbial_participles or w in words.scoping) and before is not None and nounish(before):
        return "participle"
    if w in words.movable_adverbs and (index + 1 == len(body) or not body[index + 1].is_word):
        return "adverb"
    return None


def _opens_clause(body: tuple[Token, ...], index: int) -> bool:
    """Whether a verb, a participle or a clause starts at `index` (after a comma)."""
    if index >= len(body) or not body[index].is_word:
        return False
    w, classes, words = body[index].lower, word_classes(), shuffle_words()
    following = body[index + 1] if index + 1 < len(body) else None
    return (
        (w in words.verb_forms and following is not None and _object_starter(following))
        or is_participle(body[index])
        or w in classes.relatives
        or w in classes.subordinators
        or w in classes.pronouns
        or w in classes.coordinators
    )


def _owns_rest(body: tuple[Token, ...], start: int, stop: int) -> bool:
    """Whether a participle after a noun in tokens [start, stop) takes what follows."""
    for index in range(start + 2, stop):
        token = body[index]
        following = body[index + 1] if index + 1 < len(body) else None
        adjective = token.lower.endswith("ed") and following is not None and nounish(following)
        if is_participle(token) and nounish(body[index - 1]) and not adjective:
            return True
    return False


def _units(body: tuple[Token, ...], verb: int, end: int, words: ShuffleWords) -> tuple[tuple[Unit, ...], int]:
    """The phrases after the verb's object, up to `end`; and where the object ends. A
    participle's phrase runs to the end: what follows it is its own."""
    starts: list[tuple[int, UnitKind]] = []
    if verb + 1 < end and _word(body[verb + 1]) in _COMPLEMENTIZERS:
        return (), end  # "determine whether two rectangles ... overlap": a clause is the object
    for index in range(verb + 1, end):
        if body[index].text in ",;:" and _opens_clause(body, index + 1):
            end = index  # what follows is another verb's ("the integer x, shift the digits by n")
            break
        kind = _opens_unit(body, index, words)
        if kind is None:
            continue
        if kind == "pp" and starts and starts[-1][1] == "pp":
            # "from X to Y" and "between X and Y" are one range.
            previous = _word(body[starts[-1][0]])
            if (previous == "from" and body[index].lower == "to") or previous == "between":
                continue
        starts.append((index, kind))
        if kind == "participle":
            break
    units: list[Unit] = []
    for number, (start, kind) in enumerate(starts):
        stop = starts[number + 1][0] if number + 1 < len(starts) else end
        units.append(Unit(start, stop, kind))
        if _owns_rest(body, start, stop):
            # "in a list containing the integers from 1 to n": the participle owns what follows
            units[-1] = Unit(start, end, kind)
            break
    object_end = starts[0][0] if starts else end
    # A participle after a noun in the object ("a dict mapping words to counts", "a matrix
    # represented as ...") owns what follows it.
    for index in range(verb + 2, object_end):
        token = body[index]
        following = body[index + 1] if index + 1 < len(body) else None
        adjective = token.lower.endswith("ed") and following is not None and nounish(following)
        if is_participle(token) and nounish(body[index - 1]) and not adjective:
            return (), end
    return tuple(units), object_end


# Moves ---------------------------------------------------------------------------------


# Words that take a phrase even from before their noun: "the closest integer to it".
_COMPARING = frozenset({
    "closest", "nearest", "closer", "equal", "same", "similar", "identical", "greater", "smaller", "larger",
    "less", "more", "fewer", "higher", "lower", "longer", "shorter", "bigger", "different", "equivalent",
    "relative", "proportional", "adjacent", "next", "prior",
})  # fmt: skip


def _points_back(body: tuple[Token, ...], start: int, end: int) -> bool:
    """Whether tokens [start, end) hold a pronoun pointing to something before them ("by their
    first letter", "without modifying it"): moved before it, they would point ahead. A
    pronoun after a noun of its own phrase ("with the character and its count") does not."""
    for index in range(start, end):
        if _word(body[index]) in _BACK_POINTING and not any(
            t.is_word and nounish(t) and t.lower not in word_classes().determiners for t in body[start + 1 : index]
        ):
            return True
    return False


def _disagrees(body: tuple[Token, ...], noun: int, relative: int) -> bool:
    """Whether the verb of the relative clause at `relative` cannot agree with the noun at
    `noun` ("the numbers in a list that add up": "add" is the numbers', not the list's)."""
    verb = relative + 1
    if verb >= len(body) or not body[noun].is_word or not body[verb].is_word:
        return False
    words, w = shuffle_words(), _word(body[verb])
    plural_noun = body[noun].lower.endswith("s")
    if w in ("are", "were", "have") or (w in words.verbs and w not in words.verb_forms - words.verbs):
        return not plural_noun  # a plural verb after a singular noun
    if w in ("is", "was", "has") or w in words.verb_forms - words.verbs:
        return plural_noun  # a singular verb after a plural noun
    return False


def _movable(reading: Reading, unit: Unit, verb: int) -> bool:
    """A unit may leave its place: its opener does not complete the word before it."""
    body = reading.body
    if unit.end <= unit.start:
        return False
    if unit.kind in ("subordinate", "participle"):
        return not any(_word(t) in ("otherwise", "else") for t in body)
    before = body[unit.start - 1] if unit.start > 0 else None
    after = body[unit.end] if unit.end < len(body) else None
    if after is not None and _word(after) in word_classes().relatives and not _disagrees(body, unit.end - 1, unit.end):
        return False  # "in the indices that are ...": the clause is the phrase's noun's
    if _word(body[unit.start]) == "to" and _word(body[verb]) not in shuffle_words().to_verbs:
        return False  # "computes the distance to another point": the noun's, not the verb's
    if _word(body[unit.start]) in ("to", "as", "than", "from") and any(
        _word(t) in _COMPARING for t in body[verb + 1 : unit.start]
    ):
        return False  # "the closest integer to it", "the same length as"
    return before is not None and nounish(before)


def _tidy(tokens: list[Token]) -> list[Token]:
    """No comma at the start, before a closing mark, or twice in a row."""
    out: list[Token] = []
    for token in tokens:
        if (
            token.text == ","
            and token.kind == "punct"
            and (not out or (out[-1].kind == "punct" and out[-1].text in ",;:"))
        ):
            continue
        if token.kind == "punct" and token.text in SENTENCE_END and out and out[-1].text == ",":
            out.pop()
        out.append(token)
    while out and out[-1].text == ",":
        out.pop()
    return out


def _unit_tokens(reading: Reading, unit: Unit) -> list[Token]:
    return list(reading.body[unit.start : unit.end])


def _without(reading: Reading, unit: Unit) -> list[Token]:
    """The body with the unit taken out, and the comma that led it in."""
    body = list(reading.body)
    start = unit.start - 1 if unit.start > 0 and body[unit.start - 1].text == "," else unit.start
    return body[:start] + body[unit.end :]


@dataclass(frozen=True)
class Edit:
    """One move: the tokens [start, end) of sentence `sentence`'s body replaced by `tokens`."""

    sentence: int
    start: int
    end: int
    tokens: tuple[Token, ...]

    def disjoint(self, other: "Edit") -> bool:
        return self.sentence != other.sentence or self.end <= other.start or other.end <= self.start


def _moves(reading: Reading) -> Iterator[list[Token]]:
    """Every reordering of the sentence's body the rules allow."""
    yield from _front_moves(reading)
    yield from _fronted_moves(reading)
    yield from _opening_moves(reading)
    yield from _subject_phrase_moves(reading)
    yield from _object_moves(reading)
    yield from _coordination_moves(reading)
    yield from _adverb_moves(reading)
    yield from _capability_moves(reading)


def edits(number: int, reading: Reading) -> list[Edit]:
    """The moves of one sentence as edits: each the smallest stretch of the body it changes."""
    body = reading.body
    found: dict[Edit, None] = {}
    for moved in _moves(reading):
        if Counter(_word_key(t) for t in moved if t.kind != "punct") != Counter(
            _word_key(t) for t in body if t.kind != "punct"
        ):
            continue  # a move keeps every word (never reached: each rule only reorders)
        prefix = 0
        while prefix < min(len(body), len(moved)) and body[prefix] == moved[prefix]:
            prefix += 1
        suffix = 0
        while (
            suffix < min(len(body), len(moved)) - prefix
            and body[len(body) - 1 - suffix] == moved[len(moved) - 1 - suffix]
        ):
            suffix += 1
        if prefix == len(body) == len(moved):
            continue
        found.setdefault(Edit(number, prefix, len(body) - suffix, tuple(moved[prefix : len(moved) - suffix])), None)
    return list(found)


def _word_key(token: Token) -> str:
    return token.lower


def apply(reading: Reading, chosen: list[Edit]) -> list[Token]:
    """The sentence with disjoint edits made: commas tidied, the new first word capitalised
    and the old one as it reads elsewhere."""
    body = list(reading.body)
    for edit in sorted(chosen, key=lambda e: e.start, reverse=True):
        body[edit.start : edit.end] = edit.tokens
    tokens = _tidy([*body, *reading.mark])
    first = reading.body[0].start if reading.body else -1
    names = shuffle_words().names
    out = [decapitalised(t, names) if t.start == first and t.start >= 0 else t for t in tokens]
    if out and reading.body and reading.body[0].text[:1].isupper():
        out[0] = capitalised(out[0])  # (a clause after a semicolon starts in lower case, and stays so)
    return out


# Prepositions of a phrase that may open a clause from after its subject.
_SUBJECT_PHRASES = frozenset({"in", "on", "from", "within", "across", "among", "inside"})
# Prepositions of a phrase of where or what over, after a verb that frames the task.
_DOMAIN = frozenset(
    {"in", "on", "over", "across", "for", "from", "into", "within", "under", "inside", "by", "through", "among"}
)
# Verbs that deliver a thing: a "with" phrase after their object describes the thing.
_GIVING = frozenset(
    f
    for v in ("return", "create", "build", "make", "produce", "generate", "give", "output", "yield", "construct")
    for f in (v, third_person(v))
)


def _front_moves(reading: Reading) -> Iterator[list[Token]]:
    """A phrase after a verb's object opens its clause, or goes between verb and object."""
    body = reading.body
    words = shuffle_words()
    segments = reading.segments
    open_sentence = reading.open_start
    for number, segment in enumerate(segments):
        if segment.verb is None:
            continue
        # Of verb phrases joined by and/or, only the first one's phrases may open the
        # clause: before all of them, they still read as the first one's.
        leads = not segment.coordinated or (
            segment.kind != "coordinated" and number + 1 < len(segments) and segments[number + 1].kind == "coordinated"
        )
        for unit in segment.units:
            if (
                unit.kind == "adverb"
                or unit.start <= segment.verb + 1
                or not _movable(reading, unit, segment.verb)
                or _points_back(body, unit.start, unit.end)
            ):
                continue  # the verb keeps an object ("check if ..." is its object)
            moved = _unit_tokens(reading, unit)
            rest = _without(reading, unit)
            opener = _word(body[unit.start])
            scopes = opener in words.scoping or (
                unit.kind in ("participle", "subordinate")
                and opener in ("while", "whilst", "by", "without")
                and unit.end > unit.start + 1
                and is_participle(body[unit.start + 1])
            )
            at_end = unit.end == len(body)
            # A phrase after a comma speaks of its whole clause (", keeping the first value"):
            # it may open the clause even after verb phrases joined by and/or.
            head = _head(segments, number) if unit.comma_before else segment
            # (of verb phrases joined by and/or, the first one's: it opens them all)
            portable = (
                opener in words.portable
                and unit.kind == "pp"
                and head.kind == "relative"
                and leads
                and (at_end or unit is segment.units[0])
                and _frames_form(reading, head)
            )
            # "Return a list with the squares ...": after a verb that gives something back,
            # "with" says what the thing has, and stays with it.
            attribute = opener == "with" and _word(body[segment.verb]) in _GIVING
            # "Implement binary search over a sorted list": after a verb that only frames the
            # task, a phrase of where or what over may open the sentence (not "with", which
            # describes the deliverable: "a trie with insert and search methods").
            own = not reading.framing or (opener in _DOMAIN and unit.kind == "pp")
            if (
                open_sentence
                and not attribute
                and ((head.kind == "main" and own and (leads or unit.comma_before)) or (scopes and at_end) or portable)
            ):
                yield [*moved, comma(), *rest]
            if head.kind == "relative" and (leads or unit.comma_before):
                anchor = head.start + 1  # just after "that"
                yield [*rest[:anchor], comma(), *moved, comma(), *rest[anchor:]]
            if unit.kind == "participle" and unit.end - unit.start <= 5:
                # "returns, using memoization, the n-th Fibonacci number"
                verb = segment.verb + 1
                yield [*rest[:verb], comma(), *moved, comma(), *rest[verb:]]
        # "Write a Python function to reverse a string." -> "To reverse a string, write ..."
        if (
            segment.kind == "infinitive"
            and reading.framing
            and open_sentence
            and number == 1
            and segments[0].kind == "main"
            and not segments[0].units
        ):
            yield [*body[segment.start :], comma(), *body[: segment.start]]


def _frames_form(reading: Reading, relative: Segment) -> bool:
    """Whether the relative clause describes the form a framing verb asks for: "Write a
    (Python) function that ...", its first relative clause."""
    if not reading.framing or reading.main_verb is None:
        return False
    described = reading.body[reading.main_verb + 1 : relative.start]
    firsts = [s for s in reading.segments if s.kind == "relative"]
    return bool(firsts) and firsts[0] is relative and any(_word(t) in word_classes().forms for t in described)


def _head(segments: tuple[Segment, ...], number: int) -> Segment:
    """The first of the verb phrases joined by and/or that segment `number` belongs to."""
    while number > 0 and segments[number].kind == "coordinated":
        number -= 1
    return segments[number]


def _opening_moves(reading: Reading) -> Iterator[list[Token]]:
    """A phrase opening a relative clause ("a function that, given a list, returns ...") goes to
    the clause's end, or opens a sentence that frames the task."""
    body, segments = reading.body, reading.segments
    for number, segment in enumerate(segments):
        if segment.opening is None:
            continue
        start, end = segment.opening
        phrase = list(body[start:end])
        chain_end = segment.end
        for following in segments[number + 1 :]:
            if following.kind != "coordinated":
                break
            chain_end = following.end
        rest = list(body[end + 1 : chain_end])  # the clause after the phrase's closing comma
        if chain_end == len(body):
            tail = phrase if _word(body[start]) in word_classes().subordinators else [comma(), *phrase]
            yield [*body[: segment.start + 1], *rest, *tail]
        opener = _word(body[start])
        if (
            reading.open_start
            and _frames_form(reading, segment)
            and opener in (*shuffle_words().scoping, "given")
            and not _points_back(body, start, end)
        ):
            yield [*phrase, comma(), *body[: segment.start + 1], *body[end + 1 :]]


def _subject_phrase_moves(reading: Reading) -> Iterator[list[Token]]:
    """In a clause after "if", "whether" or "when", a phrase after its subject opens it: "if
    the brackets in a string are balanced" -> "if, in a string, the brackets are balanced"."""
    body = reading.body
    classes, words = word_classes(), shuffle_words()
    for index, token in enumerate(body):
        if _word(token) not in ("if", "whether", "when", "unless", "while", "whilst"):
            continue
        subject = index + 1
        if subject >= len(body) or not (_word(body[subject]) in classes.determiners or nounish(body[subject])):
            continue
        phrase = subject + 1
        while phrase < len(body) and nounish(body[phrase]) and _word(body[phrase]) not in words.verb_forms:
            phrase += 1
        if phrase >= len(body) or _word(body[phrase]) not in _SUBJECT_PHRASES or not nounish(body[phrase - 1]):
            continue
        verb = phrase + 1
        limit = min(len(body), phrase + 8)
        while verb < limit and not _finite(body[verb]):
            if body[verb].kind == "punct" or _word(body[verb]) in (*classes.relatives, *classes.coordinators):
                verb = limit
                break
            verb += 1
        if verb >= limit or verb == phrase + 1 or _points_back(body, phrase, verb):
            continue
        yield [*body[: index + 1], comma(), *body[phrase:verb], comma(), *body[subject:phrase], *body[verb:]]


def _finite(token: Token) -> bool:
    """A verb that ends a clause's subject: an auxiliary or a verb in the third person."""
    w, words = _word(token), shuffle_words()
    return w in word_classes().auxiliaries or (w in words.verb_forms and w not in words.verbs)


def _fronted_moves(reading: Reading) -> Iterator[list[Token]]:
    """A phrase that opens the sentence goes to its end, or after its verb."""
    if reading.fronted < 0 or reading.main_verb is None:
        return
    body = reading.body
    if any(_word(t) in ("otherwise", "else") for t in body):
        return
    fronted = list(body[: reading.fronted])
    main = list(body[reading.fronted + 1 :])
    if len(reading.segments) > 1 and any(s.kind == "main" and s.units for s in reading.segments[1:]):
        return
    subordinate = _word(body[0]) in word_classes().subordinators
    ends_with_clause = any(u.kind in ("subordinate", "participle") for s in reading.segments for u in s.units)
    if not ends_with_clause:
        tail = fronted if subordinate else [comma(), *fronted]
        yield [*main, *tail]
    # "Return, given a list of numbers, the largest." (only an object after the verb)
    main_segment = reading.segments[0]
    if (
        not subordinate
        and main_segment.verb is not None
        and main_segment.end - main_segment.verb > 2
        and not reading.framing
    ):
        split = main_segment.verb - (reading.fronted + 1) + 1
        yield [*main[:split], comma(), *fronted, comma(), *main[split:]]


def _object_moves(reading: Reading) -> Iterator[list[Token]]:
    body = reading.body
    for segment in reading.segments:
        if segment.verb is None or segment.object_end <= segment.verb + 1:
            continue
        obj = list(body[segment.verb + 1 : segment.object_end])
        obj_words = sum(1 for t in obj if t.kind != "punct")
        pps = [u for u in segment.units if u.kind == "pp"]
        if not obj_words or any(t.text == "," for t in obj):
            continue
        # A heavy object after the phrase that followed it: "compile into regex objects a list of ...".
        # (Not a deliverable's: "Create a class with ..." keeps the class first.)
        deliverable = segment.kind == "main" and reading.framing
        if (
            pps
            and pps[0].start == segment.object_end
            and not deliverable
            and _movable(reading, pps[0], segment.verb)
            and not _points_back(body, pps[0].start, pps[0].end)
        ):
            unit = pps[0]
            shifted = list(body[unit.start : unit.end])
            if obj_words >= 3 and len(shifted) <= obj_words + 1:
                yield [*body[: segment.verb + 1], *shifted, *obj, *body[unit.end :]]
            elif len(shifted) <= 7:
                # otherwise the phrase goes between commas ("removes, from a string, duplicates")
                yield [*body[: segment.verb + 1], comma(), *shifted, comma(), *obj, *body[unit.end :]]
        # Two phrases after one object change places.
        units = segment.units
        for left, right in itertools.pairwise(units):
            if (
                left.kind == right.kind == "pp"
                and left.end == right.start
                and _movable(reading, left, segment.verb)
                and _movable(reading, right, segment.verb)
            ):
                yield [
                    *body[: left.start],
                    *body[right.start : right.end],
                    *body[left.start : left.end],
                    *body[right.end :],
                ]
        # The object opens the sentence when a phrase follows it: "A list of ..., compile into ...".
        if (
            segment.kind == "main"
            and not reading.framing
            and reading.open_start
            and not reading.declarative
            and _word(body[segment.verb]) not in shuffle_words().output_verbs
            and not segment.coordinated
            and len(reading.segments) == 1
            and pps
            and pps[0].start == segment.object_end
            and obj_words >= 2
            and obj[0].is_word
            and _word(obj[0]) in word_classes().determiners
        ):
            pieces = [*obj, comma(), *body[: segment.verb + 1], *body[segment.object_end :]]
            yield pieces


def _coordination_moves(reading: Reading) -> Iterator[list[Token]]:
    """Members of a coordination change places where their order is not the answer's."""
    body = reading.body
    words, classes = shuffle_words(), word_classes()
    verbs = frozenset(s.verb for s in reading.segments if s.verb is not None)
    for index, token in enumerate(body):
        if _word(token) not in ("and", "or"):
            continue
        members = _members(body, index, verbs)
        if members is None:
            continue
        segment = _segment_of(reading, members[0][0])
        if segment is None or _ordered(reading, segment, members[0][0]):
            continue
        spans = [list(body[a:b]) for a, b in members]
        if any(
            _word(t) in words.ordered_words
            or _word(t) in words.scoped
            or _word(t) in classes.auxiliaries
            or _word(t) in classes.relatives
            or _word(t) in classes.pronouns
            or _word(t) in ("its", "their", "this", "these", "those")
            or t.kind == "punct"
            for span in spans
            for t in span
        ):
            continue  # "the character and its count": a member that points back stays after

        def alike(x: list[Token], y: list[Token]) -> bool:
            # members of one kind and weight: "a stack and a queue", "letters or digits"
            return _kind_of(x[0]) == _kind_of(y[0]) and max(len(x), len(y)) <= min(4, 3 * min(len(x), len(y)))

        # Neighbours of one kind swap, one pair at a time ("get, set and a maximum size" ->
        # "set, get and a maximum size"); members all of one kind also rotate.
        for k in range(len(members) - 1):
            if alike(spans[k], spans[k + 1]):
                order = list(range(len(members)))
                order[k], order[k + 1] = order[k + 1], order[k]
                yield _rebuild(body, members, order)
        if len(members) > 2 and all(alike(spans[0], span) for span in spans[1:]):
            yield _rebuild(body, members, [*range(1, len(members)), 0])


def _kind_of(token: Token) -> str:
    classes = word_classes()
    if token.kind in PROTECTED_KINDS:
        return "protected"
    if token.lower in classes.determiners:
        return "determiner"
    if token.is_word and token.text[:1].isupper():
        return "capital"
    return "word"


def _members(body: tuple[Token, ...], conjunction: int, verbs: frozenset[int]) -> list[tuple[int, int]] | None:
    """The members [(start, end)] of the coordination joined at `conjunction`:
    "X and Y", "X, Y and Z", "X, Y, and Z". A plural head after single-word members is
    shared ("push, pop and peek operations": push, pop and peek); so is a determiner
    before the first ("the sum and product")."""
    classes, words = word_classes(), shuffle_words()

    def boundary(index: int) -> bool:
        token = body[index]
        w = _word(token)
        return (
            index in verbs
            or token.kind == "punct"
            or w in classes.prepositions
            or w in classes.relatives
            or w in classes.subordinators
            or w in classes.coordinators
            or w in classes.auxiliaries
            or w in words.adverbial_participles
            or is_participle(token)
        )

    if conjunction == 0 or conjunction + 1 >= len(body):
        return None
    right_end = conjunction + 1
    while right_end < len(body) and not boundary(right_end):
        right_end += 1
    if right_end == conjunction + 1:
        return None
    members: list[tuple[int, int]] = []
    end = conjunction - (1 if body[conjunction - 1].text == "," else 0)
    while True:
        start = end
        while start > 0 and not boundary(start - 1):
            start -= 1
        if start == end:
            return None
        members.insert(0, (start, end))
        if start > 1 and body[start - 1].text == "," and not boundary(start - 2):
            end = start - 1
            continue
        break
    right = (conjunction + 1, right_end)
    if (
        all(b - a == 1 for a, b in members)
        and right[1] - right[0] == 2
        and body[right[1] - 1].lower.endswith("s")
        and _word(body[right[0]]) not in classes.determiners
    ):
        right = (right[0], right[0] + 1)
    members.append(right)
    first_start, first_end = members[0]
    if (
        _word(body[first_start]) in classes.determiners
        and first_end - first_start > 1
        and _word(body[right[0]]) not in classes.determiners
    ):
        members[0] = (first_start + 1, first_end)
    return members


def _rebuild(body: tuple[Token, ...], members: list[tuple[int, int]], order: list[int]) -> list[Token]:
    out = list(body[: members[0][0]])
    spans = [list(body[a:b]) for a, b in members]
    for position, (_start, end) in enumerate(members):
        out += spans[order[position]]
        following = members[position + 1][0] if position + 1 < len(members) else end
        out += list(body[end:following])
    out += list(body[members[-1][1] :])
    return out


def _segment_of(reading: Reading, index: int) -> Segment | None:
    for segment in reading.segments:
        if segment.start <= index < segment.end:
            return segment
    if reading.fronted >= 0 and index < reading.fronted:
        return Segment("main", 0, reading.fronted, None)
    return None


def _ordered(reading: Reading, segment: Segment, index: int) -> bool:
    """Whether the coordination at `index` is in the object of a verb that gives it back
    (outside any prepositional phrase), or in a clause that speaks of an order."""
    words, classes = shuffle_words(), word_classes()
    body = reading.body
    span = body[segment.start : segment.end]
    if any(_word(t) in words.ordered_words for t in span) or any(t.kind == "group" for t in span):
        return True
    if segment.verb is None:
        return False
    if _word(body[segment.verb]) not in words.output_verbs:
        return False
    between = body[segment.verb + 1 : index]
    return not any(_word(t) in classes.prepositions and _word(t) != "of" for t in between)


def _adverb_moves(reading: Reading) -> Iterator[list[Token]]:
    """A manner adverb at its clause's end moves before its verb, and back."""
    body = reading.body
    words = shuffle_words()
    for segment in reading.segments:
        if segment.verb is None or segment.kind == "coordinated":
            continue
        verb = segment.verb
        before = verb - 1
        if before >= 0 and _word(body[before]) in words.movable_adverbs:
            pieces = [*body[:before], *body[verb : segment.end], body[before], *body[segment.end :]]
            yield pieces
        for unit in segment.units:
            if unit.kind == "adverb" and unit.end == unit.start + 1 and unit.start > verb + 1:
                adverb = body[unit.start]
                pieces = [*body[:verb], adverb, *body[verb : unit.start], *body[unit.end :]]
                yield pieces


def _capability_moves(reading: Reading) -> Iterator[list[Token]]:
    """A class's capabilities, verb phrases joined by and, change places: "a class that
    represents a vector and supports addition" (a function's steps keep their order)."""
    body = reading.body
    classes = word_classes()
    segments = reading.segments
    for number, segment in enumerate(segments):
        if segment.kind != "relative" or segment.start == 0:
            continue
        nouns = ("class", "classes", "type", "object", "structure", "container")
        first_relative = all(s.kind != "relative" for s in segments[:number])
        described = body[reading.main_verb + 1 : segment.start] if reading.main_verb is not None else ()
        if _word(body[segment.start - 1]) not in nouns and not (
            first_relative and reading.framing and any(_word(t) in nouns for t in described)
        ):
            continue
        chain = [segment]
        for following in segments[number + 1 :]:
            if following.kind != "coordinated":
                break
            chain.append(following)
        if len(chain) != 2 or chain[-1].units and chain[-1].units[-1].comma_before:
            continue
        first_vp = body[segment.start + 1 : chain[1].start]
        second_vp = body[chain[1].start + 1 : chain[1].end]
        joiner = body[chain[1].start]
        if any(
            _word(t) in classes.pronouns or _word(t) in ("its", "their", "then", "also") or t.text in ";:"
            for t in (*first_vp, *second_vp)
        ):
            continue
        pieces = [*body[: segment.start + 1], *second_vp, joiner, *first_vp, *body[chain[1].end :]]
        yield pieces


# The generator ---------------------------------------------------------------------------


def _options(instruction: str) -> tuple[list[Sentence], list[Reading], list[Edit]]:
    """The instruction's sentences, their readings, and every move of any of them that
    makes a new text (two moves that make the same text: the first kept)."""
    found = sentences(instruction)
    readings = [read(s) for s in found]
    options: list[Edit] = []
    texts = {instruction}
    for number, reading in enumerate(readings):
        for edit in edits(number, reading):
            text = _text(instruction, found, readings, [edit])
            if text not in texts:
                texts.add(text)
                options.append(edit)
    return found, readings, options


def _text(instruction: str, found: list[Sentence], readings: list[Reading], chosen: list[Edit]) -> str:
    text = instruction
    for number in sorted({e.sentence for e in chosen}, reverse=True):
        mine = [e for e in chosen if e.sentence == number]
        text = splice(text, found[number], apply(readings[number], mine))
    return text


def shuffles(instruction: str) -> list[str]:
    """Every instruction one move away from this one, in a fixed order, without repeats."""
    found, readings, options = _options(instruction)
    return [_text(instruction, found, readings, [edit]) for edit in options]


_MOST_COUNTED = 1000  # wordings counted at most: a suite asks for ten


def shuffle_room(base: str, params: LexicalShuffle) -> Room:
    """How many distinct shuffles the instruction has (moves on disjoint stretches, up to
    max_swaps of them), and why no more."""
    found, readings, options = _options(base)
    if not options:
        return Room(0, "no phrase or clause of this instruction may move safely")
    texts = {_text(base, found, readings, [edit]) for edit in options}
    frontier: list[list[Edit]] = [[edit] for edit in options]
    for _ in range(params.max_swaps - 1):
        grown = []
        for chosen in frontier:
            for edit in options[options.index(chosen[-1]) + 1 :]:
                if all(edit.disjoint(c) for c in chosen) and len(texts) < _MOST_COUNTED:
                    grown.append([*chosen, edit])
                    texts.add(_text(base, found, readings, grown[-1]))
        frontier = grown
    moves = "move" if len(options) == 1 else "moves"
    return Room(len(texts), f"{len(options)} safe {moves} of a phrase or clause in this instruction")


@register_generator(
    "lexical_shuffle",
    "variant",
    LexicalShuffle,
    "reorder phrases and clauses where safe (front a phrase, swap coordinated members); same words",
    room=shuffle_room,
)
def lexical_shuffle(base: str, params: LexicalShuffle, rng: random.Random) -> str | None:
    found, readings, options = _options(base)
    if not options:
        return None
    chosen = [rng.choice(options)]
    # Further moves only where the text is still as written: moves never build on moves.
    for _ in range(rng.randint(1, params.max_swaps) - 1):
        free = [o for o in options if all(o.disjoint(c) for c in chosen)]
        if not free:
            break
        chosen.append(rng.choice(free))
    return _text(base, found, readings, chosen)
