"""A run's spending: each model call priced into its model_call_priced event as it is recorded,
and the run's recorded cost against its budget. Pure: the caller appends the events."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ironbench.core.events import BudgetReached, ModelCallPriced, PricingSet, RecordedEvent
from ironbench.core.prices import FREE_CACHED, FREE_REPLAYED, UNPRICED, PriceBook, Rate, usd


@dataclass
class Spending:
    """What a run has spent (its recorded cost, unpriced calls apart) and may spend (`limit`: a
    cap on the recorded cost, None: none); `priced` makes each call's event and counts it."""

    book: PriceBook
    limit: Decimal | None = None
    spent: Decimal = Decimal(0)
    unpriced: int = 0
    stopped: bool = field(default=False)  # a budget_reached is recorded for the current cap

    def priced(
        self,
        caller: str,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        cached_tokens: int | None = None,
        model_seconds: float = 0.0,
        replayed: bool = False,
        from_cache: bool = False,
        **where: Any,
    ) -> ModelCallPriced:
        """One call's event (`where`: key, rerun, index, case_id, variant_id, run_index), counted."""
        if replayed:
            price = FREE_REPLAYED
        elif from_cache:
            price = FREE_CACHED
        else:
            price = self.book.price(model, input_tokens, output_tokens, cached_tokens)
        event = ModelCallPriced(
            caller=caller,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cached_tokens=cached_tokens,
            model_seconds=round(model_seconds, 6),
            **where,
            **price.fields(),
        )
        self.count(event)
        return event

    def count(self, event: ModelCallPriced) -> None:
        if event.cost is None:
            self.unpriced += event.pricing == UNPRICED
        else:
            self.spent += Decimal(event.cost)

    @property
    def reached(self) -> bool:
        """The recorded cost has reached the cap: nothing more may start."""
        return self.limit is not None and self.spent >= self.limit

    def restore(self, history: Iterable[RecordedEvent]) -> None:
        """A resumed run's spending so far, and the cap it last recorded."""
        for recorded in history:
            match recorded.event:
                case ModelCallPriced() as event:
                    self.count(event)
                case PricingSet() as event:
                    self.limit = None if event.budget is None else Decimal(event.budget)
                    self.stopped = False
                case BudgetReached():
                    self.stopped = True

    def reached_event(self, invocations: int) -> BudgetReached:
        assert self.limit is not None  # (only a run with a cap reaches it)
        self.stopped = True
        return BudgetReached(
            budget=format(self.limit, "f"),
            spent=format(self.spent, "f"),
            invocations=invocations,
            unpriced=self.unpriced,
        )

    def line(self, run_id: str, invocations: int) -> str:
        """The console's line when the budget stops a run (BudgetExhausted's message)."""
        unpriced = (
            f"; {self.unpriced} unpriced call{'s' if self.unpriced != 1 else ''} not counted" if self.unpriced else ""
        )
        return (
            f"budget reached: {run_id} spent {usd(self.spent)} of its {usd(self.limit)} budget and keeps its "
            f"{invocations} invocation{'s' if invocations != 1 else ''}{unpriced}; "
            f"continue with: ironbench resume {run_id} --budget MORE"
        )


def given_prices(history: Iterable[RecordedEvent]) -> list[tuple[str, Rate]]:
    """The --price rates a run was given, in the order given (a later one wins)."""
    prices: list[tuple[str, Rate]] = []
    for recorded in history:
        if isinstance(recorded.event, PricingSet):
            prices += [(model, Rate.of(rate, f"--price {model}")) for model, rate in recorded.event.prices.items()]
    return prices
