"""A suite as a run recorded it (`RunStarted.suite`), read back as the typed Suite the runner held.

Every ironbench since the store's first revision recorded `Suite.to_dict()`; each older shape
that differs from today's is brought to it by a named upcaster below (eventsourcing's
`upcast_v1_v2`), in the order the shapes followed each other, before today's model reads it.
A record is read as recorded: its instructions are the ones that ran (not normalised again),
its ids and settings are what the run (or the harness an import came from) wrote, and a
generator this ironbench lacks keeps its recorded parameters. A suite file is read strictly
(`load_suite`, `parse_suite`); a record is not a file.

    recorded_suite(started)     # RunStarted -> Suite (upcast, then validated as a record)
    suite_of_run(first)         # the same from a run's first RecordedEvent, cached by event id
"""

from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from ironbench.core.errors import StoreError
from ironbench.core.events import RecordedEvent, RunStarted, run_started

if TYPE_CHECKING:  # models reads records through this module's upcasters
    from ironbench.suite.models import Suite

Record = dict[str, Any]

# -- upcasters: one per older recorded shape, each to the shape that followed it -------------


def upcast_suite_generators_v1(data: Record) -> Record:
    """3b800b8 to 88760bd: an adversarial case's generators under `generators`, each entry's
    parameters beside `generator`, `seed` and `count`. Since: `variants`, parameters under `params`."""
    return _cases(data, lambda case: _generators_v1(case) if "generators" in case else case)


def _generators_v1(case: Record) -> Record:
    own = ("generator", "seed", "count")
    variants = [
        {
            **{k: entry[k] for k in own if k in entry},
            "params": {k: v for k, v in entry.items() if k not in own},
        }
        for entry in case["generators"]
    ]
    return {**{k: v for k, v in case.items() if k != "generators"}, "variants": variants}


def upcast_suite_ladder_v1(data: Record) -> Record:
    """3b800b8 to 88760bd: a stress case's one-generator `ladder` (generator, seed,
    `additions`: N or a list, runs_per_level, stop_at_boundary, the generator's parameters).
    Since: `stress_ladder`, one level per addition, each with its generator; the runs per level
    and the boundary rule on the case."""
    return _cases(data, lambda case: _ladder_v1(case) if "ladder" in case else case)


def _ladder_v1(case: Record) -> Record:
    ladder = dict(case["ladder"])
    rest = {k: v for k, v in case.items() if k != "ladder"}
    for key in ("runs_per_level", "stop_at_boundary"):
        if key in ladder:
            rest[key] = ladder.pop(key)
    generator, seed = ladder.pop("generator"), ladder.pop("seed", 0)
    additions = ladder.pop("additions", 3)
    per_level: list[object] = [[a] for a in additions] if isinstance(additions, list) else [1] * additions
    levels = [
        {"generator": generator, "seed": seed, "params": {**ladder, "additions": a}, "level": k}
        for k, a in enumerate(per_level, start=1)
    ]
    return {**rest, "stress_ladder": levels}


def upcast_suite_base_instruction_v1(data: Record) -> Record:
    """88760bd to bb7ce7a: an adversarial or stress case's instruction recorded under
    `base_instruction`. Since: under `instruction`, the key every case's record has."""

    def renamed(case: Record) -> Record:
        if "base_instruction" not in case or "instruction" in case:
            return case
        return {("instruction" if k == "base_instruction" else k): v for k, v in case.items()}

    return _cases(data, renamed)


def upcast_suite_intensity_v1(data: Record) -> Record:
    """Up to 88760bd: punctuation_noise's one `intensity`. Since: drawn per variant between
    `intensity_min` and `intensity_max`; one intensity is both (as a file's `intensity` still reads)."""

    def entry(found: Record) -> Record:
        params = found.get("params") or {}
        if found.get("generator") != "punctuation_noise" or "intensity" not in params or "intensity_min" in params:
            return found
        value = params["intensity"]
        return {**found, "params": {**params, "intensity_min": value, "intensity_max": value}}

    return _entries(data, entry)


def upcast_suite_focuses_v1(data: Record) -> Record:
    """8d6a758 to 88760bd: ai_rephrase_with_focus_shift's focuses under `focuses`. Since: `focus_values`."""

    def entry(found: Record) -> Record:
        params = found.get("params") or {}
        if "focuses" not in params or "focus_values" in params:
            return found
        return {**found, "params": {("focus_values" if k == "focuses" else k): v for k, v in params.items()}}

    return _entries(data, entry)


def upcast_suite_runs_beside_own_count(data: Record) -> Record:
    """Since 7299ef5 (the confidence rule), and today: a baseline case's `runs` is written out
    (its default) beside a stopping rule that carries its own count (`confidence`'s max_runs,
    `fixed`'s runs). It is that default, not the user's: read without it, as the run ran."""
    suite_rule = (data.get("stop") or {}).get("rule")

    def without(case: Record) -> Record:
        rule = (case.get("stop") or {}).get("rule") or suite_rule
        if case.get("mode", data.get("mode")) in ("baseline", "canonical") and rule in ("confidence", "fixed"):
            return {k: v for k, v in case.items() if k != "runs"}
        return case

    return _cases(data, without)


def upcast_suite_imported_v1(data: Record) -> Record:
    """Since e05bde4, a run imported from another harness's outputs tree records the suite its
    metadata.json names: its id and mode, no cases, and the settings that metadata gave, as given.
    A setting today's model refuses (a timeout of "300s", say) is read as not recorded."""
    if data.get("cases") != [] or data.get("mode") == "gauntlet":
        return data
    return {k: v for k, v in data.items() if k in ("suite_id", "mode", "cases") or _accepted(k, v)}


def _accepted(name: str, value: object) -> bool:
    """Whether today's model reads `value` as the suite's setting `name`."""
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    from ironbench.suite.models import Suite

    field = Suite.model_fields.get(name)
    if field is None:
        return False
    try:
        setting: Any = Annotated[field.annotation, field]  # the field's type and its bounds
        TypeAdapter(setting, config=ConfigDict(strict=True)).validate_python(value)
    except ValidationError:
        return False
    return True


def upcast_suite_material_repeats_v1(data: Record) -> Record:
    """Before issue-41, a variant whose first run differed materially was repeated up to 3 times
    whatever `runs_per_variant` said (recorded, default 1, read by stress cases only); today an
    adversarial case records its own `material_repeats`. A case without one ran with 3 (the
    spec's, then; written out here, not read from today's default)."""

    def repeats(case: Record) -> Record:
        if case.get("mode", data.get("mode")) != "adversarial" or "material_repeats" in case:
            return case
        return {**case, "material_repeats": 3}

    return _cases(data, repeats)


# In the order the shapes followed each other: each one reads what the one before wrote.
UPCASTERS: tuple[Callable[[Record], Record], ...] = (
    upcast_suite_generators_v1,
    upcast_suite_ladder_v1,
    upcast_suite_base_instruction_v1,
    upcast_suite_intensity_v1,
    upcast_suite_focuses_v1,
    upcast_suite_runs_beside_own_count,
    upcast_suite_imported_v1,
    upcast_suite_material_repeats_v1,
)


def upcast(data: Record) -> Record:
    """A recorded suite in today's recorded shape."""
    for upcaster in UPCASTERS:
        data = upcaster(data)
    return data


def _cases(data: Record, change: Callable[[Record], Record]) -> Record:
    cases = data.get("cases")
    if not isinstance(cases, list):
        return data
    return {**data, "cases": [change(c) if isinstance(c, dict) else c for c in cases]}


def _entries(data: Record, change: Callable[[Record], Record]) -> Record:
    """Every generator entry's change: an adversarial case's variants, a stress case's levels."""

    def case(found: Record) -> Record:
        for key in ("variants", "stress_ladder"):
            if isinstance(found.get(key), list):
                found = {**found, key: [change(e) if isinstance(e, dict) else e for e in found[key]]}
        return found

    return _cases(data, case)


# -- the reader --------------------------------------------------------------------------------


def recorded_suite(started: RunStarted) -> "Suite":
    """The suite `started` recorded, typed (its id and mode from the event where the record
    lacks them). A record this ironbench cannot read at all is a StoreError."""
    from ironbench.suite.models import Suite

    data = {"suite_id": started.suite_id, "mode": started.mode, **started.suite}
    try:
        return Suite.from_dict(data)
    except ValueError as exc:  # pydantic's ValidationError is one
        raise StoreError(f"suite {started.suite_id}: its record cannot be read: {exc}") from None


_CACHE: OrderedDict[str, "Suite"] = OrderedDict()
_CACHED_RUNS = 64


def suite_of_run(first: RecordedEvent) -> "Suite":
    """`recorded_suite` of a run's first event, read once per event (its id names one record
    for good): readers that open a run again and again (the viewer, a report) read it once."""
    found = _CACHE.get(first.event_id)
    if found is not None:
        _CACHE.move_to_end(first.event_id)
        return found
    found = recorded_suite(run_started(first))
    _CACHE[first.event_id] = found
    if len(_CACHE) > _CACHED_RUNS:
        _CACHE.popitem(last=False)
    return found
