"""The optional semantic judge of AI rewrites: its questions, and the verdict its answers make.

The requirement rules see words; a judge (`ai_judge: MODEL`) is asked about meaning: does
the rewrite ask for exactly the same task as the base, nothing added and nothing removed?
It is asked both ways round (base against rewrite, rewrite against base), because a model
asked one way tends to miss what the second text lacks. Only two yeses accept. Meant for
strong models: the embedded 135M model cannot tell a narrowed task from the same one.
The model calls happen at run time (ironbench/run/ai_generation.py), cached like every call.
"""

from dataclasses import dataclass, field

from ironbench.llms import YES_NO_OPTIONS, yes_or_no

JUDGE_SYSTEM = "You compare two programming instructions. You reply with one word: yes or no."
JUDGE_PROMPT = (
    "Instruction A: {first}\n"
    "Instruction B: {second}\n"
    "Does instruction B ask for exactly the same task as instruction A, with nothing added and nothing "
    "removed? Answer yes or no."
)
JUDGE_OPTIONS = YES_NO_OPTIONS
DIRECTIONS = ("base_to_rewrite", "rewrite_to_base")


def judge_questions(base: str, rewrite: str) -> dict[str, str]:
    """The two prompts, by direction: the rewrite judged against the base, then the base
    judged against the rewrite."""
    flat = {"base": " ".join(base.split()), "rewrite": " ".join(rewrite.split())}
    return {
        "base_to_rewrite": JUDGE_PROMPT.format(first=flat["base"], second=flat["rewrite"]),
        "rewrite_to_base": JUDGE_PROMPT.format(first=flat["rewrite"], second=flat["base"]),
    }


@dataclass(frozen=True)
class JudgeVerdict:
    """What the judge said: its raw answers by direction and what they make together."""

    model: str
    answers: dict[str, str] = field(default_factory=dict)

    @property
    def readings(self) -> dict[str, bool | None]:
        return {direction: yes_or_no(self.answers.get(direction, "")) for direction in DIRECTIONS}

    @property
    def same_task(self) -> bool | None:
        """True: yes both ways. False: no either way. None: no yes/no answer to read."""
        readings = self.readings.values()
        if False in readings:
            return False
        return None if None in readings else True

    def reason(self) -> str | None:
        """The rejection reason, naming the judge and its answers; None when it accepts."""
        said = ", ".join(
            f"{d.replace('_', ' ')}: {' '.join(self.answers.get(d, '').split())[:40]!r}" for d in DIRECTIONS
        )
        if self.same_task is False:
            return f"judge_rejects: {self.model} says the rewrite asks for another task ({said})"
        if self.same_task is None:
            return f"judge_no_verdict: {self.model} gave no yes/no answer ({said})"
        return None

    def to_dict(self) -> dict:
        return {"model": self.model, "same_task": self.same_task, "answers": dict(self.answers)}
