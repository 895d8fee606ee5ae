"""Suite files: YAML in, typed and contract-checked Suite out, or one clear SuiteError."""

import re
from pathlib import Path
from typing import Annotated, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    StrictBool,
    Tag,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from ironbench.core.contract import forbidden_word, normalise_instruction
from ironbench.core.errors import SuiteError
from ironbench.core.kinds import SuiteMode
from ironbench.suite.safe_yaml import INT64, MAX_FILE_BYTES, YamlRefused, check_values
from ironbench.suite.safe_yaml import load as load_yaml

MAX_BASELINE_RUNS = 10
MAX_VARIANTS = 10
MAX_CONVERSATIONS = 100
MAX_CONFIDENCE_RUNS = 200
MAX_TIMEOUT_SECONDS = 86_400
# Far below the kernel's 128 KiB limit on one argument, even after a ladder's additions.
MAX_INSTRUCTION_CHARS = 20_000
MODES = ("baseline", "adversarial", "stress")
STOP_RULES = ("last_3_agree", "confidence", "fixed")
ENGINE_TYPES = ("llm", "guarded", "python", "command")

TimeoutSeconds = Annotated[int, Field(strict=True, gt=0, le=MAX_TIMEOUT_SECONDS)]
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _safe_id(value: str) -> str:
    # Ids name folders and files: a safe character set, never "." or "..", a bounded length.
    if not _SAFE_ID.fullmatch(value):
        raise ValueError(
            f"{value[:40]!r}{'...' if len(value) > 40 else ''} is not an id: 1-64 letters, digits, "
            "'_', '.' or '-', starting with a letter or digit"
        )
    return value


Identifier = Annotated[str, Field(strict=True), AfterValidator(_safe_id)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class _GeneratorEntry(BaseModel):
    """A generator named in a suite plus its own parameters, checked by that generator."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    generator: str
    seed: Annotated[int, Field(strict=True, ge=-INT64, lt=INT64)] = 0
    _params: object = PrivateAttr(default=None)

    _kind = "variant"
    _fixed = ("generator", "seed")

    @model_validator(mode="after")
    def _check_generator(self):
        from ironbench.generators import get_generator, registered_generators

        found = get_generator(self.generator)
        if found is None or (found.kind != self._kind and not (self._kind == "variant" and found.is_variant)):
            known = ", ".join(registered_generators(self._kind))
            raise ValueError(f"unknown generator {self.generator!r} (known: {known})")
        extras = {k: v for k, v in (self.model_extra or {}).items()}
        try:
            self._params = found.params.model_validate(extras)
        except ValidationError as exc:
            error = exc.errors()[0]
            # union members appear in the location as "constrained-int" or "list[str]": not fields
            field = ".".join(str(p) for p in error["loc"] if isinstance(p, int) or str(p).isidentifier())
            message = "unknown parameter" if error["type"] == "extra_forbidden" else error["msg"]
            raise ValueError(f"{self.generator}: {field}: {message}") from None
        return self

    @property
    def params(self):
        return self._params


class GeneratorEntry(_GeneratorEntry):
    count: Annotated[int, Field(strict=True, gt=0, le=MAX_VARIANTS)] = 5


class LadderEntry(_GeneratorEntry):
    _kind = "ladder"
    runs_per_level: Annotated[int, Field(strict=True, ge=2, le=5)] = 5
    stop_at_boundary: StrictBool = True


# -- checks: what the harness runs on a saved brick; the target never sees them ----------------

MAX_CHECK_CHARS = 1_000_000


class PytestCheck(_Strict):
    """A file or folder of pytest tests, run beside copies of the brick's saved files; a
    relative path is taken from the suite's folder (made absolute when the suite is loaded)."""

    pytest: Annotated[str, Field(min_length=1)]


class PythonCheck(_Strict):
    """HumanEval's form: `python` defines check(candidate), called with the brick's `entry_point`."""

    python: Annotated[str, Field(min_length=1, max_length=MAX_CHECK_CHARS)]
    entry_point: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class CommandCheck(_Strict):
    """Any program (split like a shell would, never run through one); `{brick}` is the copied
    brick's path; exit 0 means correct."""

    command: Annotated[str, Field(min_length=1)]

    @field_validator("command")
    @classmethod
    def _names_the_brick(cls, value: str) -> str:
        import shlex

        try:
            parts = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"{value!r}: {exc}") from None
        if not parts or not any("{brick}" in part for part in parts):
            raise ValueError(f"{value!r} must name the brick as {{brick}}")
        return value


CHECK_KINDS = ("pytest", "python", "command")


def _check_kind(value: object) -> str | None:
    if isinstance(value, dict):
        return next((kind for kind in CHECK_KINDS if kind in value), None)
    return next((kind for kind in CHECK_KINDS if hasattr(value, kind)), None)


Check = Annotated[
    Annotated[PytestCheck, Tag("pytest")]
    | Annotated[PythonCheck, Tag("python")]
    | Annotated[CommandCheck, Tag("command")],
    Discriminator(
        _check_kind,
        custom_error_type="check_kind",
        custom_error_message="a check is one of pytest: PATH, python: SOURCE with entry_point, or command: TEXT",
    ),
]


class _Case(_Strict):
    id: Identifier
    instruction: str
    timeout_seconds: TimeoutSeconds | None = None
    # The harness's own check of what the run saved (else the suite's `check`); never shown to the target.
    check: Check | None = None

    @field_validator("instruction")
    @classmethod
    def _clean_instruction(cls, value: str) -> str:
        # NFKC first, so the contract check sees what a reader (or a model) would.
        value = normalise_instruction(value)
        if not value.strip():
            raise ValueError("instruction is empty")
        if len(value) > MAX_INSTRUCTION_CHARS:
            raise ValueError(f"instruction is {len(value):,} characters; at most {MAX_INSTRUCTION_CHARS:,}")
        return value


class SeedStop(_Strict):
    """The seed's rule: stable once the last 3 runs agree, at most `runs` runs."""

    rule: Literal["last_3_agree"]


class ConfidenceStop(_Strict):
    """Opt-in: stable once the runs show, at `confidence`, that the most common outcome
    recurs with probability above `reproduce`; never more than `max_runs` runs."""

    rule: Literal["confidence"]
    reproduce: Annotated[float, Field(gt=0.5, lt=1)] = 0.8
    confidence: Annotated[float, Field(ge=0.5, lt=1)] = 0.95
    max_runs: Annotated[int, Field(strict=True, ge=2, le=MAX_CONFIDENCE_RUNS)]

    @model_validator(mode="after")
    def _reachable(self):
        from ironbench.stats import confidence_thresholds

        def reachable(cap: int) -> bool:
            return any(
                k <= n for n, k in enumerate(confidence_thresholds(self.reproduce, self.confidence, cap), start=1)
            )

        if not reachable(self.max_runs):
            needed = next((cap for cap in range(self.max_runs + 1, MAX_CONFIDENCE_RUNS + 1) if reachable(cap)), None)
            raise ValueError(
                f"max_runs: {self.max_runs} runs can never show recurrence above {self.reproduce} at "
                f"{self.confidence} confidence; "
                + (f"at least {needed} are needed" if needed else f"not even {MAX_CONFIDENCE_RUNS}")
            )
        return self


class FixedStop(_Strict):
    """Exactly `runs` runs, whatever their outcomes: n fixed in advance, so pass@k and pass^k
    are unbiased for every k up to it."""

    rule: Literal["fixed"]
    runs: Annotated[int, Field(strict=True, ge=1, le=MAX_CONFIDENCE_RUNS)]


StopRule = Annotated[SeedStop | ConfidenceStop | FixedStop, Field(discriminator="rule")]
# The rules that carry their own number of runs: a case's `runs` would contradict them.
_OWN_CAP = {ConfidenceStop: "its cap from stop.max_runs", FixedStop: "its runs from stop.runs"}


class BaselineCase(_Case):
    mode: Literal["baseline"] = "baseline"
    runs: Annotated[int, Field(strict=True, gt=0, le=MAX_BASELINE_RUNS)] = MAX_BASELINE_RUNS
    stop: StopRule | None = None

    @model_validator(mode="after")
    def _one_cap(self):
        if type(self.stop) in _OWN_CAP and "runs" in self.model_fields_set:
            raise ValueError(f"runs: the {self.stop.rule} rule takes {_OWN_CAP[type(self.stop)]}")
        return self


class AdversarialCase(_Case):
    mode: Literal["adversarial"] = "adversarial"
    generators: Annotated[list[GeneratorEntry], Field(min_length=1)]

    @model_validator(mode="after")
    def _unique_generators(self):
        names = [g.generator for g in self.generators]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise ValueError(f"generators[{index}]: generator {name!r} listed twice")
        return self


class StressCase(_Case):
    mode: Literal["stress"] = "stress"
    ladder: LadderEntry
    # A level's own check, or null for none; levels not named keep the case's.
    level_checks: dict[Annotated[int, Field(strict=False, ge=0)], Check | None] = {}


Case = Annotated[BaselineCase | AdversarialCase | StressCase, Field(discriminator="mode")]


# -- gauntlet -------------------------------------------------------------------------


class _Engine(_Strict):
    name: Identifier


class LlmEngineSpec(_Engine):
    """Any model an installed llm plugin provides; context kept within a scenario."""

    type: Literal["llm"]
    model: str = "ironbench-smollm2"
    system: str | None = None
    options: dict[str, float | int | str | bool] = {}


class GuardedEngineSpec(_Engine):
    """The built-in guard: any model behind self-consistency and a factual system prompt."""

    type: Literal["guarded"]
    model: str = "ironbench-smollm2"
    candidates: Annotated[int, Field(strict=True, ge=1, le=9)] = 3
    options: dict[str, float | int | str | bool] = {}


class PythonEngineSpec(_Engine):
    """An existing wrapper: `module:Class` with reset() and answer(text) -> str."""

    type: Literal["python"]
    target: str
    kwargs: dict = {}

    @field_validator("target")
    @classmethod
    def _module_colon_class(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", value):
            raise ValueError(f"{value!r} is not module:Class")
        return value


class CommandEngineSpec(_Engine):
    """A wrapper in any language: a subprocess speaking JSON lines (reset / answer)."""

    type: Literal["command"]
    command: str | Annotated[list[str], Field(min_length=1)]


EngineSpec = Annotated[
    LlmEngineSpec | GuardedEngineSpec | PythonEngineSpec | CommandEngineSpec, Field(discriminator="type")
]


class Scenario(_Strict):
    name: Identifier
    domain: Annotated[str, Field(min_length=1)]
    question: Annotated[str, Field(min_length=1)]
    forbidden_phrase: Annotated[str, Field(min_length=1)]
    follow_ups: Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
    # Independent conversations (different seeds) per engine: the unit a verdict counts.
    conversations: Annotated[int, Field(strict=True, gt=0, le=MAX_CONVERSATIONS)] | None = None

    @property
    def prompts(self) -> list[str]:
        return [self.question, *self.follow_ups]


class ServeModel(_Strict):
    """The run's model gateway: `model` (an llm model id) answers every model call of the
    target's; `models` maps a model name the target asks for to another id."""

    model: Annotated[str, Field(min_length=1)] = "ironbench-smollm2"
    models: dict[Annotated[str, Field(min_length=1)], Annotated[str, Field(min_length=1)]] = {}


class Suite(_Strict):
    suite_id: Identifier
    mode: SuiteMode
    runs_per_variant: Annotated[int, Field(strict=True, gt=0, le=MAX_BASELINE_RUNS)] = 1
    timeout_seconds: TimeoutSeconds = 300
    repair_enabled: StrictBool = True
    debug_enabled: StrictBool = True
    target: str | list[str] | None = None
    # Environment variables whose values each run records (e.g. which backend answered).
    record_env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = []
    cases: list[Case] = []
    engines: list[EngineSpec] = []
    scenarios: list[Scenario] = []
    conversations: Annotated[int, Field(strict=True, gt=0, le=MAX_CONVERSATIONS)] | None = None
    stop: StopRule | None = None  # the default stopping rule of baseline cases
    check: Check | None = None  # the check of every case that names none
    # Outcome rules: a shipped name (ironclad, exit-code) or a rules file, relative to the suite's folder.
    rules: Annotated[str, Field(min_length=1)] | None = None
    serve_model: Annotated[
        Annotated[str, Field(min_length=1)] | ServeModel | None,
        Field(
            description="serve the target's model calls (Ollama's and OpenAI's APIs, on loopback) with this llm "
            "model id, or {model, models: {requested: served}}; every call is recorded"
        ),
    ] = None
    ai_judge: Annotated[
        str | None,
        Field(
            min_length=1,
            description="a model id that judges every AI rewrite the rules accept: same task, nothing added or "
            "removed, asked both ways; off by default; meant for strong models (a generator entry's ai_judge "
            "overrides it)",
        ),
    ] = None

    @model_validator(mode="before")
    @classmethod
    def _cases_inherit_mode(cls, data):
        # A case's mode defaults to the suite's, so one file holds one mode; a
        # "mixed" suite names each case's mode itself.
        if isinstance(data, dict) and isinstance(data.get("cases"), list) and data.get("mode") in MODES:
            data = {**data, "cases": [{"mode": data["mode"], **c} if isinstance(c, dict) else c for c in data["cases"]]}
        return data

    @model_validator(mode="after")
    def _shape_and_unique_ids(self) -> "Suite":
        if self.mode == "gauntlet":
            if self.cases:
                raise ValueError("cases: a gauntlet suite has engines and scenarios, not cases")
            for field in ("engines", "scenarios"):
                if not getattr(self, field):
                    raise ValueError(f"{field}: a gauntlet suite needs at least one")
            if self.rules is not None:
                raise ValueError("rules: a gauntlet suite scores answers, it reads no outcome rules")
            if self.ai_judge is not None:
                raise ValueError("ai_judge: a gauntlet suite has no AI generators to judge")
            if self.serve_model is not None:
                raise ValueError("serve_model: a gauntlet suite's engines call their models themselves")
            if self.check is not None:
                raise ValueError("check: a gauntlet suite saves no bricks to check")
        else:
            if not self.cases:
                raise ValueError("cases: at least one case is required")
            for field in ("engines", "scenarios", "conversations"):
                if getattr(self, field):
                    raise ValueError(f"{field}: only a gauntlet suite has {field}")
        for field, items, key in (
            ("cases", self.cases, "id"),
            ("engines", self.engines, "name"),
            ("scenarios", self.scenarios, "name"),
        ):
            seen: set[str] = set()
            for index, item in enumerate(items):
                value = getattr(item, key)
                if value in seen:
                    raise ValueError(f"{field}[{index}].{key}: duplicate {key} {value!r}")
                seen.add(value)
        return self

    def stop_of(self, case: BaselineCase) -> "ConfidenceStop | FixedStop | None":
        """A baseline case's stopping rule: its own, else the suite's, else the seed's (None)."""
        rule = case.stop or self.stop
        if type(rule) in _OWN_CAP and "runs" in case.model_fields_set:
            assert rule is not None  # (a type in _OWN_CAP)
            raise SuiteError(f"cases ({case.id}): runs: the {rule.rule} rule takes {_OWN_CAP[type(rule)]}")
        return None if isinstance(rule, SeedStop) else rule

    def conversations_of(self, scenario: Scenario) -> int:
        """How many conversations each engine has in `scenario` (default 1)."""
        return scenario.conversations or self.conversations or 1

    def ai_judge_of(self, entry: GeneratorEntry) -> str | None:
        """The judge of an AI generator entry's rewrites: its own ai_judge when it sets one
        (null turns the suite's off), else the suite's."""
        params = entry.params
        if "ai_judge" in getattr(params, "model_fields_set", ()):
            return params.ai_judge
        return self.ai_judge

    def serving(self) -> dict | None:
        """What the model gateway serves, as a run records it (None: no gateway)."""
        if self.serve_model is None:
            return None
        if isinstance(self.serve_model, str):
            return {"model": self.serve_model, "models": {}}
        return {"model": self.serve_model.model, "models": dict(sorted(self.serve_model.models.items()))}

    def check_of(self, case: _Case, level: int | None = None) -> Check | None:
        """The check of a case's runs: a stress level's own (null: none), else the case's,
        else the suite's. Variants run the case's task, so they share its check."""
        if isinstance(case, StressCase) and level is not None and level in case.level_checks:
            return case.level_checks[level]
        return case.check or self.check

    def case_timeout(self, case: _Case) -> int:
        return case.timeout_seconds or self.timeout_seconds

    def to_dict(self) -> dict:
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict) -> "Suite":
        """A suite as a run recorded it (`to_dict`: every default written out). A baseline
        case's `runs` beside a rule that carries its own count is that default, not the
        user's, and is left out: resume must accept what the run itself recorded."""
        suite_rule = (data.get("stop") or {}).get("rule")
        cases = []
        for case in data.get("cases", []):
            rule = (case.get("stop") or {}).get("rule") or suite_rule
            if case.get("mode") == "baseline" and rule in ("confidence", "fixed"):
                case = {k: v for k, v in case.items() if k != "runs"}
            cases.append(case)
        return cls.model_validate({**data, "cases": cases})


def _location(loc: tuple) -> str:
    parts: list[str] = []
    for index, item in enumerate(loc):
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif item in MODES + ENGINE_TYPES and index > 0 and isinstance(loc[index - 1], int):
            continue  # the discriminated union's tag, not a field the user wrote
        elif item in STOP_RULES and index > 0 and loc[index - 1] == "stop":
            continue
        elif (
            item in CHECK_KINDS
            and index > 0
            and (loc[index - 1] == "check" or loc[index - 2 : index - 1] == ("level_checks",))
        ):
            continue  # the check's kind: the key the user wrote is named next
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _describe(error: ErrorDetails) -> str:
    where = _location(tuple(p for p in error["loc"] if not str(p).startswith("function-")))
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key"
    if error["type"] == "missing":
        return f"{where}: required field is missing"
    if error["type"] in ("union_tag_not_found", "union_tag_invalid"):
        tag = error.get("ctx", {}).get("discriminator", "'mode'").strip("'")
        choices = ENGINE_TYPES if tag == "type" else STOP_RULES if tag == "rule" else MODES
        if error["type"] == "union_tag_not_found" and tag == "mode":
            return f"{where}.mode: required in a mixed suite (one of {', '.join(MODES)})"
        return f"{where}.{tag}: must be one of {', '.join(choices)}"
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse_suite(data: object, source: str) -> Suite:
    """Validate already-parsed YAML; `source` names the file in every error."""
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: top level must be a mapping of suite fields")
    try:
        check_values(data)
    except YamlRefused as exc:
        raise SuiteError(f"{source}: {exc}") from None
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(f"{source}: {_describe(exc.errors()[0])}") from None
    for where, check in _checks(suite):
        if isinstance(check, PytestCheck) and not Path(check.pytest).exists():
            raise SuiteError(f"{source}: {where}.check.pytest: {check.pytest}: no such file or folder")
    for index, case in enumerate(suite.cases):
        word = forbidden_word(case.instruction)
        if word:
            raise SuiteError(
                f"{source}: cases[{index}] ({case.id}): instruction breaks the single-string "
                f"contract with forbidden word {word!r}"
            )
    return suite


def _checks(suite: Suite) -> list[tuple[str, Check]]:
    """Every check a suite names, with where it is named."""
    found: list[tuple[str, Check]] = [("suite", suite.check)] if suite.check else []
    for index, case in enumerate(suite.cases):
        if case.check is not None:
            found.append((f"cases[{index}]", case.check))
        for level, check in case.level_checks.items() if isinstance(case, StressCase) else ():
            if check is not None:
                found.append((f"cases[{index}].level_checks[{level}]", check))
    return found


def load_suite(path: str | Path) -> Suite:
    path = Path(path)
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise SuiteError(f"{path}: no such suite file") from None
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read suite: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise SuiteError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes; not a suite")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{path}: cannot read suite: not UTF-8 (byte {exc.start})") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SuiteError(f"{path}: invalid YAML{where}: {problem}") from None
    except ValueError as exc:  # refused by safe_yaml, or a number too long to convert
        problem = "a number of more than 4,300 digits" if "digits" in str(exc) else str(exc).splitlines()[0]
        raise SuiteError(f"{path}: invalid YAML: {problem}") from None
    except RecursionError:
        raise SuiteError(f"{path}: invalid YAML: nested too deep") from None
    return parse_suite(_anchor_checks(data, path.parent.resolve()), str(path))


def _anchor_checks(data: object, folder: Path) -> object:
    """pytest checks named relative to the suite's folder, made absolute: a run records the
    path it will read, wherever it is started from."""
    if not isinstance(data, dict):
        return data

    def anchored(check: object) -> object:
        if isinstance(check, dict) and isinstance(check.get("pytest"), str) and check["pytest"].strip():
            return {**check, "pytest": str(folder / Path(check["pytest"]).expanduser())}
        return check

    data = {**data, **({"check": anchored(data["check"])} if "check" in data else {})}
    if isinstance(data.get("cases"), list):
        cases = []
        for case in data["cases"]:
            if isinstance(case, dict):
                case = {**case, **({"check": anchored(case["check"])} if "check" in case else {})}
                if isinstance(case.get("level_checks"), dict):
                    case["level_checks"] = {k: anchored(v) for k, v in case["level_checks"].items()}
            cases.append(case)
        data["cases"] = cases
    return data
