"""The AI generators (the spec's four, five more in use beyond it): prompts and acceptance rules. The model calls
themselves happen at run time (ironbench/run/ai_generation.py); the prompt is metadata
and never reaches the target.

An AI generator returns (prompt, metadata); metadata may carry "openings", the ways its
answer may begin, which the run turns into a grammar where the model's backend takes one.
"""

import json
from functools import lru_cache
from typing import Annotated, Literal, TypeVar

from pydantic import Field, model_validator

from ironbench.generators.ai_validation import (
    check_focus_shift,
    check_no_implementation_language,
    check_not_longer,
    check_same_ambiguity,
    check_same_deliverables,
    check_slightly_longer,
)
from ironbench.generators.registry import GeneratorParams, register_alias, register_generator
from ironbench.generators.requirements import TermMap, extract, keep_words, shipped_term_map
from ironbench.llms import EMBEDDED_MODEL

PRESERVE = "Preserve the task exactly. Change wording only."
REPLY_ONLY = "Reply with the rewritten instruction only, as one line, with no comments."

Style = Literal["concise_directive", "verbose_formal", "casual_request", "specification_tone"]
Focus = Literal["simplicity", "clarity", "maintainability", "correctness_emphasis_soft"]
Register = Literal["planner_voice", "executive_voice", "peer_engineer_voice"]

# Worked examples show a small model what "change wording only" means. They name the
# base's own programming language where it has one ({language} below), so the model
# learns to keep it and has no other language to copy; their tasks share no words with
# a typical base.
EXAMPLE_BASES = (
    "Write a {language}function that joins two strings.",
    "Design a {language}class that stores user names.",
)
Examples = tuple[str, str]  # the rewrites of EXAMPLE_BASES

STYLES: dict[Style, tuple[str, Examples]] = {
    "concise_directive": (
        "a concise, direct imperative",
        ("Create a {language}function to join two strings.", "Build a {language}class for storing user names."),
    ),
    "verbose_formal": (
        "a more verbose, formal register",
        (
            "Please implement a {language}function that joins two given strings together.",
            "Kindly design a {language}class whose purpose is to store user names.",
        ),
    ),
    "casual_request": (
        "a casual, friendly request",
        (
            "Could you write a {language}function that joins two strings?",
            "Can you design a {language}class that stores user names?",
        ),
    ),
    "specification_tone": (
        "the tone of a short specification",
        ("The {language}function shall join two strings.", "The {language}class shall store user names."),
    ),
}
FOCUSES: dict[Focus, tuple[str, Examples]] = {
    "simplicity": (
        "simplicity",
        (
            "Write a simple {language}function that joins two strings.",
            "Design a straightforward {language}class that stores user names.",
        ),
    ),
    "clarity": (
        "clarity",
        (
            "Write a clear {language}function that joins two strings.",
            "Design a clearly structured {language}class that stores user names.",
        ),
    ),
    "maintainability": (
        "maintainability",
        (
            "Write a maintainable {language}function that joins two strings.",
            "Design a {language}class that stores user names and is easy to maintain.",
        ),
    ),
    "correctness_emphasis_soft": (
        "correctness, softly",
        (
            "Write a {language}function that correctly joins two strings.",
            "Design a {language}class that reliably stores user names.",
        ),
    ),
}
REGISTERS: dict[Register, tuple[str, Examples]] = {
    "planner_voice": (
        "a project planner",
        (
            "Our next step is a {language}function that joins two strings.",
            "The next item on the plan is a {language}class that stores user names.",
        ),
    ),
    "executive_voice": (
        "an executive",
        ("Deliver a {language}function that joins two strings.", "We need a {language}class that stores user names."),
    ),
    "peer_engineer_voice": (
        "a peer engineer",
        (
            "Let's write a {language}function that joins two strings.",
            "How about a {language}class that stores user names?",
        ),
    ),
}
# How a rewrite may begin, by style, focus and register: where the backend takes a grammar,
# the answer is constrained to open with one of these, which leaves a small model no room
# for "The task is ...", "Here is ..." or "You can ...". The rest of the sentence is free.
IMPERATIVES = ("Write", "Create", "Implement", "Build", "Design", "Develop", "Make", "Produce", "Define", "Code")
OPENINGS: dict[str, tuple[str, ...]] = {
    "concise_directive": IMPERATIVES,
    "verbose_formal": ("Please", "Kindly", "Implement", "Develop", "Construct", "Produce"),
    "casual_request": ("Could you", "Can you", "Would you", "Hey, could you", "Please"),
    "specification_tone": ("Implement", "Provide", "Define", "Deliver", "Expose"),
    "simplicity": IMPERATIVES,
    "clarity": IMPERATIVES,
    "maintainability": IMPERATIVES,
    "correctness_emphasis_soft": IMPERATIVES,
    "restatement": (
        "Create",
        "Produce",
        "Build",
        "Implement",
        "Provide",
        "Develop",
        "Construct",
        "Make",
        "Given",
        "Take",
    ),
    "planner_voice": ("Our next step is", "The next item on the plan is", "Next, we will", "The plan is to"),
    "executive_voice": ("Deliver", "We need", "I need", "Provide", "Our priority is"),
    "peer_engineer_voice": ("Let's", "How about", "We should", "Can we", "Could you"),
}
RESTATEMENTS: Examples = (
    "Produce a {language}function which, given two strings, gives back both of them joined.",
    "Create a {language}class whose job is to keep user names.",
)


Words = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class RequirementTerms(GeneratorParams):
    """A suite's additions to the requirement checker's shipped term map
    (ironbench/generators/data/requirements.yaml)."""

    synonyms: Annotated[
        list[Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=2)]],
        Field(description="groups of words that state the same requirement, e.g. [[reverse, mirror]]"),
    ] = []  # noqa: RUF012 (pydantic copies field defaults)
    adds: Annotated[
        dict[str, Words],
        Field(description="kind -> words that add a requirement of that kind, e.g. {constraint: [idempotent]}"),
    ] = {}  # noqa: RUF012 (pydantic copies field defaults)


class AiParams(GeneratorParams):
    model: str = EMBEDDED_MODEL
    temperature: Annotated[float, Field(strict=False, ge=0.0, le=2.0)] = 0.7
    max_tokens: Annotated[int, Field(strict=True, gt=0, le=2048)] = 96
    max_attempts: Annotated[int, Field(strict=True, ge=1, le=10)] = 3
    ai_judge: Annotated[
        str | None,
        Field(
            min_length=1,
            description="a model id that judges each rewrite the rules accept (overrides the suite's ai_judge; "
            "null: no judge); meant for strong models",
        ),
    ] = None
    terms: RequirementTerms | None = None


@lru_cache(maxsize=32)
def _extended(terms_json: str) -> TermMap:
    terms = json.loads(terms_json)
    return shipped_term_map().extended(terms["synonyms"], terms["adds"])


def requirement_terms(params: AiParams) -> TermMap:
    """The term map a generator entry's rewrites are checked with: the shipped one, plus
    the entry's own `terms`."""
    if params.terms is None:
        return shipped_term_map()
    return _extended(json.dumps(params.terms.model_dump(mode="json"), sort_keys=True))


class RewriteParams(AiParams):
    styles: list[Style] = list(STYLES)  # noqa: RUF012 (pydantic copies field defaults)


class FocusParams(AiParams):
    focus_values: list[Focus] = list(FOCUSES)  # noqa: RUF012 (pydantic copies field defaults)

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data):
        # `focuses`, the name ironbench used before the spec's, reads as focus_values.
        if isinstance(data, dict) and "focuses" in data:
            if "focus_values" in data:
                raise ValueError("focuses: shorthand for focus_values, which is given too")
            data = {("focus_values" if k == "focuses" else k): v for k, v in data.items()}
        return data


class RegisterParams(AiParams):
    registers: list[Register] = list(REGISTERS)  # noqa: RUF012 (pydantic copies field defaults)


T = TypeVar("T")


def _keep(base: str, params: "AiParams") -> str:
    words = keep_words(base, requirement_terms(params))
    if not words:
        return ""
    listed = words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
    return f" Keep the words {listed}. Add no detail the instruction does not give."


def _of_slot(choices: list[T], slot: int) -> T:
    """A slot's choice (a style, a focus, a register): slot 1 takes the first, and slots cycle."""
    return choices[(slot - 1) % len(choices)]


def _prompt(task: str, base: str, params: "AiParams", examples: Examples) -> str:
    """The task, the spec's sentence, the words the checker will look for, two worked
    examples, then the base: the model only has to continue the pattern."""
    languages = [t.shown for t in extract(base, requirement_terms(params)) if t.kind == "language"]
    language = f"{languages[0]} " if len(languages) == 1 else ""
    shots = "".join(
        f"Instruction: {a.format(language=language)}\nRewrite: {b.format(language=language)}\n\n"
        for a, b in zip(EXAMPLE_BASES, examples, strict=True)
    )
    return f"{task} {PRESERVE}{_keep(base, params)} {REPLY_ONLY}\n\n{shots}Instruction: {base}\nRewrite:"


@register_generator("ai_rewrite", "ai", RewriteParams, "an AI rewrite in one of four styles", rules=())
def ai_rewrite(base: str, params: RewriteParams, slot: int) -> tuple[str, dict]:
    style = _of_slot(params.styles, slot)
    manner, examples = STYLES[style]
    prompt = _prompt(f"Rewrite an instruction in {manner}.", base, params, examples)
    return prompt, {"style": style, "openings": OPENINGS[style]}


@register_generator(
    "ai_rephrase_with_focus_shift",
    "ai",
    FocusParams,
    "an AI rephrasing that leans on one quality, by adjectives only",
    rules=(check_focus_shift,),
)
def ai_rephrase_with_focus_shift(base: str, params: FocusParams, slot: int) -> tuple[str, dict]:
    focus = _of_slot(params.focus_values, slot)
    quality, examples = FOCUSES[focus]
    task = (
        f"Rephrase an instruction so that it gently emphasises {quality}, using adjectives only; "
        "add no new requirement."
    )
    return _prompt(task, base, params, examples), {"focus": focus, "openings": OPENINGS[focus]}


@register_generator(
    "ai_semantic_restatement",
    "ai",
    AiParams,
    "an AI restatement of the same meaning in other words",
    rules=(check_no_implementation_language,),
)
def ai_semantic_restatement(base: str, params: AiParams, slot: int) -> tuple[str, dict]:
    task = "Restate an instruction in different words with exactly the same meaning; say what, not how."
    return _prompt(task, base, params, RESTATEMENTS), {"openings": OPENINGS["restatement"]}


@register_generator(
    "ai_register_shift",
    "ai",
    RegisterParams,
    "an AI rephrasing in another speaker's voice, same deliverables",
    rules=(check_same_deliverables,),
)
def ai_register_shift(base: str, params: RegisterParams, slot: int) -> tuple[str, dict]:
    register = _of_slot(params.registers, slot)
    speaker, examples = REGISTERS[register]
    task = f"Rephrase an instruction as {speaker} would say it, asking for the same deliverables."
    return _prompt(task, base, params, examples), {"register": register, "openings": OPENINGS[register]}


# -- beyond the spec: five more rewrites in use, under the same guard -----------------------

MORE_EXAMPLES: dict[str, Examples] = {
    "constraint_surface": (
        "Write a {language}function that takes two strings and joins them into one.",
        "Design a {language}class that keeps the user names it is given.",
    ),
    "minimalism": ("Write a {language}function joining two strings.", "Design a {language}class storing user names."),
    "elaboration": (
        "Write a {language}function that takes two strings and joins them together.",
        "Design a {language}class whose purpose is to store the names of users.",
    ),
    "style_mismatch": (
        "hey so i need a {language}function that joins two strings, thx",
        "ok so can u design a {language}class that stores user names pls",
    ),
    "ambiguity_preserving": (
        "Create a {language}function that joins two strings.",
        "Build a {language}class that keeps user names.",
    ),
}
OPENINGS.update(
    {
        "constraint_surface": IMPERATIVES,
        "minimalism": IMPERATIVES,
        "elaboration": (*IMPERATIVES, "Please"),
        "style_mismatch": ("hey", "hey so", "ok so", "so", "yo", "um so", "hi, can u", "pls"),
        "ambiguity_preserving": OPENINGS["restatement"],
    }
)


def _more(name: str, key: str, task: str, description: str, rules: tuple = ()) -> None:
    def rewrite(base: str, params: AiParams, slot: int) -> tuple[str, dict]:
        return _prompt(task, base, params, MORE_EXAMPLES[key]), {"openings": OPENINGS[key]}

    register_generator(name, "ai", AiParams, description, rules=rules)(rewrite)


_more(
    "ai_constraint_surface_without_adding",
    "constraint_surface",
    "Rewrite an instruction so that what it takes for granted is said outright; state no assumption "
    "it does not already make and add no requirement.",
    "an AI rewrite that makes the instruction's implicit assumptions explicit, adding none",
    (check_no_implementation_language,),
)
_more(
    "ai_minimalism_pass",
    "minimalism",
    "Compress an instruction to its shortest complete form; drop no requirement.",
    "an AI compression of the instruction to a minimal form, every requirement kept",
    (check_not_longer,),
)
_more(
    "ai_elaboration_pass",
    "elaboration",
    "Expand an instruction slightly, in fuller wording, without any new requirement.",
    "an AI expansion of the instruction's wording, slightly longer, nothing required that was not",
    (check_slightly_longer,),
)
_more(
    "ai_adversarial_style_mismatch",
    "style_mismatch",
    "Rewrite an instruction in a very informal, messy chat style, lower case and casual; keep every requirement.",
    "an AI rewrite in a very informal, messy style",
)
_more(
    "ai_ambiguity_preserving_rewrite",
    "ambiguity_preserving",
    "Reword an instruction so that whatever it leaves vague stays exactly as vague and nothing vague is added.",
    "an AI rewording that leaves open exactly what the instruction leaves open",
    (check_same_ambiguity,),
)
# The name suites in the wild give ai_rewrite (its styles are what it varies).
register_alias("ai_rewrite_style", "ai_rewrite")
