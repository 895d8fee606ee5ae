"""The page's data as embedded in it (the element with id `report-data`): each text once,
small, and nothing lost that the store does not keep.

A case's instruction is only in `suite.cases`; each variant's and level's instruction is a
patch of its base (adversarial) or of the level below (stress), `instruction_patch`, since
most of a variant is its base again; `apply_patch` restores every text. A variant's
generator is its id's first segment. What a record's counts determine (rate, Wilson
interval, one-sided bounds, chance agreement) is left out of a decision taken on those same
counts. Then floats are rounded to 4 decimals, null fields dropped, and a list of records
becomes one table, {"columns": [...], "rows": [[...], ...]}.
"""

from dataclasses import fields, is_dataclass
from typing import Any

from ironbench.report.records import (
    AdversarialCase,
    BaselineCase,
    CompareSection,
    Decision,
    Group,
    Ladder,
    ReportData,
    RunMeta,
    Variant,
    Verdict,
)
from ironbench.run.preview import word_diff_ops

# Decision fields its own group carries, and those the group's counts determine.
_SAME_AS_GROUP = frozenset({"case_id", "variant_id", "generator", "level"})
_FROM_COUNTS = frozenset(
    {"n", "successes", "success_rate", "wilson_low", "wilson_high", "success_lower_95", "success_upper_95"}
    | {"chance_agreement"}
)
_NOT_EMBEDDED = frozenset({"group_path", "case_mode", "more"})


def embedded(data: ReportData, verdicts: list[Verdict]) -> Any:
    """The JSON the page embeds."""
    return compact({**plain(data), "verdicts": plain(verdicts)})


def plain(value: Any) -> Any:
    """A record (or a list or mapping of records) as the JSON the page embeds."""
    match value:
        case ReportData():
            return _fields(value, set() if value.outcomes else {"outcomes"})
        case RunMeta():
            return value.recorded
        case Decision():
            return _decision(value)
        case BaselineCase():
            return _decided(value, {"group_path", "case_mode", "generator", "level", "instruction"})
        case AdversarialCase():
            return {
                **_fields(value, {"instruction"}),
                "variants": [_variant(v, value.instruction) for v in value.variants],
            }
        case Ladder():
            return {**_fields(value, {"instruction"}), "levels": _levels(value)}
        case CompareSection():
            cases = {"cases": plain(value.cases), "left_out": plain(value.left_out)}
            return {**value.comparison.to_dict(), **cases}
        case list() | tuple():
            return [plain(v) for v in value]
        case dict():
            return {k: plain(v) for k, v in value.items()}
        case _ if is_dataclass(value) and not isinstance(value, type):
            return _fields(value)
        case _:
            return value


def _fields(record: Any, leave_out: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    return {f.name: plain(getattr(record, f.name)) for f in fields(record) if f.name not in leave_out}


def _decision(decision: Decision, beside: tuple[int, int] | None = None) -> dict[str, Any]:
    """A decision; `beside` the counts (n, successes) of the group it decides, shown with it:
    without what the group says already, nor, taken on those same counts, what they determine."""
    leave_out = set(_NOT_EMBEDDED)
    if beside is not None:
        leave_out |= _SAME_AS_GROUP
        if (decision.n, decision.successes) == beside:
            leave_out |= _FROM_COUNTS
    return {**_fields(decision, leave_out), **dict(decision.more)}


def _decided(record: Group | Variant, leave_out: set[str]) -> dict[str, Any]:
    """A group's (or a variant's) fields, its decision shown beside its counts."""
    return {
        f.name: _decision(record.decision, (record.n, record.successes))
        if f.name == "decision" and record.decision is not None
        else plain(getattr(record, f.name))
        for f in fields(record)
        if f.name not in leave_out
    }


def _variant(variant: Variant, base: str) -> dict[str, Any]:
    named = (variant.variant_id or "").startswith(f"{variant.generator}/")
    shown = _decided(variant, {"instruction"} | ({"generator"} if named else set()))
    return {**shown, "instruction_patch": patch(base, variant.instruction)}


def _levels(ladder: Ladder) -> list[dict[str, Any]]:
    """Each level's instruction as a patch of the level below's (level 0: of the base)."""
    out, below = [], ladder.instruction
    for level in ladder.levels:
        shown = _decided(level, {"group_path", "case_mode", "case_id", "generator", "instruction"})
        if level.instruction:
            shown["instruction_patch"] = patch(below, level.instruction)
            below = level.instruction
        out.append(shown)
    return out


def patch(base: str, text: str) -> list:
    """`text` as edits of `base`, word by word: a number n >= 0 keeps the next n characters
    of base, -n skips n of them, a string is added text. `apply_patch` undoes it."""
    ops: list = []
    for op, chunk in word_diff_ops(base, text):
        ops.append(len(chunk) if op == "equal" else -len(chunk) if op == "delete" else chunk)
    return ops


def apply_patch(base: str, ops: list) -> str:
    out, at = [], 0
    for op in ops:
        if isinstance(op, str):
            out.append(op)
        elif op >= 0:
            out.append(base[at : at + op])
            at += op
        else:
            at -= op
    return "".join(out)


# -- made small for reading, not recomputing (the store keeps everything) ---------------------


def compact(value: Any) -> Any:
    """Floats to 4 decimals, no null fields, and a list of records as one table."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        if len(value) > 1 and all(isinstance(v, dict) for v in value):
            return _table([_flat(record) for record in value])
        return [compact(v) for v in value]
    return value


def _flat(record: dict) -> dict:
    """A record's nested records (a group's decision) as dotted fields: `decision.reason`."""
    flat = {}
    for key, value in record.items():
        if isinstance(value, dict) and all(not isinstance(v, (dict, list)) for v in value.values()):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def _table(records: list[dict]) -> dict:
    columns = list(dict.fromkeys(k for record in records for k in record if record[k] is not None))
    return {"columns": columns, "rows": [[compact(record.get(k)) for k in columns] for record in records]}
