"""Outcome parsing: data-driven rules map exit code and printed markers to an outcome."""

import hashlib
import json
import re
import string
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from ironbench.core.causes import FailureCauseRules, as_lines, first_match
from ironbench.core.errors import IronbenchError

RULES_DIR = resources.files("ironbench.core") / "rules"
DEFAULT_RULES = "ironclad"


class _Rules(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SuccessRule(_Rules):
    exit_code: int | None = 0
    markers: list[str] = []


class StageRule(_Rules):
    """`stage` when `marker` was seen (any output, without one) and the exit code is
    `exit_code` (any, without one). `{exit_code}` in `stage` is replaced: `exit_{exit_code}`."""

    stage: str
    marker: str | None = None
    exit_code: int | None = None

    @field_validator("stage")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        try:
            fields = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        except ValueError as exc:
            raise ValueError(f"stage {value!r}: {exc}") from None
        if fields - {"exit_code"}:
            raise ValueError(f"stage {value!r}: only {{exit_code}} can be filled in")
        return value

    def matches(self, counts: dict[str, int], exit_code: int | None) -> bool:
        return (self.marker is None or bool(counts.get(self.marker))) and (
            self.exit_code is None or self.exit_code == exit_code
        )

    def name(self, exit_code: int | None) -> str:
        return self.stage.format(exit_code="none" if exit_code is None else exit_code)


class CountRule(_Rules):
    count: str | None = None  # the marker counted (none: 0)
    plus: int = 0
    # `plus` is added only when one of these markers was seen (always, if empty).
    plus_when: list[str] = []
    zero_when: str | None = None

    def markers(self) -> list[str]:
        return [*([self.count] if self.count else []), *self.plus_when, *([self.zero_when] if self.zero_when else [])]


class OutcomeRules(_Rules):
    name: str
    markers: dict[str, str] = {}
    success: SuccessRule = SuccessRule()
    brick_path: str | None = None
    failure_stage: list[StageRule] = []
    attempts: CountRule = CountRule(plus=1)
    repairs_triggered: CountRule = CountRule()
    infra_errors: list[str] = []
    # Output that shows none of the markers is `unknown`, whatever its exit code: the
    # default when markers are defined. False: judge it by the rules above all the same.
    unknown_without_markers: bool | None = None
    # Why validation attempts failed, from the debug files (core/causes.py); none: not read.
    failure_causes: FailureCauseRules | None = None

    @model_validator(mode="after")
    def _markers_are_defined(self) -> "OutcomeRules":
        named = [
            *self.success.markers,
            *([self.brick_path] if self.brick_path else []),
            *self.infra_errors,
            *(r.marker for r in self.failure_stage if r.marker),
            *self.attempts.markers(),
            *self.repairs_triggered.markers(),
        ]
        for name in named:
            if name not in self.markers:
                raise ValueError(f"marker {name!r} is used but not defined under markers")
        return self

    @property
    def needs_markers(self) -> bool:
        return bool(self.markers) if self.unknown_without_markers is None else self.unknown_without_markers

    def compiled(self) -> dict[str, re.Pattern]:
        return {name: re.compile(pattern, re.MULTILINE) for name, pattern in self.markers.items()}


@dataclass(frozen=True)
class RuleSet:
    """Validated rules, their compiled markers, and where they came from."""

    rules: OutcomeRules
    patterns: dict[str, re.Pattern]
    source: str  # a shipped name, or the file's path

    def record(self) -> dict:
        """What a run records, so that resume and references use exactly these rules."""
        definition = self.rules.model_dump(mode="json")
        digest = hashlib.sha256(json.dumps(definition, sort_keys=True).encode("utf-8")).hexdigest()
        return {"name": self.rules.name, "source": self.source, "sha256": digest, "definition": definition}


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
    # (correct,) when the rule compares correctness too (a suite's `equivalence` with `correct`,
    # an adversarial group with a check), else (): the harness's check found the brick correct
    # (True), not correct or no brick (False), or could not run (None).
    correctness: tuple[bool | None, ...] = ()

    def signature(self) -> tuple:
        """What "equivalent runs" compares for adaptive stopping: the spec's four fields, then
        correctness where the rule compares it."""
        return (self.success, self.failure_stage, self.attempts, self.repairs_triggered, *self.correctness)

    @classmethod
    def of_signature(cls, signature: tuple) -> "Outcome":
        """A run with this signature (a hypothetical one, for the scheduler)."""
        success, failure_stage, attempts, repairs_triggered = signature[:4]
        return cls(success, failure_stage, attempts, repairs_triggered, correctness=tuple(signature[4:]))


UNKNOWN_STAGE = "unknown"  # output nobody recognises
TIMEOUT_STAGE = "timeout"  # killed at its timeout: its own category, whatever it printed
INFRA_STAGE = "infra_error"  # the backend failed: never one of the target's own stages

UNKNOWN = Outcome(success=False, failure_stage=UNKNOWN_STAGE, attempts=0, repairs_triggered=0)


def shipped_rules() -> list[str]:
    return sorted(p.name.removesuffix(".yaml") for p in RULES_DIR.iterdir() if p.name.endswith(".yaml"))


def _validated(data: object, source: str) -> RuleSet:
    try:
        rules = OutcomeRules.model_validate(data)
        return RuleSet(rules, rules.compiled(), source)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        raise IronbenchError(f"{source}: invalid outcome rules: {where + ': ' if where else ''}{message}") from None
    except re.error as exc:
        raise IronbenchError(f"{source}: invalid outcome rules: {str(exc).splitlines()[0]}") from None


@cache
def load_rules(name_or_path: str = DEFAULT_RULES, relative_to: str | None = None) -> RuleSet:
    """A shipped rule set by name (`ironclad`, `exit-code`), or a YAML file's; a relative
    path is taken from `relative_to` (the suite's folder) when given."""
    path = Path(name_or_path)
    source = name_or_path
    file: Traversable = path
    if not path.suffix:
        if name_or_path not in shipped_rules():
            raise IronbenchError(
                f"outcome rules {name_or_path!r}: not shipped ({', '.join(shipped_rules())}) and not a .yaml file"
            )
        file = RULES_DIR / f"{name_or_path}.yaml"
    elif relative_to is not None and not path.is_absolute():
        file = Path(relative_to) / path
        source = str(file)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise IronbenchError(f"{file}: no such outcome rules file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IronbenchError(f"{file}: cannot read outcome rules: {exc}") from None
    except yaml.YAMLError as exc:
        raise IronbenchError(f"{file}: invalid outcome rules: {str(exc).splitlines()[0]}") from None
    return _validated(data, source)


@cache
def _recorded(key: str) -> RuleSet:
    record = json.loads(key)
    return _validated(record["definition"], record.get("source", record["definition"].get("name", "recorded")))


def recorded_rules(record: dict | None) -> RuleSet:
    """The rules a run recorded; a run recorded before rules were (None) used Ironclad's."""
    return load_rules(DEFAULT_RULES) if record is None else _recorded(json.dumps(record, sort_keys=True))


def same_rules(a: dict | None, b: dict | None) -> bool:
    """Whether two runs' outcomes mean the same: failure causes explain a failure, they do
    not change an outcome, so rules that differ only there are the same."""
    ignore = {"failure_causes"}
    return recorded_rules(a).rules.model_dump(exclude=ignore) == recorded_rules(b).rules.model_dump(exclude=ignore)


def _count(rule: CountRule, counts: dict[str, int]) -> int:
    if rule.zero_when and counts.get(rule.zero_when):
        return 0
    plus = rule.plus if not rule.plus_when or any(counts.get(m) for m in rule.plus_when) else 0
    return (counts.get(rule.count, 0) if rule.count else 0) + plus


def _first_line(patterns: list[re.Pattern], lines: list[str]) -> str | None:
    """The earliest line any of `patterns` matches (what it matched)."""
    if patterns:
        for line in lines:
            for pattern in patterns:
                found = pattern.search(line)
                if found is not None:
                    return found.group(0).strip()
    return None


def parse_outcome(
    exit_code: int | None,
    stdout: str,
    rules: str | RuleSet = DEFAULT_RULES,
    timed_out: bool = False,
    backend: bool = True,
) -> Outcome:
    """Map a finished (or, `timed_out`, killed) process to an Outcome.

    Counts come from whatever was printed, also up to a kill. An infrastructure
    error outranks everything; a timeout is its own stage; output nobody recognises
    gives `unknown`, never a crash. `backend` False: the target had no backend that
    could fail (its model calls were answered from a recording), so no printed line
    makes an infrastructure error.
    """
    ruleset = load_rules(rules) if isinstance(rules, str) else rules
    definition, patterns = ruleset.rules, ruleset.patterns
    lines = as_lines(stdout)  # read a line at a time (causes.as_lines says why)
    counts = {name: sum(len(pattern.findall(line)) for line in lines) for name, pattern in patterns.items()}
    infra_patterns = [patterns[name] for name in definition.infra_errors] if backend else []
    infra_error = _first_line(infra_patterns, lines)
    if definition.needs_markers and not any(counts.values()) and not timed_out:
        return UNKNOWN
    success = (
        not timed_out
        and (definition.success.exit_code is None or exit_code == definition.success.exit_code)
        and all(counts.get(marker) for marker in definition.success.markers)
        and infra_error is None
    )
    brick_path = None
    if definition.brick_path:
        match = first_match(patterns[definition.brick_path], lines)
        if match and match.groupdict().get("path"):
            brick_path = match.group("path")
    stage = None
    if infra_error is not None:
        stage = INFRA_STAGE
    elif timed_out:
        stage = TIMEOUT_STAGE
    elif not success:
        stage = next(
            (r.name(exit_code) for r in definition.failure_stage if r.matches(counts, exit_code)), UNKNOWN_STAGE
        )
    return Outcome(
        success=success,
        failure_stage=stage,
        attempts=_count(definition.attempts, counts),
        repairs_triggered=_count(definition.repairs_triggered, counts),
        brick_path=brick_path,
        infra_error=infra_error,
    )
