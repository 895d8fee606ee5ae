"""The kernel's own fences, called directly: Landlock rulesets and seccomp filters (x86-64 and
aarch64 Linux), both applied to the calling thread only, so a fresh thread can restrict itself
and then start a program that inherits them, with no helper process and no preexec hook."""

import ctypes
import errno
import os
import platform
import socket
import struct
from dataclasses import dataclass

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

_MACHINE = platform.machine()
# (landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, seccomp) per machine
_SYSCALLS = {"x86_64": (444, 445, 446, 317), "aarch64": (444, 445, 446, 277)}
# AUDIT_ARCH_* the seccomp filter checks first (a call through another ABI is refused)
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# syscall numbers the filters look at, per machine (None: the machine has no such call)
_NR: dict[str, dict[str, int | None]] = {
    "x86_64": {
        "socket": 41, "io_uring_setup": 425, "chmod": 90, "fchmod": 91, "fchmodat": 268, "fchmodat2": 452,
        "open": 2, "openat": 257, "creat": 85, "mknod": 133, "mknodat": 259, "openat2": 437,
    },
    "aarch64": {
        "socket": 198, "io_uring_setup": 425, "chmod": None, "fchmod": 52, "fchmodat": 53, "fchmodat2": 452,
        "open": None, "openat": 56, "creat": None, "mknod": None, "mknodat": 33, "openat2": 437,
    },
}  # fmt: skip

PR_SET_NO_NEW_PRIVS = 38
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
LANDLOCK_RULE_NET_PORT = 2
NET_BIND_TCP = 1
NET_CONNECT_TCP = 2
SCOPE_ABSTRACT_UNIX_SOCKET = 1
SCOPE_SIGNAL = 2
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_TRUNCATE, FS_IOCTL_DEV, FS_REFER = 1 << 14, 1 << 15, 1 << 13
FS_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
_FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV


def supported() -> bool:
    return _MACHINE in _SYSCALLS


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result


def landlock_abi() -> int:
    """Landlock's ABI version on this kernel (0: none)."""
    if not supported():
        return 0
    found = _libc.syscall(_SYSCALLS[_MACHINE][0], None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return int(found) if found > 0 else 0


def no_new_privs() -> None:
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


@dataclass(frozen=True, slots=True)
class Ruleset:
    """What a Landlock domain allows: trees to read, trees to write, TCP ports to connect to
    (None: TCP not fenced); binding a TCP port is refused, signals and abstract unix sockets
    stay inside the domain (where the kernel has those fences)."""

    read: tuple[str, ...]
    write: tuple[str, ...]
    connect: tuple[int, ...] | None


def landlock(rules: Ruleset) -> int:
    """Restrict the calling thread (and what it starts from now on) to `rules`; returns the ABI used."""
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.EOPNOTSUPP, "Landlock is not available")
    create, add, restrict, _ = _SYSCALLS[_MACHINE]
    handled_fs = (1 << 16) - 1
    if abi < 5:
        handled_fs &= ~FS_IOCTL_DEV
    if abi < 3:
        handled_fs &= ~FS_TRUNCATE
    if abi < 2:
        handled_fs &= ~FS_REFER
    handled_net = (NET_BIND_TCP | (NET_CONNECT_TCP if rules.connect is not None else 0)) if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    attr = ctypes.create_string_buffer(struct.pack("QQQ", handled_fs, handled_net, scoped)[:size], size)
    ruleset = _check(_libc.syscall(create, attr, ctypes.c_size_t(size), ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        if handled_net & NET_CONNECT_TCP:
            for port in rules.connect or ():
                rule = ctypes.create_string_buffer(struct.pack("QQ", NET_CONNECT_TCP, port), 16)
                _check(_libc.syscall(add, ruleset, LANDLOCK_RULE_NET_PORT, rule, 0), f"landlock port {port}")
        for paths, rights in ((rules.read, FS_READ), (rules.write, handled_fs)):
            for path in paths:
                _allow_path(add, ruleset, path, rights & handled_fs)
        no_new_privs()
        _check(_libc.syscall(restrict, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _allow_path(add: int, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to allow
    try:
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS  # a file's rule takes a file's rights only
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        refused = _libc.syscall(add, ruleset, LANDLOCK_RULE_PATH_BENEATH, rule, 0) < 0
        if refused and ctypes.get_errno() != errno.EBADFD:  # EBADFD: a pipe or socket by path, no file to allow
            _check(-1, f"landlock path {path}")
    finally:
        os.close(fd)


# -- seccomp: classic BPF, written by hand ---------------------------------------------------

_LD_W_ABS, _JEQ, _JSET, _JGE, _AND, _RET = 0x20, 0x15, 0x45, 0x35, 0x54, 0x06
_ALLOW, _ERRNO, _KILL_PROCESS = 0x7FFF0000, 0x00050000, 0x80000000
_X32_BIT = 0x40000000
_SECCOMP_SET_MODE_FILTER = 1
_S_ISUID_ISGID = 0o6000
_O_CREAT_OR_TMPFILE = 0o100 | 0o20000000


class _Program:
    """A BPF program built with labels, resolved to bytes at the end."""

    def __init__(self) -> None:
        self.items: list[tuple] = []

    def load(self, offset: int) -> None:
        self.items.append(("op", _LD_W_ABS, offset))

    def op(self, code: int, k: int) -> None:
        self.items.append(("op", code, k))

    def jump(self, code: int, k: int, yes: str | None, no: str | None) -> None:
        self.items.append(("jump", code, k, yes, no))

    def label(self, name: str) -> None:
        self.items.append(("label", name))

    def assemble(self) -> bytes:
        labels: dict[str, int] = {}
        count = 0
        for item in self.items:
            if item[0] == "label":
                labels[item[1]] = count
            else:
                count += 1
        out, here = [], 0
        for item in self.items:
            if item[0] == "label":
                continue
            if item[0] == "op":
                out.append(struct.pack("HBBI", item[1], 0, 0, item[2] & 0xFFFFFFFF))
            else:
                _, code, k, yes, no = item
                forward = [0 if target is None else labels[target] - here - 1 for target in (yes, no)]
                assert all(0 <= step < 256 for step in forward), item
                out.append(struct.pack("HBBI", code, forward[0], forward[1], k & 0xFFFFFFFF))
            here += 1
        return b"".join(out)


def seccomp_filter(tcp_only: bool) -> bytes:
    """A filter that keeps a target from planting a setuid or setgid file (chmod family,
    open/creat/mknod with those bits: EPERM; openat2: ENOSYS) and from io_uring (whose
    operations no filter sees); with `tcp_only`, sockets are AF_UNIX or TCP only (no UDP,
    raw, netlink or packet sockets). A call through another ABI of the machine is refused."""
    numbers = _NR[_MACHINE]
    program = _Program()

    def on(name: str, label: str) -> None:
        number = numbers[name]
        if number is not None:  # the machine has the call
            program.jump(_JEQ, number, label, None)

    program.load(4)  # seccomp_data.arch
    program.jump(_JEQ, _AUDIT_ARCH[_MACHINE], None, "kill")
    program.load(0)  # seccomp_data.nr
    if _MACHINE == "x86_64":
        program.jump(_JGE, _X32_BIT, "enosys", None)
    on("io_uring_setup", "enosys")
    on("openat2", "enosys")
    if tcp_only:
        on("socket", "socket")
    for name, argument in (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2), ("creat", 1)):
        on(name, f"mode{argument}")
    for name, argument in (("mknod", 1), ("mknodat", 2)):
        on(name, f"mode{argument}")
    on("open", "open")
    on("openat", "openat")
    program.op(_RET, _ALLOW)
    for label, flags in (("open", 1), ("openat", 2)):
        program.label(label)
        program.load(16 + 8 * flags)
        program.jump(_JSET, _O_CREAT_OR_TMPFILE, f"mode{flags + 1}", "allow")
    for argument in (1, 2, 3):
        program.label(f"mode{argument}")
        program.load(16 + 8 * argument)
        program.jump(_JSET, _S_ISUID_ISGID, "eperm", "allow")
    if tcp_only:
        program.label("socket")
        program.load(16)  # domain
        program.jump(_JEQ, socket.AF_UNIX, "allow", None)
        program.jump(_JEQ, socket.AF_INET, "inet", None)
        program.jump(_JEQ, socket.AF_INET6, "inet", "eafnosupport")
        program.label("inet")
        program.load(24)  # type, without SOCK_NONBLOCK and SOCK_CLOEXEC
        program.op(_AND, 0xF)
        program.jump(_JEQ, socket.SOCK_STREAM, None, "eprotonosupport")
        program.load(32)  # protocol
        program.jump(_JEQ, 0, "allow", None)
        program.jump(_JEQ, socket.IPPROTO_TCP, "allow", "eprotonosupport")
        program.label("eafnosupport")
        program.op(_RET, _ERRNO | errno.EAFNOSUPPORT)
        program.label("eprotonosupport")
        program.op(_RET, _ERRNO | errno.EPROTONOSUPPORT)
    program.label("allow")
    program.op(_RET, _ALLOW)
    program.label("eperm")
    program.op(_RET, _ERRNO | errno.EPERM)
    program.label("enosys")
    program.op(_RET, _ERRNO | errno.ENOSYS)
    program.label("kill")
    program.op(_RET, _KILL_PROCESS)
    return program.assemble()


def seccomp(program: bytes) -> None:
    """Install `program` on the calling thread only."""

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    no_new_privs()
    _check(_libc.syscall(_SYSCALLS[_MACHINE][3], _SECCOMP_SET_MODE_FILTER, 0, ctypes.byref(fprog)), "seccomp")
