"""Suite files: YAML in, typed and contract-checked Suite out, or one clear SuiteError."""

from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator, model_validator

from ironbench.contract import forbidden_word
from ironbench.errors import SuiteError

MAX_BASELINE_RUNS = 10

PositiveInt = Annotated[int, Field(strict=True, gt=0)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class BaselineCase(_Strict):
    id: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    instruction: str
    runs: Annotated[int, Field(strict=True, gt=0, le=MAX_BASELINE_RUNS)] = MAX_BASELINE_RUNS
    timeout_seconds: PositiveInt | None = None

    @field_validator("instruction")
    @classmethod
    def _non_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("instruction is empty")
        return value


class Suite(_Strict):
    suite_id: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")]
    mode: Literal["baseline"]
    runs_per_variant: PositiveInt = 1
    timeout_seconds: PositiveInt = 300
    repair_enabled: StrictBool = True
    debug_enabled: StrictBool = True
    target: str | list[str] | None = None
    cases: Annotated[list[BaselineCase], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_case_ids(self) -> "Suite":
        seen: set[str] = set()
        for index, case in enumerate(self.cases):
            if case.id in seen:
                raise ValueError(f"cases[{index}].id: duplicate case id {case.id!r}")
            seen.add(case.id)
        return self

    def case_timeout(self, case: BaselineCase) -> int:
        return case.timeout_seconds or self.timeout_seconds

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> "Suite":
        return cls.model_validate(data)


def _location(loc: tuple) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _describe(error: dict) -> str:
    where = _location(tuple(p for p in error["loc"] if not str(p).startswith("function-")))
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key"
    if error["type"] == "missing":
        return f"{where}: required field is missing"
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_suite(data: object, source: str) -> Suite:
    """Validate already-parsed YAML; `source` names the file in every error."""
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: top level must be a mapping of suite fields")
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(f"{source}: {_describe(exc.errors()[0])}") from None
    for index, case in enumerate(suite.cases):
        word = forbidden_word(case.instruction)
        if word:
            raise SuiteError(
                f"{source}: cases[{index}] ({case.id}): instruction breaks the single-string "
                f"contract with forbidden word {word!r}"
            )
    return suite


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such suite file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read suite: {exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SuiteError(f"{path}: invalid YAML{where}: {problem}") from None
    return parse_suite(data, str(path))
