"""The value sets every layer shares, declared once: modes, decisions, gates and verdicts.

A `Literal` where the values only travel inside ironbench (and in events, as plain
strings); a `StrEnum` where a person types them on the command line, so the CLI's
choices and the library's checks are the same declaration. The subsets that several
layers count by (the variants judged, the material ones) are declared here too, and
reach SQL as the `decision_kinds` view (`decision_kind_rows`).
"""

from collections.abc import Iterable
from enum import StrEnum
from typing import Literal, get_args

Mode = Literal["baseline", "adversarial", "stress", "gauntlet"]
# A suite's mode: a case's, "mixed" (each case names its own) or "canonical" (baseline cases
# grouped by complexity); in the schema's order.
SuiteMode = Literal["baseline", "adversarial", "stress", "mixed", "gauntlet", "canonical"]
# A canonical suite's groups of cases, smallest first.
Complexity = Literal["small", "mid", "large"]
COMPLEXITIES: tuple[Complexity, ...] = get_args(Complexity)

# What a stopping decision concluded, per mode (DecisionTaken.decision).
BaselineDecision = Literal["stable", "exhausted", "gated"]  # gated: by `run --against`, across cases
VariantDecision = Literal["reference", "not_material", "stochastic", "structural", "within_noise"]
LevelDecision = Literal["systematic_failure", "systematic_success", "mixed"]
LadderDecision = Literal["boundary", "tentative", "fails_at_base", "no_boundary"]
DecisionKind = BaselineDecision | VariantDecision | LevelDecision | LadderDecision

# A variant judged against its reference (every variant decision but the reference itself),
# and the judged ones whose outcome differed beyond noise: they changed the outcome materially.
MATERIAL: tuple[VariantDecision, ...] = ("stochastic", "structural")
JUDGED: tuple[VariantDecision, ...] = ("not_material", "within_noise", *MATERIAL)
# The judged variants whose first run differed from the reference (material, or within noise).
DIFFERED: tuple[VariantDecision, ...] = (*MATERIAL, "within_noise")
LEVEL_DECISIONS: tuple[LevelDecision, ...] = get_args(LevelDecision)
LADDER_DECISIONS: tuple[LadderDecision, ...] = get_args(LadderDecision)
# A ladder verdict that names a level: the boundary, a tentative one, or level 0 itself.
NAMED_LEVEL: tuple[LadderDecision, ...] = ("boundary", "tentative", "fails_at_base")


def decision_kind_rows() -> list[tuple[str, str, bool, bool]]:
    """Every decision kind as (decision, what it decides, judged, material): the rows of the
    `decision_kinds` view queries count by instead of spelling the kinds out."""
    of = {"baseline": BaselineDecision, "variant": VariantDecision, "level": LevelDecision, "ladder": LadderDecision}
    return [
        (decision, what, decision in JUDGED, decision in MATERIAL)
        for what, kind in of.items()
        for decision in get_args(kind)
    ]


class Gate(StrEnum):
    """What fails a comparison: the stratified test across cases, or any case after min-p adjustment."""

    overall = "overall"
    cases = "cases"


class FailOn(StrEnum):
    """regression: lower success only; change: any shift of the gating family, either way."""

    regression = "regression"
    change = "change"


class On(StrEnum):
    """What a comparison counts as a success: the target's own claim, or the harness's check."""

    success = "success"
    correct = "correct"


# A comparison's verdict, and each compared case's.
Verdict = Literal["regression", "within margin", "change", "improvement", "no significant change"]
CaseVerdict = Literal["regression", "improvement", "no significant change", "only in A", "only in B"]

# What one piece of comparison evidence is: a run of the target, or a gauntlet conversation.
Unit = Literal["run", "conversation"]

# What a harness-owned check concluded about a saved brick (CheckCompleted.verdict);
# tampered (evidence the brick gamed its check) is not correct in every rate; harness_fault
# (the check could not run) counts in no rate, like an infrastructure error.
# no_brick: the target named a brick the harness would not take (targets/brick.py says why)
CheckVerdict = Literal[
    "correct", "wrong", "no_brick", "no_entry_point", "import_error", "timeout", "tampered", "harness_fault"
]
CHECK_VERDICTS: tuple[str, ...] = get_args(CheckVerdict)


def reference_is_file(reference: str) -> bool:
    """Whether a check's `reference` names a file (one line ending in .py), not inline code."""
    return "\n" not in reference and reference.strip().endswith(".py")


# Why one validation attempt failed, read from the target's debug files (core/causes.py).
AttemptCauseName = Literal[
    "syntax_error", "import_error", "no_tests_collected", "assertions_failed", "timeout", "other"
]
# Why a failed invocation failed: its last failed attempt's cause, or `fence`: what its fence
# withheld is why (sandbox/denials.py), which outranks its attempts' (they failed for it).
FailureCause = AttemptCauseName | Literal["fence"]
FENCE_CAUSE: Literal["fence"] = "fence"
FAILURE_CAUSES: tuple[str, ...] = (*get_args(AttemptCauseName), FENCE_CAUSE)

# A fence's levels, lowest first (`sandbox_applied.level`; a run's level is its lowest machine's).
FenceLevel = Literal["none", "partial", "full"]
FENCE_LEVELS: tuple[str, ...] = get_args(FenceLevel)


def lowest_fence(levels: Iterable[str]) -> str | None:
    """The lowest of these fence levels (None: there is none yet)."""
    return min(levels, key=FENCE_LEVELS.index, default=None)
