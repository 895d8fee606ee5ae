"""The plan of a run: tracks of groups per case, variants and ladders. Pure.

A group is a set of runs of one instruction that ends in one decision; a track is
one case's groups, run in order. Tracks run in parallel; groups in a track do not,
because a later group may depend on an earlier decision (the adversarial reference,
the stress boundary).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ironbench.core.contract import forbidden_word
from ironbench.core.errors import SuiteError
from ironbench.core.kinds import Mode
from ironbench.generators import Generator, get_generator, seeded_rng
from ironbench.suite import (
    AdversarialCase,
    BaselineCase,
    ConfidenceStop,
    FixedStop,
    SeedStop,
    StressCase,
    Suite,
    VariantEntry,
)

BASE_VARIANT = "base"
REFERENCE_VARIANT = "baseline"
VARIANT_ATTEMPTS_PER_SLOT = 4


def generator_of(name: str) -> Generator:
    """The registered generator of a validated suite's entry (validation rejected unknown names)."""
    generator = get_generator(name)
    if generator is None:
        raise SuiteError(f"unknown generator {name!r}")
    return generator


@dataclass(frozen=True, slots=True)
class Group:
    mode: Mode
    policy: Literal["baseline", "reference", "variant", "stress_level"]
    case_id: str
    variant_id: str
    instruction: str
    timeout_seconds: int
    max_runs: int
    path: str  # the group's folder in the output tree, and its streams' prefix
    generator: str | None = None
    level: int | None = None
    stop: SeedStop | ConfidenceStop | FixedStop | None = None  # a baseline's stopping rule; None: the seed's
    complexity: str | None = None  # a canonical case's group: small, mid or large

    def stream(self, run_index: int) -> str:
        return f"{self.path}/run_{run_index:03d}"

    @property
    def where(self) -> dict[str, Any]:
        """Which group an event is about, in the event's fields: mode, group path, case, variant."""
        return {"mode": self.mode, "group": self.path, "case_id": self.case_id, "variant_id": self.variant_id}


@dataclass(frozen=True, slots=True)
class Variant:
    case_id: str
    generator: str
    variant_id: str
    index: int
    instruction: str
    base_instruction: str
    seed: int
    params: dict
    attempt: int
    metadata: dict = field(default_factory=dict)  # AI variants: model, options, seed, prompt


@dataclass(frozen=True, slots=True)
class Drop:
    case_id: str
    generator: str
    attempt: int
    candidate: str
    reason: str


@dataclass(frozen=True, slots=True)
class Shortfall:
    """A generator that made fewer variants of a case than its entry asked for, and why."""

    case_id: str
    generator: str
    asked: int  # the entry's `count`
    made: int
    reason: str  # why no more, in the generator's words where it says (its `room`)
    wordings: int | None = None  # distinct wordings the generator can make of the instruction; None: unknown
    dropped: int = 0  # candidates dropped for the single-string contract

    def line(self, where: str) -> str:
        """What the console and `ironbench variants` say of it."""
        return f"{where}: {self.generator} gave {self.made} of {self.asked} variants asked: {self.reason}"


@dataclass(frozen=True)
class Track:
    mode: str
    case_id: str
    instruction: str
    groups: tuple[Group, ...]
    variants: tuple[Variant, ...] = ()
    drops: tuple[Drop, ...] = ()
    shortfalls: tuple[Shortfall, ...] = ()  # adversarial: generators that made fewer variants than asked
    stop_at_boundary: bool = False
    base_case: str | None = None  # the baseline case whose stored runs are the reference

    @property
    def path(self) -> str:
        return f"{self.mode}/{self.case_id}"


AiVariants = Mapping[tuple[str, str], list[Variant]]


def generate_variants(case: AdversarialCase, ai_variants: AiVariants | None = None) -> tuple[list[Variant], list[Drop]]:
    """Every variant of a case, deterministic in (instruction, generator params, seed).

    Candidates equal to the base or to an earlier variant are skipped; candidates that
    break the single-string contract are dropped and reported. AI generators' variants
    are made at run time (ai_generation.py) and passed in.
    """
    variants: list[Variant] = []
    drops: list[Drop] = []
    for entry in case.variants:
        generator = generator_of(entry.generator)
        if generator.kind == "ai":
            variants += (ai_variants or {}).get((case.id, entry.generator), [])
            continue
        params = entry.params.model_dump(mode="json")
        seen = {case.instruction}
        made = 0
        for attempt in range(entry.count * VARIANT_ATTEMPTS_PER_SLOT):
            if made == entry.count:
                break
            rng = seeded_rng(entry.generator, entry.seed, attempt, case.instruction)
            candidate = generator.function(case.instruction, entry.params, rng)
            if candidate is None or candidate in seen:
                continue
            seen.add(candidate)
            word = forbidden_word(candidate)
            if word:
                drops.append(
                    Drop(
                        case.id,
                        entry.generator,
                        attempt,
                        candidate,
                        f"breaks the single-string contract with forbidden word {word!r}",
                    )
                )
                continue
            made += 1
            variants.append(
                Variant(
                    case.id,
                    entry.generator,
                    f"{entry.generator}/variant_{made:04d}",
                    made,
                    candidate,
                    case.instruction,
                    entry.seed,
                    params,
                    attempt,
                )
            )
    return variants, drops


def shortfalls(
    case: AdversarialCase, variants: list[Variant], drops: list[Drop], ai_variants: AiVariants | None = None
) -> list[Shortfall]:
    """Each generator entry of the case that made fewer variants than its `count`, with why:
    the generator's own account of the wordings the instruction allows (its `room`) where it
    registered one, else what the seeded draws found. An AI entry's variants are made at run
    time: it falls short only once they are (`ai_variants`)."""
    found: list[Shortfall] = []
    for entry in case.variants:
        generator = generator_of(entry.generator)
        made = sum(1 for v in variants if v.generator == entry.generator)
        if made >= entry.count:
            continue
        dropped = sum(1 for d in drops if d.generator == entry.generator)
        if generator.kind == "ai":
            if ai_variants is None or (case.id, entry.generator) not in ai_variants:
                continue
            reason = "the model's answers were rejected for the other slots (see the AI rewrites rejected)"
            found.append(Shortfall(case.id, entry.generator, entry.count, made, reason))
            continue
        attempts = entry.count * VARIANT_ATTEMPTS_PER_SLOT
        room = generator.room(case.instruction, entry.params) if generator.room is not None else None
        if room is not None and room.wordings <= made + dropped:
            plural = "" if room.wordings == 1 else "s"
            reason = room.reason if room.wordings == 0 else f"{room.reason} ({room.wordings} distinct wording{plural})"
        elif room is not None:
            reason = (
                f"{room.reason} ({room.wordings} distinct wordings), but {attempts} seeded draws found "
                f"{made + dropped} of them"
            )
        else:
            reason = f"{attempts} seeded draws found {made + dropped} distinct variants (the others repeated)"
        if dropped:
            reason += f"; {dropped} dropped for the single-string contract"
        found.append(
            Shortfall(case.id, entry.generator, entry.count, made, reason, room.wordings if room else None, dropped)
        )
    return found


def ai_entries(suite: Suite) -> list[tuple[AdversarialCase, VariantEntry]]:
    """The (case, generator entry) pairs whose variants a model must write."""
    return [
        (case, entry)
        for case in suite.cases
        if isinstance(case, AdversarialCase)
        for entry in case.variants
        if generator_of(entry.generator).kind == "ai"
    ]


def ladder_levels(case: StressCase) -> tuple[list[Variant], list[Drop]]:
    """Level 0 (the unchanged instruction), then each level of the case's ladder: the level
    below plus what its own generator adds, seeded by (generator, seed, base instruction)."""
    first = case.stress_ladder[0]
    base = case.instruction
    # Level 0 is the unchanged instruction, run with the same rules: a boundary means
    # something only against a base that does not already fail.
    levels = [
        Variant(
            case.id,
            first.generator,
            "level_0",
            0,
            base,
            base,
            first.seed,
            first.params.model_dump(mode="json"),
            0,
        )
    ]
    drops: list[Drop] = []
    text = base
    for level in case.stress_ladder:
        generator = generator_of(level.generator)
        below, text = text, generator.function(text, base, level.params, seeded_rng(level.generator, level.seed, base))
        word = forbidden_word(text)
        # A ladder cannot skip a rung: levels stop below the first bad one.
        if word or text == below:
            reason = (
                f"breaks the single-string contract with forbidden word {word!r}"
                if word
                else "adds nothing to the level below (its generator had nothing left to add)"
            )
            drops.append(Drop(case.id, level.generator, level.level, text, reason))
            break
        params = level.params.model_dump(mode="json")
        levels.append(
            Variant(case.id, level.generator, f"level_{level.level}", level.level, text, base, level.seed, params, 0)
        )
    return levels, drops


def plan(suite: Suite, ai_variants: AiVariants | None = None) -> list[Track]:
    tracks: list[Track] = []
    for case in suite.cases:
        timeout = suite.case_timeout(case)
        if isinstance(case, BaselineCase):
            stop = suite.stop_of(case)
            group = Group(
                "baseline",
                "baseline",
                case.id,
                BASE_VARIANT,
                case.instruction,
                timeout,
                suite.max_runs(case),
                f"canonical/{case.complexity}/{case.id}" if case.complexity else f"baseline/{case.id}",
                stop=stop,
                complexity=case.complexity,
            )
            tracks.append(Track("baseline", case.id, case.instruction, (group,)))
        elif isinstance(case, AdversarialCase):
            variants, drops = generate_variants(case, ai_variants)
            reference = Group(
                "adversarial",
                "reference",
                case.id,
                REFERENCE_VARIANT,
                case.instruction,
                timeout,
                1,
                f"adversarial/{case.id}/{REFERENCE_VARIANT}",
            )
            groups = [reference] + [
                Group(
                    "adversarial",
                    "variant",
                    case.id,
                    v.variant_id,
                    v.instruction,
                    timeout,
                    1 + case.material_repeats,  # once, then its repeats when it differs materially
                    f"adversarial/{case.id}/{v.variant_id}",
                    generator=v.generator,
                )
                for v in variants
            ]
            tracks.append(
                Track(
                    "adversarial",
                    case.id,
                    case.instruction,
                    tuple(groups),
                    tuple(variants),
                    tuple(drops),
                    tuple(shortfalls(case, variants, drops, ai_variants)),
                    base_case=suite.base_case_of(case),
                )
            )
        elif isinstance(case, StressCase):
            levels, drops = ladder_levels(case)
            groups = [
                Group(
                    "stress",
                    "stress_level",
                    case.id,
                    v.variant_id,
                    v.instruction,
                    timeout,
                    case.runs_per_level,
                    f"stress/{case.id}/{v.variant_id}",
                    generator=v.generator,
                    level=v.index,
                )
                for v in levels
            ]
            tracks.append(
                Track(
                    "stress",
                    case.id,
                    case.instruction,
                    tuple(groups),
                    tuple(levels),
                    tuple(drops),
                    stop_at_boundary=case.stop_at_boundary,
                    base_case=suite.base_case_of(case),
                )
            )
    return tracks
