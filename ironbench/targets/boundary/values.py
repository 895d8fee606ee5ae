"""The brick's value types made here from their values: a tuple subclass (a named tuple) as a
tuple with its field names, an enum member as its value and member name.

Each is a class made here per brick class (named like it), over `tuple`, or over the enum's
mixed-in type (`int` for an IntEnum, `str` for a StrEnum; else a plain object equal only to
itself): the check compares, hashes and orders it as Python compares those, here. It keeps its
handle: sent back to the brick it is the brick's own object, and any other attribute (a
method) is asked of the host. An enum member is made once per session: `is` holds.
"""

import keyword
import operator
from typing import TYPE_CHECKING, Any

from ironbench.targets.boundary import codec
from ironbench.targets.boundary.protocol import Op

if TYPE_CHECKING:
    from ironbench.targets.boundary.remote import Session

_SESSION = "_boundary_session"
_ID = "_boundary_id"
_MIXINS: dict[str, type] = {"int": int, "str": str, "float": float, "bytes": bytes, "": object}


class _Made:
    """What a value made here does besides being its value: goes back as its handle, asks the
    host for any other attribute."""

    def __getattr__(self, name: str) -> object:
        if name.startswith(("_boundary", "_pytest", "__")):
            raise AttributeError(name)
        return session_of(self).request(Op.GETATTR, self, (name,))

    def __reduce_ex__(self, protocol: object) -> str:
        raise TypeError(f"the brick's {type(self).__qualname__} stays in the brick's process: it cannot be pickled")


class RemoteTuple(_Made, tuple):
    """A tuple subclass of the brick (a named tuple): equal to any tuple of the same items."""

    _fields: tuple[str, ...] = ()

    def _asdict(self) -> dict[str, Any]:
        return dict(zip(self._fields, self, strict=False))

    def __repr__(self) -> str:
        name = type(self).__qualname__.rpartition(".")[2]
        if self._fields:
            return f"{name}({', '.join(f'{f}={v!r}' for f, v in zip(self._fields, self, strict=False))})"
        return f"{name}({tuple.__repr__(self)})"


class RemoteEnum(_Made):
    """An enum member of the brick: its mixed-in type's value (an IntEnum's int), or an object
    equal only to itself."""

    @property
    def name(self) -> object:
        return vars(self)["_boundary_name"]

    @property
    def value(self) -> object:
        return vars(self)["_boundary_value"]

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__}.{self.name}: {self.value!r}>"

    def __str__(self) -> str:
        text = session_of(self).request(Op.STR, self)
        return text if type(text) is str else repr(self)

    def __format__(self, spec: str) -> str:
        text = session_of(self).request(Op.FORMAT, self, (spec,))
        return text if type(text) is str else repr(self)

    def _combined(self, name: str, other: object = None, unary: bool = False) -> object:
        """A flag's combination with another member of its class (`|`, `&`, `^`, `~`, `in`),
        as its class makes it (the brick's, as in plain Python: its own members); a member of
        an enum that is no flag has none."""
        if not unary and type(other) is not type(self):
            return NotImplemented
        try:
            return session_of(self).request(Op.CALLMETHOD, self, (name,) if unary else (name, other))
        except AttributeError:
            return NotImplemented

    def __or__(self, other: object) -> object:
        return self._combined("__or__", other)

    def __and__(self, other: object) -> object:
        return self._combined("__and__", other)

    def __xor__(self, other: object) -> object:
        return self._combined("__xor__", other)

    def __invert__(self) -> object:
        found = self._combined("__invert__", unary=True)
        if found is NotImplemented:
            raise TypeError(f"bad operand type for unary ~: {type(self).__qualname__!r}")
        return found

    def __contains__(self, other: object) -> bool:
        found = self._combined("__contains__", other)
        if found is NotImplemented or type(found) is not bool:
            raise TypeError(f"argument of type {type(self).__qualname__!r} is not a container of its members")
        return found


def session_of(value: object) -> "Session":
    return vars(value)[_SESSION]


def id_of(value: object) -> int:
    return vars(value)[_ID]


def made(session: "Session", hid: int, kind: str, module: str, qualname: str, extra: tuple) -> object:
    """The value a `tuple` or `enum` handle stands for (codec.CodecError when its value is not
    shaped as protocol.py says)."""
    from ironbench.targets.boundary.remote import RemoteClass

    if not extra or not isinstance(extra[0], RemoteClass):
        raise codec.CodecError(f"a {kind} handle names no class")
    class_id = object.__getattribute__(extra[0], "_id")
    if kind == "tuple":
        if len(extra) != 3 or type(extra[2]) is not tuple:
            raise codec.CodecError("a tuple handle is (class, fields, items)")
        fields = extra[1] if _valid_fields(extra[1], len(extra[2])) else None
        cls = _class(session, class_id, module, qualname, lambda: _tuple_namespace(fields), RemoteTuple, tuple)
        value: Any = tuple.__new__(cls, extra[2])
    else:
        if len(extra) != 4 or not (extra[1] is None or type(extra[1]) is str) or extra[3] not in _MIXINS:
            raise codec.CodecError("an enum handle is (class, name, value, mixin)")
        mixin = _MIXINS[extra[3]] if type(extra[2]) is _MIXINS[extra[3]] else object
        cls = _class(session, class_id, module, qualname, dict, RemoteEnum, mixin)
        value = object.__new__(cls) if mixin is object else mixin.__new__(cls, extra[2])
        vars(value).update(_boundary_name=extra[1], _boundary_value=extra[2])
    vars(value).update({_SESSION: session, _ID: hid})
    return value


def _class(session: "Session", class_id: int, module: str, qualname: str, namespace, base: type, mixin: type) -> type:
    key = ("made", str(class_id), mixin.__name__)
    found = session.types.get(key)
    if found is None:
        name = qualname.rpartition(".")[2]
        bases = (base,) if mixin in (object, tuple) else (base, mixin)
        found = type(name if name.isidentifier() else "value", bases, {**namespace(), codec.STAND_IN: True})
        found.__qualname__ = qualname
        found.__module__ = f"brick:{module}"
        session.types[key] = found
    return found


def _valid_fields(fields: object, size: int) -> bool:
    """Field names a class here may take: as many as the items, identifiers, none private, a
    keyword, or a tuple's own attribute (a brick cannot name a field `__eq__`)."""
    return (
        type(fields) is tuple
        and len(fields) == size
        and len(set(fields)) == size
        and all(
            type(f) is str and f.isidentifier() and not f.startswith("_") and not keyword.iskeyword(f)
            and not hasattr(tuple, f)
            for f in fields
        )
    )  # fmt: skip


def _tuple_namespace(fields: tuple[str, ...] | None) -> dict[str, Any]:
    namespace: dict[str, Any] = {"_fields": fields or ()}
    for index, name in enumerate(fields or ()):
        namespace[name] = property(operator.itemgetter(index))
    return namespace
