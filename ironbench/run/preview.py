"""Previewing a suite's variants and ladder levels without invoking anything."""

import difflib
import re
from dataclasses import dataclass

from ironbench.run.planner import plan
from ironbench.suite.models import Suite


@dataclass(frozen=True)
class PreviewItem:
    mode: str
    case_id: str
    generator: str
    variant_id: str | None  # None for a dropped candidate
    instruction: str
    base_instruction: str
    note: str = ""


def preview(suite: Suite) -> list[PreviewItem]:
    from ironbench.run.planner import ai_entries, generator_of

    items: list[PreviewItem] = []
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
                f"up to {entry.count} variant(s) written by model {entry.params.model!r} at run time; "
                f"first prompt: {prompt.splitlines()[0]}",
            )
        )
    for track in plan(suite):
        if track.mode == "baseline":
            items.append(PreviewItem("baseline", track.case_id, "-", "base", track.instruction, track.instruction))
        for variant in track.variants:
            base = track.mode == "stress" and variant.index == 0
            items.append(
                PreviewItem(
                    track.mode,
                    track.case_id,
                    variant.generator,
                    variant.variant_id,
                    variant.instruction,
                    variant.base_instruction,
                    "level 0: the unchanged instruction" if base else "",
                )
            )
        items += ai_by_case.get(track.case_id, [])
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
    """The human listing: per case its base instruction, then each variant as a word diff."""
    from ironbench.console.printable import printable

    lines: list[str] = []
    current = None
    for item in items:
        if item.case_id != current:
            current = item.case_id
            lines.append(f"\n{item.mode}/{item.case_id}: {printable(item.base_instruction)}")
        label = item.variant_id or ("AI" if item.note.startswith("up to") else "DROPPED")
        if item.generator == "-":
            lines.append("  (baseline: no variants)")
            continue
        if label == "AI":
            lines.append(f"  {item.generator}: {printable(item.note)}")
            continue
        lines.append(
            f"  {item.generator}/{label.split('/')[-1]}: "
            f"{printable(word_diff(item.base_instruction, item.instruction))}"
        )
        if item.note:
            lines.append(f"      {printable(item.note)}")
    return lines
