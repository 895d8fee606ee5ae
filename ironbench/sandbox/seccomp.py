"""The seccomp filters the fence gives its programs, as data: each rule names a system call, the
condition on its arguments, and what the program gets instead of the call; `assemble` turns a
list of rules into the classic BPF program the kernel runs (x86-64 and aarch64 Linux).

A filter reads a call's number and its arguments' values, never what a pointer points to: a
path, an address or a struct is out of its sight. What needs those (a unix socket's path, the
file a chmod names) is handed to the fence's supervisor (`notify`, see supervisor.py).
"""

import errno
import platform
import socket
import struct
from dataclasses import dataclass
from functools import cache

MACHINE = platform.machine()
# AUDIT_ARCH_* the filter checks first: a call through another ABI of the machine is refused
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000
# the system calls a filter names, per machine (absent: the machine has no such call)
_COMMON_NR = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "clone3": 435, "openat2": 437,
    "pidfd_getfd": 438, "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466, "open_tree": 428,
    "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
}  # fmt: skip
_NR: dict[str, dict[str, int]] = {
    "x86_64": {
        **_COMMON_NR,
        "socket": 41, "socketpair": 53, "connect": 42, "bind": 49, "sendto": 44, "sendmsg": 46, "sendmmsg": 307, "chmod": 90, "fchmod": 91, "fchmodat": 268,
        "open": 2, "openat": 257, "creat": 85, "mknod": 133, "mknodat": 259, "ptrace": 101,
        "process_vm_readv": 310, "process_vm_writev": 311, "keyctl": 250, "add_key": 248, "request_key": 249,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "unshare": 272, "clone": 56, "setns": 308,
        "mount": 165, "umount2": 166, "pivot_root": 155, "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67,
        "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "semget": 64, "semop": 65, "semtimedop": 220,
        "semctl": 66, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
        "mq_notify": 244, "mq_getsetattr": 245, "chown": 92, "fchown": 93, "lchown": 94, "fchownat": 260,
        "utime": 132, "utimes": 235, "futimesat": 261, "utimensat": 280, "setxattr": 188, "lsetxattr": 189,
        "fsetxattr": 190, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "kexec_load": 246,
        "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "reboot": 169,
        "swapon": 167, "swapoff": 168, "open_by_handle_at": 304, "iopl": 172, "ioperm": 173,
        "link": 86, "symlink": 88, "linkat": 265, "symlinkat": 266,
    },
    "aarch64": {
        **_COMMON_NR,
        "socket": 198, "socketpair": 199, "connect": 203, "bind": 200, "sendto": 206, "sendmsg": 211, "sendmmsg": 269, "fchmod": 52, "fchmodat": 53,
        "openat": 56, "mknodat": 33, "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271,
        "keyctl": 219, "add_key": 217, "request_key": 218, "bpf": 280, "perf_event_open": 241,
        "userfaultfd": 282, "unshare": 97, "clone": 220, "setns": 268, "mount": 40, "umount2": 39,
        "pivot_root": 41, "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197, "msgget": 186,
        "msgsnd": 189, "msgrcv": 188, "msgctl": 187, "semget": 190, "semop": 193, "semtimedop": 192,
        "semctl": 191, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
        "mq_notify": 184, "mq_getsetattr": 185, "fchown": 55, "fchownat": 54, "utimensat": 88, "setxattr": 5,
        "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14, "lremovexattr": 15, "fremovexattr": 16,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225, "open_by_handle_at": 265,
        "linkat": 37, "symlinkat": 36,
    },
}  # fmt: skip

# clone/unshare flags that make a namespace (CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME)
NEW_NAMESPACES = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80
_SETUID_SETGID = 0o6000
_O_CREAT_OR_TMPFILE = 0o100 | 0o20000000
_SOCK_TYPE = 0xF  # a socket's type without SOCK_NONBLOCK and SOCK_CLOEXEC
MSG_FASTOPEN = 0x20000000

# actions: an errno's name, or one of these
ALLOW, NOTIFY, KILL = "allow", "notify", "kill"
_RET_ALLOW, _RET_ERRNO, _RET_KILL_PROCESS, _RET_USER_NOTIF = 0x7FFF0000, 0x00050000, 0x80000000, 0x7FC00000
_LD_W_ABS, _JEQ, _JSET, _JGE, _JA, _AND, _RET = 0x20, 0x15, 0x45, 0x35, 0x05, 0x54, 0x06


@dataclass(frozen=True, slots=True)
class When:
    """A condition on one argument (its low 32 bits, which is what the kernel reads of an int or
    a flags word): `bits`: any of them set; `among`/`not_among`: its value, masked by `mask`."""

    arg: int
    bits: int = 0
    among: tuple[int, ...] = ()
    not_among: tuple[int, ...] = ()
    mask: int = 0xFFFFFFFF


@dataclass(frozen=True, slots=True)
class Rule:
    """`call` gets `action` (an errno's name, `notify` or `kill`) when every condition holds;
    the first rule of a call that holds decides, and a call no rule takes is allowed."""

    call: str
    action: str
    why: str
    when: tuple[When, ...] = ()

    def to_dict(self) -> dict:
        return {"call": self.call, "action": self.action, "why": self.why}


def _refuse(calls: str, why: str, action: str = "EPERM") -> list[Rule]:
    return [Rule(call, action, why) for call in calls.split()]


def _mode_rules() -> list[Rule]:
    """No setuid or setgid file: the mode argument of each call that sets one."""
    why = "plants a setuid or setgid file"
    found = [Rule(call, "EPERM", why, (When(arg, bits=_SETUID_SETGID),)) for call, arg in (
        ("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2), ("creat", 1), ("mknod", 1), ("mknodat", 2),
    )]  # fmt: skip
    for call, flags in (("open", 1), ("openat", 2)):
        found.append(
            Rule(call, "EPERM", why, (When(flags, bits=_O_CREAT_OR_TMPFILE), When(flags + 1, bits=_SETUID_SETGID)))
        )
    return found


def base_rules() -> list[Rule]:
    """What every fenced program is refused, at `full` (given to bubblewrap) and at `partial`."""
    return [
        *_refuse("io_uring_setup io_uring_enter io_uring_register", "io_uring's operations pass no filter", "ENOSYS"),
        *_refuse(
            "openat2", "its mode and flags are out of a filter's sight (the C library falls back to openat)", "ENOSYS"
        ),
        *_mode_rules(),
        *_refuse("ptrace process_vm_readv process_vm_writev", "reads or drives another process"),
        *_refuse("keyctl add_key request_key", "the kernel's keyrings are shared across the fence"),
        *_refuse("bpf perf_event_open userfaultfd", "kernel attack surface no target needs"),
        Rule("unshare", "EPERM", "makes namespaces of its own", (When(0, bits=NEW_NAMESPACES),)),
        Rule("clone", "EPERM", "makes namespaces of its own", (When(0, bits=NEW_NAMESPACES),)),
        Rule("clone3", "ENOSYS", "its flags are out of a filter's sight (the C library falls back to clone)"),
        *_refuse("setns", "enters another namespace"),
        *_refuse(
            "mount umount2 pivot_root open_tree move_mount fsopen fsconfig fsmount fspick mount_setattr",
            "changes what the fence mounted",
        ),
        *_refuse(
            "kexec_load kexec_file_load init_module finit_module delete_module reboot swapon swapoff "
            "open_by_handle_at iopl ioperm",
            "the machine's own, never a target's",
        ),
    ]


def partial_rules(supervised: bool) -> list[Rule]:
    """What `partial` adds (no namespaces of its own to keep these inside): sockets are unix
    stream ones or TCP (no UDP, raw, netlink or packet socket, no unix datagram socket, which
    could send to any path); no SysV IPC or POSIX message queue (they outlive the invocation and
    are shared with every other); and, `supervised`, a unix socket's address and a file's
    metadata are decided by the supervisor (a filter cannot read a path)."""
    unix, inet = (socket.AF_UNIX,), (socket.AF_INET, socket.AF_INET6)
    tcp = (0, socket.IPPROTO_TCP)
    rules = [
        Rule("socket", "EAFNOSUPPORT", "only unix and TCP sockets", (When(0, not_among=(*unix, *inet)),)),
        Rule("socket", "EPROTONOSUPPORT", "a unix datagram socket can send to any path",
             (When(0, among=unix), When(1, not_among=(socket.SOCK_STREAM, socket.SOCK_SEQPACKET), mask=_SOCK_TYPE))),
        Rule("socket", "EPROTONOSUPPORT", "only TCP (no UDP, no raw socket)",
             (When(0, among=inet), When(1, not_among=(socket.SOCK_STREAM,), mask=_SOCK_TYPE))),
        Rule("socket", "EPROTONOSUPPORT", "only TCP", (When(0, among=inet), When(2, not_among=tcp))),
        Rule("socketpair", "EPROTONOSUPPORT", "a unix datagram socket can send to any path",
             (When(1, not_among=(socket.SOCK_STREAM, socket.SOCK_SEQPACKET), mask=_SOCK_TYPE),)),
        *[
            Rule(call, "EPERM", "TCP Fast Open connects past connect()", (When(flags, bits=MSG_FASTOPEN),))
            for call, flags in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3))
        ],
        *_refuse(
            "shmget shmat shmctl shmdt msgget msgsnd msgrcv msgctl semget semop semtimedop semctl "
            "mq_open mq_unlink mq_timedsend mq_timedreceive mq_notify mq_getsetattr",
            "SysV IPC and message queues outlive the invocation and are shared with every other",
        ),
    ]  # fmt: skip
    if supervised:
        rules += _refuse("connect bind", "a unix socket's path is checked by the supervisor", NOTIFY)
        rules += _refuse(METADATA_CALLS, "a file's metadata changes only beneath what the program may write", NOTIFY)
    return rules


METADATA_CALLS = (
    "chmod fchmod fchmodat fchmodat2 chown fchown lchown fchownat utime utimes futimesat utimensat "
    "setxattr lsetxattr fsetxattr setxattrat removexattr lremovexattr fremovexattr removexattrat"
)


def host_rules() -> list[Rule]:
    """What a check's host (the brick's process) is refused besides its host server's fence:
    binding a socket, making a link (pytest's tmp_path is in the check's folder, and the judge
    would write through it), and changing a file's mode, owner, times or attributes. Landlock governs
    neither, and at partial the supervisor would do both for the program outside the host's own
    domain, anywhere the host server may write: a brick made its siblings' folders unreadable
    (mode 0), and their honest bricks were judged import errors."""
    return [
        *_refuse("bind", "a socket's file would be made outside the host's own folder", "EACCES"),
        *_refuse(METADATA_CALLS, "a file's mode, owner, times and attributes are not a brick's to change"),
        *_refuse(
            "symlink symlinkat link linkat", "a link in the check's folder is a way for the judge to write elsewhere"
        ),
    ]


@cache
def host_filter() -> bytes:
    """`host_rules` assembled for this machine (once per process): what each host of a fenced
    host server adds to its own fence."""
    return assemble(host_rules())


def numbers(machine: str = MACHINE) -> dict[str, int]:
    """The system calls' numbers on `machine`."""
    return _NR[machine]


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

    def always(self, label: str) -> None:
        self.items.append(("always", label))

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
            elif item[0] == "always":
                out.append(struct.pack("HBBI", _JA, 0, 0, labels[item[1]] - here - 1))
            else:
                _, code, k, yes, no = item
                forward = [0 if target is None else labels[target] - here - 1 for target in (yes, no)]
                assert all(0 <= step < 256 for step in forward), item
                out.append(struct.pack("HBBI", code, forward[0], forward[1], k & 0xFFFFFFFF))
            here += 1
        return b"".join(out)


def _ret(action: str) -> int:
    if action == ALLOW:
        return _RET_ALLOW
    if action == NOTIFY:
        return _RET_USER_NOTIF
    if action == KILL:
        return _RET_KILL_PROCESS
    return _RET_ERRNO | getattr(errno, action)


def assemble(rules: list[Rule], machine: str = MACHINE) -> bytes:
    """The BPF program of `rules` on `machine`: another ABI is killed, x32 refused (ENOSYS); a
    rule whose call the machine lacks is left out."""
    nr = _NR[machine]
    program = _Program()
    program.load(4)  # seccomp_data.arch
    program.jump(_JEQ, _AUDIT_ARCH[machine], "arch", None)
    program.op(_RET, _RET_KILL_PROCESS)
    program.label("arch")
    program.load(0)  # seccomp_data.nr
    if machine == "x86_64":
        program.jump(_JGE, _X32_BIT, None, "native")
        program.op(_RET, _RET_ERRNO | errno.ENOSYS)
        program.label("native")
    calls = [call for call in dict.fromkeys(rule.call for rule in rules) if call in nr]
    for call in calls:  # nr == N: on to its block (a long jump: the blocks may be far below)
        program.jump(_JEQ, nr[call], None, f"not-{call}")
        program.always(f"call-{call}")
        program.label(f"not-{call}")
    program.op(_RET, _RET_ALLOW)
    for call in calls:
        program.label(f"call-{call}")
        mine = [rule for rule in rules if rule.call == call]
        for index, rule in enumerate(mine):
            following = f"rule-{call}-{index + 1}"
            for number, when in enumerate(rule.when):
                matched = f"match-{call}-{index}-{number}"
                program.load(16 + 8 * when.arg)  # seccomp_data.args[arg], its low half
                if when.bits:
                    program.jump(_JSET, when.bits, None, following)
                    continue
                if when.mask != 0xFFFFFFFF:
                    program.op(_AND, when.mask)
                for value in when.among:
                    program.jump(_JEQ, value, matched, None)
                if when.among:
                    program.always(following)
                for value in when.not_among:
                    program.jump(_JEQ, value, following, None)
                program.label(matched)
            program.op(_RET, _ret(rule.action))
            program.label(following)
        program.op(_RET, _RET_ALLOW)
    return program.assemble()
