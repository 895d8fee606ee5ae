"""The brick's side of a check: the only processes where the brick's code runs (untrusted).

    python -s -S -P host.pyc --serve CONTROL_FD MARK [--contain]

A program, never imported by ironbench: the harness compiles it, codec.py and protocol.py and
gives the program its own copy of each (they run as they are too). It starts as the *host
server*: a clean interpreter that imports the standard modules bricks use, then forks one host
per brick when asked on CONTROL_FD (a Unix seqpacket socket: a HostOrder with the host's folder
and environment, and its request, reply, stdout, stderr and status descriptors). The server
never runs a brick's code; each host is a fresh fork that serves exactly one brick and ends.
On the status descriptor the server writes the host's pid, then, once it has ended, its exit
code (negative: the signal that killed it). It is a subreaper: what a brick's process leaves
behind comes back to it, and is killed. With --contain (a fenced server), each host fences
itself before its brick is imported (`contain`): it writes only its check's folder, reaches no
TCP port, binds no socket, and signals neither the server nor a sibling host.

A host answers the requests on its request descriptor on its reply descriptor (protocol.py's
operations and shapes, codec.py's values): import the brick by its path, then get an attribute,
call, call a method, len, iterate, index, str/repr... of an object it holds. Plain values are
answered by value; a named tuple, an enum member or a dataclass (whose `__eq__` is the generated
one) by its handle and its value; any other object stays here and is answered as a handle (an
id and a description of its type). An exception is answered as its class, message, arguments
and traceback; the containers a request's arguments brought are compared before and after, and
those changed in place are sent back. The only comparison a host makes is PROBE: its object
against a fresh object made for the purpose, never a value of the check's. MARK is a honeypot:
nothing uses it, so a brick that prints it read this command line. Everything a host runs may be
rewritten by its brick: the check trusts none of it beyond what the codec lets through.
"""

import os
import sys

TRACE_CAP = 8000
# What bricks import, imported once by the server: a host starts with them (HumanEval's
# prompts import typing, which alone costs more than starting an interpreter).
WARM = (
    "typing", "re", "math", "cmath", "collections", "itertools", "functools", "string", "random", "heapq",
    "bisect", "copy", "operator", "hashlib", "fractions", "decimal", "statistics", "dataclasses", "enum",
    "json", "datetime", "traceback", "importlib.machinery",
)  # fmt: skip
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CONTAIN = "--contain"  # after MARK: each host gets a fence of its own (contain())
HOST_FILTER = "host-filter.bpf"  # beside this program: the seccomp filter each host adds (seccomp.host_rules)
# Landlock (the same numbers on x86-64 and aarch64): create_ruleset, add_rule, restrict_self; seccomp
_LANDLOCK = (444, 445, 446)
_SECCOMP = {"x86_64": 317, "aarch64": 277}
_FS_READ = 1 | 4 | 8  # execute, read a file, read a folder
_FS_FILE = 1 | 2 | 4 | (1 << 14) | (1 << 15)  # what a rule on a file may grant: execute, write, read, truncate, ioctl


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


def _beside(name):
    """codec.py or protocol.py: the compiled copy beside this program, else the source."""
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    compiled = os.path.join(here, f"{name}.pyc")
    return _load(
        f"_ironbench_boundary_{name}", compiled if os.path.exists(compiled) else os.path.join(here, f"{name}.py")
    )


codec = None  # codec.py, loaded by main()
protocol = None  # protocol.py, loaded by main()


class _Fresh:
    """What PROBE compares a brick's object with: made anew each time, never seen by the check."""

    __slots__ = ()

    def __repr__(self):
        return "<a fresh object>"


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
        if isinstance(value, (str, int, float)) and _plain_subclass(kind):  # a str subclass: its value
            return None, next(base for base in (str, int, float) if isinstance(value, base))(value)
        return b"H", self.describe(value)

    def handle_of(self, value):
        key = id(value)
        handle = self.ids.get(key)
        if handle is None:
            handle = self.next_id
            self.next_id += 1
            self.objects[handle] = value
            self.ids[key] = handle
        return handle

    def describe(self, value):
        """The handle's descriptor (protocol.HANDLE_KINDS): a value type's with its value."""
        handle = self.handle_of(value)
        bases = ()
        overrides = ()
        extra = ()
        if isinstance(value, type):
            named = value
            if issubclass(value, BaseException):
                kind = "exception_class"
                bases = tuple(b for b in value.__bases__ if issubclass(b, BaseException))
            else:
                kind = "class"
        else:
            named = type(value)
            kind, extra = self.value_kind(value, named)
            if not kind:
                kind = "module" if isinstance(value, type(sys)) else "callable" if callable(value) else "object"
                if kind == "callable" and isinstance(value, _function_types()):
                    kind = "function"
            found = set()
            for klass in named.__mro__:
                if klass.__module__ != "builtins":
                    found.update(name for name in protocol.COMPARED if name in vars(klass))
            overrides = tuple(sorted(found))
        if kind in ("module", "function"):  # where it comes from: a function's own module
            module = getattr(value, "__name__" if kind == "module" else "__module__", "")
        else:
            module = getattr(named, "__module__", "")
        return (handle, kind, str(module), str(getattr(named, "__qualname__", "?")), overrides, bases, extra)

    @staticmethod
    def value_kind(value, named):
        """A value type's kind and value: an enum member (its name, value and mixed-in type), a
        tuple subclass (its field names and items), a dataclass whose __eq__ is generated (how it
        orders and hashes); ("", ()) for any other object."""
        enum = sys.modules.get("enum")
        if enum is not None and isinstance(value, enum.Enum):
            mixin = getattr(named, "_member_type_", object)
            plain = mixin.__name__ if mixin in (int, str, float, bytes) else ""
            name = value._name_
            return "enum", (named, name if type(name) is str else None, value._value_, plain)
        if isinstance(value, tuple):
            fields = getattr(named, "_fields", None)
            if not (type(fields) is tuple and all(type(f) is str for f in fields)):
                fields = None
            return "tuple", (named, fields, tuple.__getitem__(value, slice(None)))
        dataclasses = sys.modules.get("dataclasses")
        if dataclasses is not None and dataclasses.is_dataclass(named) and _generated(named, "__eq__"):
            params = named.__dataclass_params__
            hashing = "none" if named.__hash__ is None else "fields" if _generated(named, "__hash__") else "identity"
            return "dataclass", (named, bool(params.order and _generated(named, "__lt__")), hashing)
        return "", ()

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
            if op not in protocol.OPS:
                raise codec.CodecError(f"no operation {op!r}")
        except (codec.CodecError, TypeError, ValueError) as exc:
            return codec.encode((protocol.REFUSED, f"the host cannot read the request: {exc}"))
        refs = {id(c): k for k, c in enumerate(containers)}
        before = [self.shallow(c, refs) for c in containers]
        try:
            result = self.run(op, target, args, kwargs)
            answer = (protocol.OK, result)
        except BaseException as exc:  # noqa: BLE001 (whatever the brick raises is the answer)
            answer = (protocol.RAISED, self.raised(exc))
        try:
            updates = tuple((k, self.copy(c)) for k, c in enumerate(containers) if self.shallow(c, refs) != before[k])
            # a container the brick returns or keeps inside another, if it was an argument,
            # goes back as its position: the caller gets its own object, updated
            return codec.encode((*answer, updates), self.fallback, refs=refs)
        except codec.Unencodable as exc:
            return codec.encode((protocol.REFUSED, str(exc)))
        except Exception as exc:  # noqa: BLE001 (an object of the brick's that breaks while it is described)
            return codec.encode((protocol.REFUSED, f"describing it failed: {type(exc).__name__}"))

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
        if type(message) is not str:
            message = f"<{type(exc).__name__}>"
        try:
            args = exc.args if type(exc.args) is tuple else ()
            self.encode(args)
        except Exception:  # noqa: BLE001 (arguments that cannot cross, or break while described)
            args = None
        return (type(exc), message, args, trace, self.attributes(exc))

    def attributes(self, exc):
        """An exception's own attributes that are plain values (`err.code`), those that cross."""
        found = {}
        try:
            own = dict(vars(exc))
        except Exception:  # noqa: BLE001 (an exception with no __dict__, or a broken one)
            return found
        for name, value in own.items():
            if type(name) is not str or name.startswith("_"):
                continue
            if _crosses(value):
                found[name] = value
        return found

    def run(self, op, target, args, kwargs):
        ops = protocol.Op
        if op == ops.IMPORT:
            return self.load(*args)
        if op == ops.GETATTR:
            return getattr(target, args[0])
        if op == ops.CALL:
            return target(*args, **kwargs)
        if op == ops.CALLMETHOD:
            return getattr(target, args[0])(*args[1:], **kwargs)
        if op == ops.SETATTR:
            return setattr(target, args[0], args[1])
        if op == ops.DELATTR:
            return delattr(target, args[0])
        if op == ops.LEN:
            return len(target)
        if op == ops.ITER:
            return iter(target)
        if op == ops.NEXT:
            return next(target)
        if op == ops.GETITEM:
            return target[args[0]]
        if op == ops.SETITEM:
            target[args[0]] = args[1]
            return None
        if op == ops.DELITEM:
            del target[args[0]]
            return None
        if op in (ops.STR, ops.REPR):
            text = (str if op == ops.STR else repr)(target)
            return str.__str__(text) if isinstance(text, str) else text
        if op == ops.FORMAT:
            return format(target, args[0])
        if op == ops.DIR:
            return sorted(str(name) for name in dir(target))
        if op == ops.ISINSTANCE:
            return isinstance(args[0], target)
        if op == ops.ISSUBCLASS:
            return issubclass(args[0], target)
        if op == ops.COPY:
            import copy

            return (copy.deepcopy if args[0] else copy.copy)(target)
        if op == ops.FIELDS:
            import dataclasses

            return tuple((f.name, getattr(target, f.name)) for f in dataclasses.fields(target) if f.compare)
        if op == ops.PROBE:
            return self.probe(target, args[0])
        raise ValueError(f"unknown request {op!r}")

    @staticmethod
    def probe(target, name):
        """What the brick's object says of itself against a fresh object (True, False, or None
        when it raises): an object equal to something it has never seen is equal to anything."""
        import operator

        if name not in protocol.PROBED:
            return None
        try:
            return bool(getattr(operator, name)(target, _Fresh()))
        except BaseException:  # noqa: BLE001 (a comparison that raises says nothing)
            return None

    def load(self, path, name, paths, folder, entry=""):
        """The brick, imported by its path under its own name (the judge refuses a name of a
        module it has; the site folders and the brick's own come after the standard library),
        with its entry point when one is named (None when it has none)."""
        sys.path[:] = [*sys.path, *paths, folder]
        # the host starts in the check's folder; the brick's is made for it once the check came
        os.chdir(folder)
        os.environ["HOME"] = os.environ["TMPDIR"] = folder
        module = _load(name, path)
        return (module, getattr(module, entry, None) if entry else None)


def _crosses(value):
    """Whether a value crosses as a value (no handle: nothing of the brick's kept for it)."""
    try:
        codec.encode(value)
    except Exception:  # noqa: BLE001 (a value that does not cross as a value, or breaks while read)
        return False
    return True


def _plain_subclass(kind):
    """Whether a subclass of str, int or float is its value: no enum, no comparison of its own."""
    enum = sys.modules.get("enum")
    if enum is not None and issubclass(kind, enum.Enum):
        return False
    return not any(
        name in vars(klass) for klass in kind.__mro__ if klass.__module__ != "builtins" for name in protocol.COMPARED
    )


def _function_types():
    import types

    return (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


def _generated(kind, name):
    """Whether `kind`'s `name` (the first in its MRO) is one the dataclass decorator wrote."""
    for klass in kind.__mro__:
        if name in vars(klass):
            method = vars(klass)[name]
            code = getattr(method, "__code__", None)
            return "__dataclass_params__" in vars(klass) and getattr(code, "co_filename", None) == "<string>"
    return False


def serve_one(request_fd, reply_fd):
    """Be one brick's host: answer requests until the judge closes its side, then end."""
    sys.dont_write_bytecode = True
    host = Host()
    while True:
        try:
            payload = protocol.read_frame(request_fd)
        except protocol.FrameError:
            break
        if payload is None:
            break
        protocol.write_all(reply_fd, protocol.frame(host.serve(payload)))
    os._exit(0)  # the brick's own exit handlers never run: its streams are unbuffered


class Server:
    """Forks hosts on request; reports each one's pid and end; kills what they leave behind."""

    def __init__(self, control_fd, contained=False, host_filter=b""):
        import signal
        import socket

        self.control = socket.socket(fileno=control_fd)
        self.contained = contained  # each host fenced in its own folder (contain())
        self.filter = host_filter
        self.hosts = {}  # pid -> its status descriptor
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        signal.set_wakeup_fd(wake_w)
        self.wake_w = wake_w

    def run(self):
        import select
        import socket

        while True:
            ready, _, _ = select.select([self.control, self.wake_r], [], [], 1.0)
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            if self.control in ready:
                message, fds, _, _ = socket.recv_fds(self.control, 1 << 16, 5)
                if not message:
                    break
                try:
                    self.fork(message, fds)
                except (OSError, ValueError):  # a fork refused (or no order): its judge sees its pipe close
                    for fd in fds:
                        try:
                            os.close(fd)
                        except OSError:
                            continue
            self.reap()
        for pid in self.hosts:
            self.kill(pid)
        os._exit(0)

    def fork(self, message, fds):
        order = protocol.decode_message(message)
        if not isinstance(order, protocol.HostOrder) or len(fds) != 5:
            for fd in fds:
                os.close(fd)
            return
        status_fd = fds[4]
        pid = os.fork()
        if pid == 0:
            try:
                self.become_host(order, fds)
            finally:
                os._exit(70)
        for fd in fds[:4]:
            os.close(fd)
        self.hosts[pid] = status_fd
        self.tell(status_fd, pid)

    def become_host(self, order, fds):
        """In the fork: its own session, its descriptors and nothing else, its folder and environment."""
        import signal

        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        request_fd, reply_fd, out_fd, err_fd, _ = fds
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        keep = {0, 1, 2, request_fd, reply_fd}
        for name in os.listdir("/proc/self/fd"):
            fd = int(name)
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    continue
        os.environ.clear()
        os.environ.update(order.env)
        os.chdir(order.folder)
        if self.contained:
            try:
                contain(order.folder, self.filter)  # the check's folder: its copies, decoys, scratch
            except OSError as exc:  # never a brick outside its own fence: no host (its judge says so)
                os.write(2, f"ironbench: the host could not fence itself: {exc}\n".encode())
                os._exit(70)
        serve_one(request_fd, reply_fd)

    def reap(self):
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            fd = self.hosts.pop(pid, None)
            if fd is not None:
                self.tell(fd, os.waitstatus_to_exitcode(status))
                os.close(fd)
        self.sweep()

    @staticmethod
    def tell(fd, number):
        """One frame on a host's status pipe (whose reader may have gone: its judge is done)."""
        try:
            protocol.write_all(fd, protocol.frame(str(number).encode("ascii")))
        except OSError:
            return

    def sweep(self):
        """Any child that is not a host is what a host left behind: killed."""
        import signal

        me = os.getpid()
        for task in os.listdir(f"/proc/{me}/task"):
            try:
                with open(f"/proc/{me}/task/{task}/children") as handle:
                    children = [int(pid) for pid in handle.read().split()]
            except OSError:
                continue
            for child in children:
                if child not in self.hosts:
                    try:
                        os.kill(child, signal.SIGKILL)
                    except OSError:
                        continue

    @staticmethod
    def kill(pid):
        import signal

        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            return


def contain(folder, host_filter):
    """In a host, before its brick is imported: a Landlock domain of its own, nested in the
    server's (which only narrows it), that writes only `folder` (the check's: the brick's copy,
    pytest's scratch) and /dev/null, reaches no TCP port, and signals nothing outside itself
    (where the kernel scopes signals: Landlock ABI 6), so neither the host server nor a sibling
    host; then `host_filter` (seccomp.host_rules, assembled by the harness). OSError when the
    kernel refuses; a kernel without Landlock gets the filter only."""
    import ctypes
    import struct

    libc = _libc()

    def check(result, what):
        if result < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"{what}: {os.strerror(code)}")
        return result

    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    create, add, restrict = _LANDLOCK
    abi = libc.syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi >= 1:
        handled = (1 << 16) - 1
        for below, right in ((5, 1 << 15), (3, 1 << 14), (2, 1 << 13)):  # ioctl on devices, truncate, refer
            if abi < below:
                handled &= ~right
        net = 1 | 2 if abi >= 4 else 0  # binding and connecting TCP: no port allowed
        scoped = 1 | 2 if abi >= 6 else 0  # abstract unix sockets and signals
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        attr = ctypes.create_string_buffer(struct.pack("QQQ", handled, net, scoped)[:size], size)
        ruleset = check(libc.syscall(create, attr, ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock ruleset")
        try:
            for path, rights in (("/", _FS_READ), (folder, handled), ("/dev/null", _FS_FILE)):
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                try:
                    rule = ctypes.create_string_buffer(struct.pack("=Qi", rights & handled, fd), 12)
                    check(libc.syscall(add, ruleset, 1, rule, 0), f"landlock rule {path}")
                finally:
                    os.close(fd)
            check(libc.syscall(restrict, ruleset, 0), "landlock_restrict_self")
        finally:
            os.close(ruleset)
    if host_filter:

        class Program(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        buffer = ctypes.create_string_buffer(host_filter, len(host_filter))
        program = Program(len(host_filter) // 8, ctypes.cast(buffer, ctypes.c_void_p))
        check(libc.syscall(_SECCOMP[os.uname().machine], 1, 0, ctypes.byref(program)), "seccomp")


def _harden():
    """Not dumpable (a brick cannot trace the server or its sibling hosts), and a subreaper."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        return


def _below_init(control_fd):
    """Where the fence starts the server as the first process of its namespace (pid 1, whose
    signals the kernel drops unless it handles them): that process stays a bare init and the
    server is its child, so a brick's signal to its parent reaches the server (and ends it,
    which the trusted side sees as the server's end while the brick ran: tampering) instead of
    being dropped unseen. The init ends as its server does; the namespace's rest goes with it."""
    if os.getpid() != 1:
        return
    server = os.fork()
    if server == 0:
        return
    os.close(control_fd)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue
        if pid == server:
            os._exit(os.waitstatus_to_exitcode(status) % 256 if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))


def main():
    global codec, protocol
    codec = _beside("codec")
    protocol = _beside("protocol")
    if sys.argv[1] != "--serve":
        raise SystemExit(f"usage: host.pyc --serve CONTROL_FD MARK [{CONTAIN}] (got {sys.argv[1:]})")
    _below_init(int(sys.argv[2]))
    _harden()
    import importlib

    for name in WARM:
        importlib.import_module(name)
    contained = sys.argv[4:5] == [CONTAIN]
    host_filter = b""
    if contained:
        here = os.path.dirname(os.path.abspath(sys.argv[0]))
        with open(os.path.join(here, HOST_FILTER), "rb") as handle:
            host_filter = handle.read()
        _libc()  # loaded here, once: a host only uses it
        import struct  # noqa: F401  (imported here, once, for the same reason)

        _can_contain(here, host_filter)
    Server(int(sys.argv[2]), contained, host_filter).run()


_LIBC: list = []  # the C library, once loaded


def _libc():
    """The C library, loaded once by the server (each host, a fork, has it loaded)."""
    if not _LIBC:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        _LIBC.append(libc)
    return _LIBC[0]


def _can_contain(folder, host_filter):
    """A host fenced once, before any brick: a server whose hosts cannot fence themselves ends
    here (the harness's fault, each check's judge gets no host), never a brick's host later
    (whose end would be that brick's)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            contain(folder, host_filter)
        except BaseException as exc:  # noqa: BLE001 (said, and this fork ends)
            os.write(2, f"ironbench: a host cannot fence itself here: {exc}\n".encode())
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
