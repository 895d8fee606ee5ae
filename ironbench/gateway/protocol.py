"""The APIs the gateway speaks, as pure translations: a request body in Ollama's or
OpenAI's shape to one ModelRequest, and an answer back to each API's responses (whole or
streamed), errors included."""

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

OLLAMA_CHAT = "ollama.chat"
OLLAMA_GENERATE = "ollama.generate"
OPENAI_CHAT = "openai.chat"
# Which path is which API (after the invocation's /i/<token> prefix).
MODEL_PATHS = {
    "/api/chat": OLLAMA_CHAT,
    "/api/generate": OLLAMA_GENERATE,
    "/v1/chat/completions": OPENAI_CHAT,
    "/chat/completions": OPENAI_CHAT,  # an OpenAI base URL given without /v1
}
OLLAMA_VERSION = "0.11.0"  # what /api/version reports: a recent Ollama API, which this one follows
# Fields that say what is asked and how it travels; everything else is the request's options.
_REQUEST_FIELDS = {"model", "messages", "prompt", "system", "stream"}


class RequestError(ValueError):
    """A request the gateway refuses (HTTP 400): the target's mistake, not the backend's."""


@dataclass(frozen=True)
class ModelRequest:
    api: str
    model: str  # as the target asked for it
    messages: list[dict[str, Any]]  # [{"role": ..., "content": text}]
    options: dict[str, Any]  # the rest of the request, as sent
    stream: bool

    @property
    def include_usage(self) -> bool:
        """An OpenAI stream sends its token counts only when asked to (stream_options)."""
        return bool((self.options.get("stream_options") or {}).get("include_usage"))


def _text(content: Any, where: str) -> str:
    """A message's content as text: a string, or OpenAI's list of parts (text parts kept)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
            else:
                raise RequestError(f"{where}: only text content is served")
        return "".join(parts)
    raise RequestError(f"{where}: content must be text")


def parse_request(api: str, body: object) -> ModelRequest:
    """One request of `api` as a ModelRequest; RequestError for what no server would take."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("model: required")
    if api == OLLAMA_GENERATE:
        prompt = body.get("prompt", "")
        if not isinstance(prompt, str):
            raise RequestError("prompt: must be text")
        system = body.get("system")
        messages = ([{"role": "system", "content": _text(system, "system")}] if system else []) + [
            {"role": "user", "content": prompt}
        ]
    else:
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            raise RequestError("messages: a non-empty list is required")
        messages = []
        for index, message in enumerate(raw):
            if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                raise RequestError(f"messages[{index}]: an object with a role is required")
            role = "system" if message["role"] == "developer" else message["role"]
            messages.append({"role": role, "content": _text(message.get("content"), f"messages[{index}]")})
    # Ollama streams unless told not to; OpenAI only when asked.
    stream = body.get("stream", api != OPENAI_CHAT)
    options = {k: v for k, v in body.items() if k not in _REQUEST_FIELDS}
    return ModelRequest(api, model, messages, options, bool(stream))


def generation_options(request: ModelRequest) -> tuple[dict[str, Any], dict | None]:
    """The generation options a request sets, in llm's names (temperature, seed, top_p,
    max_tokens, stop), and the JSON schema its answer must follow, if it asks for one."""
    if request.api == OPENAI_CHAT:
        source = request.options
        wanted = {
            "temperature": source.get("temperature"),
            "seed": source.get("seed"),
            "top_p": source.get("top_p"),
            "max_tokens": source.get("max_completion_tokens", source.get("max_tokens")),
            "stop": source.get("stop"),
        }
        schema = _openai_schema(source.get("response_format"))
    else:
        source = request.options.get("options") or {}
        if not isinstance(source, dict):
            raise RequestError("options: must be an object")
        wanted = {
            "temperature": source.get("temperature"),
            "seed": source.get("seed"),
            "top_p": source.get("top_p"),
            "top_k": source.get("top_k"),
            "max_tokens": source.get("num_predict"),
            "stop": source.get("stop"),
        }
        schema = _ollama_schema(request.options.get("format"))
    if isinstance(wanted["stop"], list) and len(wanted["stop"]) == 1:
        wanted["stop"] = wanted["stop"][0]
    return {k: v for k, v in wanted.items() if v is not None}, schema


def _ollama_schema(format: object) -> dict | None:
    if format == "json":
        return {"type": "object"}
    return format if isinstance(format, dict) else None


def _openai_schema(response_format: object) -> dict | None:
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_object":
        return {"type": "object"}
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
        return schema if isinstance(schema, dict) else None
    return None


# -- answers --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int | None
    completion_tokens: int | None
    seconds: float
    cached_tokens: int | None = None  # of the prompt's: what a price charges less for


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _ollama_final(request: ModelRequest, text: str, usage: Usage) -> dict[str, Any]:
    body: dict[str, Any] = {"model": request.model, "created_at": _now_iso()}
    if request.api == OLLAMA_CHAT:
        body["message"] = {"role": "assistant", "content": text}
    else:
        body["response"] = text
    body.update(
        done=True,
        done_reason="stop",
        total_duration=int(usage.seconds * 1e9),
        load_duration=0,
        prompt_eval_count=usage.prompt_tokens or 0,
        eval_count=usage.completion_tokens or 0,
    )
    return body


def _openai_usage(usage: Usage) -> dict[str, int] | None:
    if usage.prompt_tokens is None and usage.completion_tokens is None:
        return None
    prompt, completion = usage.prompt_tokens or 0, usage.completion_tokens or 0
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def whole_answer(request: ModelRequest, text: str, usage: Usage, call_id: str) -> dict[str, Any]:
    """The one response of a request that did not ask to stream."""
    if request.api != OPENAI_CHAT:
        return _ollama_final(request, text, usage)
    body: dict[str, Any] = {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
    }
    counts = _openai_usage(usage)
    if counts is not None:
        body["usage"] = counts
    return body


def stream_chunk(request: ModelRequest, text: str, call_id: str, first: bool) -> bytes:
    """One streamed piece of the answer, framed for the API (an NDJSON line, an SSE event)."""
    if request.api != OPENAI_CHAT:
        body: dict[str, Any] = {"model": request.model, "created_at": _now_iso(), "done": False}
        if request.api == OLLAMA_CHAT:
            body["message"] = {"role": "assistant", "content": text}
        else:
            body["response"] = text
        return _line(body)
    delta = {"role": "assistant", "content": text} if first else {"content": text}
    return _event(_openai_chunk(request, call_id, [{"index": 0, "delta": delta, "finish_reason": None}]))


def stream_end(request: ModelRequest, usage: Usage, call_id: str) -> bytes:
    """What ends a stream: Ollama's final line with its counts; OpenAI's finishing chunk,
    its usage chunk when asked for, and [DONE]."""
    if request.api != OPENAI_CHAT:
        return _line(_ollama_final(request, "", usage))
    end = _event(_openai_chunk(request, call_id, [{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    counts = _openai_usage(usage)
    if request.include_usage:
        end += _event({**_openai_chunk(request, call_id, []), "usage": counts})
    return end + b"data: [DONE]\n\n"


def _openai_chunk(request: ModelRequest, call_id: str, choices: list) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{call_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": request.model,
        "choices": choices,
    }


def as_json(body: Any) -> bytes:
    """`body` as UTF-8 JSON; a text with a lone surrogate (a prompt may carry one, and the
    model echo it) escaped as JSON escapes it, never a failure to answer."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body).encode("ascii")


def _line(body: dict) -> bytes:
    return as_json(body) + b"\n"


def _event(body: dict) -> bytes:
    return b"data: " + as_json(body) + b"\n\n"


def error_body(api: str | None, message: str, status: int) -> dict[str, Any]:
    """An error as the API reports one (Ollama: {"error": text}; OpenAI: an error object)."""
    if api != OPENAI_CHAT:
        return {"error": message}
    kind = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def stream_error(api: str, message: str) -> bytes:
    """An error once a stream has begun (its status already sent)."""
    body = error_body(api, message, 502)
    return _line(body) if api != OPENAI_CHAT else _event(body)


# -- listings -------------------------------------------------------------------------------


def ollama_tags(names: list[str]) -> dict[str, Any]:
    details = {"format": "llm", "family": "llm", "parameter_size": "", "quantization_level": ""}
    return {
        "models": [
            {"name": n, "model": n, "modified_at": _now_iso(), "size": 0, "digest": "", "details": details}
            for n in names
        ]
    }


def openai_models(names: list[str]) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": n, "object": "model", "created": 0, "owned_by": "ironbench"} for n in names],
    }
