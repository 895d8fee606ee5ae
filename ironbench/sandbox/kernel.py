"""The kernel's own fences, called directly: Landlock rulesets, seccomp filters (seccomp.py
assembles them) and capabilities (x86-64 and aarch64 Linux), each applied to the calling thread
only, so a fresh thread can restrict itself and then start a program that inherits them, with no
helper process and no preexec hook."""

import ctypes
import errno
import os
import platform
import stat
import struct
from dataclasses import dataclass

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

_MACHINE = platform.machine()
# (landlock_create_ruleset, landlock_add_rule, landlock_restrict_self, seccomp) per machine
_SYSCALLS = {"x86_64": (444, 445, 446, 317), "aarch64": (444, 445, 446, 277)}

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
    try:  # a link is not followed: what it leads to is allowed, or not, on its own path
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return  # gone since it was listed: nothing to allow
    try:
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            return
        if not os.path.isdir(path):
            rights &= _FILE_RIGHTS  # a file's rule takes a file's rights only
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        refused = _libc.syscall(add, ruleset, LANDLOCK_RULE_PATH_BENEATH, rule, 0) < 0
        if refused and ctypes.get_errno() != errno.EBADFD:  # EBADFD: a pipe or socket by path, no file to allow
            _check(-1, f"landlock path {path}")
    finally:
        os.close(fd)


# -- seccomp, capabilities, dumpability ------------------------------------------------------

_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522


def seccomp(program: bytes, listener: bool = False) -> int | None:
    """Install `program` (seccomp.assemble's) on the calling thread only; with `listener`, the
    descriptor its `notify` calls are told on (supervisor.py)."""

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Fprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    no_new_privs()
    flags = _SECCOMP_FILTER_FLAG_NEW_LISTENER if listener else 0
    found = _check(
        _libc.syscall(_SYSCALLS[_MACHINE][3], _SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(fprog)), "seccomp"
    )
    return found if listener else None


def drop_capabilities() -> None:
    """The calling thread keeps no capability, nor can what it starts gain one (root's
    included): its bounding set emptied, then every set (nothing to drop: not root)."""
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap").read())  # noqa: SIM115 (a one-line read)
    except (OSError, ValueError):
        last = 40
    for capability in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            break  # no CAP_SETPCAP: a user without capabilities, nothing to drop
    _libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = struct.pack("Ii", _CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two {effective, permitted, inheritable} words, all empty
    _check(_libc.capset(header, data), "capset")


def not_dumpable() -> None:
    """This process's memory, environment and descriptors closed to every process without
    CAP_SYS_PTRACE (a fenced target at `partial` has none): /proc/<pid>/environ among them."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
