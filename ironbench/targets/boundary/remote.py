"""The check's side of the boundary: a session with the brick's host, and what its answers become.

Requests go to the host one at a time; while one waits, the host's stdout and stderr are read
(capped) and the deadline is kept. An answer is decoded by codec.py into plain values, or into
handles made here: a `RemoteObject` (or `RemoteCallable`, `RemoteClass`) for an object that
stays in the host, a mirrored exception class for the brick's exception classes. What a handle
does is decided here: it equals only itself, hashes by identity and is true; attribute access,
calls, len, iteration, indexing, str and repr are asked of the host; it has no operators and no
numeric conversions (a result the check computes with must arrive as plain data). Membership
(`x in handle`) iterates the host's object and compares here.

What the session learns about the brick is kept in `Findings`: the host ended (how), the
deadline passed, something could not cross, evidence of tampering.
"""

import builtins
import codecs
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ironbench.targets.boundary import codec
from ironbench.targets.boundary.tamper import Capture

REPLY_SLACK = 1024 * 1024  # a reply's frame around a value of at most codec.MAX_BYTES
ECHO_CAP = 1024 * 1024  # bytes of each of the host's streams printed as the check's own
EXIT_WAIT_SECONDS = 2.0  # the host closed its reply channel: the time it gets to finish exiting
DRAIN_READING = 0.05  # after a check, what a leftover of the brick keeps printing is read this long
# What the check never asks the host for: pytest's collection probes every name a test module
# holds (a brick could answer `__test__ = True` and have its function run as a test).
LOCAL_ONLY = frozenset({"__test__", "pytestmark", "__wrapped__", "__signature__", "__pytest_wrapped__"})
# Names a star import from the brick never brings into a check module: pytest reads them there.
RESERVED = frozenset({"pytestmark", "pytest_plugins", "__test__"})
_ORDER = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
# Modules whose exception classes are a test runner's outcomes (a skip, a quit): the brick's
# are never taken for them, and raising one is evidence.
RUNNER_MODULES = ("unittest", "bdb", "doctest", "_pytest", "pytest")
OUTCOMES = frozenset({"SkipTest", "Skipped", "XFailed", "Exit", "Failed", "OutcomeException", "BdbQuit"})
BRICK_RAISED = "_ironbench_brick_raised"  # marks an exception the brick raised, as made here


class CheckTimeout(BaseException):
    """The check's time is up (a BaseException: no `except Exception` in a check swallows it)."""


class BrickGone(BaseException):
    """The brick's process ended, or broke the protocol: nothing more can be asked of it."""


class BoundaryRefused(BaseException):
    """A value the boundary cannot carry (a callback, a generator, too large or too deep)."""


class HostProcess(Protocol):
    """The brick's host as the session sees it: its pid, and its exit code once it has ended
    (negative: the signal that killed it; `wait` gives None when nobody can tell any more)."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int | None: ...


@dataclass
class Findings:
    """What the check's side learnt of the brick while the check ran."""

    timed_out: bool = False
    exited: str = ""  # the host ended with an exit status while it owed an answer: tampered
    crashed: str = ""  # the host was killed by a signal: a crash (wrong)
    refused: list[str] = field(default_factory=list)  # what could not cross: harness_fault
    tampered: list[str] = field(default_factory=list)  # evidence, whatever the check concluded
    claims: list[str] = field(default_factory=list)  # evidence that counts when the check failed
    missing: list[str] = field(default_factory=list)  # names the check imported that the brick lacks

    def note(self, kind: str, line: str) -> None:
        kept = getattr(self, kind)
        if line not in kept and len(kept) < 20:
            kept.append(line)


def _short(value: object, size: int = 60) -> str:
    text = repr(value) if not isinstance(value, RemoteObject) else f"<{value._qualname} object>"
    return text if len(text) <= size else text[: size - 3] + "..."


def _refusal(value: object) -> str:
    if isinstance(value, types.GeneratorType) or hasattr(type(value), "__next__"):
        return f"a {type(value).__qualname__} (a generator or iterator would have to be consumed lazily)"
    if callable(value):
        return f"a {type(value).__qualname__} (a callback from the check into the brick)"
    return f"a {type(value).__qualname__} object"


class Session:
    """One brick's host, from its first request to its last."""

    def __init__(
        self,
        process: HostProcess,
        request_fd: int,
        reply_fd: int,
        outputs: dict[int, tuple[Capture, str]],
        deadline: float,
        findings: Findings,
    ) -> None:
        self.process = process
        self.request_fd = request_fd
        self.reply_fd = reply_fd
        self.outputs = outputs  # the host's stdout and stderr: captured, and echoed as the check's own
        self.decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in outputs}
        self.echoed = dict.fromkeys(outputs, 0)
        self.echo = False
        self.lock = threading.Lock()  # one exchange at a time, whatever threads the check runs
        self.deadline = deadline
        self.findings = findings
        self.dead: BaseException | None = None
        self.handles: dict[int, object] = {}  # host id -> its handle (or mirrored exception class)
        self.class_ids: dict[type, int] = {}  # a mirrored exception class -> its host id
        self.types: dict[tuple[str, str, str], type] = {}
        self.selector = selectors.DefaultSelector()
        os.set_blocking(request_fd, False)
        os.set_blocking(reply_fd, False)
        for fd in outputs:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ)

    # -- one exchange -------------------------------------------------------------------------

    def request(self, op: str, target: object = None, args: tuple = (), kwargs: dict | None = None) -> object:
        """Ask the host; returns its answer, raises the brick's exception, or a control exception."""
        if self.dead is not None:
            raise self.dead
        track: list = []
        try:
            payload = codec.encode((op, target, args, kwargs or {}), self._fallback, track=track, subclasses=True)
        except codec.Unencodable as exc:
            self.findings.note("refused", f"{op}: {exc}")
            raise BoundaryRefused(f"cannot pass to the brick: {exc}") from None
        with self.lock:
            reply = self._exchange(codec.frame(payload), op)
        try:
            answer = codec.decode(reply, self._handle, ref=lambda k: track[k] if 0 <= k < len(track) else self._bad(k))
            return self._answer(answer, track)
        except codec.CodecError as exc:
            return self._broken(f"the brick's process answered {op} with a malformed reply: {exc}")

    def evidence(self, name: str, handle: "RemoteObject", other: object = None) -> object:
        """What the brick's own type says of a comparison (never raises, never counts as refused)."""
        if self.dead is not None:
            return None
        try:
            payload = codec.encode(("claim", handle, (name, other), {}), self._fallback, subclasses=True)
        except codec.Unencodable:
            return None
        try:
            with self.lock:
                reply = self._exchange(codec.frame(payload), "claim")
            answer = codec.decode(reply, self._handle)
        except codec.CodecError:
            return None
        return answer[1] if type(answer) is tuple and len(answer) == 3 and answer[0] == "ok" else None

    def _bad(self, k: int) -> object:
        raise codec.CodecError(f"no argument container {k}")

    def _answer(self, answer: object, track: list) -> object:
        if type(answer) is not tuple or not answer:
            raise codec.CodecError("a reply is a tuple")
        if answer[0] == "refused" and len(answer) == 2 and type(answer[1]) is str:
            self.findings.note("refused", answer[1])
            raise BoundaryRefused(f"the brick's answer cannot cross: {answer[1]}")
        if len(answer) != 3 or answer[0] not in ("ok", "raised") or type(answer[2]) is not tuple:
            raise codec.CodecError("a reply is (ok|raised, value, updates)")
        for update in answer[2]:
            self._update(update, track)
        if answer[0] == "ok":
            return answer[1]
        raise self._exception(answer[1])

    @staticmethod
    def _update(update: object, track: list) -> None:
        if type(update) is not tuple or len(update) != 2 or type(update[0]) is not int:
            raise codec.CodecError("an update is (position, contents)")
        k, contents = update
        if not 0 <= k < len(track) or not isinstance(track[k], type(contents)):
            raise codec.CodecError(f"an update of container {k} is not of its type")
        original = track[k]
        if isinstance(original, list | bytearray):
            original[:] = contents
        else:
            original.clear()
            original.update(contents)

    def _exchange(self, data: bytes, op: str) -> bytes:
        """Send one request and read its whole reply, reading the host's output meanwhile."""
        selector = self.selector
        view = memoryview(data)
        selector.register(self.request_fd, selectors.EVENT_WRITE)
        selector.register(self.reply_fd, selectors.EVENT_READ)
        received = bytearray()
        expected: int | None = None
        self.echo = True
        try:
            while True:
                left = self.deadline - time.monotonic()
                if left <= 0:
                    self.findings.timed_out = True
                    self.dead = CheckTimeout(f"the check's time ran out waiting for the brick's answer to {op}")
                    raise self.dead
                for key, _ in selector.select(left):
                    fd = key.fd
                    if fd == self.request_fd:
                        try:
                            view = view[os.write(fd, view) :]
                        except BrokenPipeError:
                            view = view[:0]  # the host is gone: its reply channel says how
                        if not view:
                            selector.unregister(fd)
                    elif fd == self.reply_fd:
                        chunk = os.read(fd, 1 << 20)
                        if not chunk:
                            return self._ended(op)
                        received += chunk
                        if expected is None and len(received) >= codec.HEADER.size:
                            (expected,) = codec.HEADER.unpack_from(received)
                            if expected > codec.MAX_BYTES + REPLY_SLACK:
                                return self._broken(f"the brick's process announced a reply of {expected:,} bytes")
                        if expected is not None and len(received) >= codec.HEADER.size + expected:
                            if len(received) > codec.HEADER.size + expected:
                                return self._broken("the brick's process answered more than it was asked")
                            self._pump_ready()
                            return bytes(received[codec.HEADER.size :])
                    else:
                        self._pump(fd)
        finally:
            self.echo = False
            for fd in (self.request_fd, self.reply_fd):
                if fd in selector.get_map():
                    selector.unregister(fd)

    def _pump(self, fd: int) -> None:
        """One read of the host's stdout or stderr. While the check waits for an answer, what the
        brick prints is printed as the check's own (pytest's capsys sees it, a failure shows it)."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        if not chunk:
            self.selector.unregister(fd)
            return
        capture, stream = self.outputs[fd]
        capture.write(chunk)
        if self.echo and self.echoed[fd] < ECHO_CAP:
            self.echoed[fd] += len(chunk)
            text = self.decoders[fd].decode(chunk)
            if text:
                getattr(sys, stream).write(text)

    def _pump_ready(self) -> None:
        """What the host printed before it answered (already in the pipes)."""
        for key, _ in self.selector.select(0):
            if key.fd in self.outputs:
                self._pump(key.fd)

    def drain(self, seconds: float) -> None:
        """What the host printed and is still in the pipes (at most `seconds` spent waiting, and
        little more reading what a leftover keeps printing)."""
        stop = time.monotonic() + seconds
        while self.selector.get_map() and time.monotonic() < stop + DRAIN_READING:
            ready = self.selector.select(max(0.0, stop - time.monotonic()))
            if not ready:
                return
            for key, _ in ready:
                self._pump(key.fd)

    def _ended(self, op: str) -> bytes:
        try:
            status = self.process.wait(EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            return self._broken(f"the brick's process closed its reply channel while answering {op}")
        if status is None:
            return self._broken(f"the brick's process ended while answering {op}, and the process that forked it too")
        if status < 0:
            name = signal.Signals(-status).name if -status in signal.valid_signals() else f"signal {-status}"
            self.findings.crashed = f"the brick's process was killed by {name} while answering {op}"
            self.dead = BrickGone(self.findings.crashed)
        else:
            self.findings.exited = f"the brick's process exited (status {status}) while answering {op}"
            self.dead = BrickGone(self.findings.exited)
        raise self.dead

    def _broken(self, why: str) -> bytes:
        self.findings.note("tampered", why)
        self.dead = BrickGone(why)
        raise self.dead

    # -- what crosses -------------------------------------------------------------------------

    def _fallback(self, value: object) -> tuple[bytes | None, object]:
        if isinstance(value, RemoteObject) and object.__getattribute__(value, "_session") is self:
            return b"h", object.__getattribute__(value, "_id")
        if isinstance(value, type):
            if codec.BUILTIN_CLASSES.get(value.__name__) is value:
                return b"K", value.__name__
            if value in self.class_ids:
                return b"h", self.class_ids[value]
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.generic):
            return None, value.item()
        raise codec.Unencodable(_refusal(value))

    def _handle(self, descriptor: object) -> object:
        if (
            type(descriptor) is not tuple
            or len(descriptor) != 6
            or type(descriptor[0]) is not int
            or not all(type(part) is str for part in descriptor[1:4])
            or type(descriptor[4]) is not tuple
            or type(descriptor[5]) is not tuple
        ):
            raise codec.CodecError("a handle is (id, kind, module, qualname, overrides, bases)")
        hid, kind, module, qualname, overrides, bases = descriptor
        known = self.handles.get(hid)
        if known is not None:
            return known
        if kind == "exception_class":
            made: object = self._exception_class(hid, module, qualname, bases)
        elif kind in ("object", "callable", "class", "module"):
            made = self._type(kind, module, qualname)(self, hid, qualname, frozenset(map(str, overrides)))
        else:
            raise codec.CodecError(f"a handle of kind {kind!r}")
        self.handles[hid] = made
        return made

    def _type(self, kind: str, module: str, qualname: str) -> type:
        """A class per remote type, named like it (pytest's messages name what the brick returned)."""
        key = (kind, module, qualname)
        made = self.types.get(key)
        if made is None:
            base = {"object": RemoteObject, "callable": RemoteCallable, "class": RemoteClass, "module": RemoteObject}
            name = qualname.rpartition(".")[2] or "object"
            made = type(name if name.isidentifier() else "object", (base[kind],), {"__slots__": ()})
            made.__qualname__ = qualname
            made.__module__ = f"brick:{module}"
            self.types[key] = made
        return made

    def _exception_class(self, hid: int, module: str, qualname: str, bases: tuple) -> type:
        """The brick's exception class as a class here: the standard library's own when it is one
        the check has imported, else a new class of the same name over its mirrored bases."""
        top = module.partition(".")[0]
        if top in sys.stdlib_module_names and top not in RUNNER_MODULES and module in sys.modules:
            found: object = sys.modules[module]
            for part in qualname.split("."):
                found = getattr(found, part, None)
            if isinstance(found, type) and issubclass(found, BaseException):
                self.class_ids.setdefault(found, hid)
                return found
        parents = tuple(_safe_base(b) for b in bases if isinstance(b, type) and issubclass(b, BaseException))
        name = qualname.rpartition(".")[2]
        namespace = {"__module__": module, "__qualname__": qualname, "__str__": _message}
        made: type | None = None
        for tried in (parents or (Exception,), *((p,) for p in parents), (Exception,)):
            try:
                made = type(name if name.isidentifier() else "BrickError", tried, namespace)
                break
            except TypeError:  # bases whose layouts conflict (KeyError and OSError): fewer bases
                continue
        assert made is not None
        self.class_ids[made] = hid
        return made

    def _exception(self, info: object) -> BaseException:
        if (
            type(info) is not tuple
            or len(info) != 4
            or not (isinstance(info[0], type) and issubclass(info[0], BaseException))
            or type(info[1]) is not str
            or not (info[2] is None or type(info[2]) is tuple)
            or type(info[3]) is not str
        ):
            raise codec.CodecError("an exception is (class, message, args, traceback)")
        cls, message, args, trace = info
        cls = _safe_base(cls)
        exc = _instance(cls, args, message)
        vars(exc)[BRICK_RAISED] = True
        if trace:
            exc.add_note(f"(raised in the brick's process)\n{trace.rstrip()}")
        return exc


def _safe_base(cls: type) -> type:
    """A class the check can raise without stopping itself: the brick's KeyboardInterrupt or
    GeneratorExit would stop pytest or escape the check's handlers; they arrive as Exceptions."""
    return _STAND_INS.get(cls, cls)


def _message(self: BaseException) -> str:
    return self.__dict__.get("_ironbench_message", BaseException.__str__(self))


def _instance(cls: type, args: tuple | None, message: str) -> BaseException:
    """An exception of `cls` made from the brick's arguments, or its message, or neither."""
    exc: BaseException | None = None
    for attempt in (args, (message,)):
        exc = _constructed(cls, attempt) if attempt is not None else None
        if exc is not None:
            break
    if exc is None:
        bare: Any = BaseException.__new__(cls, message)
        bare.args = (message,)
        exc = bare
    if cls.__dict__.get("__str__") is _message:
        vars(exc)["_ironbench_message"] = message
    return exc


def _constructed(cls: type, args: tuple) -> BaseException | None:
    try:
        exc: object = cls(*args)
    except Exception:  # noqa: BLE001 (a class whose constructor wants other arguments)
        return None
    return exc if isinstance(exc, BaseException) and isinstance(exc, cls) else None


_STAND_INS: dict[type, type] = {
    stopped: type(stopped.__name__, (Exception,), {"__module__": "builtins", "__str__": _message})
    for stopped in (KeyboardInterrupt, GeneratorExit)
}


class RemoteObject:
    """An object that stays in the brick's host. Equal only to itself, hashed by identity, true."""

    __slots__ = ("__weakref__", "_id", "_overrides", "_qualname", "_session")

    def __init__(self, session: Session, hid: int, qualname: str, overrides: frozenset[str]) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_id", hid)
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_overrides", overrides)

    def _ask(self, op: str, *args: object, **kwargs: object) -> object:
        return object.__getattribute__(self, "_session").request(op, self, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name in LOCAL_ONLY or name.startswith("_pytest"):
            raise AttributeError(name)
        return self._ask("getattr", name)

    def __setattr__(self, name: str, value: object) -> None:
        self._ask("setattr", name, value)

    def __delattr__(self, name: str) -> None:
        self._ask("delattr", name)

    def __dir__(self) -> list[str]:
        names = self._ask("dir")
        return [n for n in names if type(n) is str] if type(names) is list else []

    # comparisons are decided here; the brick's own type is asked only for evidence
    def _claim(self, name: str, dunders: tuple[str, ...], other: object, suspicious: object, says: str) -> None:
        """When the brick's type overrides one of `dunders`, ask what it says of the comparison
        the check just decided; if it says `suspicious` (the check's contrary), that is evidence."""
        overrides = object.__getattribute__(self, "_overrides")
        if not any(d in overrides for d in dunders):
            return
        session = object.__getattribute__(self, "_session")
        if session.evidence(name, self, other) is suspicious:
            shown = says.format(self=_short(self), other=_short(other))
            line = f"the brick's {self._qualname} says {shown} (its type overrides {dunders[0]})"
            session.findings.note("claims", line)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, RemoteObject):
            self._claim("eq", ("__eq__",), other, True, "{self} == {other}")
        return False

    def __ne__(self, other: object) -> bool:
        if other is self:
            return False
        if not isinstance(other, RemoteObject):
            self._claim("ne", ("__ne__", "__eq__"), other, False, "{self} != {other} is false")
        return True

    def _order(self, name: str, other: object) -> object:
        if not isinstance(other, RemoteObject):
            self._claim(name, (f"__{name}__",), other, True, "{self} " + _ORDER[name] + " {other}")
        return NotImplemented

    def __lt__(self, other: object) -> object:
        return self._order("lt", other)

    def __le__(self, other: object) -> object:
        return self._order("le", other)

    def __gt__(self, other: object) -> object:
        return self._order("gt", other)

    def __ge__(self, other: object) -> object:
        return self._order("ge", other)

    def __hash__(self) -> int:
        return object.__hash__(self)

    def __bool__(self) -> bool:
        self._claim("bool", ("__bool__", "__len__"), None, False, "{self} is false")
        return True

    def __len__(self) -> int:
        size = self._ask("len")
        if type(size) is not int or size < 0:
            raise TypeError(f"the brick's {self._qualname} gave a length that is not an int >= 0")
        return size

    def __iter__(self) -> "RemoteObject":
        iterator = self._ask("iter")
        if not isinstance(iterator, RemoteObject):
            raise TypeError(f"iter() of the brick's {self._qualname} returned no iterator")
        return iterator

    def __next__(self) -> object:
        return self._ask("next")

    def __contains__(self, item: object) -> bool:
        return any(element is item or element == item for element in self)

    def __getitem__(self, key: object) -> object:
        return self._ask("getitem", key)

    def __setitem__(self, key: object, value: object) -> None:
        self._ask("setitem", key, value)

    def __delitem__(self, key: object) -> None:
        self._ask("delitem", key)

    def _text(self, op: str, *args: object) -> str:
        text = self._ask(op, *args)
        if type(text) is not str:
            raise TypeError(f"{op}() of the brick's {self._qualname} returned a non-string")
        return text

    def __str__(self) -> str:
        return self._text("str")

    def __repr__(self) -> str:
        try:
            return self._text("repr")
        except Exception:  # noqa: BLE001 (pytest's reports repr what failed: they must not fail)
            return f"<the brick's {self._qualname} object>"

    def __format__(self, spec: str) -> str:
        return self._text("format", spec)

    def __enter__(self) -> object:
        return self._ask("callmethod", "__enter__")

    def __exit__(self, kind: object, value: object, trace: object) -> object:
        sent = kind if isinstance(kind, type) and codec.BUILTIN_CLASSES.get(kind.__name__) is kind else None
        return self._ask("callmethod", "__exit__", sent, None, None)

    def __copy__(self) -> object:
        return self._ask("copy", False)

    def __deepcopy__(self, memo: object) -> object:
        return self._ask("copy", True)

    def __reduce_ex__(self, protocol: object) -> str:
        raise TypeError(f"the brick's {self._qualname} stays in the brick's process: it cannot be pickled")


class RemoteCallable(RemoteObject):
    """A function (or any callable object) of the brick: called in the host."""

    __slots__ = ()

    def __call__(self, *args: object, **kwargs: object) -> object:
        return object.__getattribute__(self, "_session").request("call", self, args, kwargs)


class RemoteClass(RemoteCallable):
    """A class of the brick: calling it makes an instance that stays in the host."""

    __slots__ = ()

    def __instancecheck__(self, instance: object) -> bool:
        return self._ask("isinstance", instance) is True

    def __subclasscheck__(self, subclass: object) -> bool:
        return self._ask("issubclass", subclass) is True


class BrickModule(types.ModuleType):
    """The brick as a check imports it: every attribute is asked of the host."""

    def __init__(self, name: str, session: Session, handle: RemoteObject) -> None:
        super().__init__(name)
        vars(self)["_ironbench_remote"] = (session, handle)

    def __getattr__(self, name: str) -> object:
        session, handle = vars(self)["_ironbench_remote"]
        if name == "__path__":  # the import system's probe: a brick is a module, not a package
            raise AttributeError(name)
        if name == "__all__":
            return self._public(session, handle)
        try:
            return session.request("getattr", handle, (name,))
        except AttributeError:
            if not name.startswith("__"):
                session.findings.note("missing", name)
            raise

    def _public(self, session: Session, handle: RemoteObject) -> list[str]:
        names: object
        try:
            names = session.request("getattr", handle, ("__all__",))
        except AttributeError:
            listed = session.request("dir", handle)
            names = [n for n in listed if type(n) is str and not n.startswith("_")] if type(listed) is list else []
        if not isinstance(names, list | tuple) or not all(type(n) is str for n in names):
            raise TypeError(f"the brick {self.__name__}'s __all__ is not a list of names")
        planted = sorted(n for n in names if n in RESERVED or n.startswith("pytest_"))
        if planted:
            session.findings.note(
                "tampered", f"the brick exports {', '.join(planted)} (pytest reads these in a test module)"
            )
        return [n for n in names if n not in planted]

    def __setattr__(self, name: str, value: object) -> None:
        session, handle = vars(self)["_ironbench_remote"]
        session.request("setattr", handle, (name, value))

    def __delattr__(self, name: str) -> None:
        session, handle = vars(self)["_ironbench_remote"]
        session.request("delattr", handle, (name,))


def scoped_import(brick: str, module: BrickModule, is_check: Callable[[dict | None], bool]) -> None:
    """`import BRICK` in the check's own code gives the brick's module; everywhere else (pytest,
    the standard library: a brick may be named `statistics`) imports go on as before."""
    original = builtins.__import__

    def imported(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name == brick and is_check(globals):
            return module
        return original(name, globals, locals, fromlist, level)

    builtins.__import__ = imported
