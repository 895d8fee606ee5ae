"""The spec's four AI generators: prompts and acceptance rules. The model calls
themselves happen at run time (ironbench/run/ai_generation.py); the prompt is metadata
and never reaches the target."""

from typing import Annotated, Literal

from pydantic import Field

from ironbench.generators.ai_validation import (
    check_focus_shift,
    check_no_implementation_language,
    check_same_deliverables,
)
from ironbench.generators.registry import GeneratorParams, register_generator
from ironbench.llms.access import EMBEDDED_MODEL

PRESERVE = "Preserve the task exactly. Change wording only."
REPLY_ONLY = "Reply with the rewritten instruction only, as one line, with no comments."

Style = Literal["concise_directive", "verbose_formal", "casual_request", "specification_tone"]
Focus = Literal["simplicity", "clarity", "maintainability", "correctness_emphasis_soft"]
Register = Literal["planner_voice", "executive_voice", "peer_engineer_voice"]

STYLES: dict[Style, str] = {
    "concise_directive": "a concise, direct imperative",
    "verbose_formal": "a more verbose, formal register",
    "casual_request": "a casual, friendly request",
    "specification_tone": "the tone of a short specification",
}
FOCUSES: dict[Focus, str] = {
    "simplicity": "simplicity",
    "clarity": "clarity",
    "maintainability": "maintainability",
    "correctness_emphasis_soft": "correctness, softly",
}
REGISTERS: dict[Register, str] = {
    "planner_voice": "a project planner",
    "executive_voice": "an executive",
    "peer_engineer_voice": "a peer engineer",
}


class AiParams(GeneratorParams):
    model: str = EMBEDDED_MODEL
    temperature: Annotated[float, Field(strict=False, ge=0.0, le=2.0)] = 0.7
    max_tokens: Annotated[int, Field(strict=True, gt=0, le=2048)] = 96
    max_attempts: Annotated[int, Field(strict=True, ge=1, le=10)] = 3


class RewriteParams(AiParams):
    styles: list[Style] = list(STYLES)  # noqa: RUF012 (pydantic copies field defaults)


class FocusParams(AiParams):
    focuses: list[Focus] = list(FOCUSES)  # noqa: RUF012 (pydantic copies field defaults)


class RegisterParams(AiParams):
    registers: list[Register] = list(REGISTERS)  # noqa: RUF012 (pydantic copies field defaults)


def _prompt(task: str, base: str) -> str:
    return f"{task} {PRESERVE} {REPLY_ONLY}\n\nInstruction: {base}"


@register_generator("ai_rewrite", "ai", RewriteParams, "an AI rewrite in one of four styles", rules=())
def ai_rewrite(base: str, params: RewriteParams, slot: int) -> tuple[str, dict]:
    style = params.styles[(slot - 1) % len(params.styles)]
    return _prompt(f"Rewrite the instruction below in {STYLES[style]}.", base), {"style": style}


@register_generator(
    "ai_rephrase_with_focus_shift",
    "ai",
    FocusParams,
    "an AI rephrasing that leans on one quality, by adjectives only",
    rules=(check_focus_shift,),
)
def ai_rephrase_with_focus_shift(base: str, params: FocusParams, slot: int) -> tuple[str, dict]:
    focus = params.focuses[(slot - 1) % len(params.focuses)]
    task = (
        f"Rephrase the instruction below so that it gently emphasises {FOCUSES[focus]}, using adjectives "
        "only; add no new requirement."
    )
    return _prompt(task, base), {"focus": focus}


@register_generator(
    "ai_semantic_restatement",
    "ai",
    AiParams,
    "an AI restatement of the same meaning in other words",
    rules=(check_no_implementation_language,),
)
def ai_semantic_restatement(base: str, params: AiParams, slot: int) -> tuple[str, dict]:
    task = "Restate the instruction below in different words with exactly the same meaning; say what, not how."
    return _prompt(task, base), {}


@register_generator(
    "ai_register_shift",
    "ai",
    RegisterParams,
    "an AI rephrasing in another speaker's voice, same deliverables",
    rules=(check_same_deliverables,),
)
def ai_register_shift(base: str, params: RegisterParams, slot: int) -> tuple[str, dict]:
    register = params.registers[(slot - 1) % len(params.registers)]
    task = f"Rephrase the instruction below as {REGISTERS[register]} would say it, asking for the same deliverables."
    return _prompt(task, base), {"register": register}
