"""The brick's side of a check: the one process where the brick's code runs (untrusted).

    python -s -S -P host.pyc REQUEST_FD REPLY_FD MARK

A program, never imported by ironbench: the harness compiles it and codec.py once and gives
each host its own copy of both, compiled (compiling them would cost a host as much as starting;
host.py and codec.py run as they are too). It reads requests from REQUEST_FD and answers each on
REPLY_FD, both framed by codec.py (loaded from beside this file): import the brick by its
path, then get an attribute, call, call a method, len, iterate, index, str/repr... of an object
it holds. Plain values are answered by value; any other object stays here and is answered as a
handle (an id and a description of its type). An exception is answered as its class, message,
arguments and traceback; the containers a request's arguments brought are compared before and
after, and those changed in place are sent back. MARK is a honeypot: nothing uses it, so a brick
that prints it read this command line. Everything here may be rewritten by the brick: the check
trusts none of it beyond what the codec lets through.
"""

import os
import sys

# What a type may override to pass a comparison: reported with each handle, as evidence only.
COMPARED = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__")
CLAIMS = ("eq", "ne", "lt", "le", "gt", "ge")
TRACE_CAP = 8000


def _load(name, path):
    """A module from its file, without importlib.util (which costs a host a third of its start)."""
    import importlib.machinery

    kind = importlib.machinery.SourcelessFileLoader if path.endswith(".pyc") else importlib.machinery.SourceFileLoader
    loader = kind(name, path)
    module = type(sys)(name)
    module.__file__ = path
    module.__loader__ = loader
    module.__spec__ = importlib.machinery.ModuleSpec(name, loader, origin=path)
    module.__spec__.has_location = True
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def _codec():
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    compiled = os.path.join(here, "codec.pyc")
    return _load("_ironbench_boundary_codec", compiled if os.path.exists(compiled) else os.path.join(here, "codec.py"))


codec = None  # codec.py (or its compiled copy beside this file), loaded by main()


class Host:
    def __init__(self):
        self.objects = {}  # handle id -> object (kept alive: an id is never reused)
        self.ids = {}  # id(object) -> handle id
        self.next_id = 1

    # -- what crosses -------------------------------------------------------------------------

    def fallback(self, value):
        if isinstance(value, type) and codec.BUILTIN_CLASSES.get(value.__name__) is value:
            return b"K", value.__name__
        kind = type(value)
        numpy = sys.modules.get("numpy")
        if numpy is not None and isinstance(value, numpy.generic):  # a numpy scalar: by value
            for base, kinds in (
                (bool, numpy.bool_),
                (int, numpy.integer),
                (float, numpy.floating),
                (complex, numpy.complexfloating),
                (str, numpy.str_),
                (bytes, numpy.bytes_),
            ):
                if isinstance(value, kinds):
                    return None, base(value)
        if (getattr(kind, "__module__", ""), getattr(kind, "__qualname__", "")) in codec.DICT_LIKE:
            return None, dict(dict.items(value))
        return b"H", self.describe(value)

    def describe(self, value):
        key = id(value)
        handle = self.ids.get(key)
        if handle is None:
            handle = self.next_id
            self.next_id += 1
            self.objects[handle] = value
            self.ids[key] = handle
        bases = ()
        overrides = ()
        if isinstance(value, type):
            named = value
            if issubclass(value, BaseException):
                kind = "exception_class"
                bases = tuple(b for b in value.__bases__ if issubclass(b, BaseException))
            else:
                kind = "class"
        else:
            named = type(value)
            kind = "module" if isinstance(value, type(sys)) else "callable" if callable(value) else "object"
            found = set()
            for klass in named.__mro__:
                if klass.__module__ != "builtins":
                    found.update(name for name in COMPARED if name in vars(klass))
            overrides = tuple(sorted(found))
        module = getattr(value, "__name__", "") if kind == "module" else getattr(named, "__module__", "")
        return (handle, kind, str(module), str(getattr(named, "__qualname__", "?")), overrides, bases)

    def encode(self, value, refs=None):
        return codec.encode(value, self.fallback, refs=refs)

    def resolve(self, handle):
        if type(handle) is not int or handle not in self.objects:
            raise codec.CodecError(f"no object with handle {handle!r}")
        return self.objects[handle]

    # -- one request --------------------------------------------------------------------------

    def serve(self, payload):
        containers = []
        try:
            op, target, args, kwargs = codec.decode(payload, self.resolve, containers=containers)
        except codec.CodecError as exc:
            return codec.encode(("refused", f"the host cannot read the request: {exc}"))
        refs = {id(c): k for k, c in enumerate(containers)}
        before = [self.shallow(c, refs) for c in containers]
        try:
            result = self.run(op, target, args, kwargs)
            answer = ("ok", result)
        except BaseException as exc:  # noqa: BLE001 (whatever the brick raises is the answer)
            answer = ("raised", self.raised(exc))
        try:
            updates = tuple((k, self.copy(c)) for k, c in enumerate(containers) if self.shallow(c, refs) != before[k])
            # a container the brick returns or keeps inside another, if it was an argument,
            # goes back as its position: the caller gets its own object, updated
            return codec.encode((*answer, updates), self.fallback, refs=refs)
        except codec.Unencodable as exc:
            return codec.encode(("refused", str(exc)))

    @staticmethod
    def copy(container):
        kind = type(container)
        if kind is bytearray:
            return bytearray(container)
        return kind.copy(container)

    def shallow(self, container, refs):
        try:
            return self.encode(self.copy(container), refs)
        except codec.Unencodable:
            return None

    def raised(self, exc):
        import traceback

        try:
            trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-TRACE_CAP:]
        except BaseException:  # noqa: BLE001 (a brick's exception may break its own formatting)
            trace = ""
        try:
            message = str(exc)
        except BaseException:  # noqa: BLE001
            message = f"<{type(exc).__name__}: str() failed>"
        args = exc.args if type(exc.args) is tuple else ()
        try:
            self.encode(args)
        except codec.Unencodable:
            args = None
        return (type(exc), message, args, trace)

    def run(self, op, target, args, kwargs):
        if op == "import":
            return self.load(*args)
        if op == "getattr":
            return getattr(target, args[0])
        if op == "call":
            return target(*args, **kwargs)
        if op == "callmethod":
            return getattr(target, args[0])(*args[1:], **kwargs)
        if op == "setattr":
            return setattr(target, args[0], args[1])
        if op == "delattr":
            return delattr(target, args[0])
        if op == "len":
            return len(target)
        if op == "iter":
            return iter(target)
        if op == "next":
            return next(target)
        if op == "contains":
            return args[0] in target
        if op == "getitem":
            return target[args[0]]
        if op == "setitem":
            target[args[0]] = args[1]
            return None
        if op == "delitem":
            del target[args[0]]
            return None
        if op in ("str", "repr"):
            text = (str if op == "str" else repr)(target)
            return str.__str__(text) if isinstance(text, str) else text
        if op == "format":
            return format(target, args[0])
        if op == "dir":
            return sorted(str(name) for name in dir(target))
        if op == "isinstance":
            return isinstance(args[0], target)
        if op == "issubclass":
            return issubclass(args[0], target)
        if op == "copy":
            import copy

            return (copy.deepcopy if args[0] else copy.copy)(target)
        if op == "claim":
            return self.claim(target, *args)
        raise ValueError(f"unknown request {op!r}")

    @staticmethod
    def claim(target, name, other=None):
        """What the brick's own type says of a comparison the check decided otherwise (evidence only)."""
        import operator

        try:
            if name == "bool":
                return bool(target)
            if name in CLAIMS:
                return bool(getattr(operator, name)(target, other))
        except BaseException:  # noqa: BLE001 (a claim that raises claims nothing)
            return None
        return None

    def load(self, path, name, paths, folder, entry=""):
        """The brick, imported by its path under its own name (a brick named like a standard
        module is still the brick; the site folders and its own come after the standard
        library), with its entry point when one is named (None when it has none)."""
        sys.path[:] = [*sys.path, *paths, folder]
        module = _load(name, path)
        return (module, getattr(module, entry, None) if entry else None)


def _read(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main():
    global codec
    codec = _codec()
    request_fd, reply_fd = int(sys.argv[1]), int(sys.argv[2])
    sys.dont_write_bytecode = True
    host = Host()
    while True:
        header = _read(request_fd, codec.HEADER.size)
        if header is None:
            break
        (size,) = codec.HEADER.unpack(header)
        payload = _read(request_fd, size) if size <= codec.MAX_BYTES else None
        if payload is None:
            break
        _write(reply_fd, codec.frame(host.serve(payload)))
    os._exit(0)  # the brick's own exit handlers never run: its streams are unbuffered


if __name__ == "__main__":
    main()
