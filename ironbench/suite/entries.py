"""Generator entries of a suite: an adversarial case's `variants` and a stress case's
`stress_ladder` levels, read as the spec writes them (a generator's parameters at the
entry's top level or inside `params`, both as files in the wild have them).
"""

from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_serializer,
    model_validator,
)

from ironbench.generators import GeneratorParams, canonical_name
from ironbench.suite.safe_yaml import INT64

MAX_VARIANTS = 10
MAX_LEVELS = 10
Seed = Annotated[int, Field(strict=True, ge=-INT64, lt=INT64)]
# The spec's schema lists these on every variant entry; a generator that has no use for
# them leaves them be (`ironbench variants` says so) rather than refusing a file the spec allows.
SPEC_ENTRY_PARAMS = ("intensity_min", "intensity_max")


def _generator_params(generator: str, kind: str, params: dict, unused: tuple[str, ...] = ()):
    """(the generator's registered name, its validated parameters, the spec keys it leaves unused)."""
    from ironbench.generators import get_generator, registered_generators

    found = get_generator(generator)
    if found is None or (found.kind != kind and not (kind == "variant" and found.is_variant)):
        known = ", ".join(registered_generators(kind))
        raise ValueError(f"unknown generator {generator!r} (known: {known})")
    fields = found.params.model_fields
    ignored = tuple(k for k in unused if k in params and k not in fields)
    try:
        validated = found.params.model_validate({k: v for k, v in params.items() if k not in ignored})
    except ValidationError as exc:
        error = exc.errors()[0]
        # union members appear in the location as "constrained-int" or "list[str]": not fields
        field = ".".join(str(p) for p in error["loc"] if isinstance(p, int) or str(p).isidentifier())
        message = "unknown parameter" if error["type"] == "extra_forbidden" else error["msg"]
        message = message.removeprefix("Value error, ")
        raise ValueError(f"{found.name}: {field + ': ' if field else ''}{message}") from None
    return found.name, validated, ignored


def merge_params(data: dict, fixed: tuple[str, ...]) -> dict:
    """One entry as the model reads it: the entry's own keys (`fixed`) at the top, every
    other key in `params`. A key written in both places must say the same thing."""
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"params: a mapping of the generator's parameters, not {type(params).__name__}")  # noqa: TRY004 (pydantic reports a ValueError)
    top = {k: v for k, v in data.items() if k in fixed and k != "params"}
    merged = dict(params)
    for key, value in data.items():
        if key in fixed or key == "params":
            continue
        if key in merged and merged[key] != value:
            raise ValueError(f"{key}: given at the entry's top level and in params, with different values")
        merged[key] = value
    for key in fixed:
        if key in merged:
            value = merged.pop(key)
            if key in top and top[key] != value:
                raise ValueError(f"{key}: given at the entry's top level and in params, with different values")
            top[key] = value
    return {**top, "params": merged}


class RecordedParams(GeneratorParams):
    """A recorded entry's parameters as the run recorded them, for a generator this ironbench
    cannot read them for (`Suite.from_dict`): shown and kept, never used to generate."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    _kind: ClassVar[str] = "variant"
    _fixed: ClassVar[tuple[str, ...]] = ("generator", "seed")

    generator: str
    seed: Seed = 0
    params: SerializeAsAny[GeneratorParams] = Field(
        default_factory=GeneratorParams, description="the generator's parameters (also accepted at the top level)"
    )
    _ignored: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _read(cls, data: Any, handler, info: ValidationInfo):
        if isinstance(data, cls):
            return data
        ignored: tuple[str, ...] = ()
        if isinstance(data, dict):
            data = merge_params(data, cls._fixed)
            generator = data.get("generator")
            if isinstance(generator, str):
                try:
                    name, params, ignored = _generator_params(
                        canonical_name(generator),
                        cls._kind,
                        data["params"],
                        SPEC_ENTRY_PARAMS if cls._kind != "ladder" else (),
                    )
                except ValueError:
                    if not (info.context and info.context.get("recorded")):
                        raise
                    # a run's record names a generator this ironbench lacks (a plugin not
                    # installed here), or parameters it no longer takes: kept as recorded
                    name, params = generator, RecordedParams(**data["params"])
                data = {**data, "generator": name, "params": params}
        entry = handler(data)
        entry._ignored = ignored
        return entry

    @field_serializer("params")
    def _as_written(self, params: GeneratorParams) -> dict:
        # only what the suite set: a default written out would read back as set (ai_judge: null)
        return params.model_dump(mode="json", exclude_unset=True)

    @property
    def ignored(self) -> tuple[str, ...]:
        """Keys of the spec's entry schema this generator has no use for (left unused)."""
        return self._ignored


class VariantEntry(_Entry):
    """A generator an adversarial case's variants come from: up to `count` of them, seeded."""

    _fixed = ("generator", "seed", "count")
    count: Annotated[int, Field(strict=True, gt=0, le=MAX_VARIANTS)] = 5


class LadderLevel(_Entry):
    """One level of a stress ladder: its generator adds to the level below (cumulative)."""

    _kind = "ladder"
    _fixed = ("level", "generator", "seed")
    level: Annotated[int, Field(strict=True, ge=1, le=MAX_LEVELS)]


def ladder_levels(ladder: object) -> list[dict]:
    """The shorthand `ladder: {generator, additions: N | [...], seed, ...}` (one generator,
    one addition per level) as the spec's `stress_ladder` levels. What is not a level's
    (runs_per_level, stop_at_boundary) is left to the case."""
    if not isinstance(ladder, dict):
        raise ValueError(f"ladder: a mapping (generator, additions, seed), not {type(ladder).__name__}")  # noqa: TRY004 (pydantic reports a ValueError)
    own = {k: v for k, v in ladder.items() if k not in ("runs_per_level", "stop_at_boundary", "additions")}
    additions = ladder.get("additions", 3)
    if isinstance(additions, list):
        per_level: list[object] = [[a] for a in additions]
    elif isinstance(additions, int) and not isinstance(additions, bool) and 1 <= additions <= MAX_LEVELS:
        per_level = [1] * additions
    else:
        per_level = [additions]  # one level, refused by the generator with its own message
    return [{"level": k, **own, "additions": a} for k, a in enumerate(per_level, start=1)]
