"""Previewing a suite's variants and ladder levels without invoking anything."""

import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ironbench.run.planner import plan
from ironbench.suite import Suite

if TYPE_CHECKING:
    from ironbench.suite import AdversarialCase


@dataclass(frozen=True)
class PreviewItem:
    mode: str
    case_id: str
    generator: str
    variant_id: str | None  # None for a dropped candidate
    instruction: str
    base_instruction: str
    note: str = ""
    # What `instruction` is diffed against: the base, or for a ladder level the level below.
    below: str | None = None
    # A generator that made fewer variants than asked: how many were asked and made (`note` says why).
    asked: int | None = None
    made: int | None = None


def _case_notes(suite: Suite) -> dict[str, list[str]]:
    """How the file was read, per case: what each group runs, keys a generator leaves unused."""
    from ironbench.suite import AdversarialCase, BaselineCase, StressCase

    notes: dict[str, list[str]] = {}
    for case in suite.cases:
        lines = notes.setdefault(case.id, [])
        if isinstance(case, BaselineCase) and case.complexity:
            lines.append(f"complexity {case.complexity}")
        if isinstance(case, (AdversarialCase, StressCase)) and suite.base_case_of(case):
            lines.append(f"reference: the latest stored baseline of case {suite.base_case_of(case)}")
        if isinstance(case, StressCase):
            generators = list(dict.fromkeys(level.generator for level in case.stress_ladder))
            lines.append(
                f"{len(case.stress_ladder)} cumulative level(s) over level 0 ({', '.join(generators)}); each runs "
                f"2 to {case.runs_per_level} times"
                + ("; the climb stops at the boundary" if case.stop_at_boundary else "")
            )
        if isinstance(case, AdversarialCase):
            lines.append(_repeats_note(suite, case))
            for entry in case.variants:
                if entry.ignored:
                    lines.append(f"{', '.join(entry.ignored)}: {entry.generator} does not use them")
    return notes


def _repeats_note(suite: Suite, case: "AdversarialCase") -> str:
    """How often a variant of `case` runs, and which setting said so."""
    from ironbench.suite import MATERIAL_REPEATS

    repeats = case.material_repeats
    if suite.runs_per_variant == repeats:
        said = f"runs_per_variant: {repeats}"
    elif suite.runs_per_variant is None and repeats == MATERIAL_REPEATS:
        said = f"the spec's {MATERIAL_REPEATS}: runs_per_variant not set"
    else:
        said = f"the case's material_repeats: {repeats}"
    return (
        f"each variant runs once; one that differs materially from the baseline is repeated "
        f"up to {repeats} time{'s' if repeats != 1 else ''} ({said})"
    )


def preview(suite: Suite) -> list[PreviewItem]:
    from ironbench.run.planner import ai_entries, generator_of

    items: list[PreviewItem] = []
    notes = _case_notes(suite)
    ai_by_case: dict[str, list[PreviewItem]] = {}
    for case, entry in ai_entries(suite):
        prompt, _style = generator_of(entry.generator).function(case.instruction, entry.params, 1)
        ai_by_case.setdefault(case.id, []).append(
            PreviewItem(
                "adversarial",
                case.id,
                entry.generator,
                None,
                case.instruction,
                case.instruction,
                f"up to {entry.count} variant(s) written by model {entry.params.model!r} at run time; "  # type: ignore[attr-defined]
                f"first prompt: {prompt.splitlines()[0]}",
            )
        )
    for track in plan(suite):
        note = "; ".join(notes.get(track.case_id, []))
        if track.mode == "baseline":
            items.append(
                PreviewItem("baseline", track.case_id, "-", "base", track.instruction, track.instruction, note)
            )
        below = track.instruction
        for variant in track.variants:
            ladder = track.mode == "stress"
            base = ladder and variant.index == 0
            items.append(
                PreviewItem(
                    track.mode,
                    track.case_id,
                    variant.generator,
                    variant.variant_id,
                    variant.instruction,
                    variant.base_instruction,
                    f"level 0: the unchanged instruction; {note}" if base else "",
                    below if ladder else None,
                )
            )
            below = variant.instruction
        if track.mode == "adversarial" and note:
            items.append(PreviewItem("adversarial", track.case_id, "-", None, "", track.instruction, note))
        items += ai_by_case.get(track.case_id, [])
        for short in track.shortfalls:
            items.append(
                PreviewItem(
                    track.mode,
                    track.case_id,
                    short.generator,
                    None,
                    "",
                    track.instruction,
                    short.reason,
                    asked=short.asked,
                    made=short.made,
                )
            )
        for drop in track.drops:
            items.append(
                PreviewItem(
                    track.mode,
                    track.case_id,
                    drop.generator,
                    None,
                    drop.candidate,
                    track.instruction,
                    f"dropped: {drop.reason}",
                )
            )
    return items


def _visible(text: str) -> str:
    return text.replace("\n", "⏎").replace("\t", "⇥")


def word_diff_ops(base: str, variant: str) -> list[tuple[str, str]]:
    """Words and whitespace runs kept, removed or added: (equal|delete|insert, text), in order."""
    split = re.compile(r"(\s+)")
    a, b = split.split(base), split.split(variant)
    ops: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            ops.append(("equal", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            ops.append(("delete", "".join(a[i1:i2])))
        if j2 > j1:
            ops.append(("insert", "".join(b[j1:j2])))
    return ops


def word_diff(base: str, variant: str) -> str:
    """A one-line diff: [-removed-] {+added+}, whitespace made visible."""
    marks = {"equal": "{}", "delete": "[-{}-]", "insert": "{{+{}+}}"}
    return "".join(
        marks[op].format(text if op == "equal" else _visible(text)) for op, text in word_diff_ops(base, variant)
    )


def preview_lines(items: list[PreviewItem]) -> list[str]:
    """The human listing: per case its base instruction, then each variant as a word diff
    against the base, and each ladder level against the level below it."""
    from ironbench.console.printable import printable

    lines: list[str] = []
    current = None
    for item in items:
        if item.case_id != current:
            current = item.case_id
            lines.append(f"\n{item.mode}/{item.case_id}: {printable(item.base_instruction)}")
        if item.generator == "-":  # a case's own line: how the file was read
            said = ["baseline: no variants"] if item.mode == "baseline" else []
            lines.append(f"  ({printable('; '.join([*said, *([item.note] if item.note else [])]))})")
            continue
        if item.asked is not None:
            lines.append(f"  {item.generator} gave {item.made} of {item.asked} variants asked: {printable(item.note)}")
            continue
        label = item.variant_id or ("AI" if item.note.startswith("up to") else "DROPPED")
        if label == "AI":
            lines.append(f"  {item.generator}: {printable(item.note)}")
            continue
        if item.variant_id == "level_0":
            lines.append(f"  level_0 (unchanged): {printable(item.instruction)}")
        elif item.below is not None and item.variant_id is not None:
            lines.append(f"  {label} ({item.generator}): {printable(word_diff(item.below, item.instruction))}")
        else:
            lines.append(
                f"  {item.generator}/{label.split('/')[-1]}: "
                f"{printable(word_diff(item.base_instruction, item.instruction))}"
            )
        if item.note:
            lines.append(f"      {printable(item.note)}")
    return lines
