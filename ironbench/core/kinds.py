"""The value sets every layer shares, declared once: modes, decisions, gates and verdicts.

A `Literal` where the values only travel inside ironbench (and in events, as plain
strings); a `StrEnum` where a person types them on the command line, so the CLI's
choices and the library's checks are the same declaration.
"""

from enum import StrEnum
from typing import Literal, get_args

Mode = Literal["baseline", "adversarial", "stress", "gauntlet"]
# A case's own mode; a suite's mode may also be "mixed" (cases of several modes).
SuiteMode = Literal["baseline", "adversarial", "stress", "gauntlet", "mixed"]

# What a stopping decision concluded, per mode (DecisionTaken.decision).
BaselineDecision = Literal["stable", "exhausted"]
VariantDecision = Literal["reference", "not_material", "stochastic", "structural", "within_noise"]
LevelDecision = Literal["systematic_failure", "systematic_success", "mixed"]
LadderDecision = Literal["boundary", "tentative", "no_boundary", "fails_at_base"]
DecisionKind = BaselineDecision | VariantDecision | LevelDecision | LadderDecision
DECISION_KINDS: frozenset[str] = frozenset(
    value for kind in (BaselineDecision, VariantDecision, LevelDecision, LadderDecision) for value in get_args(kind)
)

RunStatus = Literal["running", "finished", "aborted"]


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
# harness_fault (the check could not run) counts in no rate, like an infrastructure error.
CheckVerdict = Literal["correct", "wrong", "no_entry_point", "import_error", "timeout", "harness_fault"]
CHECK_VERDICTS: tuple[str, ...] = get_args(CheckVerdict)
# Why one validation attempt failed, read from the target's debug files (core/causes.py).
FailureCause = Literal["syntax_error", "import_error", "no_tests_collected", "assertions_failed", "timeout", "other"]
FAILURE_CAUSES: tuple[str, ...] = get_args(FailureCause)
