"""The gateway's HTTP server: Ollama's and OpenAI's model endpoints under each invocation's
own path (/i/<token>/...), and the control endpoints its coordinator opens and closes
invocations with. Every model call is kept in its invocation's book, in the order received."""

import contextlib
import hmac
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ironbench.core.files import escaped
from ironbench.core.model_calls import ABANDONED, BACKEND, REPLAY, REQUEST, request_diff
from ironbench.core.redact import Redactor
from ironbench.gateway import protocol
from ironbench.gateway.backends import (
    REPLAY_MODEL,
    Answer,
    BackendError,
    LlmBackend,
    ReplayMissing,
    Serving,
    replayed_answer,
)
from ironbench.gateway.protocol import ModelRequest, RequestError

SECRET_HEADER = "X-Ironbench-Secret"
CONTROL = "/_ironbench"
INVOCATION = "/i/"
MAX_BODY = 64 * 1024 * 1024


@dataclass
class Book:
    """One invocation's calls: those answered, those still being answered, and, replaying,
    the recorded calls that answer it."""

    replay: list[dict[str, Any]] | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    pending: dict[int, dict[str, Any]] = field(default_factory=dict)
    started: dict[int, float] = field(default_factory=dict)
    count: int = 0
    closed: bool = False  # the invocation has ended: an answer still coming is stopped


class Gateway:
    """The books of the invocations now open, and who answers their calls."""

    def __init__(self, secret: str, serving: Serving | None, redactor: Redactor | None = None) -> None:
        self.secret = secret
        self.serving = serving
        self.backend = LlmBackend(serving) if serving is not None else None
        self.redactor = redactor
        self.books: dict[str, Book] = {}
        self.lock = threading.Lock()

    def open(self, token: str, replay: list[dict[str, Any]] | None) -> None:
        with self.lock:
            self.books[token] = Book(replay)

    def close(self, token: str) -> list[dict[str, Any]]:
        """Every call of the invocation, in order; those still unanswered as abandoned."""
        with self.lock:
            book = self.books.pop(token, None)
            if book is None:
                return []
            book.closed = True
            pending = [(index, dict(record)) for index, record in book.pending.items()]
            calls = list(book.calls)
        now = time.perf_counter()
        for index, record in pending:
            record = _clean(record)
            if self.redactor is not None:
                record = self.redactor.value(record)
            calls.append(
                {
                    **record,
                    **_estimated(record),
                    "latency_ms": round((now - book.started[index]) * 1000, 3),
                    "error": "the invocation ended before the answer",
                    "error_kind": ABANDONED,
                    "status": 499,
                }
            )
        return sorted(calls, key=lambda c: c["index"])

    def begin(self, token: str, api: str) -> tuple[Book, int] | None:
        with self.lock:
            book = self.books.get(token)
            if book is None:
                return None
            book.count += 1
            book.started[book.count] = time.perf_counter()
            # what is known before the request is read: a call the invocation ends before (a
            # request still being parsed) is recorded as that, whole
            book.pending[book.count] = {
                "index": book.count, "api": api, "requested_model": "", "served_model": "", "messages": [],
                "options": {},
            }  # fmt: skip
            return book, book.count

    def note(self, book: Book, index: int, record: dict[str, Any]) -> None:
        """What a call asked, kept while it is answered (reported, as it stands then, if the
        invocation ends first: the record itself is kept, so what the answer adds shows)."""
        with self.lock:
            if index in book.pending:
                book.pending[index] = record

    def served_for(self, book: Book, request: ModelRequest) -> str:
        """The model that answers `request`, known before it is asked."""
        if book.replay is not None or self.serving is None:
            return REPLAY_MODEL
        return self.serving.served_for(request.model)

    def finish(self, book: Book, index: int, record: dict[str, Any]) -> None:
        record = _clean(record)
        if self.redactor is not None:
            record = self.redactor.value(record)
        with self.lock:
            book.pending.pop(index, None)
            started = book.started.pop(index)
            book.calls.append({**record, "latency_ms": round((time.perf_counter() - started) * 1000, 3)})

    def names(self) -> list[str]:
        return self.serving.names() if self.serving is not None else [REPLAY_MODEL]

    def answer(self, book: Book, index: int, request: ModelRequest, record: dict[str, Any]) -> Answer:
        """The recorded answer when replaying (noting how the request differs), else the model's."""
        if book.replay is None:
            assert self.backend is not None  # a gateway serves a model or answers from recordings
            return self.backend.answer(request)
        if index > len(book.replay):
            raise ReplayMissing(f"the recording has {len(book.replay)} call(s); this is call {index}")
        recorded = book.replay[index - 1]
        asked = self.redactor.value(record) if self.redactor is not None else record
        record["divergence"] = request_diff(recorded, asked, index)
        return replayed_answer(recorded)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "GatewayServer"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the calls are the record; an access log would only repeat them

    def setup(self) -> None:
        super().setup()
        # An answer goes out as its headers, then its body: with Nagle's algorithm the body
        # waits for the client's delayed ACK of the headers (40 ms a call on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    # -- plumbing ---------------------------------------------------------------------------

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0:  # read(-1) would read to the end, past any cap
            raise RequestError(f"a Content-Length of {length}")
        if length > MAX_BODY:
            raise RequestError(f"request body of {length} bytes; at most {MAX_BODY}")
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None, text: bool = False) -> None:
        data = body.encode("utf-8") if text else protocol.as_json(body)
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8" if text else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _start_stream(self, api: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if api == protocol.OPENAI_CHAT else "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _routed(self) -> tuple[str, str] | None:
        """(token, the path after it) of an invocation's request, else None."""
        path = self.path.split("?", 1)[0]
        if not path.startswith(INVOCATION):
            return None
        token, _, rest = path[len(INVOCATION) :].partition("/")
        return token, "/" + rest

    def _control(self) -> bool:
        given = self.headers.get(SECRET_HEADER, "").encode("utf-8", "surrogateescape")
        return hmac.compare_digest(given, self.server.gateway.secret.encode())

    # -- verbs ------------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        gateway = self.server.gateway
        if self.path == f"{CONTROL}/ping":
            return self._send(200, {"ok": True}) if self._control() else self._send(403, {"error": "forbidden"})
        routed = self._routed()
        if routed is None or routed[0] not in gateway.books:
            return self._send(404, {"error": "not an invocation of this run"})
        rest = routed[1]
        if rest in ("/", ""):
            return self._send(200, "Ollama is running", text=True)
        if rest == "/api/tags":
            return self._send(200, protocol.ollama_tags(gateway.names()))
        if rest == "/api/version":
            return self._send(200, {"version": protocol.OLLAMA_VERSION})
        if rest in ("/v1/models", "/models"):
            return self._send(200, protocol.openai_models(gateway.names()))
        return self._send(404, {"error": f"{rest}: not served by the ironbench model gateway"})

    def do_POST(self) -> None:
        gateway = self.server.gateway
        try:
            body = self._body()
        except (RequestError, ValueError) as exc:
            return self._send(400, {"error": str(exc)})
        if self.path.startswith(CONTROL + "/"):
            return self._control_request(self.path[len(CONTROL) :], body)
        routed = self._routed()
        api = protocol.MODEL_PATHS.get(routed[1]) if routed else None
        if routed is None or api is None:
            return self._send(404, {"error": f"{self.path}: not served by the ironbench model gateway"})
        begun = gateway.begin(routed[0], api)
        if begun is None:
            return self._send(404, protocol.error_body(api, "not an invocation of this run", 404))
        self._call(api, body, *begun, call_id=f"{routed[0]}-{begun[1]}")

    def _control_request(self, what: str, body: bytes) -> None:
        if not self._control():
            return self._send(403, {"error": "forbidden"})
        gateway = self.server.gateway
        data = json.loads(body or b"{}")
        if what == "/open":
            gateway.open(data["token"], data.get("replay"))
            return self._send(200, {"ok": True})
        if what == "/close":
            return self._send(200, {"calls": gateway.close(data["token"])})
        return self._send(404, {"error": f"{what}: no such control"})

    # -- one model call ---------------------------------------------------------------------

    def _call(self, api: str, body: bytes, book: Book, index: int, call_id: str) -> None:
        gateway = self.server.gateway
        record: dict[str, Any] = {"index": index, "api": api, "status": 200}
        try:
            # a lone surrogate ("\\udcff") is no text a model takes: U+FFFD before any backend sees it
            request = protocol.parse_request(api, _clean(json.loads(body or b"null")))
        except (RequestError, ValueError, RecursionError) as exc:  # (RecursionError: nested past the parser's depth)
            message = f"the request was refused: {exc}"
            record.update(requested_model="", served_model="", messages=[], options={}, error=message)
            return self._refuse(book, index, api, record, message, 400, REQUEST)
        record.update(
            requested_model=request.model,
            served_model=gateway.served_for(book, request),
            stream=request.stream,
            messages=request.messages,
            options=request.options,
        )
        gateway.note(book, index, record)
        try:
            answer = gateway.answer(book, index, request, record)
            pieces = answer.pieces
            first = next(pieces, None)
        except BackendError as exc:
            return self._failed(book, index, api, record, exc)
        except ReplayMissing as exc:
            return self._refuse(book, index, api, record, f"ironbench replay: {exc}", 500, REPLAY)
        record.update(served_model=answer.served_model, applied=answer.applied)
        if request.stream:
            self._stream(request, answer, first, pieces, book, index, record, call_id)
            return
        parts = [first or ""]
        try:
            for piece in pieces:
                if book.closed:  # nobody waits for the rest: the model is not asked for it
                    _stop(pieces)
                    return
                parts.append(piece)
                record["answered_chars"] = record.get("answered_chars", 0) + len(piece)
        except BackendError as exc:
            return self._failed(book, index, api, record, exc)
        text = "".join(parts)
        usage = answer.usage or protocol.Usage(None, None, 0.0)
        record.update(answer=text, **_tokens(usage))
        gateway.finish(book, index, record)
        self._send(200, protocol.whole_answer(request, text, usage, call_id))

    def _failed(self, book: Book, index: int, api: str, record: dict[str, Any], exc: BackendError) -> None:
        """The backend failed before the answer began: its status (a 429 with its Retry-After) to
        the target; a refusal of the request's own content is the request's failure, not the backend's."""
        record.update(retry_after=exc.retry_after)
        headers = {"Retry-After": f"{exc.retry_after:g}"} if exc.retry_after is not None else {}
        self._refuse(book, index, api, record, str(exc), exc.status, REQUEST if exc.request else BACKEND, headers)

    def _refuse(
        self,
        book: Book,
        index: int,
        api: str,
        record: dict[str, Any],
        message: str,
        status: int,
        kind: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        record.update(error=message, error_kind=kind, status=status)
        self.server.gateway.finish(book, index, record)
        self._send(status, protocol.error_body(api, message, status), headers)

    def _stream(
        self,
        request: ModelRequest,
        answer: Answer,
        first: str | None,
        pieces: Iterator[str],
        book: Book,
        index: int,
        record: dict[str, Any],
        call_id: str,
    ) -> None:
        """The answer streamed as the model gives it; a failure after the first piece ends the
        stream with an error in the API's framing."""
        parts: list[str] = []
        try:
            self._start_stream(request.api)
            if first is not None:
                parts.append(first)
                self._chunk(protocol.stream_chunk(request, first, call_id, True))
            for piece in pieces:
                if book.closed:  # the invocation has ended: the model is not asked for the rest
                    _stop(pieces)
                    break
                parts.append(piece)
                record["answered_chars"] = record.get("answered_chars", 0) + len(piece)
                self._chunk(protocol.stream_chunk(request, piece, call_id, False))
            usage = answer.usage or protocol.Usage(None, None, 0.0)
            record.update(_tokens(usage))
            self._chunk(protocol.stream_end(request, usage, call_id))
        except BackendError as exc:
            record.update(error=str(exc), error_kind=REQUEST if exc.request else BACKEND, status=exc.status)
            self._chunk(protocol.stream_error(request.api, str(exc)))
        except OSError:  # the target hung up: what it was sent is what it got, and its price
            _stop(pieces)
            record.update(error="the target closed the connection", error_kind=ABANDONED, **_estimated(record))
        finally:
            record["answer"] = "".join(parts)
            self.server.gateway.finish(book, index, record)
        try:
            self._chunk(b"")
        except OSError:
            pass


def _clean(value: Any) -> Any:
    """A request's or a call's data with every lone surrogate (a JSON request may carry
    "\\udcff") written as its escape (core.files.escaped): what cannot be written as UTF-8
    would fail the record's way to the store, and no model takes it."""
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _stop(pieces: Iterator[str]) -> None:
    """Stop an answer's generation (a generator's close ends the model's stream)."""
    close = getattr(pieces, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):  # a backend that fails on closing has stopped
            close()


def _estimated(record: dict[str, Any]) -> dict[str, Any]:
    """Token counts to price a call the invocation ended before its answer, when its model
    counted none (`estimated_tokens`: input, output; the call's own counts stay unknown): its
    prompt's characters and what was answered so far, four to a token, at least what it cost
    (what a model went on to make after it was stopped is not seen). Nothing for a call no
    model was asked for."""
    if not record.get("served_model") or record.get("prompt_tokens") is not None:
        return {}
    asked = sum(len(str(m.get("content", ""))) for m in record.get("messages", []) if isinstance(m, dict))
    return {"estimated_tokens": [-(-asked // 4), -(-int(record.get("answered_chars", 0)) // 4)]}


def _tokens(usage: protocol.Usage) -> dict[str, int | None]:
    """A call's token counts as its record keeps them (cached ones only where the model said:
    the price of the call reads them; the model_called event does not)."""
    counts = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}
    return counts if usage.cached_tokens is None else {**counts, "cached_tokens": usage.cached_tokens}


class GatewayServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    max_connections = 256  # open at once (a thread each): beyond, a connection is closed unanswered

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.counting:
            full = self.open >= self.max_connections
            if not full:
                self.open += 1
        if full:  # a target holding hundreds open cannot drive the run's gateway out of threads
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.counting:
                self.open -= 1

    def __init__(self, gateway: Gateway, port: int = 0) -> None:
        self.gateway = gateway
        self.counting = threading.Lock()
        self.open = 0
        super().__init__(("127.0.0.1", port), Handler)


def new_secret() -> str:
    return secrets.token_hex(16)


def new_token() -> str:
    return secrets.token_hex(8)
