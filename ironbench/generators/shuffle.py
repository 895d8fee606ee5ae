"""lexical_shuffle: the spec's "swap adjacent phrases or reorder clauses where semantically
safe", by rules over the sentence's own structure (reading.py reads it). A shuffle changes
order, never words: only the capital of the sentence's first word and the commas around a
moved phrase change. One move per variant (up to max_swaps, on disjoint stretches):

- a phrase after the object opens the sentence ("Into regex objects, compile ...") or its
  relative clause ("a function that, given a list, returns ..."); a phrase of manner, or of
  where, opens even a sentence whose verb only frames the task ("Using two stacks,
  implement a queue.", "In a string, write a function that counts the vowels.");
- a heavy object follows the phrase after it ("compile into regex objects a list of ..."),
  a light one lets it in between commas; two phrases after one object change places;
- the object opens the sentence when a phrase follows it ("A list of ..., compile into ...");
- a subordinate clause or a purpose opens the sentence; a phrase that opens a sentence or
  a relative clause goes to its end, or after the verb; a phrase after the subject of an
  "if" clause opens the clause;
- members of a coordination and a class's capabilities change places (coordination.py);
- a manner adverb moves between its verb's front and its clause's end.

Nothing moves that carries meaning by its place: what a verb gives back in order, a phrase
completing the word before it, a phrase with a pronoun pointing back, a range, a step.
"""

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from ironbench.generators.coordination import capability_moves, coordination_moves
from ironbench.generators.reading import (
    BACK_POINTING,
    Reading,
    Segment,
    Unit,
    is_participle,
    nounish,
    read,
    reading_words,
    third_person,
    word_of,
)
from ironbench.generators.registry import GeneratorParams, Room, register_generator
from ironbench.generators.wording import (
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
        if word_of(body[index]) in BACK_POINTING and not any(
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
    words, w = reading_words(), word_of(body[verb])
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
        return not any(word_of(t) in ("otherwise", "else") for t in body)
    before = body[unit.start - 1] if unit.start > 0 else None
    after = body[unit.end] if unit.end < len(body) else None
    if (
        after is not None
        and word_of(after) in word_classes().relatives
        and not _disagrees(body, unit.end - 1, unit.end)
    ):
        return False  # "in the indices that are ...": the clause is the phrase's noun's
    if word_of(body[unit.start]) == "to" and word_of(body[verb]) not in reading_words().to_verbs:
        return False  # "computes the distance to another point": the noun's, not the verb's
    if word_of(body[unit.start]) in ("to", "as", "than", "from") and any(
        word_of(t) in _COMPARING for t in body[verb + 1 : unit.start]
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
    yield from coordination_moves(reading)
    yield from _adverb_moves(reading)
    yield from capability_moves(reading)


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
    names = reading_words().names
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
    words = reading_words()
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
            opener = word_of(body[unit.start])
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
            attribute = opener == "with" and word_of(body[segment.verb]) in _GIVING
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
    return bool(firsts) and firsts[0] is relative and any(word_of(t) in word_classes().forms for t in described)


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
            tail = phrase if word_of(body[start]) in word_classes().subordinators else [comma(), *phrase]
            yield [*body[: segment.start + 1], *rest, *tail]
        opener = word_of(body[start])
        if (
            reading.open_start
            and _frames_form(reading, segment)
            and opener in (*reading_words().scoping, "given")
            and not _points_back(body, start, end)
        ):
            yield [*phrase, comma(), *body[: segment.start + 1], *body[end + 1 :]]


def _subject_phrase_moves(reading: Reading) -> Iterator[list[Token]]:
    """In a clause after "if", "whether" or "when", a phrase after its subject opens it: "if
    the brackets in a string are balanced" -> "if, in a string, the brackets are balanced"."""
    body = reading.body
    classes, words = word_classes(), reading_words()
    for index, token in enumerate(body):
        if word_of(token) not in ("if", "whether", "when", "unless", "while", "whilst"):
            continue
        subject = index + 1
        if subject >= len(body) or not (word_of(body[subject]) in classes.determiners or nounish(body[subject])):
            continue
        phrase = subject + 1
        while phrase < len(body) and nounish(body[phrase]) and word_of(body[phrase]) not in words.verb_forms:
            phrase += 1
        if phrase >= len(body) or word_of(body[phrase]) not in _SUBJECT_PHRASES or not nounish(body[phrase - 1]):
            continue
        verb = phrase + 1
        limit = min(len(body), phrase + 8)
        while verb < limit and not _finite(body[verb]):
            if body[verb].kind == "punct" or word_of(body[verb]) in (*classes.relatives, *classes.coordinators):
                verb = limit
                break
            verb += 1
        if verb >= limit or verb == phrase + 1 or _points_back(body, phrase, verb):
            continue
        yield [*body[: index + 1], comma(), *body[phrase:verb], comma(), *body[subject:phrase], *body[verb:]]


def _finite(token: Token) -> bool:
    """A verb that ends a clause's subject: an auxiliary or a verb in the third person."""
    w, words = word_of(token), reading_words()
    return w in word_classes().auxiliaries or (w in words.verb_forms and w not in words.verbs)


def _fronted_moves(reading: Reading) -> Iterator[list[Token]]:
    """A phrase that opens the sentence goes to its end, or after its verb."""
    if reading.fronted < 0 or reading.main_verb is None:
        return
    body = reading.body
    if any(word_of(t) in ("otherwise", "else") for t in body):
        return
    fronted = list(body[: reading.fronted])
    main = list(body[reading.fronted + 1 :])
    if len(reading.segments) > 1 and any(s.kind == "main" and s.units for s in reading.segments[1:]):
        return
    subordinate = word_of(body[0]) in word_classes().subordinators
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
            and word_of(body[segment.verb]) not in reading_words().output_verbs
            and not segment.coordinated
            and len(reading.segments) == 1
            and pps
            and pps[0].start == segment.object_end
            and obj_words >= 2
            and obj[0].is_word
            and word_of(obj[0]) in word_classes().determiners
        ):
            pieces = [*obj, comma(), *body[: segment.verb + 1], *body[segment.object_end :]]
            yield pieces


def _adverb_moves(reading: Reading) -> Iterator[list[Token]]:
    """A manner adverb at its clause's end moves before its verb, and back."""
    body = reading.body
    words = reading_words()
    for segment in reading.segments:
        if segment.verb is None or segment.kind == "coordinated":
            continue
        verb = segment.verb
        before = verb - 1
        if before >= 0 and word_of(body[before]) in words.movable_adverbs:
            pieces = [*body[:before], *body[verb : segment.end], body[before], *body[segment.end :]]
            yield pieces
        for unit in segment.units:
            if unit.kind == "adverb" and unit.end == unit.start + 1 and unit.start > verb + 1:
                adverb = body[unit.start]
                pieces = [*body[:verb], adverb, *body[verb : unit.start], *body[unit.end :]]
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
