"""The partial fence's supervisor: the system calls its seccomp filter cannot decide, because
what decides them lies behind a pointer (a unix socket's address, the file a chmod names), are
told to a thread of the harness, which reads them from the program's memory and does what they
ask itself, on the object it resolved, when the plan allows it, answering with the result.

Never "let the call go on": the program could change its memory, or the file a path names,
between a look and the kernel's own. So the supervisor resolves the path once, to a descriptor
it holds, checks where that is, and acts on that descriptor:

- connect: a TCP port the plan allows; a unix socket beneath what the program may write, or an
  abstract one a process of the same fence bound (Landlock's scoping does the same; the
  supervisor acts for the program, outside its domain, so it keeps the list itself);
- bind: a unix socket's path beneath what the program may write, or an abstract name; TCP never;
- chmod, chown, utime, setxattr, removexattr and their variants: a file beneath what the program
  may write and owned by its user; ownership only kept (no capability to give a file away);
  extended attributes of the `user.` namespace only.

Everything else is refused with the errno the kernel would give a program without the right. A
refused connect is recorded (watch.py: the endpoint, the unix socket's path), for the fence's
account of what it denied.
"""

import contextlib
import ctypes
import errno
import os
import select
import socket
import stat
import struct
import threading
from collections.abc import Callable

from ironbench.sandbox.plan import under
from ironbench.sandbox.seccomp import numbers
from ironbench.sandbox.watch import Sightings

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_NOTIF = struct.Struct("=QIIiIQ6Q")  # seccomp_notif: id, pid, flags, then seccomp_data
_RESP = struct.Struct("=QqiI")  # seccomp_notif_resp: id, val, error, flags
_RECV, _SEND, _ID_VALID = 0xC0502100, 0xC0182101, 0x40082102  # SECCOMP_IOCTL_NOTIF_*
_PIDFD_GETFD = 438
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_EMPTY_PATH = 0x1000
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
PATH_MAX = 4096
POLL_SECONDS = 0.5
CONNECTING = 4  # connects the supervisor carries out at once for one program (the rest wait their turn)


class Refused(Exception):
    """The call is answered with this errno."""

    def __init__(self, code: int) -> None:
        super().__init__(os.strerror(code))
        self.code = code


def _int(value: int) -> int:
    """An int argument as the kernel reads it: its low 32 bits, signed."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class _Call:
    """One notified call: the thread that made it, its arguments, and its memory to read."""

    def __init__(self, tid: int, nr: int, args: tuple[int, ...]) -> None:
        self.tid = tid
        self.nr = nr
        self.args = args

    def read(self, address: int, size: int) -> bytes:
        if address == 0:
            raise Refused(errno.EFAULT)
        try:
            fd = os.open(f"/proc/{self.tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise Refused(exc.errno or errno.EPERM) from None
        try:
            return os.pread(fd, size, address)
        except OSError:
            raise Refused(errno.EFAULT) from None
        finally:
            os.close(fd)

    def string(self, address: int) -> bytes:
        """A NUL-terminated string of the program's, read page by page (ENAMETOOLONG past PATH_MAX)."""
        found = b""
        while len(found) < PATH_MAX:
            chunk = self.read(address + len(found), 4096 - (address + len(found)) % 4096)
            end = chunk.find(b"\0")
            if end >= 0:
                return found + chunk[:end]
            if not chunk:
                raise Refused(errno.EFAULT)
            found += chunk
        raise Refused(errno.ENAMETOOLONG)

    def tgid(self) -> int:
        try:
            with open(f"/proc/{self.tid}/status", "rb") as handle:
                for line in handle:
                    if line.startswith(b"Tgid:"):
                        return int(line.split()[1])
        except OSError:
            pass
        raise Refused(errno.ESRCH)

    def socket(self, fd: int) -> int:
        """This process's copy of the program's socket `fd` (the same socket: what is done on it
        is done on the program's)."""
        try:
            pidfd = os.pidfd_open(self.tgid())
        except OSError as exc:
            raise Refused(exc.errno or errno.ESRCH) from None
        try:
            found = _libc.syscall(_PIDFD_GETFD, pidfd, fd, 0)
            if found < 0:
                raise Refused(ctypes.get_errno() or errno.EBADF)
            return int(found)
        finally:
            os.close(pidfd)

    def open(self, dirfd: int, path: bytes, follow: bool, empty: bool = False) -> int:
        """An O_PATH descriptor of what `path` names from `dirfd` as the program sees it, resolved once."""
        flags = os.O_PATH | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
        if path == b"":
            if not empty:
                raise Refused(errno.ENOENT)
            base = f"/proc/{self.tid}/cwd" if dirfd == AT_FDCWD else f"/proc/{self.tid}/fd/{dirfd}"
            return _opened(lambda: os.open(base, flags))
        if path.startswith(b"/"):
            return _opened(lambda: os.open(path, flags))
        base = f"/proc/{self.tid}/cwd" if dirfd == AT_FDCWD else f"/proc/{self.tid}/fd/{dirfd}"
        folder = _opened(lambda: os.open(base, os.O_PATH | os.O_CLOEXEC))
        try:
            return _opened(lambda: os.open(path, flags, dir_fd=folder))
        finally:
            os.close(folder)


def _host(family: int, address: bytes, port: int) -> str:
    """HOST:PORT of an AF_INET or AF_INET6 address as the program gave it."""
    try:
        if family == socket.AF_INET:
            return f"{socket.inet_ntop(socket.AF_INET, address[4:8])}:{port}"
        return f"[{socket.inet_ntop(socket.AF_INET6, address[8:24])}]:{port}"
    except (OSError, ValueError):
        return f"?:{port}"


def _opened(opening: Callable[[], int]) -> int:
    try:
        return opening()
    except OSError as exc:
        raise Refused(exc.errno or errno.ENOENT) from None


class Supervisor:
    """The supervisor of one fenced program and what it starts (see the module's docstring):
    `writable`, the trees it may write (resolved); `ports`, the TCP ports it may reach (None:
    any, where Landlock does not fence TCP); `seen`, where it records the connects it refuses.
    Made on a thread of the harness that no filter holds (a thread inherits its maker's), it
    serves once `listen` gives it the filter's listener."""

    def __init__(self, writable: tuple[str, ...], ports: tuple[int, ...] | None, seen: Sightings | None = None) -> None:
        self.seen = seen if seen is not None else Sightings()
        self.listener = -1
        self.given = threading.Event()
        self.writable = tuple(os.path.realpath(p) for p in writable)
        self.ports = ports
        self.abstract: set[bytes] = set()  # the abstract unix names this fence's processes bound
        self.uid = os.geteuid()
        self.stopped = threading.Event()
        self.connecting = threading.BoundedSemaphore(CONNECTING)
        names = numbers()
        self.handlers: dict[int, Callable[[_Call], int]] = {}
        for name, handler in (
            ("connect", self.connect), ("bind", self.bind), ("chmod", self.chmod), ("fchmod", self.fchmod),
            ("fchmodat", self.fchmodat), ("fchmodat2", self.fchmodat2), ("chown", self.chown),
            ("lchown", self.lchown), ("fchown", self.fchown), ("fchownat", self.fchownat),
            ("utime", self.utime), ("utimes", self.utimes), ("futimesat", self.futimesat),
            ("utimensat", self.utimensat), ("setxattr", self.setxattr), ("lsetxattr", self.lsetxattr),
            ("fsetxattr", self.fsetxattr), ("setxattrat", self.setxattrat), ("removexattr", self.removexattr),
            ("lremovexattr", self.lremovexattr), ("fremovexattr", self.fremovexattr),
            ("removexattrat", self.removexattrat),
        ):  # fmt: skip
            if name in names:
                self.handlers[names[name]] = handler
        self.thread = threading.Thread(target=self._serve, name="ironbench-supervisor", daemon=True)
        self.thread.start()

    def listen(self, listener: int) -> None:
        self.listener = listener
        self.given.set()

    def stop(self) -> None:
        """Stop serving (a call still waiting then fails with ENOSYS) and close the listener."""
        self.stopped.set()
        self.given.set()
        self.thread.join(POLL_SECONDS * 4)
        if self.listener >= 0:
            with contextlib.suppress(OSError):
                os.close(self.listener)

    # -- the loop ----------------------------------------------------------------------------

    def _serve(self) -> None:
        self.given.wait()
        if self.stopped.is_set():
            return
        poller = select.poll()
        poller.register(self.listener, select.POLLIN)
        while not self.stopped.is_set():
            try:
                ready = poller.poll(POLL_SECONDS * 1000)
            except OSError:
                return
            if not ready:
                continue
            if ready[0][1] & (select.POLLHUP | select.POLLERR | select.POLLNVAL) and not ready[0][1] & select.POLLIN:
                return  # every process under the filter has ended
            buffer = ctypes.create_string_buffer(_NOTIF.size)
            if _libc.ioctl(self.listener, _RECV, buffer) != 0:
                continue  # the caller was killed meanwhile
            ident, tid, _flags, nr, _arch, _ip, *args = _NOTIF.unpack(buffer.raw)
            call = _Call(tid, nr, tuple(args))
            # a connect may block (a TCP handshake): on a thread of its own, a few at once (more wait)
            if nr == numbers().get("connect") and self.connecting.acquire(blocking=False):
                threading.Thread(target=self._answer_connect, args=(ident, call), daemon=True).start()
            else:
                self._answer(ident, call)

    def _answer_connect(self, ident: int, call: _Call) -> None:
        try:
            self._answer(ident, call)
        finally:
            self.connecting.release()

    def _answer(self, ident: int, call: _Call) -> None:
        handler = self.handlers.get(call.nr)
        try:
            if handler is None:
                raise Refused(errno.ENOSYS)
            value, code = handler(call), 0
        except Refused as refused:
            value, code = 0, refused.code
        if not self._valid(ident):
            return  # the caller is gone: its pid may be another's now
        response = ctypes.create_string_buffer(_RESP.pack(ident, value, -code, 0), _RESP.size)
        _libc.ioctl(self.listener, _SEND, response)

    def _valid(self, ident: int) -> bool:
        return _libc.ioctl(self.listener, _ID_VALID, ctypes.byref(ctypes.c_uint64(ident))) == 0

    # -- what is allowed ---------------------------------------------------------------------

    def _mine(self, fd: int, owned: bool = True) -> os.stat_result:
        """The file `fd` (a descriptor of this process) when it lies beneath what the program may
        write and, `owned`, belongs to its user: its status (Refused otherwise)."""
        try:
            where = os.readlink(f"/proc/self/fd/{fd}")
            info = os.fstat(fd)
        except OSError:
            raise Refused(errno.EPERM) from None
        if not any(under(where, tree) for tree in self.writable):
            raise Refused(errno.EACCES)
        if owned and info.st_uid != self.uid:
            raise Refused(errno.EPERM)
        return info

    def _with(self, fd: int, act: Callable[[], object]) -> int:
        try:
            act()
        except OSError as exc:
            raise Refused(exc.errno or errno.EPERM) from None
        finally:
            os.close(fd)
        return 0

    # -- sockets -----------------------------------------------------------------------------

    def _address(self, call: _Call) -> bytes:
        size = _int(call.args[2])
        if not 0 < size <= 128:
            raise Refused(errno.EINVAL)
        return call.read(call.args[1], size)

    def connect(self, call: _Call) -> int:
        address = self._address(call)
        family = struct.unpack_from("=H", address)[0]
        if family in (socket.AF_INET, socket.AF_INET6):
            port = struct.unpack_from("!H", address, 2)[0] if len(address) >= 4 else 0
            if self.ports is not None and port not in self.ports:
                self.seen.add("endpoint", _host(family, address, port), "supervisor")
                raise Refused(errno.EACCES)
            return self._on_socket(call, _libc.connect, address)
        if family == socket.AF_UNSPEC:
            return self._on_socket(call, _libc.connect, address)
        if family != socket.AF_UNIX or len(address) <= 2:
            raise Refused(errno.EAFNOSUPPORT if family != socket.AF_UNIX else errno.EINVAL)
        name = address[2:]
        if name[:1] == b"\0":
            if name not in self.abstract:
                raise Refused(errno.ECONNREFUSED)
            return self._on_socket(call, _libc.connect, address)
        path = name.split(b"\0", 1)[0]
        try:
            target = call.open(AT_FDCWD, path, follow=True)
            try:
                self._mine(target, owned=False)
            except Refused:
                os.close(target)
                raise
        except Refused as refused:
            if refused.code in (errno.EACCES, errno.EPERM):
                self.seen.add("path", path.decode(errors="replace"), "supervisor")
            raise
        try:
            return self._on_socket(call, _libc.connect, _unix(f"/proc/self/fd/{target}".encode()))
        finally:
            os.close(target)

    def bind(self, call: _Call) -> int:
        address = self._address(call)
        family = struct.unpack_from("=H", address)[0]
        if family != socket.AF_UNIX:
            raise Refused(errno.EACCES)  # no TCP port is the program's to listen on
        name = address[2:]
        if not name or name[:1] == b"\0":  # an abstract name, or one the kernel picks
            sock = call.socket(_int(call.args[0]))
            try:
                if _libc.bind(sock, address, len(address)) != 0:
                    raise Refused(ctypes.get_errno())
                self.abstract.add(_bound_name(sock))
            finally:
                os.close(sock)
            return 0
        path = name.split(b"\0", 1)[0]
        folder_path, _, last = path.rpartition(b"/")
        if last in (b"", b".", b".."):
            raise Refused(errno.EINVAL)
        folder = call.open(AT_FDCWD, folder_path or (b"/" if path.startswith(b"/") else b"."), follow=True)
        try:
            self._mine(folder, owned=False)
            return self._on_socket(call, _libc.bind, _unix(f"/proc/self/fd/{folder}/".encode() + last))
        finally:
            os.close(folder)

    def _on_socket(self, call: _Call, act: Callable[..., int], address: bytes) -> int:
        if len(address) > 110:
            raise Refused(errno.ENAMETOOLONG)
        sock = call.socket(_int(call.args[0]))
        try:
            if act(sock, address, len(address)) != 0:
                raise Refused(ctypes.get_errno())
        finally:
            os.close(sock)
        return 0

    # -- metadata ----------------------------------------------------------------------------

    def _path(self, call: _Call, dirfd: int, at: int, follow: bool, empty: bool = False) -> int:
        """The O_PATH descriptor of what a path argument names, checked to be the program's."""
        return self._owned(call.open(dirfd, call.string(call.args[at]) if call.args[at] else b"", follow, empty))

    def _descriptor(self, call: _Call) -> int:
        """The file the program's descriptor (first argument) is open on, checked to be its own."""
        return self._owned(call.open(_int(call.args[0]), b"", follow=True, empty=True))

    def _owned(self, found: int) -> int:
        try:
            self._mine(found)
        except Refused:
            os.close(found)
            raise
        return found

    def _chmod(self, fd: int, mode: int) -> int:
        return self._with(fd, lambda: os.chmod(f"/proc/self/fd/{fd}", mode & 0o7777))

    def chmod(self, call: _Call) -> int:
        return self._chmod(self._path(call, AT_FDCWD, 0, True), call.args[1])

    def fchmod(self, call: _Call) -> int:
        return self._chmod(self._descriptor(call), call.args[1])

    def fchmodat(self, call: _Call) -> int:
        return self._chmod(self._path(call, _int(call.args[0]), 1, True), call.args[2])

    def fchmodat2(self, call: _Call) -> int:
        flags = _int(call.args[3])
        fd = self._path(call, _int(call.args[0]), 1, not flags & AT_SYMLINK_NOFOLLOW, bool(flags & AT_EMPTY_PATH))
        return self._chmod(fd, call.args[2])

    def _chown(self, fd: int, uid: int, gid: int) -> int:
        info = self._mine(fd)
        uid, gid = _int(uid), _int(gid)
        if uid not in (-1, info.st_uid) or gid not in (-1, info.st_gid):
            os.close(fd)
            raise Refused(errno.EPERM)  # giving a file away needs CAP_CHOWN, which it has not
        return self._with(fd, lambda: None)

    def chown(self, call: _Call) -> int:
        return self._chown(self._path(call, AT_FDCWD, 0, True), call.args[1], call.args[2])

    def lchown(self, call: _Call) -> int:
        return self._chown(self._path(call, AT_FDCWD, 0, False), call.args[1], call.args[2])

    def fchown(self, call: _Call) -> int:
        return self._chown(self._descriptor(call), call.args[1], call.args[2])

    def fchownat(self, call: _Call) -> int:
        flags = _int(call.args[4])
        fd = self._path(call, _int(call.args[0]), 1, not flags & AT_SYMLINK_NOFOLLOW, bool(flags & AT_EMPTY_PATH))
        return self._chown(fd, call.args[2], call.args[3])

    def _utimens(self, fd: int, times: bytes | None, flags: int = 0) -> int:
        if flags & AT_SYMLINK_NOFOLLOW and stat.S_ISLNK(os.fstat(fd).st_mode):
            os.close(fd)
            raise Refused(errno.EOPNOTSUPP)  # a link's own times: not done on the program's behalf

        def act() -> None:
            buffer = None if times is None else ctypes.create_string_buffer(times, 32)
            if _libc.utimensat(AT_FDCWD, f"/proc/self/fd/{fd}".encode(), buffer, 0) != 0:
                code = ctypes.get_errno()
                raise OSError(code, os.strerror(code))

        return self._with(fd, act)

    def _timevals(self, call: _Call, at: int) -> bytes | None:
        if not call.args[at]:
            return None
        seconds, micros, seconds2, micros2 = struct.unpack("=4q", call.read(call.args[at], 32))
        return struct.pack("=4q", seconds, micros * 1000, seconds2, micros2 * 1000)

    def utime(self, call: _Call) -> int:
        times = None
        if call.args[1]:
            accessed, modified = struct.unpack("=2q", call.read(call.args[1], 16))
            times = struct.pack("=4q", accessed, 0, modified, 0)
        return self._utimens(self._path(call, AT_FDCWD, 0, True), times)

    def utimes(self, call: _Call) -> int:
        return self._utimens(self._path(call, AT_FDCWD, 0, True), self._timevals(call, 1))

    def futimesat(self, call: _Call) -> int:
        return self._utimens(self._path(call, _int(call.args[0]), 1, True), self._timevals(call, 2))

    def utimensat(self, call: _Call) -> int:
        flags = _int(call.args[3])
        times = call.read(call.args[2], 32) if call.args[2] else None
        follow = not flags & AT_SYMLINK_NOFOLLOW
        fd = self._path(call, _int(call.args[0]), 1, follow, empty=not call.args[1] or bool(flags & AT_EMPTY_PATH))
        return self._utimens(fd, times, flags)

    def _xattr_name(self, call: _Call, at: int) -> bytes:
        name = call.string(call.args[at])
        if not name.startswith(b"user."):
            raise Refused(errno.EPERM)  # trusted., security., system.: not the program's to set
        return name

    def _setxattr(self, call: _Call, fd: int, name: int, value: int, size: int, flags: int) -> int:
        try:
            key = self._xattr_name(call, name)
            length = call.args[size]
            if length > 65536:
                raise Refused(errno.E2BIG)
            data = call.read(call.args[value], length) if length else b""
        except Refused:
            os.close(fd)
            raise
        return self._with(fd, lambda: os.setxattr(f"/proc/self/fd/{fd}", key, data, _int(call.args[flags])))

    def setxattr(self, call: _Call) -> int:
        return self._setxattr(call, self._path(call, AT_FDCWD, 0, True), 1, 2, 3, 4)

    def lsetxattr(self, call: _Call) -> int:
        return self._setxattr(call, self._path(call, AT_FDCWD, 0, False), 1, 2, 3, 4)

    def fsetxattr(self, call: _Call) -> int:
        return self._setxattr(call, self._descriptor(call), 1, 2, 3, 4)

    def setxattrat(self, call: _Call) -> int:
        flags = _int(call.args[2])
        fd = self._path(call, _int(call.args[0]), 1, not flags & AT_SYMLINK_NOFOLLOW, bool(flags & AT_EMPTY_PATH))
        try:  # struct xattr_args { u64 value; u32 size; u32 flags; }
            value, size, xflags = struct.unpack("=QII", call.read(call.args[4], 16))
            key = self._xattr_name(call, 3)
            data = call.read(value, size) if size else b""
        except Refused:
            os.close(fd)
            raise
        return self._with(fd, lambda: os.setxattr(f"/proc/self/fd/{fd}", key, data, xflags))

    def _removexattr(self, call: _Call, fd: int, name: int) -> int:
        try:
            key = self._xattr_name(call, name)
        except Refused:
            os.close(fd)
            raise
        return self._with(fd, lambda: os.removexattr(f"/proc/self/fd/{fd}", key))

    def removexattr(self, call: _Call) -> int:
        return self._removexattr(call, self._path(call, AT_FDCWD, 0, True), 1)

    def lremovexattr(self, call: _Call) -> int:
        return self._removexattr(call, self._path(call, AT_FDCWD, 0, False), 1)

    def fremovexattr(self, call: _Call) -> int:
        return self._removexattr(call, self._descriptor(call), 1)

    def removexattrat(self, call: _Call) -> int:
        flags = _int(call.args[2])
        fd = self._path(call, _int(call.args[0]), 1, not flags & AT_SYMLINK_NOFOLLOW, bool(flags & AT_EMPTY_PATH))
        return self._removexattr(call, fd, 3)


def _unix(path: bytes) -> bytes:
    return struct.pack("=H", socket.AF_UNIX) + path + b"\0"


def _bound_name(sock: int) -> bytes:
    buffer = ctypes.create_string_buffer(128)
    size = ctypes.c_uint32(128)
    if _libc.getsockname(sock, buffer, ctypes.byref(size)) != 0:
        raise Refused(ctypes.get_errno())
    return buffer.raw[2 : size.value]
