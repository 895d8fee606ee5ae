"""An instruction as the wording generators read it: prose sentences of tokens, and the
spans no generator may change (code lines, quoted or backticked text, identifiers, numbers).

Pure and rule-based: no model, no parser. The word classes come from data/wording.yaml.
"""

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import yaml

DATA = resources.files("ironbench.generators") / "data"

TokenKind = Literal["word", "number", "identifier", "code", "quote", "group", "punct", "symbol"]
# What a generator may move whole but never change: code, quoted and backticked text,
# parenthesised groups, identifiers and numbers.
PROTECTED_KINDS = frozenset({"number", "identifier", "code", "quote", "group", "symbol"})
SENTENCE_END = frozenset({".", "!", "?", ";"})  # a semicolon closes a clause that stands alone


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    kind: TokenKind
    start: int = -1  # offset in the instruction; -1: made by a generator (a comma it added)
    gap: str = " "  # the text between this token and the one before it, as written

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def is_word(self) -> bool:
        return self.kind == "word"

    @property
    def end(self) -> int:
        return self.start + len(self.text)


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int  # offset of its first token in the instruction
    end: int  # offset just past its last token
    tokens: tuple[Token, ...]

    def words(self) -> list[str]:
        return [t.lower for t in self.tokens if t.kind != "punct"]


@dataclass(frozen=True)
class WordClasses:
    determiners: frozenset[str]
    prepositions: frozenset[str]
    subordinators: frozenset[str]
    relatives: frozenset[str]
    coordinators: frozenset[str]
    auxiliaries: frozenset[str]
    pronouns: frozenset[str]
    forms: frozenset[str]  # what an instruction asks for: function, class, method, ...
    framing: frozenset[str]  # verbs that only say "produce it": write, create, implement, ...
    python_words: frozenset[str]  # the Python type words and constants

    def closed(self, word: str) -> bool:
        """A function word: a determiner, preposition, conjunction, auxiliary or pronoun."""
        w = word.lower()
        return any(
            w in group
            for group in (
                self.determiners,
                self.prepositions,
                self.subordinators,
                self.relatives,
                self.coordinators,
                self.auxiliaries,
                self.pronouns,
            )
        )


@cache
def word_classes() -> WordClasses:
    data = yaml.safe_load((DATA / "wording.yaml").read_text(encoding="utf-8"))

    def group(key: str) -> frozenset[str]:
        return frozenset(str(w).lower() for w in data[key])

    return WordClasses(
        determiners=group("determiners"),
        prepositions=group("prepositions"),
        subordinators=group("subordinators"),
        relatives=group("relatives"),
        coordinators=group("coordinators"),
        auxiliaries=group("auxiliaries"),
        pronouns=group("pronouns"),
        forms=group("forms"),
        framing=group("framing"),
        python_words=group("python_words"),
    )


# Lines that are code, not prose: doctest prompts and their output, definitions, anything
# indented as a block, and lines holding operators only code uses.
_CODE_LINE = re.compile(
    r"^(?:\s*(?:>>>|\.\.\.|def |class |import |from \S+ import|return |@|#)|\s{4,}\S|\t)"
    r"|==|=>|->|!=|<=|>=|\s=\s|\|"
)

_QUOTED = re.compile(r"`[^`\n]*`|\"[^\"\n]*\"")

# One token: backticked or quoted text, a call like foo() or a dotted name, a number, a
# word (with inner hyphens and apostrophes), an abbreviation, or one mark.
_TOKEN = re.compile(
    r"""
    (?P<code>`[^`\n]*`|[A-Za-z_][\w.]*\([^()\n]*\))
  | (?P<quote>"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’|(?<![\w'])'[^'\n]*'(?![\w']))
  | (?P<abbr>\b(?:e\.g|i\.e|etc|vs|cf|approx)\.)
  | (?P<number>[-+]?\d+(?:[.,/:]\d+)*(?:st|nd|rd|th|s|%)?(?!\w))
  | (?P<identifier>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|(?=\w*(?:_|\d|[a-z][A-Z]|[A-Z]{2}))\w+)
  | (?P<word>[A-Za-z]+(?:['’-][A-Za-z]+)*)
  | (?P<punct>[,;:.!?])
  | (?P<symbol>\S)
    """,
    re.VERBOSE,
)


_PAIRS = {"(": ")", "[": "]", "{": "}"}


def _group_end(text: str, start: int) -> int:
    """The offset just past the bracket that closes the one at `start`, or -1."""
    opening, closing = text[start], _PAIRS[text[start]]
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "\n" and index + 1 < len(text) and text[index + 1] == "\n":
            return -1
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index + 1
    return -1


def tokenize(text: str, offset: int = 0) -> list[Token]:
    """The tokens of a prose stretch of text, each with its offset and the gap before it."""
    tokens: list[Token] = []
    position, last_end = 0, 0
    while position < len(text):
        if text[position].isspace():
            position += 1
            continue
        if text[position] in _PAIRS and (end := _group_end(text, position)) > 0:
            kind: TokenKind = "group"
        else:
            match = _TOKEN.match(text, position)
            if match is None:  # pragma: no cover - the symbol branch matches any non-space
                position += 1
                continue
            end = match.end()
            # An abbreviation ("e.g.") is kept as written, like an identifier.
            kind = "identifier" if match.lastgroup == "abbr" else match.lastgroup  # type: ignore[assignment]
        tokens.append(Token(text[position:end], kind, offset + position, text[last_end:position]))
        last_end = position = end
    return tokens


def prose_blocks(instruction: str) -> list[tuple[int, str]]:
    """The instruction's prose, as (offset, text) runs of consecutive lines that are not
    code. A line after a doctest prompt is its output, and code too."""
    blocks: list[tuple[int, str]] = []
    offset, current_start, current = 0, -1, ""
    previous_prompt = False
    for line in instruction.splitlines(keepends=True):
        stripped = line.strip()
        is_code = bool(_CODE_LINE.search(_QUOTED.sub("", line))) or (previous_prompt and stripped != "")
        previous_prompt = stripped.startswith(">>>") or (previous_prompt and stripped != "")
        if is_code or not stripped:
            if current:
                blocks.append((current_start, current))
            current_start, current = -1, ""
        else:
            if current_start < 0:
                current_start = offset
            current += line
        offset += len(line)
    if current:
        blocks.append((current_start, current))
    return blocks


def sentences(instruction: str) -> list[Sentence]:
    """Every prose sentence of the instruction, in order: tokens up to and including a
    sentence's closing mark (or the end of its block)."""
    found: list[Sentence] = []
    for offset, block in prose_blocks(instruction):
        current: list[Token] = []
        for token in tokenize(block, offset):
            current.append(token)
            if token.kind == "punct" and token.text in SENTENCE_END:
                found.append(Sentence(current[0].start, token.end, tuple(current)))
                current = []
        if current:
            found.append(Sentence(current[0].start, current[-1].end, tuple(current)))
    return found


_CLOSING = frozenset(",;:.!?")


def render(tokens: list[Token] | tuple[Token, ...]) -> str:
    """Tokens back to text: a token keeps the gap written before it while it follows the
    same token it followed; otherwise one space (none before a mark)."""
    out: list[str] = []
    previous: Token | None = None
    for index, token in enumerate(tokens):
        if index == 0 or (token.kind == "punct" and token.text in _CLOSING):
            gap = ""
        elif previous is not None and token.start >= 0 and previous.start >= 0 and previous.end <= token.start:
            original_neighbour = token.start - len(token.gap) == previous.end
            gap = token.gap if original_neighbour else " "
        else:
            gap = " "
        out.append(gap + token.text)
        previous = token
    return "".join(out)


def splice(instruction: str, sentence: Sentence, tokens: list[Token]) -> str:
    """The instruction with one sentence's text replaced by these tokens."""
    return instruction[: sentence.start] + render(tokens) + instruction[sentence.end :]


def capitalised(token: Token) -> Token:
    if token.kind != "word" or not token.text[:1].islower():
        return token
    return Token(token.text[0].upper() + token.text[1:], token.kind, token.start, token.gap)


def decapitalised(token: Token, proper: frozenset[str] = frozenset()) -> Token:
    """The token as it reads away from a sentence's start: a capital that only marked the
    start goes (a name, an acronym or a Python constant keeps its own)."""
    text = token.text
    if (
        token.kind != "word"
        or not text[:1].isupper()
        or (len(text) > 1 and not text[1:].islower())
        or text in proper
        or text.lower() in word_classes().python_words
    ):
        return token
    return Token(text[0].lower() + text[1:], token.kind, token.start, token.gap)


def comma() -> Token:
    return Token(",", "punct")
