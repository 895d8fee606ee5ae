"""Outcome parsing: data-driven rules map exit code and printed markers to an outcome."""

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ironbench.errors import IronbenchError

RULES_DIR = Path(__file__).parent / "rules"


class _Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SuccessRule(_Rules):
    exit_code: int | None = 0
    markers: list[str] = []


class StageRule(_Rules):
    stage: str
    marker: str


class CountRule(_Rules):
    count: str
    plus: int = 0
    zero_when: str | None = None


class OutcomeRules(_Rules):
    name: str
    markers: dict[str, str]
    success: SuccessRule
    brick_path: str | None = None
    failure_stage: list[StageRule]
    attempts: CountRule
    repairs_triggered: CountRule

    def compiled(self) -> dict[str, re.Pattern]:
        return {name: re.compile(pattern, re.MULTILINE) for name, pattern in self.markers.items()}


@dataclass(frozen=True, slots=True)
class Outcome:
    success: bool
    failure_stage: str | None
    attempts: int
    repairs_triggered: int
    brick_path: str | None = None

    def signature(self) -> tuple:
        """What "equivalent runs" compares for adaptive stopping."""
        return (self.success, self.failure_stage, self.attempts, self.repairs_triggered)


UNKNOWN = Outcome(success=False, failure_stage="unknown", attempts=0, repairs_triggered=0)


@cache
def load_rules(name_or_path: str = "ironclad") -> tuple[OutcomeRules, dict[str, re.Pattern]]:
    path = Path(name_or_path)
    if not path.suffix:
        path = RULES_DIR / f"{name_or_path}.yaml"
    try:
        rules = OutcomeRules.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        return rules, rules.compiled()
    except FileNotFoundError:
        raise IronbenchError(f"{path}: no such outcome rules file") from None
    except (yaml.YAMLError, ValidationError, re.error) as exc:
        first = str(exc).splitlines()[0]
        raise IronbenchError(f"{path}: invalid outcome rules: {first}") from None


def _count(rule: CountRule, counts: dict[str, int]) -> int:
    if rule.zero_when and counts.get(rule.zero_when):
        return 0
    return counts.get(rule.count, 0) + rule.plus


def parse_outcome(exit_code: int | None, stdout: str, rules_name: str = "ironclad") -> Outcome:
    """Map a finished process to an Outcome; output nobody recognises gives `unknown`."""
    rules, patterns = load_rules(rules_name)
    counts = {name: len(pattern.findall(stdout)) for name, pattern in patterns.items()}
    if not any(counts.values()):
        return UNKNOWN
    success = (rules.success.exit_code is None or exit_code == rules.success.exit_code) and all(
        counts.get(marker) for marker in rules.success.markers
    )
    brick_path = None
    if rules.brick_path:
        match = patterns[rules.brick_path].search(stdout)
        if match and match.groupdict().get("path"):
            brick_path = match.group("path")
    stage = None
    if not success:
        stage = next((r.stage for r in rules.failure_stage if counts.get(r.marker)), "unknown")
    return Outcome(
        success=success,
        failure_stage=stage,
        attempts=_count(rules.attempts, counts),
        repairs_triggered=_count(rules.repairs_triggered, counts),
        brick_path=brick_path,
    )
