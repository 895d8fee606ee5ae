"""Outcome parsing: data-driven rules map exit code and printed markers to an outcome."""

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

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
    # `plus` is added only when one of these markers was seen (always, if empty).
    plus_when: list[str] = []
    zero_when: str | None = None

    def markers(self) -> list[str]:
        return [self.count, *self.plus_when, *([self.zero_when] if self.zero_when else [])]


class OutcomeRules(_Rules):
    name: str
    markers: dict[str, str]
    success: SuccessRule
    brick_path: str | None = None
    failure_stage: list[StageRule]
    attempts: CountRule
    repairs_triggered: CountRule
    infra_errors: list[str] = []

    @model_validator(mode="after")
    def _markers_are_defined(self):
        named = [*self.success.markers, *([self.brick_path] if self.brick_path else []), *self.infra_errors,
                 *(r.marker for r in self.failure_stage), *self.attempts.markers(), *self.repairs_triggered.markers()]
        for name in named:
            if name not in self.markers:
                raise ValueError(f"marker {name!r} is used but not defined under markers")
        return self

    def compiled(self) -> dict[str, re.Pattern]:
        return {name: re.compile(pattern, re.MULTILINE) for name, pattern in self.markers.items()}


@dataclass(frozen=True, slots=True)
class Outcome:
    success: bool
    failure_stage: str | None
    attempts: int
    repairs_triggered: int
    brick_path: str | None = None
    # The output line that matched an infrastructure-error rule: the backend failed,
    # so this run is no evidence about the target.
    infra_error: str | None = None

    def signature(self) -> tuple:
        """What "equivalent runs" compares for adaptive stopping."""
        return (self.success, self.failure_stage, self.attempts, self.repairs_triggered)


UNKNOWN_STAGE = "unknown"  # output nobody recognises
TIMEOUT_STAGE = "timeout"  # killed at its timeout: its own category, whatever it printed
INFRA_STAGE = "infra_error"  # the backend failed: never one of the target's own stages

UNKNOWN = Outcome(success=False, failure_stage=UNKNOWN_STAGE, attempts=0, repairs_triggered=0)


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
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise IronbenchError(f"{path}: invalid outcome rules: {where + ': ' if where else ''}{message}") from None
    except (yaml.YAMLError, re.error) as exc:
        first = str(exc).splitlines()[0]
        raise IronbenchError(f"{path}: invalid outcome rules: {first}") from None


def _count(rule: CountRule, counts: dict[str, int]) -> int:
    if rule.zero_when and counts.get(rule.zero_when):
        return 0
    plus = rule.plus if not rule.plus_when or any(counts.get(m) for m in rule.plus_when) else 0
    return counts.get(rule.count, 0) + plus


def _first_line(patterns: list[re.Pattern], stdout: str) -> str | None:
    """The earliest line any of `patterns` matches, without its line ending."""
    matches = [m for m in (p.search(stdout) for p in patterns) if m]
    if not matches:
        return None
    return min(matches, key=lambda m: m.start()).group(0).strip()


def parse_outcome(exit_code: int | None, stdout: str, rules_name: str = "ironclad",
                  timed_out: bool = False) -> Outcome:
    """Map a finished (or, `timed_out`, killed) process to an Outcome.

    Counts come from whatever was printed, also up to a kill. An infrastructure
    error outranks everything; a timeout is its own stage; output nobody recognises
    gives `unknown`, never a crash.
    """
    rules, patterns = load_rules(rules_name)
    counts = {name: len(pattern.findall(stdout)) for name, pattern in patterns.items()}
    infra_error = _first_line([patterns[name] for name in rules.infra_errors], stdout)
    if not any(counts.values()) and not timed_out:
        return UNKNOWN
    success = not timed_out and (rules.success.exit_code is None or exit_code == rules.success.exit_code) and all(
        counts.get(marker) for marker in rules.success.markers
    ) and infra_error is None
    brick_path = None
    if rules.brick_path:
        match = patterns[rules.brick_path].search(stdout)
        if match and match.groupdict().get("path"):
            brick_path = match.group("path")
    stage = None
    if infra_error is not None:
        stage = INFRA_STAGE
    elif timed_out:
        stage = TIMEOUT_STAGE
    elif not success:
        stage = next((r.stage for r in rules.failure_stage if counts.get(r.marker)), UNKNOWN_STAGE)
    return Outcome(
        success=success,
        failure_stage=stage,
        attempts=_count(rules.attempts, counts),
        repairs_triggered=_count(rules.repairs_triggered, counts),
        brick_path=brick_path,
        infra_error=infra_error,
    )
