"""Suite files: YAML in, typed and contract-checked Suite out, or one clear SuiteError.

The spec's suite schema is ironbench's: `runs`, `category`, `base_case`, cases with
`base_instruction` and `variants`, `stress_ladder` levels each with its own generator.
ironbench's own keys (stop rules, targets, engines, judges) sit beside the spec's, and its
older short form (`instruction`, `generators`, a one-generator `ladder`) still reads, as
the same typed Suite.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

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
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from ironbench.core.contract import forbidden_word, normalise_instruction
from ironbench.core.errors import SuiteError
from ironbench.core.kinds import COMPLEXITIES, SuiteMode, reference_is_file
from ironbench.suite.entries import MAX_LEVELS, LadderLevel, VariantEntry, ladder_levels
from ironbench.suite.safe_yaml import MAX_FILE_BYTES, YamlRefused, check_values
from ironbench.suite.safe_yaml import load as load_yaml

if TYPE_CHECKING:
    from ironbench.stats import StoppingRule

MAX_BASELINE_RUNS = 10
# The spec's run equivalence; a suite may add `correct` (the harness's check verdict).
EquivalenceField = Literal["success", "failure_stage", "attempts", "repairs_triggered", "correct"]
SPEC_EQUIVALENCE: tuple[EquivalenceField, ...] = ("success", "failure_stage", "attempts", "repairs_triggered")
# The spec's: a variant whose first run differs materially from the baseline is repeated up to 3 times.
MATERIAL_REPEATS = 3
MAX_CONVERSATIONS = 100
MAX_CONFIDENCE_RUNS = 200
MAX_TIMEOUT_SECONDS = 86_400
# Far below the kernel's 128 KiB limit on one argument, even after a ladder's additions.
MAX_INSTRUCTION_CHARS = 20_000
MODES = ("baseline", "adversarial", "stress")
SUITE_MODES = (*MODES, "mixed", "gauntlet", "canonical")
DEFAULT_RUNS_PER_CASE = 5
STOP_RULES = ("last_3_agree", "confidence", "fixed")
ENGINE_TYPES = ("llm", "guarded", "python", "command")

TimeoutSeconds = Annotated[int, Field(strict=True, gt=0, le=MAX_TIMEOUT_SECONDS)]
BaselineRuns = Annotated[int, Field(strict=True, gt=0, le=MAX_BASELINE_RUNS)]
LevelRuns = Annotated[int, Field(strict=True, ge=2, le=5)]
Complexity = Literal["small", "mid", "large"]
_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _recorded(info: ValidationInfo) -> bool:
    """Whether a run's record is being read (`Suite.from_dict`), not a suite file."""
    return bool(info.context and info.context.get("recorded"))


def _safe_id(value: str, info: ValidationInfo) -> str:
    # Ids name folders and files: a safe character set, never "." or "..", a bounded length.
    # A record keeps the ids it was run (or imported) with.
    if not _SAFE_ID.fullmatch(value) and not _recorded(info):
        raise ValueError(
            f"{value[:40]!r}{'...' if len(value) > 40 else ''} is not an id: 1-64 letters, digits, "
            "'_', '.' or '-', starting with a letter or digit"
        )
    return value


Identifier = Annotated[str, Field(strict=True), AfterValidator(_safe_id)]


def _instruction(value: str, info: ValidationInfo) -> str:
    if _recorded(info):
        return value  # the instruction that ran, as it ran
    # NFKC first, so the contract check sees what a reader (or a model) would.
    value = normalise_instruction(value)
    if info.context and info.context.get("from_file"):
        # A YAML block (`>`, `|`) ends in a line break that belongs to the file, not to the
        # instruction: written on one line or folded, the same words are the same instruction
        # (same hash, same check, same argument to the target). Runs recorded before keep theirs.
        value = value.rstrip("\n")
    if not value.strip():
        raise ValueError("instruction is empty")
    if len(value) > MAX_INSTRUCTION_CHARS:
        raise ValueError(f"instruction is {len(value):,} characters; at most {MAX_INSTRUCTION_CHARS:,}")
    return value


Instruction = Annotated[str, Field(strict=True), AfterValidator(_instruction)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _renamed(data: object, shorthand: str, name: str) -> object:
    """`data` with its shorthand key under the spec's name (both given: refused)."""
    if isinstance(data, dict) and shorthand in data:
        if name in data:
            raise ValueError(f"{name}: given twice ({shorthand} is its shorthand)")
        data = {(name if k == shorthand else k): v for k, v in data.items()}
    return data


# -- checks: what the harness runs on a saved brick; the target never sees them ----------------

MAX_CHECK_CHARS = 1_000_000


class _Proven(_Strict):
    # A known-good solution the check must pass before any run counts on it: a `.py` file
    # (relative to the suite's folder, made absolute when the suite is loaded) or inline code.
    reference: Annotated[str, Field(min_length=1, max_length=MAX_CHECK_CHARS)] | None = None


class PytestCheck(_Proven):
    """A file or folder of pytest tests, run in a trusted process apart from the brick (`from
    NAME import x` in them reaches the brick's copy across the check's boundary); a relative
    path is taken from the suite's folder (made absolute when the suite is loaded)."""

    pytest: Annotated[str, Field(min_length=1)]

    @field_validator("reference")
    @classmethod
    def _named_reference(cls, value: str | None) -> str | None:
        if value is not None and not reference_is_file(value):
            raise ValueError("a pytest check's reference is a .py file: its tests import the brick by its name")
        return value


class PythonCheck(_Proven):
    """HumanEval's form: `python` defines check(candidate), called (in a trusted process, across
    the check's boundary) with the brick's `entry_point`."""

    python: Annotated[str, Field(min_length=1, max_length=MAX_CHECK_CHARS)]
    entry_point: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class CommandCheck(_Proven):
    """Any program (split like a shell would, never run through one), run with the brick:
    `{brick}` is the copied brick's path; exit 0 means correct (as trustworthy as the program)."""

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
    timeout_seconds: TimeoutSeconds | None = None
    # The harness's own check of what the run saved (else the suite's `check`); never shown to the target.
    check: Check | None = None


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
    instruction: Instruction
    runs: BaselineRuns = MAX_BASELINE_RUNS
    stop: StopRule | None = None
    # A canonical suite's group (small, mid, large): a label of the case, and its folder.
    complexity: Complexity | None = None

    @model_validator(mode="after")
    def _one_cap(self):
        if type(self.stop) in _OWN_CAP and "runs" in self.model_fields_set:
            raise ValueError(f"runs: the {self.stop.rule} rule takes {_OWN_CAP[type(self.stop)]}")
        return self


class AdversarialCase(_Case):
    mode: Literal["adversarial"] = "adversarial"
    # Recorded (to_dict) as `instruction`, the key every case's record has.
    base_instruction: Annotated[Instruction, Field(serialization_alias="instruction")]
    variants: Annotated[list[VariantEntry], Field(min_length=1)]
    # The baseline case whose stored runs are this case's reference (the suite's, unless set here).
    base_case: Identifier | None = None
    material_repeats: Annotated[
        int,
        Field(
            strict=True,
            gt=0,
            le=MAX_BASELINE_RUNS,
            description="the most times a variant whose first run differs materially from the baseline is "
            "repeated (the suite's runs_per_variant unless set here; neither: the spec's 3)",
        ),
    ] = MATERIAL_REPEATS

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data):
        return _renamed(_renamed(data, "instruction", "base_instruction"), "generators", "variants")

    @property
    def instruction(self) -> str:
        return self.base_instruction

    @model_validator(mode="after")
    def _unique_generators(self):
        names = [g.generator for g in self.variants]
        for index, name in enumerate(names):
            if name in names[:index]:
                raise ValueError(f"variants[{index}]: generator {name!r} listed twice")
        return self


class StressCase(_Case):
    mode: Literal["stress"] = "stress"
    # Recorded (to_dict) as `instruction`, the key every case's record has.
    base_instruction: Annotated[Instruction, Field(serialization_alias="instruction")]
    # Cumulative: level k is level k-1 plus what level k's generator adds.
    stress_ladder: Annotated[list[LadderLevel], Field(min_length=1, max_length=MAX_LEVELS)]
    runs_per_level: LevelRuns = 5
    stop_at_boundary: StrictBool = True
    base_case: Identifier | None = None
    # A level's own check, or null for none; levels not named keep the case's.
    level_checks: dict[Annotated[int, Field(strict=False, ge=0)], Check | None] = {}

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data):
        data = _renamed(data, "instruction", "base_instruction")
        if not isinstance(data, dict) or "ladder" not in data:
            return data
        if "stress_ladder" in data:
            raise ValueError("stress_ladder: given twice (ladder is its shorthand)")
        ladder = data["ladder"]
        data = {k: v for k, v in data.items() if k != "ladder"}
        data["stress_ladder"] = ladder_levels(ladder)
        for key in ("runs_per_level", "stop_at_boundary"):
            if isinstance(ladder, dict) and key in ladder:
                if key in data and data[key] != ladder[key]:
                    raise ValueError(f"{key}: given on the case and in its ladder, with different values")
                data[key] = ladder[key]
        return data

    @property
    def instruction(self) -> str:
        return self.base_instruction

    @model_validator(mode="after")
    def _levels_in_order(self):
        for index, level in enumerate(self.stress_ladder):
            if level.level != index + 1:
                raise ValueError(
                    f"stress_ladder[{index}].level: {level.level}, where {index + 1} was due: levels "
                    "count up from 1, in order"
                )
        return self


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


class ModelPrice(_Strict):
    """A model's price, USD per million tokens: input, output and cached input (absent: as input)."""

    input: Annotated[float, Field(ge=0)]
    output: Annotated[float, Field(ge=0)]
    cached: Annotated[float, Field(ge=0)] | None = None


def _price_text(value: str) -> str:
    from ironbench.core.prices import PriceError, Rate

    try:
        Rate.parse(value, "price")
    except PriceError as exc:
        raise ValueError(str(exc).removeprefix("price: ")) from None
    return value


PriceText = Annotated[str, AfterValidator(_price_text)]


@dataclass(frozen=True)
class Settings:
    """How a suite's invocations ran; None where its record states nothing (a run imported
    from a harness whose metadata named no such setting)."""

    timeout_seconds: int | None
    repair_enabled: bool | None
    debug_enabled: bool | None


def _own_cap(stop: object) -> bool:
    return isinstance(stop, dict) and stop.get("rule") in ("confidence", "fixed")


def _canonical_cases(data: dict) -> list:
    """A canonical suite's cases: those under `cases` (each naming its complexity), then the
    groups `small`, `mid` and `large` (each case may repeat its group's name)."""
    cases = list(data.get("cases") or [])
    for group in COMPLEXITIES:
        entries = data.get(group) or []
        if not isinstance(entries, list):
            raise ValueError(f"{group}: a list of cases, not {type(entries).__name__}")  # noqa: TRY004 (pydantic reports a ValueError)
        for index, case in enumerate(entries):
            if isinstance(case, dict):
                if case.get("complexity", group) != group:
                    raise ValueError(f"{group}[{index}].complexity: {case['complexity']!r}, under {group}")
                case = {**case, "complexity": group}
            cases.append(case)
    return cases


class SuiteSandbox(_Strict):
    """The fence a suite asks for its targets and checks (the command line's --sandbox wins; its
    --allow-* and --pass-env add to these). Relative paths are taken from the suite's folder."""

    mode: Literal["auto", "on", "off"] | None = None
    allow_read: list[Annotated[str, Field(min_length=1)]] = []
    allow_write: list[Annotated[str, Field(min_length=1)]] = []
    allow_net: list[Annotated[str, Field(min_length=1)]] = []
    pass_env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = []
    memory_mb: Annotated[int, Field(strict=True, ge=64, le=1_048_576)] | None = None

    @field_validator("allow_net")
    @classmethod
    def _endpoints(cls, value: list[str]) -> list[str]:
        from ironbench.core.errors import SandboxError
        from ironbench.sandbox import Endpoint

        for text in value:
            try:
                Endpoint.parse(text, "allow_net")
            except SandboxError as exc:
                raise ValueError(str(exc)) from None
        return value


class Suite(_Strict):
    suite_id: Identifier
    mode: SuiteMode
    # Absent (None) and 1 differ: absent, each mode keeps the spec's count.
    runs_per_variant: Annotated[
        int | None,
        Field(
            strict=True,
            gt=0,
            le=MAX_BASELINE_RUNS,
            description="adversarial: the most times a variant whose first run differs materially from the "
            "baseline is repeated (absent: the spec's 3; a case's material_repeats overrides it); stress: "
            "each level's runs, 2-5 (a case's runs_per_level overrides it); baseline: recorded only",
        ),
    ] = None
    timeout_seconds: TimeoutSeconds = 300
    repair_enabled: StrictBool = True
    debug_enabled: StrictBool = True
    # The baseline replay cap of every case that sets none (the spec's `runs`, at the suite level).
    runs: BaselineRuns | None = None
    # The baseline case whose stored runs are the reference of this suite's cases.
    base_case: Identifier | None = None
    # canonical: each case runs exactly this many times (unless it sets `runs`, or a `stop` rule).
    runs_per_case: Annotated[int, Field(strict=True, gt=0, le=MAX_CONFIDENCE_RUNS)] | None = None
    target: str | list[str] | None = None
    # Environment variables whose values each run records (e.g. which backend answered).
    record_env: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = []
    cases: list[Case] = []
    engines: list[EngineSpec] = []
    scenarios: list[Scenario] = []
    conversations: Annotated[int, Field(strict=True, gt=0, le=MAX_CONVERSATIONS)] | None = None
    stop: StopRule | None = None  # the default stopping rule of baseline cases
    equivalence: Annotated[
        list[EquivalenceField],
        Field(
            description="the fields two runs must share to be equivalent (the seed's four); add `correct` to "
            "replay a checked baseline case until its check verdicts agree too",
        ),
    ] = list(SPEC_EQUIVALENCE)
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
    sandbox: SuiteSandbox | None = None  # the fence around its targets and checks
    budget: Annotated[
        float | None,
        Field(
            gt=0,
            allow_inf_nan=False,
            description="USD the run may spend on model calls: once its recorded cost reaches this, no invocation "
            "starts, those running finish, and the run stops (exit 3; `ironbench resume RUN --budget MORE` "
            "continues it); --budget overrides it",
        ),
    ] = None
    prices: Annotated[
        dict[Annotated[str, Field(min_length=1)], PriceText | ModelPrice],
        Field(
            description="prices of models the price table does not know (local, private) or that you pay "
            "otherwise, by model id: IN/OUT or IN/OUT/CACHED, or {input, output, cached}, USD per million tokens; "
            "--price overrides them",
        ),
    ] = {}
    _written: object = PrivateAttr(default=None)  # the file's data, for errors in its own words
    _by_id: tuple[list, dict[str, "BaselineCase | AdversarialCase | StressCase"]] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _as_the_spec_means(cls, data):
        """The spec's keys read into the typed form: `category` is the mode, a canonical
        suite's groups are its cases, the suite's `runs` and `runs_per_variant` reach the
        cases that set none (a stress case's `runs_per_level`, an adversarial case's
        `material_repeats`), and each case's mode defaults to the suite's."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "category" in data:
            category = data.pop("category")
            if "mode" in data and data["mode"] != category:
                raise ValueError(f"category: {category!r}, but mode: {data['mode']!r} (one suite, one mode)")
            data["mode"] = category
        mode = data.get("mode")
        groups = [g for g in COMPLEXITIES if g in data]
        if mode == "canonical":
            data["cases"] = _canonical_cases(data)
            for group in groups:
                data.pop(group)
        elif groups:
            raise ValueError(f"{groups[0]}: only a canonical suite (mode: canonical) groups cases by complexity")
        if not isinstance(data.get("cases"), list):
            return data
        case_mode = "baseline" if mode == "canonical" else mode if mode in MODES else None
        suite_stop = data.get("stop")
        cases = []
        for case in data["cases"]:
            if not isinstance(case, dict):
                cases.append(case)
                continue
            if case_mode is not None:
                case = {"mode": case_mode, **case}
            own_cap = _own_cap(case.get("stop") or suite_stop)
            if case.get("mode") == "baseline" and "runs" not in case and data.get("runs") is not None and not own_cap:
                case = {**case, "runs": data["runs"]}
            if mode == "canonical" and not case.get("stop") and not suite_stop:
                runs = case.get("runs", data.get("runs_per_case", DEFAULT_RUNS_PER_CASE))
                case = {k: v for k, v in case.items() if k != "runs"} | {"stop": {"rule": "fixed", "runs": runs}}
            if case.get("mode") == "adversarial" and data.get("runs_per_variant") is not None:
                case = {"material_repeats": data["runs_per_variant"], **case}
            if case.get("mode") == "stress" and data.get("runs_per_variant") is not None:
                ladder = case.get("ladder")
                if "runs_per_level" not in case and not (isinstance(ladder, dict) and "runs_per_level" in ladder):
                    case = {**case, "runs_per_level": _level_runs(data["runs_per_variant"])}
            cases.append(case)
        data["cases"] = cases
        return data

    @model_validator(mode="after")
    def _shape_and_unique_ids(self, info: ValidationInfo) -> "Suite":
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
            if not self.cases and not _recorded(info):  # a run imported from outputs records none
                where = "small, mid or large" if self.mode == "canonical" else "cases"
                raise ValueError(f"{where}: at least one case is required")
            for field in ("engines", "scenarios", "conversations"):
                if getattr(self, field):
                    raise ValueError(f"{field}: only a gauntlet suite has {field}")
        missing = [name for name in SPEC_EQUIVALENCE if name not in self.equivalence]
        if missing:
            raise ValueError(
                f"equivalence: {', '.join(missing)} missing: the spec's four fields stay; a suite may add correct"
            )
        if len(set(self.equivalence)) != len(self.equivalence):
            raise ValueError("equivalence: a field listed twice")
        if "correct" in self.equivalence and not _recorded(info) and not any(self.checked(c.id) for c in self.cases):
            raise ValueError("equivalence: correct compares check verdicts, and no case of this suite has a check")
        if self.runs_per_case is not None and self.mode != "canonical":
            raise ValueError("runs_per_case: only a canonical suite has runs_per_case (use runs)")
        if self.runs is not None and isinstance(self.stop, (ConfidenceStop, FixedStop)):
            raise ValueError(f"runs: the {self.stop.rule} rule takes {_OWN_CAP[type(self.stop)]}")
        for index, case in enumerate(self.cases):
            grouped = isinstance(case, BaselineCase) and case.complexity is not None
            if grouped != (self.mode == "canonical"):
                problem = "needs a complexity (small, mid or large)" if grouped is False else "has a complexity"
                if self.mode != "canonical":
                    problem += ", which only a canonical suite's cases have"
                raise ValueError(f"cases[{index}] ({case.id}): {problem}")
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

    # -- the suite's rules: written once, read by the runner and by every reader of a run ------

    def case(self, case_id: str) -> "BaselineCase | AdversarialCase | StressCase | None":
        """The case of this id; None when the suite has none (a run imported from another
        harness's outputs records no cases)."""
        # built once per list of cases (a copy with other cases, model_copy's, builds its own)
        if self._by_id is None or self._by_id[0] is not self.cases:
            self._by_id = (self.cases, {case.id: case for case in self.cases})
        return self._by_id[1].get(case_id)

    def instruction_of(self, case_id: str) -> str | None:
        """A case's instruction (an adversarial or stress case's base instruction)."""
        case = self.case(case_id)
        return None if case is None else case.instruction

    def scenario(self, name: str) -> Scenario | None:
        """A gauntlet scenario by name."""
        return next((s for s in self.scenarios if s.name == name), None)

    @property
    def engine_names(self) -> list[str]:
        """A gauntlet's engines, in the suite's order."""
        return [engine.name for engine in self.engines]

    @property
    def planned_turns(self) -> int:
        """A gauntlet's turns: every engine answers each prompt of each of a scenario's conversations."""
        return len(self.engines) * sum(self.conversations_of(s) * len(s.prompts) for s in self.scenarios)

    @property
    def settings(self) -> "Settings":
        """How the suite's invocations ran, as its record states it (metadata.json shows it)."""
        stated = self.model_fields_set
        return Settings(
            self.timeout_seconds if "timeout_seconds" in stated else None,
            self.repair_enabled if "repair_enabled" in stated else None,
            self.debug_enabled if "debug_enabled" in stated else None,
        )

    def max_runs(self, case: BaselineCase) -> int:
        """The most runs a baseline case can take: its stopping rule's own count, else its `runs`."""
        stop = self.stop_of(case)
        return stop.max_runs if isinstance(stop, ConfidenceStop) else stop.runs if stop else case.runs

    def stopping_rule(self, case_id: str) -> "StoppingRule":
        """The rule a baseline case stops by, as the pass@k estimators read it (`stop_of`, then
        its number of runs); a case the suite does not hold (an imported run's) by the suite's
        rule, else the seed's over the default runs."""
        from ironbench.stats import StoppingRule, confidence_thresholds

        case = self.case(case_id)
        if isinstance(case, BaselineCase):
            stop, runs = self.stop_of(case), case.runs
        else:
            stop, runs = (None if isinstance(self.stop, SeedStop) else self.stop), MAX_BASELINE_RUNS
        if isinstance(stop, FixedStop):
            return StoppingRule("fixed", stop.runs)
        if isinstance(stop, ConfidenceStop):
            thresholds = confidence_thresholds(stop.reproduce, stop.confidence, stop.max_runs)
            return StoppingRule("confidence", stop.max_runs, thresholds)
        return StoppingRule("last_3_agree", runs)

    def checked(self, case_id: str, level: int | None = None) -> bool:
        """Whether the harness checks a case's runs (at a stress level): `check_of` by id; a
        case the suite does not hold by the suite's check."""
        case = self.case(case_id)
        return (self.check if case is None else self.check_of(case, level)) is not None

    def stop_of(self, case: BaselineCase) -> "ConfidenceStop | FixedStop | None":
        """A baseline case's stopping rule: its own, else the suite's, else the seed's (None)."""
        rule = case.stop or self.stop
        if type(rule) in _OWN_CAP and "runs" in case.model_fields_set:
            assert rule is not None  # (a type in _OWN_CAP)
            raise SuiteError(f"cases ({case.id}): runs: the {rule.rule} rule takes {_OWN_CAP[type(rule)]}")
        return None if isinstance(rule, SeedStop) else rule

    def base_case_of(self, case: "AdversarialCase | StressCase") -> str | None:
        """The baseline case id whose stored runs are this case's reference, if the suite names one."""
        return case.base_case or self.base_case

    def conversations_of(self, scenario: Scenario) -> int:
        """How many conversations each engine has in `scenario` (default 1)."""
        return scenario.conversations or self.conversations or 1

    def ai_judge_of(self, entry: VariantEntry) -> str | None:
        """The judge of an AI generator entry's rewrites: its own ai_judge when it sets one
        (null turns the suite's off), else the suite's."""
        params = entry.params
        if "ai_judge" in getattr(params, "model_fields_set", ()):
            return getattr(params, "ai_judge", None)
        return self.ai_judge

    def given_prices(self) -> dict[str, object]:
        """The suite's `prices:` by model id, each IN/OUT text or {input, output, cached}."""
        return {m: p if isinstance(p, str) else p.model_dump(exclude_none=True) for m, p in self.prices.items()}

    def serving(self) -> dict | None:
        """What the model gateway serves, as a run records it (None: no gateway)."""
        if self.serve_model is None:
            return None
        if isinstance(self.serve_model, str):
            return {"model": self.serve_model, "models": {}}
        return {"model": self.serve_model.model, "models": dict(sorted(self.serve_model.models.items()))}

    def __eq__(self, other: object) -> bool:
        # the same suite whatever words its file used: the file's data is not part of it
        return isinstance(other, Suite) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]

    def where(self, *loc: str | int) -> str:
        """A key path of this suite (`cases[0].variants[1].model`) as its file wrote it."""
        return _location(_as_written(self._written, loc))

    def case_where(self, index: int, *loc: str | int) -> str:
        """A key path within case `index`, naming the case: `cases[2] (my_case).generators[1].model`."""
        case = self.where("cases", index)
        rest = self.where("cases", index, *loc).removeprefix(case)
        return f"{case} ({self.cases[index].id}){rest}"

    def check_of(self, case: _Case, level: int | None = None) -> Check | None:
        """The check of a case's runs: a stress level's own (null: none), else the case's,
        else the suite's. Variants run the case's task, so they share its check."""
        if isinstance(case, StressCase) and level is not None and level in case.level_checks:
            return case.level_checks[level]
        return case.check or self.check

    def case_timeout(self, case: _Case) -> int:
        return case.timeout_seconds or self.timeout_seconds

    def with_complexity(self, which: str) -> "Suite":
        """A canonical suite with only its cases of one complexity (`all`: every case)."""
        if which == "all":
            return self
        if self.mode != "canonical":
            raise SuiteError(f"--filter {which}: only a canonical suite groups its cases by complexity")
        if which not in COMPLEXITIES:
            raise SuiteError(f"--filter {which}: one of {', '.join(COMPLEXITIES)} or all")
        kept = [c for c in self.cases if isinstance(c, BaselineCase) and c.complexity == which]
        if not kept:
            raise SuiteError(f"--filter {which}: suite {self.suite_id} has no {which} case")
        return self.model_copy(update={"cases": kept})

    def to_dict(self) -> dict:
        """The suite as a run records it: every default written out, each case's instruction
        under `instruction` (what readers of a recorded suite look up); `from_dict` reads it."""
        return self.model_dump(mode="json", by_alias=True)

    @classmethod
    def from_dict(cls, data: dict) -> "Suite":
        """A suite as a run recorded it (`to_dict`, by this ironbench or any before it): each
        older shape upcast to today's (`suite/recorded.py`), then read as a record, not a file."""
        from ironbench.suite.recorded import upcast

        return cls.model_validate(upcast(data), context={"recorded": True})


def _level_runs(value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool) and not 2 <= value <= 5:
        raise ValueError(
            f"runs_per_variant: {value}, but a stress level runs 2 to 5 times (the seed's rule); "
            "give 2-5, or runs_per_level on each stress case"
        )
    return value


# -- errors in the words of the file ------------------------------------------------------

# The spec's key -> the shorthand (or the spec's other name) a file may have used instead.
_WRITTEN_AS = {
    "base_instruction": "instruction",
    "variants": "generators",
    "stress_ladder": "ladder",
    "mode": "category",
    "focus_values": "focuses",
}


def _canonical_origin(data: dict, index: int) -> tuple[str, int] | None:
    """Where a canonical suite's case number `index` was written: `cases[j]` or `small[j]`..."""
    origins = [("cases", j) for j in range(len(data.get("cases") or []))]
    origins += [(g, j) for g in COMPLEXITIES for j in range(len(data.get(g) or []))]
    return origins[index] if 0 <= index < len(origins) else None


def _as_written(raw: object, loc: tuple) -> tuple:
    """A validation error's location in the keys the file used: its shorthand, the spec's
    `category`, a canonical suite's groups, a one-generator ladder's single mapping."""
    out: list = []
    node = raw
    i = 0
    while i < len(loc):
        part = loc[i]
        if isinstance(part, int):
            out.append(part)
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            i += 1
            continue
        if not isinstance(node, dict) or part in node:
            out.append(part)
            node = node.get(part) if isinstance(node, dict) else None
            i += 1
            continue
        if part in MODES + ENGINE_TYPES + STOP_RULES and out:
            out.append(part)  # a union's tag, not a key: the node stays
            i += 1
            continue
        if part == "params":
            i += 1  # the generator's parameters, written at the entry's top level
            continue
        if part == "cases" and not out and i + 1 < len(loc) and isinstance(loc[i + 1], int):
            origin = _canonical_origin(node, loc[i + 1])
            if origin is not None:
                out += list(origin)
                node = (node.get(origin[0]) or [None] * (origin[1] + 1))[origin[1]]
                i += 2
                continue
        written = _WRITTEN_AS.get(part)
        if written in node:
            out.append(written)
            node = node[written]
            i += 1
            if written == "ladder" and i < len(loc) and isinstance(loc[i], int):
                i += 1  # one mapping stands for every level
            continue
        if isinstance(node.get("ladder"), dict) and part in node["ladder"]:
            out.append("ladder")
            node = node["ladder"]
            continue
        if isinstance(node.get("params"), dict) and part in node["params"]:
            out.append("params")  # an entry's own key (count, seed), written among its parameters
            node = node["params"]
            continue
        out.append(part)
        node = None
        i += 1
    return tuple(out)


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


def _describe(error: ErrorDetails, raw: object) -> str:
    loc = tuple(p for p in error["loc"] if not str(p).startswith("function-"))
    where = _location(_as_written(raw, loc))
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
    """Validate a suite file's parsed YAML; `source` names the file in every error."""
    if not isinstance(data, dict):
        raise SuiteError(f"{source}: top level must be a mapping of suite fields")
    try:
        check_values(data)
    except YamlRefused as exc:
        raise SuiteError(f"{source}: {exc}") from None
    try:
        suite = Suite.model_validate(data, context={"from_file": True})
    except ValidationError as exc:
        raise SuiteError(f"{source}: {_describe(exc.errors()[0], data)}") from None
    suite._written = data
    for where, check in _checks(suite):
        if isinstance(check, PytestCheck) and not Path(check.pytest).exists():
            raise SuiteError(f"{source}: {where}.check.pytest: {check.pytest}: no such file or folder")
        if check.reference is not None and reference_is_file(check.reference) and not Path(check.reference).is_file():
            raise SuiteError(f"{source}: {where}.check.reference: {check.reference}: no such file")
    for index, case in enumerate(suite.cases):
        word = forbidden_word(case.instruction)
        if word:
            where = suite.where("cases", index)
            raise SuiteError(
                f"{source}: {where} ({case.id}): instruction breaks the single-string "
                f"contract with forbidden word {word!r}"
            )
    return suite


def _checks(suite: Suite) -> list[tuple[str, Check]]:
    """Every check a suite names, with where it is named."""
    found: list[tuple[str, Check]] = [("suite", suite.check)] if suite.check else []
    for index, case in enumerate(suite.cases):
        if case.check is not None:
            found.append((suite.where("cases", index), case.check))
        for level, check in case.level_checks.items() if isinstance(case, StressCase) else ():
            if check is not None:
                found.append((f"{suite.where('cases', index)}.level_checks[{level}]", check))
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
        if not isinstance(check, dict):
            return check
        for key in ("pytest", "reference"):
            value = check.get(key)
            if isinstance(value, str) and value.strip() and (key == "pytest" or reference_is_file(value)):
                check = {**check, key: str(folder / Path(value.strip()).expanduser())}
        return check

    data = {**data, **({"check": anchored(data["check"])} if "check" in data else {})}
    fence = data.get("sandbox")
    if isinstance(fence, dict):
        data["sandbox"] = {
            **fence,
            **{
                key: [str(folder / Path(p).expanduser()) if isinstance(p, str) else p for p in fence[key]]
                for key in ("allow_read", "allow_write")
                if isinstance(fence.get(key), list)
            },
        }
    for group in ("cases", *COMPLEXITIES):  # a canonical suite's cases sit under its groups
        if isinstance(data.get(group), list):
            cases = []
            for case in data[group]:
                if isinstance(case, dict):
                    case = {**case, **({"check": anchored(case["check"])} if "check" in case else {})}
                    if isinstance(case.get("level_checks"), dict):
                        case["level_checks"] = {k: anchored(v) for k, v in case["level_checks"].items()}
                cases.append(case)
            data[group] = cases
    return data
