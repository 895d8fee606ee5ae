"""A run's progress as the viewer shows it: work done, the most still to come, and an ETA.

The most still to come is the plan's: every group may take up to its `max_runs` until its
decision, and a decided group (or a stress ladder that found its verdict) takes no more,
so the total shrinks as groups stop early, as the terminal's progress bar does. A
gauntlet's unit is the turn. Pure, except `planned_groups`, which runs the planner.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ironbench.console.numbers import number
from ironbench.core.events import VariantGenerated
from ironbench.core.labels import track_of
from ironbench.suite import Suite

if TYPE_CHECKING:
    from ironbench.run.planner import Group

LIVE = "running"


@dataclass(frozen=True)
class Progress:
    unit: str  # "invocations" or "turns"
    done: int
    planned: int | None  # the most the run can still take in all (None: its plan cannot be read here)
    successes: int
    decisions: int
    eta_seconds: float | None
    cost_usd: float | None = None  # what its priced model calls cost so far (None: none priced)

    def text(self, status: str) -> str:
        """`120 of at most 400 invocations, 97 succeeded, 31 decisions · $0.42 spent · about 2 min left`."""
        parts = [f"{self.done} of at most {self.planned} {self.unit}" if self.planned else f"{self.done} {self.unit}"]
        if self.unit == "invocations":
            parts[0] += f", {self.successes} succeeded, {self.decisions} decision{'s' if self.decisions != 1 else ''}"
        if self.cost_usd is not None:
            from ironbench.core.prices import usd

            parts.append(f"{usd(self.cost_usd)} spent")
        if status == LIVE and self.eta_seconds is not None:
            parts.append(f"about {duration(self.eta_seconds)} left at the recent pace")
        return " · ".join(parts)


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{number(seconds / 3600, '.1f')} h"


def planned_groups(suite: Suite, ai_variants: Sequence[VariantGenerated]) -> "list[Group] | None":
    """Every group the run plans (its path and the most runs it can take), from the suite the run
    recorded and the AI rewrites it accepted; None when this ironbench cannot plan it (a
    generator plugin missing here, say)."""
    from ironbench.core.errors import IronbenchError
    from ironbench.run.planner import Variant, plan

    try:
        if suite.mode == "gauntlet":
            return []
        made: dict[tuple[str, str], list[Variant]] = {}
        for v in ai_variants:
            slot = int(v.variant_id.rsplit("_", 1)[-1]) if v.variant_id[-1:].isdigit() else 0
            made.setdefault((v.case_id, v.generator), []).append(
                Variant(
                    v.case_id,
                    v.generator,
                    v.variant_id,
                    slot,
                    v.instruction,
                    v.base_instruction,
                    v.seed,
                    v.params or {},
                    v.attempt,
                    v.metadata or {},
                )
            )
        return [group for track in plan(suite, made) for group in track.groups]
    except (IronbenchError, KeyError, TypeError, ValueError, AttributeError):
        return None  # (AttributeError: a recorded generator's parameters this ironbench cannot read)


def most_to_take(planned: "Sequence[Group]", counts: Mapping[str, int], decided: set[str], live: bool) -> int:
    """Invocations the run takes at most in all: a group still open may take up to its
    `max_runs` (or more, had a resume raised it), a closed one what it took."""
    most = {group.path: group.max_runs for group in planned}
    total = 0
    for path, max_runs in most.items():
        done = counts.get(path, 0)
        track = track_of(path)
        closed = not live or path in decided or (path.startswith("stress/") and track in decided)
        total += done if closed else max(max_runs, done)
    return total + sum(done for path, done in counts.items() if path not in most)


def eta(stamps: list[str], remaining: int) -> float | None:
    """Seconds left at the pace of the recent completions (their timestamps, oldest first)."""
    if len(stamps) < 2 or remaining <= 0:
        return None if remaining > 0 else 0.0
    first, last = (datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC) for s in (stamps[0], stamps[-1]))
    span = (last - first).total_seconds()
    if span <= 0:
        return None
    return remaining * span / (len(stamps) - 1)
