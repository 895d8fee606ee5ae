"""The boundary's protocol, declared once: how every channel between the harness, a zygote, its
judges, the host server and a host frames its messages, the operations a judge asks of a host,
and the shape of every message.

Every channel carries frames: a 4-byte little-endian length, then that many bytes. Between the
harness, a zygote, its judges and the host server a frame holds one JSON message (one of the
classes below, named by its `message` field); between a judge and its host it holds one
codec.py value (a request or a reply, shaped as below); on a host's status pipe the host server
writes its pid, then its exit code, each a frame of ASCII digits. The host program loads this
file by path (it runs without ironbench), so it imports only the standard library.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict, dataclass, field, fields

HEADER = struct.Struct("<I")
MAX_FRAME = 65 * 1024 * 1024  # a codec value of at most 64 MiB (codec.MAX_BYTES) and its request or reply around it


class FrameError(ValueError):
    """A frame announced larger than its channel allows, or a message of no known shape."""


def frame(payload: bytes) -> bytes:
    """A message as it travels: its length, then its bytes."""
    return HEADER.pack(len(payload)) + payload


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_exactly(fd: int, n: int) -> bytes | None:
    """`n` bytes from a blocking descriptor (None when it closes first)."""
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, limit: int = MAX_FRAME) -> bytes | None:
    """One frame's payload from a blocking descriptor (None when it closes; FrameError over `limit`)."""
    header = read_exactly(fd, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > limit:
        raise FrameError(f"a frame of {size:,} bytes (at most {limit:,})")
    return read_exactly(fd, size)


class Frames:
    """The frames of a channel read in pieces (a non-blocking descriptor): feed what was read,
    take each whole frame as it completes."""

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self.buffer = bytearray()
        self.limit = limit

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next(self) -> bytes | None:
        """The next whole frame's payload (None until one is complete; FrameError over the limit)."""
        if len(self.buffer) < HEADER.size:
            return None
        (size,) = HEADER.unpack_from(self.buffer)
        if size > self.limit:
            raise FrameError(f"a frame of {size:,} bytes announced (at most {self.limit:,})")
        end = HEADER.size + size
        if len(self.buffer) < end:
            return None
        payload = bytes(self.buffer[HEADER.size : end])
        del self.buffer[:end]
        return payload


# -- a judge and its host: codec values --------------------------------------------------------


class Op:
    """What a judge asks of a host. A request is (op, target, args, kwargs): `target` a handle
    (None for IMPORT); the reply is (OK, value, updates), (RAISED, exception, updates) or
    (REFUSED, why). `updates`: the argument containers the brick changed in place, as
    (position, contents); an exception: (class, message, args, traceback, its own
    attributes that cross as values)."""

    IMPORT = "import"  # args (path, module name, site folders, folder, entry point): (module, entry or None)
    GETATTR = "getattr"  # (name,)
    SETATTR = "setattr"  # (name, value)
    DELATTR = "delattr"  # (name,)
    CALL = "call"  # args, kwargs
    CALLMETHOD = "callmethod"  # (name, *args), kwargs
    LEN = "len"
    ITER = "iter"
    NEXT = "next"
    GETITEM = "getitem"  # (key,)
    SETITEM = "setitem"  # (key, value)
    DELITEM = "delitem"  # (key,)
    STR = "str"
    REPR = "repr"
    FORMAT = "format"  # (spec,)
    DIR = "dir"
    ISINSTANCE = "isinstance"  # (a handle,): target a class
    ISSUBCLASS = "issubclass"  # (a class: a handle or a built-in class,): target a class
    COPY = "copy"  # (deep,)
    FIELDS = "fields"  # (): a dataclass's compared fields, as ((name, value), ...)
    PROBE = "probe"  # (operator name,): the target against a fresh object the check never saw


OPS = frozenset(value for name, value in vars(Op).items() if name.isupper())
OK = "ok"
RAISED = "raised"
REFUSED = "refused"
# What StopIteration may end: the iterator protocol's own requests (PEP 479 for the others).
ENDS_ITERATION = frozenset({Op.NEXT})
# A handle as the host describes an object it keeps: (id, kind, module, qualname, overrides,
# bases, extra). `overrides`: the comparison methods its type defines; `bases`: an exception
# class's; `extra`, by kind: a tuple subclass's (class, field names or None, items), an enum
# member's (class, name, value, mixin type name), a dataclass's (class, order, hashable).
HANDLE_KINDS = ("object", "callable", "class", "module", "exception_class", "tuple", "enum", "dataclass")
COMPARED = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__")
PROBED = ("eq", "ne", "lt", "le", "gt", "ge")  # what PROBE compares by (operator's names)


# -- the harness, a zygote, its judges and the host server: JSON messages ----------------------


@dataclass(frozen=True)
class Setup:
    """What a zygote's judges and host server need before a check is known: where checks'
    folders go, the interpreter and site folders of the brick's host, the launcher of its server."""

    root: str | None
    python: str
    paths: tuple[str, ...]
    launcher: str

    @classmethod
    def from_wire(cls, data: dict) -> Setup:
        return cls(data["root"], str(data["python"]), tuple(map(str, data["paths"])), str(data["launcher"]))


@dataclass(frozen=True)
class Fact:
    """One piece of evidence about a check, and the verdict it makes on its own (core/kinds.py
    CheckVerdict); `layer`: who found it (check, judge, host, zygote, harness)."""

    verdict: str
    line: str
    layer: str

    @classmethod
    def from_wire(cls, data: dict) -> Fact:
        return cls(str(data["verdict"]), str(data["line"]), str(data["layer"]))


@dataclass(frozen=True)
class Warm:
    """Harness -> zygote: start the host server and the first judge for `setup` now."""

    setup: Setup


@dataclass(frozen=True)
class Ready:
    """Zygote -> harness: it has started (its pid)."""

    pid: int


@dataclass(frozen=True)
class CheckOrder:
    """Harness -> zygote -> judge: one check of one brick (`brick`: targets/brick.py Brick.to_wire)."""

    kind: str  # python | pytest
    brick: dict
    timeout: float
    setup: Setup
    source: str = ""
    entry_point: str = ""
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HostStarted:
    """Judge -> zygote: the judge has its host (its pid: killed with it if the judge dies)."""

    pid: int


@dataclass(frozen=True)
class Answer:
    """Judge -> zygote -> harness: what each layer found (the verdict is decided from it once, in
    the harness: verdict.decide), what the check counted, its time and output."""

    facts: tuple[Fact, ...]
    notes: tuple[str, ...] = ()  # said with a verdict that is not correct (an `__eq__` not consulted)
    passed: int | None = None
    failed: int | None = None
    duration_ms: int | None = None
    output: str = ""

    def adding(self, *facts: Fact) -> Answer:
        return Answer((*facts, *self.facts), self.notes, self.passed, self.failed, self.duration_ms, self.output)


@dataclass(frozen=True)
class HostOrder:
    """Zygote's judge -> host server (with the host's five descriptors): fork a host in `folder`
    with exactly `env`."""

    folder: str
    env: dict[str, str]


Message = Warm | Ready | CheckOrder | HostStarted | Answer | HostOrder
_MESSAGES: dict[str, type] = {
    "warm": Warm,
    "ready": Ready,
    "check": CheckOrder,
    "host_started": HostStarted,
    "answer": Answer,
    "host": HostOrder,
}
_NAMES = {kind: name for name, kind in _MESSAGES.items()}
_NESTED = {"setup": Setup.from_wire, "facts": lambda items: tuple(Fact.from_wire(item) for item in items)}


def encode_message(message: Message) -> bytes:
    return json.dumps({"message": _NAMES[type(message)], **asdict(message)}).encode("utf-8")


def decode_message(payload: bytes) -> Message:
    """The message a frame holds (FrameError when it is no message of a known shape)."""
    try:
        data = json.loads(payload)
        kind = _MESSAGES[data.pop("message")]
        made: dict = {}
        for part in fields(kind):
            if part.name in data:
                value = data[part.name]
                convert = _NESTED.get(part.name)
                made[part.name] = convert(value) if convert is not None else value
        if "notes" in made:
            made["notes"] = tuple(map(str, made["notes"]))
        return kind(**made)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise FrameError(f"a message of no known shape: {type(exc).__name__}: {exc}") from None


def send(fd: int, message: Message) -> None:
    write_all(fd, frame(encode_message(message)))


def receive(fd: int) -> Message | None:
    """The next message on a blocking descriptor (None when it closes)."""
    payload = read_frame(fd)
    return None if payload is None else decode_message(payload)
