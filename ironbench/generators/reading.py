"""A sentence as the wording generators read it, by rules and word lists (data/wording.yaml),
no model and no parser: its imperative (or a statement's verb), its verb phrases (the
imperative's, a relative clause's after "that", an infinitive's after "to", those joined by
"and"), and the phrases after each verb's object that may move as a whole (a prepositional
phrase, a participle of manner, a subordinate clause). lexical_shuffle moves what this reads;
synonym_substitution asks it where a verb stands.
"""

from dataclasses import dataclass
from functools import cache
from typing import Literal

import yaml

from ironbench.generators.wording import DATA, PROTECTED_KINDS, SENTENCE_END, Sentence, Token, word_classes


@dataclass(frozen=True)
class ReadingWords:
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
def reading_words() -> ReadingWords:
    data = yaml.safe_load((DATA / "wording.yaml").read_text(encoding="utf-8"))

    def group(key: str) -> frozenset[str]:
        return frozenset(str(w).lower() for w in data[key])

    verbs = group("verbs")
    return ReadingWords(
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


def word_of(token: Token) -> str:
    return token.lower if token.is_word else ""


def is_participle(token: Token) -> bool:
    words = reading_words()
    w = word_of(token)
    return (len(w) > 4 and w.endswith("ing") and w not in words.ing_words) or (
        len(w) > 4 and w.endswith("ed") and w not in words.ed_words
    )


def nounish(token: Token) -> bool:
    """Whether the token can end a noun phrase: a phrase after it may belong to the verb."""
    if token.kind in PROTECTED_KINDS:
        return True
    if not token.is_word:
        return False
    w, words = token.lower, reading_words()
    return not (
        word_classes().closed(w)
        or (w.endswith("ly") and len(w) > 4)
        or w in words.complemented
        or w in words.movable_adverbs
        or is_participle(token)
    )


def _object_starter(token: Token) -> bool:
    """What can open a verb's object: a determiner, a pronoun, a number, protected text."""
    w = word_of(token)
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
    if index < len(body) and word_of(body[index]) in reading_words().movable_adverbs:
        index += 1
    if index < len(body) and body[index].is_word and not word_classes().closed(body[index].lower):
        return index
    return None


def _starts_vp(body: tuple[Token, ...], index: int, finite: bool) -> bool:
    """Whether a coordinated verb phrase starts at `index` (just after and/or)."""
    words = reading_words()
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
BACK_POINTING = frozenset({"it", "them", "its", "their", "itself", "themselves", "theirs"})
_PREFIXES = frozenset({"please", "kindly", "now", "then", "first", "also", "just", "simply", "next", "finally"})


def read(sentence: Sentence) -> Reading:
    tokens = sentence.tokens
    mark = tokens[-1:] if tokens and tokens[-1].kind == "punct" and tokens[-1].text in SENTENCE_END else ()
    body = tokens[: len(tokens) - len(mark)]
    classes, words = word_classes(), reading_words()
    fronted = _fronted(body)
    start = fronted + 1
    # "Please implement ...": the imperative follows a word of politeness, which keeps the
    # sentence's start.
    prefixed = fronted < 0 and len(body) > 1 and word_of(body[0]) in _PREFIXES
    verb_at = start + 1 if prefixed else start
    main_verb = (
        verb_at if verb_at < len(body) and body[verb_at].is_word and not classes.closed(body[verb_at].lower) else None
    )
    if main_verb is not None and (is_participle(body[main_verb]) or word_of(body[main_verb]) in _NOT_IMPERATIVE):
        main_verb = None
    # A declarative sentence ("The input is ...") is not an imperative: its auxiliary comes
    # before any clause of its own.
    for token in body[start:]:
        w = word_of(token)
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
    classes, words = word_classes(), reading_words()
    if not body or word_of(body[0]) not in (*classes.determiners, "it"):
        return None
    index = 1
    while index < min(len(body), 5) and nounish(body[index]) and word_of(body[index]) not in words.verb_forms:
        index += 1
    base = index < len(body) and word_of(body[index]) in ("should", "must", "will", "can", "shall", "may")
    if base:
        index += 1
    if index >= len(body) or (index == 1 and word_of(body[0]) != "it"):
        return None
    w = word_of(body[index])
    if base:
        return index if w in words.verbs else None
    return index if w in words.verb_forms and w not in words.verbs else None


def _fronted(body: tuple[Token, ...]) -> int:
    """The index of the comma closing a phrase that opens the sentence, or -1."""
    if len(body) < 4 or not body[0].is_word:
        return -1
    classes, words = word_classes(), reading_words()
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


def _segments(body: tuple[Token, ...], start: int, main_verb: int | None, words: ReadingWords) -> list[Segment]:
    """The sentence's verb phrases and the units after their objects."""
    classes = word_classes()
    # Boundaries: where a relative clause, an infinitive, a coordinated verb phrase, a
    # subordinate clause or a comma-led participle starts.
    cuts: list[tuple[int, SegmentKind | UnitKind, int | None]] = [(start, "main", main_verb)]
    # the current verb phrase's verb is in the third person ("that returns", "The function takes")
    finite = main_verb is not None and word_of(body[main_verb]) in words.verb_forms - words.verbs
    inside = False  # within a subordinate clause or participle phrase: it runs to the next comma
    openings: dict[int, tuple[int, int]] = {}  # a relative clause's opening phrase, by its start
    index = start + 1
    while index < len(body):
        token, w = body[index], word_of(body[index])
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
                or word_of(body[index - 1]) in ("such", "so", "now", "except")
            ):
                cuts.append((index, "complement", None))
            else:
                cuts.append((index, "relative", verb))
                finite = True
        elif w == "to" and index + 2 < len(body) and word_of(body[index + 1]) in words.verbs:
            after = body[index + 2]
            if (
                _object_starter(after)
                or nounish(after)
                or (is_participle(after) and index + 3 < len(body) and nounish(body[index + 3]))
                or word_of(after) in classes.subordinators
                or word_of(after) in classes.relatives
            ):
                cuts.append((index, "infinitive", index + 1))
                finite = False
        elif w in classes.coordinators and _starts_vp(body, index + 1, finite):
            cuts.append((index, "coordinated", index + 1))
        elif (w in words.movable_subordinators or (w in classes.subordinators and w != "whether")) and not (
            w == "if" and (word_of(body[index - 1]) in _ASKING or word_of(body[index - 2]) in _ASKING)
        ):
            cuts.append((index, "subordinate", None))
            inside = True
        elif (
            token.text == ","
            and index + 1 < len(body)
            and (word_of(body[index + 1]) in words.adverbial_participles or is_participle(body[index + 1]))
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


def _opens_unit(body: tuple[Token, ...], index: int, words: ReadingWords) -> UnitKind | None:
    """What kind of phrase opens at `index`, if any. A phrase never opens after a word it
    completes ("closest to zero", "such as", "sorted by key") or inside "at most"."""
    w = word_of(body[index])
    before = body[index - 1] if index > 0 else None
    following = word_of(body[index + 1]) if index + 1 < len(body) else ""
    if (w, following) in _COMPOUNDS:
        return "pp"  # "according to a mapping"
    if before is not None and (
        word_of(before) in words.complemented or is_participle(before) or (word_of(before), w) in _COMPOUNDS
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
    w, classes, words = body[index].lower, word_classes(), reading_words()
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


def _units(body: tuple[Token, ...], verb: int, end: int, words: ReadingWords) -> tuple[tuple[Unit, ...], int]:
    """The phrases after the verb's object, up to `end`; and where the object ends. A
    participle's phrase runs to the end: what follows it is its own."""
    starts: list[tuple[int, UnitKind]] = []
    if verb + 1 < end and word_of(body[verb + 1]) in _COMPLEMENTIZERS:
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
            previous = word_of(body[starts[-1][0]])
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
