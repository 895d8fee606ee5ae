"""The check boundary's codec: plain data as tagged, length-prefixed bytes, in both directions.

The brick's host loads this file by path (it runs without ironbench on its path), so it imports
nothing but `struct` and `sys` up front. A value is one tag byte and its payload:

    N T F E            None, True, False, Ellipsis
    i <q8>  I <n4> <n>  an int (64-bit, or n bytes two's complement: any size)
    d <d8>  c <d8><d8>  a float (IEEE bits: nan, inf and -0.0 exact), a complex
    s b y <n4> <n>     str (UTF-8, surrogates kept), bytes, bytearray
    l t S z <n4> items  list, tuple, set, frozenset;  m <n4> key value...  a dict
    G <3 ints>  X <3 values>  D <str>  Q <2 ints>  P p <str>
                       range, slice, Decimal, Fraction, PosixPath, PurePosixPath
    K <str>            a built-in class, by its name in `builtins`
    V <str> <value>    a standard library value type (VALUE_TYPES), by its name and plain form
    H <descriptor>     an object that stays in the host (host -> check): a handle
    h <int>            a handle sent back (check -> host), by its id
    r <int>            an argument container changed in place, by its position (copy-back)

How a message is framed, and what a request or a reply holds, is protocol.py's.

Decoding builds exact built-in values and runs no code: no pickle, no marshal, no eval, no
class the sender names (a built-in class is looked up in a fixed table, a handle is made by the
receiver's own factory). Every length is checked against the bytes that are left, nesting is
limited, and a message is at most MAX_BYTES: a malformed or oversized message is a CodecError.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # typing itself is not imported: a host's start counts every import
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 64 * 1024 * 1024  # one message, either way
MAX_DEPTH = 200  # containers inside containers

_Q = struct.Struct("<q")
_D = struct.Struct("<d")
_DD = struct.Struct("<dd")
_N = struct.Struct("<I")
_SMALL = 1 << 63
# The built-in classes a `K` may name, taken before any other code runs in this process.
BUILTIN_CLASSES: dict[str, type] = {}
for _name, _value in vars(sys.modules["builtins"]).items():
    if isinstance(_value, type):
        BUILTIN_CLASSES[_name] = _value
del _name, _value


def _module(name: str):
    """A standard module, imported when a value of one of its types first crosses."""
    import importlib

    return importlib.import_module(name)


def _tz(tz):
    """A datetime's or time's zone as it crosses: none, or a fixed offset (`datetime.timezone`)."""
    if tz is None:
        return None
    if type(tz) is not _module("datetime").timezone:
        raise Unencodable(f"a time in a zone of {type(tz).__qualname__} (only fixed offsets cross)")
    return tz


def _defaultdict(factory, items):
    if factory is not None and BUILTIN_CLASSES.get(getattr(factory, "__name__", "")) is not factory:
        raise CodecError("a defaultdict's factory is a built-in class or none")
    return _module("collections").defaultdict(factory, items)


def _factory(value):
    """A defaultdict's factory as it crosses: a built-in class (list, int, set...) or none (any
    other factory is code, which never crosses: a missing key is then a KeyError)."""
    factory = value.default_factory
    return factory if isinstance(factory, type) and BUILTIN_CLASSES.get(factory.__name__) is factory else None


# The standard library's value types that cross as values, each of exactly that type (a subclass
# is an object of its own): (module, name) -> (its plain form, the value from that form). The
# receiver builds the real type from plain data: no code of the sender's runs.
VALUE_TYPES: dict[tuple[str, str], tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    ("collections", "OrderedDict"): (
        lambda v: tuple(dict.items(v)),
        lambda p: _module("collections").OrderedDict(p),
    ),
    ("collections", "Counter"): (lambda v: dict(dict.items(v)), lambda p: _module("collections").Counter(dict(p))),
    ("collections", "defaultdict"): (lambda v: (_factory(v), dict(dict.items(v))), lambda p: _defaultdict(*p)),
    ("collections", "deque"): (lambda v: (list(v), v.maxlen), lambda p: _module("collections").deque(*p)),
    ("collections", "UserList"): (lambda v: list(v.data), lambda p: _module("collections").UserList(p)),
    ("collections", "UserDict"): (lambda v: dict(v.data), lambda p: _module("collections").UserDict(p)),
    ("collections", "UserString"): (lambda v: str(v.data), lambda p: _module("collections").UserString(p)),
    ("datetime", "date"): (lambda v: (v.year, v.month, v.day), lambda p: _module("datetime").date(*p)),
    ("datetime", "datetime"): (
        lambda v: (v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond, _tz(v.tzinfo), v.fold),
        lambda p: _module("datetime").datetime(*p[:8], fold=p[8]),
    ),
    ("datetime", "time"): (
        lambda v: (v.hour, v.minute, v.second, v.microsecond, _tz(v.tzinfo), v.fold),
        lambda p: _module("datetime").time(*p[:5], fold=p[5]),
    ),
    ("datetime", "timedelta"): (
        lambda v: (v.days, v.seconds, v.microseconds),
        lambda p: _module("datetime").timedelta(*p),
    ),
    ("datetime", "timezone"): (
        lambda v: (v.utcoffset(None), v.tzname(None)),
        lambda p: _module("datetime").timezone(*p),
    ),
}


class CodecError(ValueError):
    """A message that is malformed, or over a limit."""


class Unencodable(TypeError):
    """A value with no plain form here (a callback, a generator, an object too deep or too large)."""


class TooLarge(Unencodable):
    """A value larger than a message may be."""


class TooDeep(Unencodable):
    """A value nested deeper than a message may be (or inside itself)."""


# What a fallback returns for a value the encoder has no tag for: a handle's descriptor (`H`),
# a handle's id (`h`), a built-in class's name (`K`), or (None, a plain value to send instead).
Fallback = Callable[[object], tuple[bytes | None, object]]


# A subclass of a plain type, when the sender trusts its own objects: sent as that type.
_PLAIN_BASES = (int, float, complex, str, bytes, bytearray, list, tuple, dict, set, frozenset)
# A class whose instances stand for an object the other side keeps (an enum member, a named
# tuple made here from the host's): whatever it subclasses, the fallback sends it (as its handle).
STAND_IN = "_boundary_stand_in"


class _Encoder:
    __slots__ = ("fallback", "max_bytes", "max_depth", "out", "refs", "subclasses", "track")

    def __init__(
        self,
        fallback: Fallback | None,
        track: list | None,
        refs: dict[int, int] | None,
        max_depth: int,
        max_bytes: int,
        subclasses: bool,
    ) -> None:
        self.out = bytearray()
        self.fallback = fallback
        self.track = track
        self.refs = refs
        self.max_depth = max_depth
        self.max_bytes = max_bytes
        self.subclasses = subclasses

    def value(self, value: Any, depth: int) -> None:
        kind = type(value)
        out = self.out
        if value is None:
            out += b"N"
        elif kind is bool:
            out += b"T" if value else b"F"
        elif kind is int:
            self.integer(value)
        elif kind is float:
            out += b"d"
            out += _D.pack(value)
        elif kind is str:
            self.blob(b"s", value.encode("utf-8", "surrogatepass"))
        elif kind in (list, tuple, set, frozenset, dict, bytearray):
            self.container(value, kind, depth)
        elif kind is bytes:
            self.blob(b"b", value)
        elif kind is complex:
            out += b"c"
            out += _DD.pack(value.real, value.imag)
        elif value is Ellipsis:
            out += b"E"
        elif kind is range:
            out += b"G"
            for part in (value.start, value.stop, value.step):
                self.integer(part)
        elif kind is slice:
            out += b"X"
            for part in (value.start, value.stop, value.step):
                self.value(part, depth + 1)
        else:
            self.named(value, kind, depth)

    def integer(self, value: int) -> None:
        if -_SMALL <= value < _SMALL:
            self.out += b"i"
            self.out += _Q.pack(value)
            return
        size = (value.bit_length() + 8) // 8
        if size > self.max_bytes:
            raise TooLarge(f"an int of {size:,} bytes is larger than a message may be ({self.max_bytes:,} bytes)")
        self.blob(b"I", value.to_bytes(size, "little", signed=True))

    def blob(self, tag: bytes, data: bytes) -> None:
        out = self.out
        out += tag
        out += _N.pack(len(data))
        out += data
        if len(out) > self.max_bytes:
            raise TooLarge(f"larger than a message may be ({self.max_bytes:,} bytes)")

    def container(self, value, kind: type, depth: int) -> None:
        out = self.out
        if self.refs is not None and depth and id(value) in self.refs:
            out += b"r"
            self.integer(self.refs[id(value)])
            return
        if depth >= self.max_depth:
            raise TooDeep(f"nested deeper than {self.max_depth} containers (or inside itself)")
        if self.track is not None and kind in (list, dict, set, bytearray):
            self.track.append(value)
        if kind is bytearray:
            self.blob(b"y", bytes(value))
            return
        if kind is dict:
            out += b"m"
            out += _N.pack(len(value))
            for key, item in dict.items(value):
                self.value(key, depth + 1)
                self.value(item, depth + 1)
        else:
            out += b"l" if kind is list else b"t" if kind is tuple else b"S" if kind is set else b"z"
            out += _N.pack(len(value))
            for item in value:
                self.value(item, depth + 1)
        if len(out) > self.max_bytes:
            raise TooLarge(f"larger than a message may be ({self.max_bytes:,} bytes)")

    def named(self, value: Any, kind: type, depth: int) -> None:
        name = (kind.__module__, kind.__qualname__)
        if isinstance(value, type) and BUILTIN_CLASSES.get(value.__name__) is value:
            self.blob(b"K", value.__name__.encode("ascii"))
        elif name == ("decimal", "Decimal"):
            self.blob(b"D", str(value).encode("ascii"))
        elif name == ("fractions", "Fraction"):
            self.out += b"Q"
            self.integer(value.numerator)
            self.integer(value.denominator)
        elif name in (("pathlib", "PosixPath"), ("pathlib", "PurePosixPath")):
            self.blob(b"P" if name[1] == "PosixPath" else b"p", str(value).encode("utf-8", "surrogatepass"))
        elif name in VALUE_TYPES and _exactly(kind, name):
            self.out += b"V"
            self.blob(b"s", ".".join(name).encode("ascii"))
            self.value(VALUE_TYPES[name][0](value), depth + 1)
        elif self.subclasses and isinstance(value, _PLAIN_BASES) and not getattr(kind, STAND_IN, False):
            base: Any = next(b for b in _PLAIN_BASES if isinstance(value, b))
            if base in (list, tuple, dict, set, frozenset, bytearray):
                self.container(value, base, depth)  # tracked as itself: changes come back to it
            else:
                self.value(base(value), depth)
        elif self.fallback is None:
            raise Unencodable(f"a {kind.__qualname__} object")
        else:
            payload: Any
            tag, payload = self.fallback(value)
            if tag is None:
                self.value(payload, depth)
            elif tag == b"h":
                self.out += b"h"
                self.integer(payload)
            elif tag == b"K":
                self.blob(b"K", str(payload).encode("ascii"))
            else:
                self.out += b"H"
                self.value(payload, depth + 1)


def _exactly(kind: type, name: tuple[str, str]) -> bool:
    """Whether `kind` is the standard type it is named after (not a class that calls itself so)."""
    module = sys.modules.get(name[0])
    return module is not None and getattr(module, name[1], None) is kind


def encode(
    value: object,
    fallback: Fallback | None = None,
    *,
    track: list | None = None,
    refs: dict[int, int] | None = None,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
    subclasses: bool = False,
) -> bytes:
    """`value` as bytes. `fallback` gives what has no tag (else Unencodable); `track` collects
    the mutable containers encoded (list, dict, set, bytearray), in order; a container whose id
    is in `refs` (below the top) is sent as its position there. With `subclasses` (a sender
    that trusts its own objects), a subclass of a plain type is sent as that type."""
    encoder = _Encoder(fallback, track, refs, max_depth, max_bytes, subclasses)
    encoder.value(value, 0)
    return bytes(encoder.out)


class _Decoder:
    __slots__ = ("containers", "data", "handle", "made", "max_depth", "pos", "ref")

    def __init__(self, data: bytes, handle, ref, containers, max_depth: int, made=None) -> None:
        self.made = made
        self.data = data
        self.pos = 0
        self.handle = handle
        self.ref = ref
        self.containers = containers
        self.max_depth = max_depth

    def count(self) -> int:
        (n,) = _N.unpack_from(self.data, self.pos)
        self.pos += 4
        if n > len(self.data) - self.pos:
            raise CodecError(f"a length of {n:,} with {len(self.data) - self.pos:,} bytes left")
        return n

    def raw(self) -> bytes:
        n = self.count()
        start = self.pos
        self.pos += n
        return self.data[start : self.pos]

    def integer(self) -> int:
        value = self.value(0)
        if type(value) is not int:
            raise CodecError("an int expected")
        return value

    def value(self, depth: int) -> object:
        data = self.data
        tag = data[self.pos : self.pos + 1]
        self.pos += 1
        if tag == b"i":
            (number,) = _Q.unpack_from(data, self.pos)
            self.pos += 8
            return number
        if tag == b"s":
            return self.raw().decode("utf-8", "surrogatepass")
        if tag == b"d":
            (number,) = _D.unpack_from(data, self.pos)
            self.pos += 8
            return number
        if tag in (b"l", b"t", b"S", b"z", b"m"):
            if depth >= self.max_depth:
                raise CodecError(f"nested deeper than {self.max_depth} containers")
            return self.container(tag, depth)
        if tag == b"N":
            return None
        if tag == b"T":
            return True
        if tag == b"F":
            return False
        if tag == b"I":
            return int.from_bytes(self.raw(), "little", signed=True)
        if tag == b"b":
            return self.raw()
        if tag == b"y":
            array = bytearray(self.raw())
            if self.containers is not None:
                self.containers.append(array)
            return array
        if tag == b"c":
            real, imag = _DD.unpack_from(data, self.pos)
            self.pos += 16
            return complex(real, imag)
        if tag == b"E":
            return Ellipsis
        if tag == b"G":
            return range(self.integer(), self.integer(), self.integer())
        if tag == b"X":
            return slice(self.value(depth + 1), self.value(depth + 1), self.value(depth + 1))
        if tag == b"D":
            import decimal

            return decimal.Decimal(self.raw().decode("ascii"))
        if tag == b"Q":
            import fractions

            return fractions.Fraction(self.integer(), self.integer())
        if tag in (b"P", b"p"):
            import pathlib

            text = self.raw().decode("utf-8", "surrogatepass")
            return pathlib.PosixPath(text) if tag == b"P" else pathlib.PurePosixPath(text)
        if tag == b"V":
            if self.data[self.pos : self.pos + 1] != b"s":
                raise CodecError("a value type's name expected")
            self.pos += 1
            module, _, qualname = self.raw().decode("ascii").partition(".")
            rebuild = VALUE_TYPES.get((module, qualname))
            if rebuild is None:
                raise CodecError(f"{module}.{qualname} is no value type")
            return rebuild[1](self.value(depth + 1))
        if tag == b"K":
            name = self.raw().decode("ascii")
            if name not in BUILTIN_CLASSES:
                raise CodecError(f"{name!r} is not a built-in class")
            return BUILTIN_CLASSES[name]
        if tag == b"H" and self.handle is not None:
            return self.handle(self.value(depth + 1))
        if tag == b"h" and self.handle is not None:
            return self.handle(self.integer())
        if tag == b"r" and self.ref is not None:
            return self.ref(self.integer())
        raise CodecError(f"unexpected tag {tag!r} at byte {self.pos - 1}")

    def container(self, tag: bytes, depth: int) -> object:
        n = self.count()
        inner = depth + 1
        made: object
        if tag == b"t":
            made = tuple([self.value(inner) for _ in range(n)])
        elif tag == b"z":
            made = frozenset([self.value(inner) for _ in range(n)])
        elif tag == b"l":
            items: list = []
            if self.containers is not None:
                self.containers.append(items)
            items.extend(self.value(inner) for _ in range(n))
            made = items
        elif tag == b"S":
            found: set = set()
            if self.containers is not None:
                self.containers.append(found)
            found.update(self.value(inner) for _ in range(n))
            made = found
        else:
            mapping: dict = {}
            if self.containers is not None:
                self.containers.append(mapping)
            for _ in range(n):
                key = self.value(inner)
                mapping[key] = self.value(inner)
            made = mapping
        if self.made is not None:
            self.made.add(id(made))
        return made


def decode(
    data: bytes,
    handle: Callable[[object], object] | None = None,
    *,
    ref: Callable[[int], object] | None = None,
    containers: list | None = None,
    max_depth: int = MAX_DEPTH,
    made: set[int] | None = None,
) -> object:
    """The value `data` holds (CodecError when it holds none). `handle` makes the receiver's
    object of a handle (`H`, `h`; refused without it); `ref` resolves a copy-back position
    (`r`); `containers` collects the mutable containers made, in the order `encode` tracked them;
    `made` the ids of every container made (what came from the other side)."""
    if len(data) > MAX_BYTES:
        raise CodecError(f"a message of {len(data):,} bytes (at most {MAX_BYTES:,})")
    decoder = _Decoder(data, handle, ref, containers, max_depth, made)
    try:
        value = decoder.value(0)
    except CodecError:
        raise
    except (IndexError, struct.error, UnicodeError, TypeError, ValueError, ArithmeticError) as exc:
        # a short message, an unhashable key, an invalid number: malformed all the same
        raise CodecError(f"malformed at byte {decoder.pos}: {type(exc).__name__}: {exc}") from None
    if decoder.pos != len(data):
        raise CodecError(f"{len(data) - decoder.pos} bytes after the value")
    return value
