"""Model calls as the gateway records them: long texts held once by hash, what a call's
request is for replay, what an invocation's calls add up to, and when they show an outage."""

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ironbench.core.events import ModelCalled

# Texts this long or longer (a system prompt repeated in every call, a long answer) are
# recorded once per run and referenced by their sha256; shorter ones stay in the call.
TEXT_BY_HASH = 1024
BACKEND = "backend"  # error kinds: the model failed (an infrastructure error) ...
REQUEST = "request"  # ... the target's request was refused ...
REPLAY = "replay"  # ... the recording has no such call ...
ABANDONED = "abandoned"  # ... the invocation ended before its answer


def text_ref(text: str) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(), "chars": len(text)}


def is_ref(value: object) -> bool:
    return isinstance(value, dict) and "sha256" in value


def by_hash(call: Mapping[str, Any], threshold: int = TEXT_BY_HASH) -> tuple[dict[str, Any], dict[str, str]]:
    """A call with its long message contents and answer replaced by references, and the
    texts they refer to (sha256 -> text)."""
    texts: dict[str, str] = {}

    def held(value: Any) -> Any:
        if isinstance(value, str) and len(value) >= threshold:
            ref = text_ref(value)
            texts[ref["sha256"]] = value
            return ref
        return value

    messages = [{**m, "content": held(m.get("content"))} for m in call.get("messages", [])]
    return {**call, "messages": messages, "answer": held(call.get("answer"))}, texts


def held(call: ModelCalled) -> set[str]:
    """The sha256 of every text a recorded call holds by reference (in its messages, its answer)."""
    values = [m.get("content") for m in call.messages] + [call.answer]
    return {value["sha256"] for value in values if is_ref(value)}


def resolve(value: Any, texts: Mapping[str, str]) -> Any:
    """A text held by reference, as its text (or as the reference when the text is unknown)."""
    if is_ref(value):
        return texts.get(value["sha256"], value)
    return value


def resolved(call: Mapping[str, Any], texts: Mapping[str, str]) -> dict[str, Any]:
    """A recorded call with every referenced text in place."""
    messages = [{**m, "content": resolve(m.get("content"), texts)} for m in call.get("messages", [])]
    return {**call, "messages": messages, "answer": resolve(call.get("answer"), texts)}


def request_of(call: Mapping[str, Any]) -> dict[str, Any]:
    """What a replayed call must repeat: the API, the model asked for, the messages and the
    rest of the request (streaming or not is how the answer travels, not what is asked)."""
    return {
        "api": call["api"],
        "model": call["requested_model"],
        "messages": list(call.get("messages", [])),
        "options": dict(call.get("options", {})),
    }


def request_diff(recorded: Mapping[str, Any], replayed: Mapping[str, Any], index: int) -> str | None:
    """None when the replayed call asks what the recorded one asked; else a unified diff of
    the two requests (recorded first)."""
    a, b = request_of(recorded), request_of(replayed)
    if a == b:
        return None
    old = json.dumps(a, indent=2, ensure_ascii=False, sort_keys=True).splitlines()
    new = json.dumps(b, indent=2, ensure_ascii=False, sort_keys=True).splitlines()
    return "\n".join(
        difflib.unified_diff(old, new, f"recorded call {index}", f"replayed call {index}", n=2, lineterm="")
    )


@dataclass(frozen=True, slots=True)
class CallTotals:
    """What an invocation asked of the model: calls, tokens (None when no call reported
    them) and the seconds the gateway spent answering."""

    calls: int
    prompt_tokens: int | None
    completion_tokens: int | None
    model_seconds: float

    @classmethod
    def of(cls, calls: Sequence[Mapping[str, Any]]) -> "CallTotals":
        prompt = [c["prompt_tokens"] for c in calls if c.get("prompt_tokens") is not None]
        completion = [c["completion_tokens"] for c in calls if c.get("completion_tokens") is not None]
        return cls(
            len(calls),
            sum(prompt) if prompt else None,
            sum(completion) if completion else None,
            round(sum(c.get("latency_ms", 0.0) for c in calls) / 1000, 6),
        )

    @classmethod
    def add(cls, totals: Iterable["CallTotals"]) -> "CallTotals":
        items = list(totals)
        prompt = [t.prompt_tokens for t in items if t.prompt_tokens is not None]
        completion = [t.completion_tokens for t in items if t.completion_tokens is not None]
        return cls(
            sum(t.calls for t in items),
            sum(prompt) if prompt else None,
            sum(completion) if completion else None,
            round(sum(t.model_seconds for t in items), 6),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "model_seconds": self.model_seconds,
        }


def counted_tokens(
    input_tokens: int | None, output_tokens: int | None, details: Mapping[str, Any] | None
) -> tuple[int | None, int | None, int | None]:
    """A model's usage as a price reads it (llm's `Usage`: input, output, details): every input
    token, cached ones included, the output, and the cached input. OpenAI's plugin counts cached
    tokens inside its input (details.prompt_tokens_details.cached_tokens); Anthropic's reports
    cache reads apart (details.cache_read_input_tokens), so they are added to the input."""
    details = details or {}
    nested = details.get("prompt_tokens_details")
    cached = nested.get("cached_tokens") if isinstance(nested, Mapping) else details.get("cached_tokens")
    apart = details.get("cache_read_input_tokens")
    if isinstance(apart, int) and apart > 0:
        return (input_tokens or 0) + apart, output_tokens, apart
    return input_tokens, output_tokens, cached if isinstance(cached, int) and cached > 0 else None


def backend_failure(calls: Sequence[Mapping[str, Any]]) -> str | None:
    """The first backend error the gateway observed among an invocation's calls, worded as
    the invocation's infrastructure error; None when the backend answered every call."""
    for call in calls:
        if call.get("error_kind") == BACKEND:
            return f"model backend error at call {call['index']}: {call.get('error')}"
    return None


def retry_after(calls: Sequence[Mapping[str, Any]]) -> float | None:
    """The longest wait a backend asked for (a 429's Retry-After) among the calls."""
    waits = [c["retry_after"] for c in calls if c.get("retry_after") is not None]
    return max(waits) if waits else None
