"""What a model call costs: the bundled genai-prices table, the prices a suite or `--price` gives,
the local models that cost seconds, not money; each call priced once, when it is recorded.

The table is the one the installed `genai-prices` ships (pinned in pyproject.toml): ironbench
never starts its auto-update (`UpdatePrices`), so pricing reads no network, and a price names
the table's version it came from. A model the table does not know is `unpriced`, never 0.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from ironbench.core.errors import IronbenchError

CURRENCY = "USD"
PER_MILLION = 1_000_000
# How a call was priced: by the table; by a price the suite or --price gave; a local model (its
# seconds are its cost); a model nobody priced; a call answered from a recording or from the
# model-call cache (no model was paid for it).
TABLE = "table"
GIVEN = "given"
LOCAL = "local"
UNPRICED = "unpriced"
REPLAYED = "replayed"
CACHED = "cached"
PRICINGS = (TABLE, GIVEN, LOCAL, UNPRICED, REPLAYED, CACHED)
# Who made a call: the target (through the gateway), or ironbench itself: an AI rewrite, the
# rewrite guard's judge, a gauntlet engine.
TARGET = "target"
AI_REWRITE = "ai_rewrite"
REWRITE_GUARD = "rewrite_guard"
ENGINE = "engine"
CALLERS = (TARGET, AI_REWRITE, REWRITE_GUARD, ENGINE)
# The system under test's calls (a gauntlet's engines are what it measures); the rest are
# ironbench's own, whose share of a run's cost is said apart.
SUBJECT = frozenset({TARGET, ENGINE})
_TABLE_PACKAGE = "genai-prices"
# The price keys a call's tokens reach (input, cached input, output). A flat price over these
# (and keys our calls never use, so count 0) is linear in the tokens: priced here directly,
# the way genai-prices computes it; anything else (tiers, a price per request) goes to its calc.
_FLAT_KEYS = {"input_mtok", "output_mtok", "cache_read_mtok"}
_PER_CALL_KEYS = {"requests_kcount"}


class PriceError(IronbenchError):
    """A price given on the command line or in a suite that cannot be read (`MODEL=IN/OUT`)."""


def _usd(text: object, where: str) -> Decimal:
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        raise PriceError(f"{where}: {text!r} is not a number of USD") from None
    if not value.is_finite() or value < 0:
        raise PriceError(f"{where}: {text!r} must be a finite number of USD, 0 or more")
    return value


@dataclass(frozen=True, slots=True)
class Rate:
    """A model's price in USD per million tokens: input, output, and cached input (None: cached
    input costs what input does)."""

    input: Decimal
    output: Decimal
    cached: Decimal | None = None

    def cost(self, input_tokens: int | None, output_tokens: int | None, cached_tokens: int | None) -> Decimal:
        cached = min(cached_tokens or 0, input_tokens or 0) if self.cached is not None else 0
        fresh = (input_tokens or 0) - cached
        total = self.input * fresh + self.output * (output_tokens or 0)
        if cached:
            assert self.cached is not None  # (cached is 0 unless a cached price is given)
            total += self.cached * cached
        return total / PER_MILLION

    @classmethod
    def parse(cls, text: str, where: str) -> "Rate":
        """`IN/OUT` or `IN/OUT/CACHED`, USD per million tokens."""
        parts = text.split("/")
        if len(parts) not in (2, 3) or not all(p.strip() for p in parts):
            raise PriceError(f"{where}: {text!r}: expected IN/OUT or IN/OUT/CACHED (USD per million tokens)")
        values = [_usd(p, where) for p in parts]
        return cls(values[0], values[1], values[2] if len(values) == 3 else None)

    @classmethod
    def of(cls, value: object, where: str) -> "Rate":
        """A suite's price: `IN/OUT[/CACHED]`, or {input, output, cached}."""
        if isinstance(value, Rate):
            return value
        if isinstance(value, str):
            return cls.parse(value, where)
        if isinstance(value, Mapping):
            unknown = set(value) - {"input", "output", "cached"}
            if unknown or "input" not in value or "output" not in value:
                raise PriceError(f"{where}: expected {{input, output, cached}} in USD per million tokens")
            cached = value.get("cached")
            return cls(
                _usd(value["input"], f"{where}.input"),
                _usd(value["output"], f"{where}.output"),
                None if cached is None else _usd(cached, f"{where}.cached"),
            )
        raise PriceError(f"{where}: expected IN/OUT or {{input, output, cached}}, not {type(value).__name__}")

    def to_dict(self) -> dict[str, str]:
        data = {"input": str(self.input), "output": str(self.output)}
        if self.cached is not None:
            data["cached"] = str(self.cached)
        return data

    def __str__(self) -> str:
        cached = f"/{self.cached}" if self.cached is not None else ""
        return f"{self.input}/{self.output}{cached}"


def parse_price(value: str) -> tuple[str, Rate]:
    """`--price MODEL=IN/OUT[/CACHED]`: the model id and its rate."""
    model, sep, rate = value.rpartition("=")
    if not sep or not model.strip():
        raise PriceError(f"--price {value!r}: expected MODEL=IN/OUT (USD per million tokens)")
    return model.strip(), Rate.parse(rate, f"--price {model.strip()}")


@dataclass(frozen=True, slots=True)
class Price:
    """One call priced: how, what it cost (None: unpriced), and what priced it."""

    pricing: str
    cost: Decimal | None
    source: str | None = None  # "genai-prices 0.2.3", "suite", "--price"
    provider: str | None = None  # as the table names them
    model: str | None = None

    def fields(self) -> dict[str, Any]:
        """What a model_call_priced event records of the price."""
        return {
            "pricing": self.pricing,
            "cost": None if self.cost is None else format(self.cost, "f"),
            "currency": CURRENCY,
            "table": self.source,
            "provider": self.provider,
            "priced_model": self.model,
        }


FREE_REPLAYED = Price(REPLAYED, Decimal(0), "the recording")
FREE_CACHED = Price(CACHED, Decimal(0), "the model-call cache")
LOCAL_PRICE = Price(LOCAL, Decimal(0), "local model")


def table_version() -> str:
    """The price table's name and version, as a price records it."""
    from importlib.metadata import version

    return f"{_TABLE_PACKAGE} {version(_TABLE_PACKAGE)}"


@dataclass(frozen=True, slots=True)
class _Flat:
    """A table price linear in the tokens (genai-prices' arithmetic, without its machinery)."""

    input: Decimal | None
    output: Decimal | None
    cached: Decimal | None

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> Decimal:
        total = Decimal(0)
        fresh = input_tokens - cached_tokens if self.cached is not None else input_tokens
        for price, count in ((self.input, fresh), (self.cached, cached_tokens), (self.output, output_tokens)):
            if price is not None and count:
                total += price * Decimal(count) / PER_MILLION
        return total


def _flat(model_price: Any) -> _Flat | None:
    from genai_prices.types import TieredPrices

    values = {k: v for k, v in vars(model_price).items() if v is not None and not k.startswith("_")}
    if _PER_CALL_KEYS & values.keys():
        return None
    if any(isinstance(values.get(k), TieredPrices) for k in _FLAT_KEYS):
        return None
    return _Flat(values.get("input_mtok"), values.get("output_mtok"), values.get("cache_read_mtok"))


@dataclass
class PriceBook:
    """How a run prices its calls: `given` rates first (by model id; the suite's, then --price's,
    each naming its source), then `local` models (cost 0: their seconds are their cost), then the
    table; whatever none of them knows, and a call whose model reported no tokens, is unpriced.
    Lookups are kept, so a call costs a dict read and a few multiplications once its model has
    been seen (tests/perf/bench_prices.py)."""

    given: Mapping[str, tuple[Rate, str]] = field(default_factory=dict)
    local: frozenset[str] = frozenset()
    _models: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _flats: dict[int, tuple[Any, _Flat | None]] = field(default_factory=dict, init=False, repr=False)
    _version: str | None = field(default=None, init=False, repr=False)

    def price(
        self,
        model: str,
        input_tokens: int | None,
        output_tokens: int | None,
        cached_tokens: int | None = None,
        at: datetime | None = None,
    ) -> Price:
        """A call of `model` with these tokens (None: the model reported none), at `at` (now)."""
        if model in self.local and model not in self.given:
            return LOCAL_PRICE
        if input_tokens is None and output_tokens is None:  # the model said nothing of its tokens
            return Price(UNPRICED, None)
        given = self.given.get(model)
        if given is not None:
            rate, source = given
            return Price(GIVEN, rate.cost(input_tokens, output_tokens, cached_tokens), source)
        found = self._lookup(model)
        if found is None:
            return Price(UNPRICED, None)
        provider, info = found
        at = at or datetime.now(UTC)
        inputs, outputs = input_tokens or 0, output_tokens or 0
        cached = min(cached_tokens or 0, inputs)
        model_price = info.get_prices(at)  # one of the table's own objects: kept, so its id stays its
        kept = self._flats.get(id(model_price))
        if kept is None or kept[0] is not model_price:
            kept = self._flats[id(model_price)] = (model_price, _flat(model_price))
        flat = kept[1]
        if flat is not None:
            cost = flat.cost(inputs, outputs, cached)
        else:
            from genai_prices.types import Usage

            try:
                usage = Usage(input_tokens=inputs, output_tokens=outputs, cache_read_tokens=cached or None)
                cost = info.calc_price(usage, provider, genai_request_timestamp=at).total_price
            except (ValueError, ArithmeticError):  # usage the table cannot price (its own checks)
                return Price(UNPRICED, None)
        return Price(TABLE, cost, self.version, provider.id, info.id)

    @property
    def version(self) -> str:
        if self._version is None:
            self._version = table_version()
        return self._version

    def _lookup(self, model: str) -> tuple[Any, Any] | None:
        """The table's provider and model for a model id (`provider/model` names its provider);
        None when the table has no such model."""
        if model not in self._models:
            from genai_prices import data_snapshot

            snapshot = data_snapshot.get_snapshot()
            provider_id, sep, ref = model.partition("/")
            attempts = [(ref, provider_id), (model, None)] if sep else [(model, None)]
            found = None
            for model_ref, provider in attempts:
                try:
                    found = snapshot.find_provider_model(model_ref, None, provider, None)
                    break
                except LookupError:
                    continue
            self._models[model] = found
        return self._models[model]

    def known(self, model: str) -> bool:
        """Whether a call of `model` would be priced (given, local or in the table)."""
        return model in self.given or model in self.local or self._lookup(model) is not None

    @classmethod
    def of(
        cls,
        suite_prices: Mapping[str, object] | None,
        prices: Iterable[tuple[str, Rate]] = (),
        local: Iterable[str] = (),
        source: str = "--price",
    ) -> "PriceBook":
        """A suite's `prices:` under the ones given on the command line (`prices`, which win)."""
        given: dict[str, tuple[Rate, str]] = {}
        for model, value in (suite_prices or {}).items():
            given[model] = (Rate.of(value, f"prices.{model}"), "suite")
        for model, rate in prices:
            given[model] = (rate, source)
        return cls(given, frozenset(local))


def usd(value: Decimal | float | None, digits: int = 3) -> str:
    """A cost as people read it: "$12.50" from a dollar up, else `digits` significant digits
    ("$0.00398", "$0.5"); None is "unpriced"."""
    if value is None:
        return "unpriced"
    amount = value if isinstance(value, Decimal) else Decimal(str(value))
    if amount == 0:
        return "$0"
    sign, amount = ("-" if amount < 0 else ""), abs(amount)
    if amount >= 1:
        return f"{sign}${amount:,.2f}"
    rounded = round(amount, digits - 1 - amount.adjusted())
    text = format(rounded.normalize(), "f")
    return f"{sign}${text}"
