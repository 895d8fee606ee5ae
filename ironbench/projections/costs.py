"""What model calls cost, added up: per invocation, group, case and run, and per correct brick.
Pure: the tree, `show` and the report add the same model_call_priced events the same way.

A cost is every call's in its scope, paid whether or not its invocation counts as evidence
(an attempt whose backend failed, a run past its group's decision). Per invocation is that
over every attempt recorded; per success and per correct brick over those that count.
"""

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ironbench.core.events import ModelCallPriced
from ironbench.core.prices import LOCAL, SUBJECT, TARGET, UNPRICED

DIGITS = 12  # significant enough for a fraction of a cent per call, short enough to read


def money(value: Decimal | None) -> float | None:
    """An exact amount as a JSON number (None stays None)."""
    return None if value is None else float(round(value, DIGITS))


def ratio(cost: Decimal, count: int) -> float | None:
    """Cost per unit, None when there is no unit to divide by."""
    return money(cost / count) if count else None


@dataclass
class Cost:
    """The calls of one scope: what the priced ones cost (exactly), how many there were, how many
    no price counted, and the seconds local models spent."""

    usd: Decimal = Decimal(0)
    calls: int = 0
    unpriced: int = 0
    local_seconds: float = 0.0

    def add(self, event: ModelCallPriced) -> None:
        self.calls += 1
        if event.cost is not None:
            self.usd += Decimal(event.cost)
        self.unpriced += event.pricing == UNPRICED
        if event.pricing == LOCAL:
            self.local_seconds += event.model_seconds

    def merge(self, other: "Cost") -> "Cost":
        return Cost(
            self.usd + other.usd,
            self.calls + other.calls,
            self.unpriced + other.unpriced,
            self.local_seconds + other.local_seconds,
        )

    @property
    def known(self) -> Decimal | None:
        """What the calls cost, as far as prices tell: None when none of them was priced
        (unpriced is never 0), else the priced ones' (a lower bound with any unpriced)."""
        return None if self.calls and self.unpriced == self.calls else self.usd

    def to_dict(self) -> dict[str, Any]:
        """As summary.json shows an invocation's: USD (None: no call was priced; a lower bound
        when some are unpriced), calls, unpriced calls, and a local model's seconds where it
        answered."""
        data: dict[str, Any] = {"usd": money(self.known), "calls": self.calls, "unpriced_calls": self.unpriced}
        if self.local_seconds:
            data["local_model_seconds"] = round(self.local_seconds, 6)
        return data


def per_unit(cost: Cost, invocations: int, successes: int, correct: int | None) -> dict[str, Any]:
    """A group's or a run's cost beside its rates: in all, per invocation (every attempt), per
    success, and per correct brick where its runs are checked (None: nothing to divide by)."""
    known = cost.known
    data = {**cost.to_dict(), "invocations": invocations}
    data["per_invocation"] = None if known is None else ratio(known, invocations)
    data["per_success"] = None if known is None else ratio(known, successes)
    if correct is not None:
        data["per_correct"] = None if known is None else ratio(known, correct)
    return data


@dataclass
class RunCosts:
    """A run's priced calls as the tree folds them: by invocation attempt, by group, the system
    under test's (a target's, a gauntlet's engines') and ironbench's own (AI rewrites, the
    rewrite guard) apart."""

    attempts: dict[tuple[str, int], Cost] = field(default_factory=dict)  # (invocation key, rerun)
    groups: dict[str, Cost] = field(default_factory=dict)
    target: Cost = field(default_factory=Cost)
    own: Cost = field(default_factory=Cost)

    def add(self, event: ModelCallPriced, stream: str) -> None:
        if event.caller == TARGET and event.key is not None:
            self.attempts.setdefault((event.key, event.rerun), Cost()).add(event)
            self.groups.setdefault(stream.rsplit("/", 1)[0], Cost()).add(event)
        (self.target if event.caller in SUBJECT else self.own).add(event)

    @property
    def priced(self) -> bool:
        """Whether any call was priced (older runs have none: their files stay as they were)."""
        return bool(self.target.calls or self.own.calls)

    def run(self, invocations: int, successes: int, correct: int | None) -> dict[str, Any]:
        """metadata.json's `cost`: the run's (target's and own calls'), the target's beside its
        rates, and the share spent on ironbench's own calls."""
        total = self.target.merge(self.own)
        share = money(self.own.usd / total.usd) if total.usd else None
        return {
            **total.to_dict(),
            "target": per_unit(self.target, invocations, successes, correct),
            "own": self.own.to_dict(),
            "own_share": share,
        }
