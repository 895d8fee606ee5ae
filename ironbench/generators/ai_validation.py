"""Harness-enforced validation of AI rewrites: the spec's rules, as pure functions.

A rewrite must keep the task and change only its wording. Each rule returns the
reasons it rejects an output; an empty list accepts it. The requirement-level rule
(nothing removed, nothing added) lives in `requirements.py` with its term map.
"""

import re
from collections.abc import Callable

from ironbench.core.contract import forbidden_word
from ironbench.generators.requirements import TermMap, requirement_changes

MAX_LENGTH_RATIO = 3.0  # the spec's "±200%": a rewrite is between 1/3 and 3 times the base length

FORBIDDEN_TOKENS = (
    "test",
    "tests",
    "coverage",
    "pytest",
    "benchmark",
    "harness",
    "log",
    "debug",
    "performance",
    "optimize",
)
EXTRA_WORK_VERBS = (
    "validate",
    "validates",
    "verify",
    "verifies",
    "test",
    "tests",
    "optimize",
    "optimise",
    "benchmark",
    "profile",
    "refactor",
    "deploy",
    "monitor",
    "measure",
    "document",
    "log",
    "debug",
    "lint",
    "package",
    "publish",
)
GOAL_MARKERS = (
    "also",
    "additionally",
    "in addition",
    "as well",
    "furthermore",
    "moreover",
    "ensure",
    "make sure",
    "and then",
    "plus",
)
FORMAT_PERFORMANCE_TOOLING = (
    "format",
    "formatted",
    "json",
    "yaml",
    "markdown",
    "csv",
    "output format",
    "fast",
    "faster",
    "efficient",
    "efficiently",
    "speed",
    "latency",
    "memory usage",
    "performance",
    "tool",
    "tools",
    "tooling",
    "library",
    "framework",
    "cli",
    "command line",
    "pip",
    "docker",
    "ci",
)
META_PATTERNS = (
    r"^\s*(sure|certainly|of course|okay|ok)\b",
    r"\bhere('s| is| are)\b",
    r"\brewritten\b",
    r"\brephrased\b",
    r"\brewrite\b",
    r"\binstruction\b",
    r"\bas an ai\b",
    r"^\s*note\s*:",
    r"\bi (have|will|would|can)\b",
    r"\boriginal (task|text|sentence)\b",
    r"\bthe task (is|asks)\b",
    # advice to the reader instead of an instruction, and code spans, are commentary too
    r"\byou (can|could|should|may|might|will) (use|try|simply|just|call|do)\b",
    r"^\s*you (can|could|may|might|should) (?!write|create|build|implement|make|design|develop|produce)\w+",
    r"\bthis (can|could) be (achieved|done|accomplished|solved)\b",
    r"\bhere'?s how\b",
    # a remark about the task instead of the task
    r"\b(is|can be|would be) (a|an) (challenge|good|great|common|useful|nice|interesting|fun)\b",
    r"\bis called\s*[.!?]?\s*$",
    r"`[^`]+`",
)
# Code where an instruction should be: a definition, an import, a slice, a call to print.
CODE_PATTERNS = (
    r"\bdef \w+\s*\(",
    r"\bclass \w+\s*[:(]",
    r"^\s*(import|from) \w+",
    r"\[\s*-?\d*\s*:\s*-?\d*\s*:",
    r"\bprint\(",
    r"['\"]\.join\(",
    r"\w\(\w*\)\s*->",
    r"\breturn \w+\[",
)
# A rewrite keeps the task, so it keeps most of the base's content words (crudely
# stemmed); words that only say "produce" are not content.
MIN_CONTENT_KEPT = 0.5
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "that",
        "this",
        "these",
        "those",
        "with",
        "without",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "and",
        "or",
        "but",
        "by",
        "from",
        "as",
        "is",
        "are",
        "be",
        "been",
        "it",
        "its",
        "into",
        "onto",
        "than",
        "then",
        "so",
        "such",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "when",
        "where",
        "how",
        "each",
        "every",
        "any",
        "all",
        "some",
        "no",
        "not",
        "write",
        "create",
        "make",
        "implement",
        "build",
        "develop",
        "provide",
        "give",
        "please",
        "need",
        "want",
        "given",
        "one",
        "two",
        "your",
        "you",
    ]
)
FOCUS_SHIFT_BANNED = (
    "evict",
    "eviction",
    "lru",
    "ttl",
    "expire",
    "expiry",
    "concurrent",
    "concurrency",
    "thread",
    "threads",
    "thread-safe",
    "async",
    "asynchronous",
    "parallel",
    "lock",
    "performance",
    "fast",
    "efficient",
    "scalable",
    "optimize",
    "optimized",
)
IMPLEMENTATION_LANGUAGE = (
    "loop",
    "for loop",
    "while",
    "iterate",
    "iterates",
    "recursion",
    "recursive",
    "comprehension",
    "import",
    "re.compile",
    "hash map",
    "hashmap",
    "variable",
    "variables",
    "if statement",
    "lambda",
    "decorator",
    "algorithm",
    "o(1)",
    "o(n)",
    "ordereddict",
    "collections",
    "dict()",
    "list()",
    "try",
    "except",
)
DELIVERABLES = (
    "function",
    "functions",
    "class",
    "classes",
    "method",
    "methods",
    "module",
    "modules",
    "script",
    "scripts",
    "helper",
    "helpers",
    "program",
    "api",
    "endpoint",
    "interface",
)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9][a-z0-9'._()-]*", text.lower())


def _has_phrase(text: str, phrase: str) -> bool:
    return re.search(rf"(?<![a-z0-9-]){re.escape(phrase)}(?![a-z0-9-])", text.lower()) is not None


def _new_phrases(base: str, output: str, phrases: tuple[str, ...]) -> list[str]:
    return [p for p in phrases if _has_phrase(output, p) and not _has_phrase(base, p)]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s.strip()]


def check_empty(base: str, output: str) -> list[str]:
    return ["empty output"] if not output.strip() else []


def check_length(base: str, output: str) -> list[str]:
    length, base_length = len(output.strip()), len(base.strip())
    ratio = length / max(1, base_length)
    if ratio > MAX_LENGTH_RATIO or ratio < 1 / MAX_LENGTH_RATIO:
        return [
            (
                f"length {length} is {ratio:.2f} times the base length {base_length}; "
                f"a rewrite must be between 1/3 and 3 times as long"
            )
        ]
    return []


def check_forbidden_tokens(base: str, output: str) -> list[str]:
    found = [t for t in FORBIDDEN_TOKENS if _has_phrase(output, t)]
    word = forbidden_word(output)
    if word and word.lower() not in found:
        found.append(word.lower())
    return [f"forbidden token {t!r}" for t in found]


def check_extra_work_verbs(base: str, output: str) -> list[str]:
    return [f"new verb implying extra work {v!r}" for v in _new_phrases(base, output, EXTRA_WORK_VERBS)]


def check_extra_goal_sentences(base: str, output: str) -> list[str]:
    extra = len(_sentences(output)) - len(_sentences(base))
    if extra <= 0:
        return []
    markers = _new_phrases(base, output, GOAL_MARKERS)
    if markers:
        return [f"{extra} extra sentence(s) adding goals ({', '.join(repr(m) for m in markers)})"]
    return []


def check_format_performance_tooling(base: str, output: str) -> list[str]:
    return [
        f"new reference to format, performance or tooling {w!r}"
        for w in _new_phrases(base, output, FORMAT_PERFORMANCE_TOOLING)
    ]


def check_meta_commentary(base: str, output: str) -> list[str]:
    lowered = output.lower()
    signs = []
    for pattern in META_PATTERNS:
        found = re.search(pattern, lowered, re.MULTILINE)
        if found and not re.search(pattern, base.lower()):
            signs.append(repr(" ".join(found.group(0).split())[:40]))
    stripped = output.strip()
    if len(stripped) >= 2 and stripped[0] in "\"'`\u201c\u2018" and stripped[-1] in "\"'`\u201d\u2019":
        signs.append("quoted output")
    return [f"meta-commentary ({', '.join(signs)})"] if signs else []


def check_code(base: str, output: str) -> list[str]:
    """A rewrite is an instruction: code in its place is an answer, not a rewording."""
    for pattern in CODE_PATTERNS:
        found = re.search(pattern, output, re.MULTILINE)
        if found and not re.search(pattern, base, re.MULTILINE):
            return [f"code instead of an instruction ({' '.join(found.group(0).split())!r})"]
    return []


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)][:6]
    return word[:6]


def content_words(text: str) -> dict[str, str]:
    """Stem -> first word with that stem, for the words that carry the task."""
    words: dict[str, str] = {}
    for word in re.findall(r"[a-z][a-z0-9-]*", text.lower()):
        if len(word) > 2 and word not in STOP_WORDS:
            words.setdefault(_stem(word), word)
    return words


def check_task_kept(base: str, output: str) -> list[str]:
    """Fewer than half of the base's content words left means the task itself changed."""
    wanted = content_words(base)
    if not wanted:
        return []
    kept = wanted.keys() & content_words(output).keys()
    if len(kept) / len(wanted) >= MIN_CONTENT_KEPT:
        return []
    missing = [wanted[stem] for stem in wanted if stem not in kept]
    return [
        (
            f"keeps {len(kept)} of the base's {len(wanted)} content words (missing: {', '.join(missing[:6])}); "
            f"a rewrite keeps at least half"
        )
    ]


COMMON_RULES: tuple[Callable[[str, str], list[str]], ...] = (
    check_empty,
    check_length,
    check_forbidden_tokens,
    check_extra_work_verbs,
    check_extra_goal_sentences,
    check_format_performance_tooling,
    check_meta_commentary,
    check_code,
    check_task_kept,
)


def check_focus_shift(base: str, output: str) -> list[str]:
    """Focus shift = adjective emphasis only: no new eviction, concurrency or performance ideas."""
    return [f"focus shift introduces {w!r}" for w in _new_phrases(base, output, FOCUS_SHIFT_BANNED)]


def _deliverable_count(text: str) -> int:
    return sum(1 for w in _words(text) if w.strip(".,") in DELIVERABLES)


def check_same_deliverables(base: str, output: str) -> list[str]:
    """Register shift keeps the number of deliverables."""
    before, after = _deliverable_count(base), _deliverable_count(output)
    return [] if before == after else [f"deliverables changed from {before} to {after}"]


def check_no_implementation_language(base: str, output: str) -> list[str]:
    """A restatement says what, not how: no implementation language the base lacks."""
    return [
        f"restatement adds implementation language {w!r}" for w in _new_phrases(base, output, IMPLEMENTATION_LANGUAGE)
    ]


# Words that leave a judgment to the reader: an ambiguity-preserving rewrite keeps as many
# of them as the base has (in other words, maybe), and adds none to a base without any.
HEDGES = (
    "appropriate",
    "appropriately",
    "reasonable",
    "reasonably",
    "sensible",
    "sensibly",
    "suitable",
    "suitably",
    "as needed",
    "if needed",
    "where needed",
    "when needed",
    "as you see fit",
    "somehow",
    "some",
    "usual",
    "usually",
    "typical",
    "typically",
    "common",
    "commonly",
    "normal",
    "normally",
    "flexible",
    "roughly",
    "whatever",
    "may",
    "might",
    "possibly",
    "perhaps",
    "maybe",
    "within reason",
    "within limits",
    "makes sense",
    "seems right",
    "up to you",
)
MINIMAL_RATIO = 1.0  # a minimal form is no longer than its base
ELABORATION_RATIO = 2.0  # an elaboration is longer than its base, at most twice as long


def _hedge_count(text: str) -> int:
    return sum(1 for hedge in HEDGES if _has_phrase(text, hedge))


def check_same_ambiguity(base: str, output: str) -> list[str]:
    """The rewrite leaves open what the base leaves open, and settles nothing more: a base
    with judgment calls keeps one, a base without any gains none."""
    before, after = _hedge_count(base), _hedge_count(output)
    if before and not after:
        return [f"ambiguity removed: the base leaves {before} judgment call(s) open, the rewrite none"]
    if after and not before:
        return [f"ambiguity added: {after} judgment call(s) the base does not leave open"]
    return []


def check_not_longer(base: str, output: str) -> list[str]:
    """A minimalism pass compresses: never longer than its base."""
    if len(output.strip()) > MINIMAL_RATIO * len(base.strip()):
        return [f"not minimal: {len(output.strip())} characters for a base of {len(base.strip())}"]
    return []


def check_slightly_longer(base: str, output: str) -> list[str]:
    """An elaboration expands a little: longer than its base, at most twice as long."""
    length, base_length = len(output.strip()), len(base.strip())
    if length <= base_length:
        return [f"not an elaboration: {length} characters for a base of {base_length}"]
    if length > ELABORATION_RATIO * base_length:
        return [f"more than a slight elaboration: {length} characters, over twice the base's {base_length}"]
    return []


def validate_rewrite(
    base: str,
    output: str,
    extra_rules: tuple[Callable[[str, str], list[str]], ...] = (),
    terms: TermMap | None = None,
) -> list[str]:
    """Every reason to reject `output` as a rewrite of `base`; [] accepts it. `terms`
    is the requirement checker's term map (default: the shipped one)."""
    if check_empty(base, output):
        return check_empty(base, output)
    reasons: list[str] = []
    for rule in COMMON_RULES[1:] + tuple(extra_rules):
        reasons += rule(base, output)
    return reasons + requirement_changes(base, output, terms)


# Wrapping a 135M model puts around a good answer: a lead-in label, then quotes.
_LABEL = re.compile(
    r"^(?:(?:here(?:'s| is)|this is)\s+(?:the|a|my)\s+)?"
    r"(?:(?:rewritten|rephrased|restated|revised|new|final)\s+)?"
    r"(?:instruction|version|text|request|task|rewrite|restatement|rephrasing|answer|output|response|a)\s*:\s*",
    re.IGNORECASE,
)
_QUOTE_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}


def _unquote(text: str) -> str:
    close = _QUOTE_PAIRS.get(text[:1])
    if close and len(text) >= 2 and text.endswith(close):
        inner = text[1:-1]
        if text[0] not in inner and close not in inner:  # '"a" and "b"' is not one quoted whole
            return inner.strip()
    return text


def normalise_output(text: str) -> str:
    """The model's answer without trivial wrapping: surrounding whitespace, a code fence
    around the whole, a leading label ("Rewritten instruction:"), surrounding quotes or
    backticks. Everything else is judged as written."""
    text = re.sub(r"^```[a-z]*\n?|\n?```$", "", text.strip()).strip()
    for _ in range(2):  # a label and quotes come in either order
        text = _unquote(_LABEL.sub("", text, count=1).strip())
    return text


# Characters a one-sentence instruction has no use for unless its base has them: code,
# labels ("Python: ..."), markup. Outside GBNF's negated class they need no escaping.
_NOT_IN_A_SENTENCE = "`#:;*{}<>|="


def _gbnf_literal(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def one_line_grammar(base: str, openings: tuple[str, ...] = ()) -> str:
    """GBNF for one plain line: no line break, no backticks (unless the base has them),
    opening with a letter like an instruction does (unless the base does not), or with
    one of `openings`."""
    body = r"[^\n]" if "`" in base else r"[^\n`]"
    first = "[A-Za-z]" if base.strip()[:1].isalpha() else body
    if openings:
        first = "(" + " | ".join(_gbnf_literal(o) for o in openings) + ') " "'
    return f"root ::= {first} {body}*"


def one_sentence_grammar(base: str, openings: tuple[str, ...] = ()) -> str:
    """GBNF for one plain sentence like the base: it opens as the base does (a capital
    letter) or with one of `openings`, has none of the characters of code or labels the
    base lacks, and ends at its first full stop or question mark, so a small model cannot
    add a second sentence, a code block or a comment after it. A base of several
    sentences, or one that does not start with a letter, gets one_line_grammar instead."""
    text = base.strip()
    if len(_sentences(text)) != 1 or not text[:1].isalpha() or re.search(r"[.!?]\S", text):
        return one_line_grammar(base, openings)
    excluded = "".join(c for c in _NOT_IN_A_SENTENCE if c not in text)
    # a full stop inside a word (math.pow, 3.14) does not end the sentence: cut there, the
    # answer would read as a shorter, different request
    body = f'([^\\n.!?{excluded}] | "." [A-Za-z0-9_])'
    first = "[A-Z]" if text[0].isupper() else "[a-z]"
    if openings:
        first = "(" + " | ".join(_gbnf_literal(o) for o in openings) + ') " "'
    end = "[.?!]" if text[-1] in ".!?" else "[.?!]?"
    return f"root ::= {first} {body}* {end}"
