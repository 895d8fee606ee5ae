"""Pricing a call: the bundled genai-prices table as genai-prices itself prices it, prices a
suite or --price gives, local models, unpriced ones, offline; and a run's spending."""

import ast
import socket
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import genai_prices
import pytest
from genai_prices import Usage, calc_price
from genai_prices.data import providers
from genai_prices.types import ModelPrice
from hypothesis import given, settings
from hypothesis import strategies as st

from ironbench.core.events import BudgetReached, PricingSet, RecordedEvent
from ironbench.core.prices import PriceBook, PriceError, Rate, parse_price, usd
from ironbench.core.spending import Spending, given_prices

REPO = Path(__file__).resolve().parents[2]
AT = datetime(2026, 11, 28, 12, tzinfo=UTC)
# Every model the bundled table prices today, as `provider/model`.
MODELS = sorted(
    (provider.id, model.id)
    for provider in providers
    for model in provider.models
    if not isinstance(model.prices, ModelPrice) or vars(model.prices)
)


def reference(provider: str, model: str, inputs: int, outputs: int, cached: int) -> Decimal | None:
    """genai-prices' own price of the call (None where it refuses the usage)."""
    usage = Usage(input_tokens=inputs, output_tokens=outputs, cache_read_tokens=cached or None)
    try:
        return calc_price(usage, model, provider_id=provider, genai_request_timestamp=AT).total_price
    except (LookupError, ValueError):
        return None


def test_every_model_of_the_table_costs_what_genai_prices_says():
    book = PriceBook()
    checked = 0
    for provider, model in MODELS:
        expected = reference(provider, model, 12_345, 678, 2_000)
        if expected is None:
            continue
        found = book.price(f"{provider}/{model}", 12_345, 678, 2_000, at=AT)
        assert (found.pricing, found.cost) == ("table", expected), (provider, model)
        checked += 1
    assert checked > 1000


@settings(max_examples=300)
@given(
    st.sampled_from(MODELS),
    st.integers(0, 5_000_000),
    st.integers(0, 200_000),
    st.integers(0, 5_000_000),
)
def test_any_tokens_cost_what_genai_prices_says(model, inputs, outputs, cached):
    cached = min(cached, inputs)
    expected = reference(*model, inputs, outputs, cached)
    found = PriceBook().price("/".join(model), inputs, outputs, cached, at=AT)
    if expected is not None:
        assert found.cost == expected
        assert found.source == f"genai-prices {genai_prices.__version__}" and found.provider == model[0]


def test_a_model_id_alone_finds_its_provider():
    found = PriceBook().price("claude-haiku-4-5", 1000, 100, at=AT)
    assert (found.provider, found.model) == ("anthropic", "claude-haiku-4-5")
    assert found.cost == reference("anthropic", "claude-haiku-4-5", 1000, 100, 0)


def test_unknown_models_and_calls_without_tokens_are_unpriced_never_zero():
    book = PriceBook()
    assert book.price("canned-coder", 100, 10).cost is None
    assert book.price("canned-coder", 100, 10).pricing == "unpriced"
    assert book.price("claude-haiku-4-5", None, None).pricing == "unpriced"
    assert not book.known("canned-coder") and book.known("claude-haiku-4-5")


def test_a_given_price_wins_over_the_table_and_a_local_model_costs_its_seconds():
    book = PriceBook.of(
        {"claude-haiku-4-5": "1/2", "mine": {"input": 0.5, "output": 1.5, "cached": 0.05}},
        [("claude-haiku-4-5", Rate(Decimal(3), Decimal(4)))],
        local=["ironbench-smollm2"],
    )
    assert book.price("claude-haiku-4-5", 1_000_000, 1_000_000).cost == 7  # --price wins over the suite's
    assert book.price("claude-haiku-4-5", 1, 1).source == "--price"
    mine = book.price("mine", 1_000_000, 2_000_000, 400_000)
    assert (mine.pricing, mine.source) == ("given", "suite")
    assert mine.cost == Decimal("0.5") * Decimal("0.6") + Decimal("1.5") * 2 + Decimal("0.05") * Decimal("0.4")
    local = book.price("ironbench-smollm2", 100, 10)
    assert (local.pricing, local.cost) == ("local", 0)


@pytest.mark.parametrize(
    "value, message",
    [
        ("gpt=1", "expected IN/OUT"),
        ("=1/2", "expected MODEL=IN/OUT"),
        ("gpt=1/x", "'x' is not a number of USD"),
        ("gpt=-1/2", "0 or more"),
        ("gpt=1/2/3/4", "expected IN/OUT"),
    ],
)
def test_a_price_that_cannot_be_read_says_where_and_why(value, message):
    with pytest.raises(PriceError, match=message):
        parse_price(value)


def test_pricing_reads_no_network_and_never_starts_the_tables_update(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("pricing reached for the network")

    monkeypatch.setattr(socket.socket, "connect", refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    book = PriceBook()
    assert book.price("gpt-4o", 1000, 100).pricing == "table"
    assert genai_prices.update_prices._shared_updater.thread is None
    # and nothing in ironbench could start it: no module names the updater
    for path in (REPO / "ironbench").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not names & {"UpdatePrices", "wait_prices_updated_sync", "wait_prices_updated_async", "update_prices"}


@pytest.mark.parametrize(
    "value, shown",
    [
        (None, "unpriced"),
        (0, "$0"),
        (12.5, "$12.50"),
        (Decimal("0.003979"), "$0.00398"),
        (Decimal("-0.0012"), "-$0.0012"),
    ],
)
def test_costs_read_as_people_read_them(value, shown):
    assert usd(value) == shown


# -- a run's spending -------------------------------------------------------------------------


def recorded(event, seq=1) -> RecordedEvent:
    return RecordedEvent(seq, f"e{seq}", "run_x", "run", "2026-11-28T00:00:00.000000Z", event)


def test_spending_counts_priced_calls_and_reaches_its_cap():
    spending = Spending(PriceBook.of({"m": "1000000/0"}), Decimal("2.5"))
    first = spending.priced("target", "m", 1, 0, key="k", index=1)
    assert (first.cost, spending.spent, spending.reached) == ("1", 1, False)
    spending.priced("target", "nope", 5, 5, key="k", index=2)  # unpriced: counts for nothing
    spending.priced("target", "m", 2, 0, key="k", index=3)
    assert (spending.spent, spending.unpriced, spending.reached) == (3, 1, True)
    replayed = spending.priced("target", "m", 9, 9, replayed=True, key="k", index=4)
    assert (replayed.pricing, replayed.cost, spending.spent) == ("replayed", "0", 3)
    line = spending.line("run_x", 2)
    assert "spent $3.00 of its $2.50 budget" in line and "1 unpriced call not counted" in line


def test_a_resumed_run_restores_what_it_spent_and_its_latest_cap():
    spending = Spending(PriceBook.of({"m": "1000000/0"}), Decimal(5))
    history = [
        recorded(PricingSet(by="run", budget="2", prices={"m": {"input": "1000000", "output": "0"}}), 1),
        recorded(spending.priced("target", "m", 2, 0, key="k", index=1), 2),
        recorded(BudgetReached(budget="2", spent="2", invocations=1), 3),
    ]
    restored = Spending(PriceBook())
    restored.restore(history)
    assert (restored.spent, restored.limit, restored.stopped, restored.reached) == (2, 2, True, True)
    assert given_prices(history) == [("m", Rate(Decimal(1000000), Decimal(0)))]
