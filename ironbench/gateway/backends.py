"""Who answers a request: an `llm` model (the served one, or the one a requested name maps
to), or an invocation's recorded calls, in order. llm is imported only to serve a model."""

import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from ironbench.core.model_calls import BACKEND, REQUEST, counted_tokens
from ironbench.gateway.protocol import ModelRequest, Usage, generation_options

REPLAY_MODEL = "replay"  # the served model of a call answered from a recording


@dataclass(frozen=True)
class Serving:
    """What the gateway serves: `model` answers every request, except those whose requested
    name `models` maps to another model id."""

    model: str
    models: Mapping[str, str] = field(default_factory=dict)

    def served_for(self, requested: str) -> str:
        return self.models.get(requested, self.model)

    def model_ids(self) -> list[str]:
        return sorted({self.model, *self.models.values()})

    def names(self) -> list[str]:
        """What a listing shows: every requested name with a mapping, and the served ids."""
        return sorted({*self.models, *self.model_ids()})

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "models": dict(sorted(self.models.items()))}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Serving":
        return cls(data["model"], dict(data.get("models") or {}))


def parse_serving(values: list[str], default: str) -> Serving:
    """`--serve-model` values as a Serving: MODEL answers every request, REQUESTED=MODEL
    the requests that name REQUESTED (the served model is `default` when only maps are given)."""
    from ironbench.core.errors import IronbenchError

    served: list[str] = []
    models: dict[str, str] = {}
    for value in values:
        requested, sep, model = value.rpartition("=") if "=" in value else ("", "", value)
        if not model.strip() or (sep and not requested.strip()):
            raise IronbenchError(f"--serve-model {value!r}: expected MODEL or REQUESTED=MODEL")
        if sep:
            models[requested.strip()] = model.strip()
        else:
            served.append(model.strip())
    if len(served) > 1:
        raise IronbenchError(f"--serve-model: one model answers every request, not {len(served)} ({', '.join(served)})")
    return Serving(served[0] if served else default, models)


class ReplayMissing(Exception):
    """A replay asked for a call the recording cannot answer."""


class BackendError(Exception):
    """The model failed to answer: an infrastructure error for the invocation that asked, unless
    it refused the request for what the request holds (`request`: the target's own failure)."""

    def __init__(
        self, message: str, status: int = 502, retry_after: float | None = None, request: bool = False
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.request = request


# What a backend answers about the request itself: malformed (400), too large (413), not
# processable (422), or a prompt beyond the model's context (a local model says so without a
# status: "Requested tokens (40031) exceed context window of 2048").
REQUEST_STATUSES = (400, 413, 422)
_BEYOND_CONTEXT = re.compile(
    r"context (window|length)|maximum context|too many tokens|prompt is too long|input is too long", re.IGNORECASE
)


def _retry_after(exc: BaseException) -> float | None:
    """A backend's Retry-After (seconds, or an HTTP date), from the exception or its response."""
    value = getattr(exc, "retry_after", None)
    if value is None:
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        try:
            value = headers.get("retry-after") or headers.get("Retry-After")
        except AttributeError:
            value = None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        return max(0.0, parsedate_to_datetime(str(value)).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def backend_error(exc: BaseException) -> BackendError:
    """Any exception of a model plugin as a BackendError: a 429 stays a 429 (with its
    Retry-After); a refusal of what the request holds (REQUEST_STATUSES, a prompt beyond the
    context) is the request's (400 unless the backend said which); anything else is 502: the
    gateway's upstream failed."""
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    text = " ".join(str(exc).split())[:500] or "no detail"
    message = f"{type(exc).__name__}: {text}"
    if status == 429:
        return BackendError(message, 429, _retry_after(exc))
    if status in REQUEST_STATUSES or (status is None and _BEYOND_CONTEXT.search(text)):
        return BackendError(message, status if status in REQUEST_STATUSES else 400, request=True)
    return BackendError(message)


@dataclass
class Answer:
    """An answer on its way: its pieces (a model that does not stream gives one), then its usage."""

    served_model: str
    applied: dict[str, Any]
    pieces: Iterator[str]
    usage: Usage | None = None  # known once the pieces are exhausted


class LlmBackend:
    """Answers through llm models; one model object per id, shared by the gateway's threads."""

    def __init__(self, serving: Serving) -> None:
        self.serving = serving
        self._models: dict[str, Any] = {}
        self._lock = threading.Lock()

    def check(self) -> None:
        """Every served model id is known to an installed llm plugin (ModelError otherwise)."""
        for model_id in self.serving.model_ids():
            self._model(model_id)

    def _model(self, model_id: str) -> Any:
        with self._lock:
            if model_id not in self._models:
                from ironbench.llms import get_model

                self._models[model_id] = get_model(model_id)
            return self._models[model_id]

    def answer(self, request: ModelRequest) -> Answer:
        import llm

        served = self.serving.served_for(request.model)
        model = self._model(served)
        wanted, schema = generation_options(request)
        applied = _accepted(model, wanted)
        kwargs: dict[str, Any] = dict(applied)
        if schema is not None and getattr(model, "supports_schema", False):
            kwargs["schema"] = schema
            applied = {**applied, "schema": schema}
        turns = request.messages
        try:
            if len(turns) <= 2 and turns[-1]["role"] == "user" and all(m["role"] == "system" for m in turns[:-1]):
                # one turn: the form every plugin understands
                system = turns[0]["content"] if len(turns) == 2 else None
                response = model.prompt(turns[-1]["content"], system=system, **kwargs)
            else:
                build = {"system": llm.system, "assistant": llm.assistant}
                messages = [build.get(m["role"], llm.user)(m["content"]) for m in turns]
                response = model.prompt(messages=messages, **kwargs)
        except Exception as exc:
            raise backend_error(exc) from exc
        started = time.perf_counter()
        answer = Answer(served, applied, iter(()))

        def pieces() -> Iterator[str]:
            try:
                for piece in response:
                    if piece:
                        yield piece
                usage = response.usage()
            except Exception as exc:
                raise backend_error(exc) from exc
            prompt, completion, cached = counted_tokens(usage.input, usage.output, usage.details)
            answer.usage = Usage(prompt, completion, time.perf_counter() - started, cached)

        answer.pieces = pieces()
        return answer


def _accepted(model: Any, wanted: dict[str, Any]) -> dict[str, Any]:
    """The options this model takes, each with a value it accepts; the others cannot be honoured."""
    fields = getattr(model.Options, "model_fields", {})
    accepted: dict[str, Any] = {}
    for name, value in wanted.items():
        if name not in fields:
            continue
        try:
            model.Options(**{name: value})
        except (TypeError, ValueError):  # the plugin's own validation (pydantic's): a value it cannot take
            pass
        else:
            accepted[name] = value
    return accepted


def replayed_answer(recorded: Mapping[str, Any]) -> Answer:
    """A recorded call's answer, served again; a call that failed fails the same way."""
    kind = recorded.get("error_kind")
    if kind in (BACKEND, REQUEST):
        status = int(recorded.get("status") or 502)
        raise BackendError(str(recorded.get("error")), status, recorded.get("retry_after"), request=kind == REQUEST)
    text = recorded.get("answer")
    if not isinstance(text, str):
        raise ReplayMissing(
            f"the recorded call {recorded.get('index')} has no answer to give ({recorded.get('error')})"
        )
    usage = Usage(recorded.get("prompt_tokens"), recorded.get("completion_tokens"), 0.0, recorded.get("cached_tokens"))
    return Answer(REPLAY_MODEL, dict(recorded.get("applied") or {}), iter([text] if text else []), usage)
