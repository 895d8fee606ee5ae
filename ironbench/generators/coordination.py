"""lexical_shuffle's moves that swap members: of a coordination ("get, set and a maximum
size" -> "set, get and a maximum size"), and a class's capabilities ("a class that
represents a vector and supports addition" -> "... supports addition and represents a
vector"), never where the order is the answer's or a step's.
"""

from collections.abc import Iterator

from ironbench.generators.reading import Reading, Segment, is_participle, reading_words, word_of
from ironbench.generators.wording import PROTECTED_KINDS, Token, word_classes


def coordination_moves(reading: Reading) -> Iterator[list[Token]]:
    """Members of a coordination change places where their order is not the answer's."""
    body = reading.body
    words, classes = reading_words(), word_classes()
    verbs = frozenset(s.verb for s in reading.segments if s.verb is not None)
    for index, token in enumerate(body):
        if word_of(token) not in ("and", "or"):
            continue
        members = _members(body, index, verbs)
        if members is None:
            continue
        segment = _segment_of(reading, members[0][0])
        if segment is None or _ordered(reading, segment, members[0][0]):
            continue
        spans = [list(body[a:b]) for a, b in members]
        if any(
            word_of(t) in words.ordered_words
            or word_of(t) in words.scoped
            or word_of(t) in classes.auxiliaries
            or word_of(t) in classes.relatives
            or word_of(t) in classes.pronouns
            or word_of(t) in ("its", "their", "this", "these", "those")
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
    classes, words = word_classes(), reading_words()

    def boundary(index: int) -> bool:
        token = body[index]
        w = word_of(token)
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
        and word_of(body[right[0]]) not in classes.determiners
    ):
        right = (right[0], right[0] + 1)
    members.append(right)
    first_start, first_end = members[0]
    if (
        word_of(body[first_start]) in classes.determiners
        and first_end - first_start > 1
        and word_of(body[right[0]]) not in classes.determiners
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
    words, classes = reading_words(), word_classes()
    body = reading.body
    span = body[segment.start : segment.end]
    if any(word_of(t) in words.ordered_words for t in span) or any(t.kind == "group" for t in span):
        return True
    if segment.verb is None:
        return False
    if word_of(body[segment.verb]) not in words.output_verbs:
        return False
    between = body[segment.verb + 1 : index]
    return not any(word_of(t) in classes.prepositions and word_of(t) != "of" for t in between)


def capability_moves(reading: Reading) -> Iterator[list[Token]]:
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
        if word_of(body[segment.start - 1]) not in nouns and not (
            first_relative and reading.framing and any(word_of(t) in nouns for t in described)
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
            word_of(t) in classes.pronouns or word_of(t) in ("its", "their", "then", "also") or t.text in ";:"
            for t in (*first_vp, *second_vp)
        ):
            continue
        pieces = [*body[: segment.start + 1], *second_vp, joiner, *first_vp, *body[chain[1].end :]]
        yield pieces
