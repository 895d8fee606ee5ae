"""The plan of a run: which cases and variants, under which keys and streams. Pure."""

import hashlib
from dataclasses import dataclass

from ironbench.suite import Suite

BASE_VARIANT = "base"


@dataclass(frozen=True, slots=True)
class PlannedCase:
    case_id: str
    variant_id: str
    instruction: str
    max_runs: int
    timeout_seconds: int

    def stream(self, run_index: int) -> str:
        return f"baseline/{self.case_id}/run_{run_index:03d}"

    @property
    def decision_stream(self) -> str:
        return f"baseline/{self.case_id}"


def plan_baseline(suite: Suite) -> list[PlannedCase]:
    return [
        PlannedCase(case.id, BASE_VARIANT, case.instruction, case.runs, suite.case_timeout(case))
        for case in suite.cases
    ]


def invocation_key(run_id: str, suite_id: str, case_id: str, variant_id: str, run_index: int) -> str:
    """The deterministic identity of one invocation; recorded complete at most once."""
    return f"{run_id}/{suite_id}/{case_id}/{variant_id}/{run_index:03d}"


def instruction_hash(instruction: str) -> str:
    return hashlib.sha256(instruction.encode("utf-8")).hexdigest()
