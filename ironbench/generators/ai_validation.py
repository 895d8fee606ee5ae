"""Harness-enforced validation of AI rewrites: the spec's rules, as pure functions.

A rewrite must keep the task and change only its wording. Each rule returns the
reasons it rejects an output; an empty list accepts it.
"""

import re
from collections.abc import Callable

from ironbench.contract import forbidden_word

MAX_LENGTH_RATIO = 3.0  # ±200% of the base length

FORBIDDEN_TOKENS = ("test", "tests", "coverage", "pytest", "benchmark", "harness", "log", "debug",
                    "performance", "optimize")
EXTRA_WORK_VERBS = ("validate", "validates", "verify", "verifies", "test", "tests", "optimize", "optimise",
                    "benchmark", "profile", "refactor", "deploy", "monitor", "measure", "document", "log",
                    "debug", "lint", "package", "publish")
GOAL_MARKERS = ("also", "additionally", "in addition", "as well", "furthermore", "moreover", "ensure",
                "make sure", "and then", "plus")
FORMAT_PERFORMANCE_TOOLING = ("format", "formatted", "json", "yaml", "markdown", "csv", "output format",
                              "fast", "faster", "efficient", "efficiently", "speed", "latency", "memory usage",
                              "performance", "tool", "tools", "tooling", "library", "framework", "cli",
                              "command line", "pip", "docker", "ci")
META_PATTERNS = (
    r"^\s*(sure|certainly|of course|okay|ok)\b", r"\bhere('s| is| are)\b", r"\brewritten\b", r"\brephrased\b",
    r"\brewrite\b", r"\binstruction\b", r"\bas an ai\b", r"^\s*note\s*:", r"\bi (have|will|would|can)\b",
    r"\boriginal (task|text|sentence)\b", r"\bthe task (is|asks)\b",
    # advice to the reader instead of an instruction, and code spans, are commentary too
    r"\byou (can|could|should|may|might|will) (use|try|simply|just|call|do)\b", r"`[^`]+`",
)
FOCUS_SHIFT_BANNED = ("evict", "eviction", "lru", "ttl", "expire", "expiry", "concurrent", "concurrency",
                      "thread", "threads", "thread-safe", "async", "asynchronous", "parallel", "lock",
                      "performance", "fast", "efficient", "scalable", "optimize", "optimized")
IMPLEMENTATION_LANGUAGE = ("loop", "for loop", "while", "iterate", "iterates", "recursion", "recursive",
                           "comprehension", "import", "re.compile", "hash map", "hashmap", "variable",
                           "variables", "if statement", "lambda", "decorator", "algorithm", "o(1)", "o(n)",
                           "ordereddict", "collections", "dict()", "list()", "try", "except")
DELIVERABLES = ("function", "functions", "class", "classes", "method", "methods", "module", "modules",
                "script", "scripts", "helper", "helpers", "program", "api", "endpoint", "interface")


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
    ratio = len(output.strip()) / max(1, len(base.strip()))
    if ratio > MAX_LENGTH_RATIO or ratio < 1 / MAX_LENGTH_RATIO:
        return [f"length {len(output.strip())} is outside ±200% of the base length {len(base.strip())}"]
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
    return [f"new reference to format, performance or tooling {w!r}"
            for w in _new_phrases(base, output, FORMAT_PERFORMANCE_TOOLING)]


def check_meta_commentary(base: str, output: str) -> list[str]:
    lowered = output.lower()
    hits = [p for p in META_PATTERNS if re.search(p, lowered, re.MULTILINE) and not re.search(p, base.lower())]
    stripped = output.strip()
    if len(stripped) >= 2 and stripped[0] in "\"'`" and stripped[-1] in "\"'`":
        hits.append("quoted output")
    return ["meta-commentary" + (f" ({len(hits)} signs)" if len(hits) > 1 else "")] if hits else []


COMMON_RULES: tuple[Callable[[str, str], list[str]], ...] = (
    check_empty, check_length, check_forbidden_tokens, check_extra_work_verbs, check_extra_goal_sentences,
    check_format_performance_tooling, check_meta_commentary,
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
    return [f"restatement adds implementation language {w!r}"
            for w in _new_phrases(base, output, IMPLEMENTATION_LANGUAGE)]


def validate_rewrite(base: str, output: str,
                     extra_rules: tuple[Callable[[str, str], list[str]], ...] = ()) -> list[str]:
    """Every reason to reject `output` as a rewrite of `base`; [] accepts it."""
    if check_empty(base, output):
        return check_empty(base, output)
    reasons: list[str] = []
    for rule in COMMON_RULES[1:] + tuple(extra_rules):
        reasons += rule(base, output)
    return reasons


def clean_model_output(text: str) -> str:
    """Strip surrounding whitespace and a code fence; everything else is judged as is."""
    return re.sub(r"^```[a-z]*\n?|\n?```$", "", text.strip()).strip()
