"""The check's side of the boundary: a session with the brick's host, and what its answers become.

Requests go to the host one at a time; while one waits, the host's stdout and stderr are read
(capped) and the deadline is kept. An answer is decoded by codec.py into plain values, or into
objects made here for what stays in the host: a `RemoteObject` (or `RemoteCallable`,
`RemoteClass`, `RemoteDataclass`), a named tuple or an enum member as a value made here (values.py),
a mirrored exception class for the brick's exception classes. What a handle does is decided
here: it equals only itself (a dataclass whose `__eq__` is generated: field by field, here),
hashes by identity and is true; attribute access, calls, len, iteration, indexing, str and repr
are asked of the host; it has no operators and no numeric conversions (a result the check
computes with must arrive as plain data). Membership (`x in handle`) iterates the host's object
and compares here. No value of the check's is ever sent to be compared: when a brick's type
has its own comparison, the host is asked what it says against a fresh object (PROBE), and an
object equal to what it never saw is evidence of tampering.

What the session learns about the brick is kept in `Findings`: facts for verdict.decide (the
host ended, how; an answer that cannot cross; evidence of tampering), notes, the deadline.
"""

import builtins
import codecs
import contextlib
import importlib
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

from ironbench.core.kinds import CheckVerdict
from ironbench.targets.boundary import codec, values
from ironbench.targets.boundary.protocol import (
    ENDS_ITERATION,
    OK,
    RAISED,
    REFUSED,
    Fact,
    FrameError,
    Frames,
    Op,
    frame,
)
from ironbench.targets.boundary.tamper import Capture

ECHO_CAP = 1024 * 1024  # bytes of each of the host's streams printed as the check's own
EXIT_WAIT_SECONDS = 2.0  # the host closed its reply channel: the time it gets to finish exiting
DRAIN_READING = 0.05  # after a check, what a leftover of the brick keeps printing is read this long
FACTS_CAP = 20  # facts of one verdict kept (and notes)
# What the check never asks the host for: pytest's collection probes every name a test module
# holds (a brick could answer `__test__ = True` and have its function run as a test).
LOCAL_ONLY = frozenset({"__test__", "pytestmark", "__wrapped__", "__signature__", "__pytest_wrapped__"})
# Names a star import from the brick never brings into a check module: pytest reads them there.
RESERVED = frozenset({"pytestmark", "pytest_plugins", "__test__"})
# What a test runner calls in a test module by its name, with the module or a test function (the
# check's own, which cannot cross): a brick's function of that name is never bound by a star
# import (else the check would fail on what the brick chose, as the harness's fault).
XUNIT = frozenset(
    {"setup_module", "teardown_module", "setUpModule", "tearDownModule", "setup_function", "teardown_function"}
)
_ORDER = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}
# Modules whose exception classes are a test runner's outcomes (a skip, a quit): the brick's
# are never taken for them, and raising one is evidence.
RUNNER_MODULES = ("unittest", "bdb", "doctest", "_pytest", "pytest")
OUTCOMES = frozenset({"SkipTest", "Skipped", "XFailed", "Exit", "Failed", "OutcomeException", "BdbQuit"})
BRICK_RAISED = "_ironbench_brick_raised"  # marks an exception the brick raised, as made here


def runner_outcome(cls: type) -> bool:
    """Whether a class mirrored from the brick is a test runner's outcome: named so, and from a
    runner's module (pytest's say `builtins`, which no real built-in of that name is)."""
    module = str(cls.__module__)
    from_runner = module.partition(".")[0] in RUNNER_MODULES or (
        module == "builtins" and codec.BUILTIN_CLASSES.get(cls.__name__) is not cls
    )
    return from_runner and cls.__name__ in OUTCOMES


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
    """What the check's side learnt of the brick while the check ran: facts (verdict.decide
    weighs them with the check's own conclusion), notes said beside a verdict that is not
    correct, the names the check imported that the brick lacks."""

    facts: list[Fact] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    timed_out: bool = False
    ended: bool = False  # the host ended (exited, or was killed) while it owed an answer

    def add(self, verdict: CheckVerdict, line: str, layer: str = "judge") -> None:
        same = [f for f in self.facts if f.verdict == verdict]
        if len(same) < FACTS_CAP and all(f.line != line for f in same):
            self.facts.append(Fact(verdict, line, layer))

    def note(self, line: str) -> None:
        if line not in self.notes and len(self.notes) < FACTS_CAP:
            self.notes.append(line)

    def lacking(self, name: str) -> None:
        if name not in self.missing and len(self.missing) < FACTS_CAP:
            self.missing.append(name)


class _BrickValue(codec.Unencodable):
    """A value made of what the brick gave (an exception it raised) that cannot go back to it."""


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
        self.asked = 0  # requests sent: a failure of the check's own code after one may be the brick's doing
        self.handles: dict[int, object] = {}  # host id -> its handle (or mirrored exception class)
        self.class_ids: dict[type, int] = {}  # a mirrored exception class -> its host id
        self.types: dict[tuple[str, str, str], type] = {}
        self.probed: dict[tuple[int, str], object] = {}  # (handle id, operator) -> what the host said
        # ids of the containers made of the brick's answers (an id reused by a container of the
        # check's once one is gone counts as the brick's: the check's fault is never presumed)
        self.made: set[int] = set()
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
            brick_made = isinstance(exc, codec.TooLarge | codec.TooDeep) and self._holds_the_bricks((args, kwargs))
            if isinstance(exc, _BrickValue) or brick_made:  # the brick's making: its answer
                self.findings.add("wrong", f"what the check passes to the brick ({op}) cannot cross: {exc}")
            else:  # what the check itself made: a check this boundary cannot run
                self.findings.add(
                    "harness_fault", f"the check passes the brick {exc} ({op}): the boundary cannot carry it"
                )
            raise BoundaryRefused(f"cannot pass to the brick: {exc}") from None
        self.asked += 1
        with self.lock:
            reply = self._exchange(frame(payload), op)
        try:
            answer = codec.decode(
                reply, self._handle, ref=lambda k: track[k] if 0 <= k < len(track) else self._bad(k), made=self.made
            )
            return self._answer(answer, track, op)
        except codec.CodecError as exc:
            return self._broken(f"the brick's process answered {op} with a malformed reply: {exc}")

    def _holds_the_bricks(self, value: object) -> bool:
        """Whether `value` holds a container made of the brick's answers or an object of the
        brick's (what it passes back may be too large or too deep by the brick's making, never
        by the check's alone)."""
        seen: set[int] = set()
        stack = [value]
        while stack:
            item = stack.pop()
            if id(item) in seen:
                continue
            seen.add(id(item))
            if id(item) in self.made or _session_of(item) is self:
                return True
            if isinstance(item, dict):
                stack.extend(dict.keys(item))
                stack.extend(dict.values(item))
            elif isinstance(item, list | tuple | set | frozenset):
                stack.extend(item)
        return False

    def probe(self, handle: "RemoteObject", name: str) -> object:
        """What the brick's own type says of its object against a fresh one (True, False, None),
        asked once per object and operator; the host's end while it answers is its own evidence."""
        key = (object.__getattribute__(handle, "_id"), name)
        if key not in self.probed:
            try:
                self.probed[key] = self.request(Op.PROBE, handle, (name,))
            except (BrickGone, BoundaryRefused):
                self.probed[key] = None
            except Exception:  # noqa: BLE001 (a probe that raises says nothing)
                self.probed[key] = None
        return self.probed[key]

    def _bad(self, k: int) -> object:
        raise codec.CodecError(f"no argument container {k}")

    def _answer(self, answer: object, track: list, op: str) -> object:
        if type(answer) is not tuple or not answer:
            raise codec.CodecError("a reply is a tuple")
        if answer[0] == REFUSED and len(answer) == 2 and type(answer[1]) is str:
            self.findings.add("wrong", f"the brick's answer to {op} cannot cross: {answer[1]}", "host")
            raise BoundaryRefused(f"the brick's answer cannot cross: {answer[1]}")
        if len(answer) != 3 or answer[0] not in (OK, RAISED) or type(answer[2]) is not tuple:
            raise codec.CodecError("a reply is (ok|raised, value, updates)")
        for update in answer[2]:
            self._update(update, track)
        if answer[0] == OK:
            return answer[1]
        raise self._exception(answer[1], op)

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
        frames = Frames()
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
                        frames.feed(chunk)
                        try:
                            reply = frames.next()
                        except FrameError as exc:
                            return self._broken(f"the brick's process announced a reply over the limit: {exc}")
                        if reply is not None:
                            if frames.buffer:
                                return self._broken("the brick's process answered more than it was asked")
                            self._pump_ready()
                            return reply
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
        self.findings.ended = True
        if status < 0:
            name = signal.Signals(-status).name if -status in signal.valid_signals() else f"signal {-status}"
            line = f"the brick's process was killed by {name} while answering {op}"
            self.findings.add("wrong", line, "host")  # a crash (out of memory, a segfault): its answer
        else:
            line = f"the brick's process exited (status {status}) while answering {op}"
            self.findings.add("tampered", line, "host")  # it ended its own process instead of answering
        self.dead = BrickGone(line)
        raise self.dead

    def _broken(self, why: str) -> bytes:
        self.findings.add("tampered", why, "host")
        self.dead = BrickGone(why)
        raise self.dead

    # -- what crosses -------------------------------------------------------------------------

    def _fallback(self, value: object) -> tuple[bytes | None, object]:
        session = _session_of(value)
        if session is self:
            return b"h", _id_of(value)
        if isinstance(value, type):
            if codec.BUILTIN_CLASSES.get(value.__name__) is value:
                return b"K", value.__name__
            if value in self.class_ids:
                return b"h", self.class_ids[value]
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.generic):
            return None, value.item()
        if isinstance(value, BaseException) and vars(value).get(BRICK_RAISED):
            raise _BrickValue(f"a {type(value).__qualname__} the brick raised")
        raise codec.Unencodable(_refusal(value))

    def _handle(self, descriptor: object) -> object:
        if (
            type(descriptor) is not tuple
            or len(descriptor) != 7
            or type(descriptor[0]) is not int
            or not all(type(part) is str for part in descriptor[1:4])
            or type(descriptor[4]) is not tuple
            or type(descriptor[5]) is not tuple
            or type(descriptor[6]) is not tuple
        ):
            raise codec.CodecError("a handle is (id, kind, module, qualname, overrides, bases, extra)")
        hid, kind, module, qualname, overrides, bases, extra = descriptor
        known = self.handles.get(hid)
        if known is not None:
            return known
        made: object
        if kind == "exception_class":
            made = self._exception_class(hid, module, qualname, bases)
        elif kind in ("tuple", "enum"):
            made = values.made(self, hid, kind, module, qualname, extra)
        elif kind in ("object", "callable", "function", "class", "module", "dataclass"):
            made = self._type(kind, module, qualname)(self, hid, qualname, frozenset(map(str, overrides)), extra)
        else:
            raise codec.CodecError(f"a handle of kind {kind!r}")
        self.handles[hid] = made
        return made

    def _type(self, kind: str, module: str, qualname: str) -> type:
        """A class per remote type, named like it (pytest's messages name what the brick returned)."""
        key = (kind, module, qualname)
        made = self.types.get(key)
        if made is None:
            base = {
                "object": RemoteObject,
                "callable": RemoteCallable,
                "function": RemoteCallable,
                "class": RemoteClass,
                "module": RemoteObject,
                "dataclass": RemoteDataclass,
            }
            name = qualname.rpartition(".")[2] or "object"
            namespace = {"__slots__": (), "_boundary_kind": kind}
            made = type(name if name.isidentifier() else "object", (base[kind],), namespace)
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

    def _exception(self, info: object, op: str) -> BaseException:
        if (
            type(info) is not tuple
            or len(info) != 5
            or not (isinstance(info[0], type) and issubclass(info[0], BaseException))
            or type(info[1]) is not str
            or not (info[2] is None or type(info[2]) is tuple)
            or type(info[3]) is not str
            or type(info[4]) is not dict
        ):
            raise codec.CodecError("an exception is (class, message, args, traceback, attributes)")
        cls, message, args, trace, attributes = info
        cls = _safe_base(cls)
        exc = _instance(cls, args, message)
        for name, value in attributes.items():  # its own plain attributes (`err.code`), never machinery
            if type(name) is str and name.isidentifier() and not name.startswith("_") and not hasattr(cls, name):
                with contextlib.suppress(AttributeError, TypeError):
                    setattr(exc, name, value)
        vars(exc)[BRICK_RAISED] = True
        if trace:
            exc.add_note(f"(raised in the brick's process)\n{trace.rstrip()}")
        if isinstance(exc, StopIteration | StopAsyncIteration) and op not in ENDS_ITERATION:
            # PEP 479: a StopIteration escaping a call would end the check's own loop (`all(map(...))`)
            stopped = RuntimeError(f"the brick raised {type(exc).__name__} ({op}): it arrives as RuntimeError")
            stopped.__cause__ = exc
            vars(stopped)[BRICK_RAISED] = True
            return stopped
        return exc


def _session_of(value: object) -> Session | None:
    if isinstance(value, RemoteObject):
        return object.__getattribute__(value, "_session")
    if getattr(type(value), codec.STAND_IN, False):
        return values.session_of(value)
    return None


def _id_of(value: object) -> int:
    if isinstance(value, RemoteObject):
        return object.__getattribute__(value, "_id")
    return values.id_of(value)


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

    __slots__ = ("__weakref__", "_extra", "_id", "_overrides", "_qualname", "_session")

    def __init__(self, session: Session, hid: int, qualname: str, overrides: frozenset[str], extra: tuple) -> None:
        object.__setattr__(self, "_session", session)
        object.__setattr__(self, "_id", hid)
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_overrides", overrides)
        object.__setattr__(self, "_extra", extra)

    def _ask(self, op: str, *args: object, **kwargs: object) -> object:
        return object.__getattribute__(self, "_session").request(op, self, args, kwargs)

    def __getattr__(self, name: str) -> object:
        if name in LOCAL_ONLY or name.startswith("_pytest"):
            raise AttributeError(name)
        return self._ask(Op.GETATTR, name)

    def __setattr__(self, name: str, value: object) -> None:
        self._ask(Op.SETATTR, name, value)

    def __delattr__(self, name: str) -> None:
        self._ask(Op.DELATTR, name)

    def __dir__(self) -> list[str]:
        names = self._ask(Op.DIR)
        return [n for n in names if type(n) is str] if type(names) is list else []

    # comparisons are decided here; the brick's own type is only probed, with a fresh object
    def _unconsulted(self, dunder: str, probe: str, suspicious: bool, says: str) -> None:
        """The check compared this object by `dunder`, which its type defines and which was not
        consulted: noted; and if the type says `suspicious` of its object against a fresh one
        (equal to what it never saw), that is evidence of tampering."""
        overrides = object.__getattribute__(self, "_overrides")
        if dunder not in overrides:
            return
        session: Session = object.__getattribute__(self, "_session")
        qualname = object.__getattribute__(self, "_qualname")
        session.findings.note(
            f"the brick's {qualname} has its own {dunder}, which was not consulted: a brick's object "
            "equals only itself (a dataclass's generated __eq__ is compared field by field)"
            if dunder in ("__eq__", "__ne__")
            else f"the brick's {qualname} has its own {dunder}, which was not consulted"
        )
        if probe and session.probe(self, probe) is suspicious:
            session.findings.add("tampered", f"the brick's {qualname} says it {says} a fresh object it was never shown")

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        self._unconsulted("__eq__", "eq", True, "equals")
        return False

    def __ne__(self, other: object) -> bool:
        if other is self:
            return False
        overrides = object.__getattribute__(self, "_overrides")
        self._unconsulted("__ne__" if "__ne__" in overrides else "__eq__", "ne", False, "is not unequal to")
        return True

    def _order(self, name: str, other: object) -> object:
        self._unconsulted(f"__{name}__", name, True, f"is {_ORDER[name]}")
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
        """True, as any object, unless its type has a length and no __bool__ of its own: then
        its length says, as len() does (a brick's answer like any other). Its own __bool__ is
        not consulted (noted)."""
        overrides = object.__getattribute__(self, "_overrides")
        if "__bool__" in overrides:
            self._unconsulted("__bool__", "", False, "")
            return True
        if "__len__" in overrides:
            return len(self) != 0
        return True

    def __len__(self) -> int:
        size = self._ask(Op.LEN)
        if type(size) is not int or size < 0:
            raise TypeError(f"the brick's {self._qualname} gave a length that is not an int >= 0")
        return size

    def __iter__(self) -> "RemoteObject":
        iterator = self._ask(Op.ITER)
        if not isinstance(iterator, RemoteObject):
            raise TypeError(f"iter() of the brick's {self._qualname} returned no iterator")
        return iterator

    def __next__(self) -> object:
        return self._ask(Op.NEXT)

    def __contains__(self, item: object) -> bool:
        return any(element is item or element == item for element in self)

    def __getitem__(self, key: object) -> object:
        return self._ask(Op.GETITEM, key)

    def __setitem__(self, key: object, value: object) -> None:
        self._ask(Op.SETITEM, key, value)

    def __delitem__(self, key: object) -> None:
        self._ask(Op.DELITEM, key)

    def _text(self, op: str, *args: object) -> str:
        text = self._ask(op, *args)
        if type(text) is not str:
            raise TypeError(f"{op}() of the brick's {self._qualname} returned a non-string")
        return text

    def __str__(self) -> str:
        return self._text(Op.STR)

    def __repr__(self) -> str:
        try:
            return self._text(Op.REPR)
        except Exception:  # noqa: BLE001 (pytest's reports repr what failed: they must not fail)
            return f"<the brick's {self._qualname} object>"

    def __format__(self, spec: str) -> str:
        return self._text(Op.FORMAT, spec)

    def __enter__(self) -> object:
        return self._ask(Op.CALLMETHOD, "__enter__")

    def __exit__(self, kind: object, value: object, trace: object) -> object:
        sent = kind if isinstance(kind, type) and codec.BUILTIN_CLASSES.get(kind.__name__) is kind else None
        return self._ask(Op.CALLMETHOD, "__exit__", sent, None, None)

    def __copy__(self) -> object:
        return self._ask(Op.COPY, False)

    def __deepcopy__(self, memo: object) -> object:
        return self._ask(Op.COPY, True)

    def __reduce_ex__(self, protocol: object) -> str:
        raise TypeError(f"the brick's {self._qualname} stays in the brick's process: it cannot be pickled")


class RemoteCallable(RemoteObject):
    """A function (or any callable object) of the brick: called in the host."""

    __slots__ = ()

    def __call__(self, *args: object, **kwargs: object) -> object:
        return object.__getattribute__(self, "_session").request(Op.CALL, self, args, kwargs)


class RemoteClass(RemoteCallable):
    """A class of the brick: calling it makes an instance that stays in the host. Whether a value
    is an instance is asked of the host with the value's handle, or a plain value's built-in
    class: never the check's value itself."""

    __slots__ = ()

    def __instancecheck__(self, instance: object) -> bool:
        session: Session = object.__getattribute__(self, "_session")
        if _session_of(instance) is session:
            return session.request(Op.ISINSTANCE, self, (instance,)) is True
        kind = type(instance)
        return codec.BUILTIN_CLASSES.get(kind.__name__) is kind and self.__subclasscheck__(kind)

    def __subclasscheck__(self, subclass: object) -> bool:
        session: Session = object.__getattribute__(self, "_session")
        known = isinstance(subclass, type) and (
            codec.BUILTIN_CLASSES.get(subclass.__name__) is subclass or subclass in session.class_ids
        )
        if not (known or _session_of(subclass) is session):
            return False
        return session.request(Op.ISSUBCLASS, self, (subclass,)) is True


class RemoteDataclass(RemoteObject):
    """A dataclass instance of the brick whose `__eq__` is the generated one: compared with
    another of its class field by field here (the fields asked of the host each time: it may
    have changed), ordered so when its class orders, hashed by its fields when its class does."""

    __slots__ = ()

    def _fields(self) -> tuple:
        found = self._ask(Op.FIELDS)
        if type(found) is not tuple or not all(type(f) is tuple and len(f) == 2 for f in found):
            raise TypeError(f"the brick's {self._qualname} gave fields that are not (name, value) pairs")
        return tuple(value for _, value in found)

    def _same_class(self, other: object) -> bool:
        mine = object.__getattribute__(self, "_extra")
        return (
            isinstance(other, RemoteDataclass)
            and object.__getattribute__(other, "_session") is object.__getattribute__(self, "_session")
            and object.__getattribute__(other, "_extra")[:1] == mine[:1]
        )

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not self._same_class(other):
            return NotImplemented
        assert isinstance(other, RemoteDataclass)
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def _order(self, name: str, other: object) -> object:
        if not (object.__getattribute__(self, "_extra")[1] and self._same_class(other)):
            return NotImplemented
        assert isinstance(other, RemoteDataclass)
        mine, theirs = self._fields(), other._fields()
        return {"lt": mine < theirs, "le": mine <= theirs, "gt": mine > theirs, "ge": mine >= theirs}[name]

    def __hash__(self) -> int:
        hashing = object.__getattribute__(self, "_extra")[2]
        if hashing == "none":
            raise TypeError(f"unhashable type: '{self._qualname}'")
        return hash(self._fields()) if hashing == "fields" else object.__hash__(self)

    def __bool__(self) -> bool:
        return RemoteObject.__bool__(self)


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
            return session.request(Op.GETATTR, handle, (name,))
        except AttributeError:
            if not name.startswith("__"):
                session.findings.lacking(name)
            raise

    def _public(self, session: Session, handle: RemoteObject) -> list[str]:
        names: object
        try:
            names = session.request(Op.GETATTR, handle, ("__all__",))
        except AttributeError:
            listed = session.request(Op.DIR, handle)
            names = [n for n in listed if type(n) is str and not n.startswith("_")] if type(listed) is list else []
        if not isinstance(names, list | tuple) or not all(type(n) is str for n in names):
            raise TypeError(f"the brick {self.__name__}'s __all__ is not a list of names")
        planted = sorted(n for n in names if n in RESERVED or n.startswith("pytest_"))
        if planted:
            session.findings.add(
                "tampered", f"the brick exports {', '.join(planted)} (pytest reads these in a test module)"
            )
        return [n for n in names if n not in planted]

    def exported(self, bound: dict, imported: Callable[[], frozenset[str]]) -> dict[str, object]:
        """What `from BRICK import *` binds in a module whose names are `bound`: only what the
        brick defines (no module, no class or function it imported, no test runner's hook),
        never a name the module (or the builtins) already binds. A brick object exported under the name of a module
        the check imports is evidence of tampering."""
        session, handle = vars(self)["_ironbench_remote"]
        found = {}
        imported_names = imported()
        for name in self._public(session, handle):
            if (name.startswith("__") and name.endswith("__")) or name in XUNIT:
                continue  # a module's own machinery (`__getattr__` would answer pytest's probes of the test module)
            taken = name in bound or name in vars(builtins)
            if taken and name not in imported_names:
                continue
            value = getattr(self, name)
            kind, origin = _kind_of(value)
            if kind == "module":
                continue  # the check has its own imports
            if name in imported_names and kind is not None and kind != "function":
                qualname = object.__getattribute__(value, "_qualname")
                session.findings.add(
                    "tampered", f"the brick exports a {qualname} as {name}, the name of a module the check imports"
                )
                continue
            if taken or (kind in ("class", "function", "exception_class") and origin != self.__name__):
                continue
            found[name] = value
        return found

    def __setattr__(self, name: str, value: object) -> None:
        session, handle = vars(self)["_ironbench_remote"]
        session.request(Op.SETATTR, handle, (name, value))

    def __delattr__(self, name: str) -> None:
        session, handle = vars(self)["_ironbench_remote"]
        session.request(Op.DELATTR, handle, (name,))


def _kind_of(value: object) -> tuple[str | None, str]:
    """A value's kind as the host described it, and the module it comes from (None: a plain
    value, or a value made here of one: it is the brick's)."""
    if isinstance(value, RemoteObject):
        return getattr(type(value), "_boundary_kind", "object"), type(value).__module__.removeprefix("brick:")
    if isinstance(value, type):  # the brick's exception class as mirrored here, or a built-in class
        return "exception_class", value.__module__
    return None, ""


def scoped_import(
    brick: str, module: BrickModule, is_check: Callable[[dict | None], bool], imported: Callable[[], frozenset[str]]
) -> None:
    """`import BRICK` (or `importlib.import_module`) in the check's own code gives the brick's
    module (and `from BRICK import *` what `BrickModule.exported` allows); every other import,
    the check's and everyone else's, is the judge's own. The brick is never in `sys.modules`:
    a library that looks a module up there (pytest's approx looks for numpy) never finds it."""
    original = builtins.__import__
    import_module = importlib.import_module

    def imported_by(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and name == brick and is_check(globals):
            if fromlist and "*" in fromlist:
                star = types.ModuleType(brick)
                exported = module.exported(globals or {}, imported)
                vars(star).update(exported)
                star.__all__ = list(exported)
                return star
            return module
        return original(name, globals, locals, fromlist, level)

    def imported_by_name(name: str, package: str | None = None) -> types.ModuleType:
        if name == brick and is_check(sys._getframe(1).f_globals):
            return module
        return import_module(name, package)

    builtins.__import__ = imported_by
    importlib.import_module = imported_by_name
