"""The vocabulary every layer shares: events, outcomes and their rules, value sets, errors, redaction.

Pure and light: importing it loads no database, model, network or terminal library. The
outcome rules (pydantic and YAML) load on first use, so the command line starts fast.
"""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.core.errors import (
    ChainBroken,
    IronbenchError,
    QueryError,
    RunInterrupted,
    RunNotFound,
    RunStopped,
    StoreError,
    SuiteError,
    TargetError,
)
from ironbench.core.events import (
    EVENT_TYPES,
    AiOutputRejected,
    DecisionTaken,
    Event,
    EventType,
    InvocationCompleted,
    InvocationStarted,
    RecordedEvent,
    ReportWritten,
    RunAborted,
    RunFinished,
    RunImported,
    RunStarted,
    ScenarioFinished,
    ScenarioStarted,
    TurnAnswered,
    TurnScored,
    VariantDropped,
    VariantGenerated,
    VariantShortfall,
    event_from_dict,
)
from ironbench.core.keys import instruction_hash, invocation_key
from ironbench.core.kinds import DecisionKind, FailOn, Gate, Mode, Verdict
from ironbench.core.redact import Redactor

if TYPE_CHECKING:
    from ironbench.core.outcome import (
        Outcome as Outcome,
    )
    from ironbench.core.outcome import (
        RuleSet as RuleSet,
    )
    from ironbench.core.outcome import (
        load_rules as load_rules,
    )
    from ironbench.core.outcome import (
        parse_outcome as parse_outcome,
    )

# The outcome rules need pydantic and YAML: they load on first use.
__getattr__ = lazy_exports(__name__, dict.fromkeys(("Outcome", "RuleSet", "load_rules", "parse_outcome"), "outcome"))

__all__ = [
    "EVENT_TYPES",
    "AiOutputRejected",
    "ChainBroken",
    "DecisionKind",
    "DecisionTaken",
    "Event",
    "EventType",
    "FailOn",
    "Gate",
    "InvocationCompleted",
    "InvocationStarted",
    "IronbenchError",
    "Mode",
    "Outcome",
    "QueryError",
    "RecordedEvent",
    "Redactor",
    "ReportWritten",
    "RuleSet",
    "RunAborted",
    "RunFinished",
    "RunImported",
    "RunInterrupted",
    "RunNotFound",
    "RunStarted",
    "RunStopped",
    "ScenarioFinished",
    "ScenarioStarted",
    "StoreError",
    "SuiteError",
    "TargetError",
    "TurnAnswered",
    "TurnScored",
    "VariantDropped",
    "VariantGenerated",
    "VariantShortfall",
    "Verdict",
    "event_from_dict",
    "instruction_hash",
    "invocation_key",
    "load_rules",
    "parse_outcome",
]
