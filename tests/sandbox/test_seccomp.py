"""The fence's seccomp filters as data: the rules each level gives, and the BPF program they
assemble to, run here by a small interpreter of classic BPF on made-up calls."""

import errno
import socket
import struct

import pytest

from ironbench.sandbox.seccomp import NEW_NAMESPACES, assemble, base_rules, numbers, partial_rules

ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
MACHINES = ("x86_64", "aarch64")


def run(program: bytes, machine: str, call: str | int, *args: int, arch: int | None = None) -> str:
    """What the filter answers to `call` with `args`: allow, kill, notify or an errno's name."""
    nr = numbers(machine)[call] if isinstance(call, str) else call
    values = [*args, *[0] * (6 - len(args))]
    data = struct.pack("=iIQ6Q", nr, ARCH[machine] if arch is None else arch, 0, *values)
    code = [struct.unpack("HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    a, pc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        pc += 1
        if op == 0x20:  # ld [k]
            a = struct.unpack_from("=I", data, k)[0]
        elif op == 0x54:  # and k
            a &= k
        elif op == 0x05:  # ja
            pc += k
        elif op in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = a == k if op == 0x15 else a >= k if op == 0x35 else bool(a & k)
            pc += jt if taken else jf
        elif op == 0x06:  # ret
            action = k & 0xFFFF0000
            if action == 0x7FFF0000:
                return "allow"
            if action == 0x80000000:
                return "kill"
            if action == 0x7FC00000:
                return "notify"
            assert action == 0x00050000, hex(k)
            return errno.errorcode[k & 0xFFFF]
        else:
            raise AssertionError(f"unknown BPF op {op:#x}")


@pytest.mark.parametrize("machine", MACHINES)
def test_at_every_level_the_calls_that_reach_outside_the_fence_are_refused(machine):
    program = assemble(base_rules(), machine)
    for call in ("ptrace", "process_vm_readv", "process_vm_writev", "keyctl", "add_key", "request_key", "bpf"):
        assert run(program, machine, call) == "EPERM", call
    for call in ("perf_event_open", "userfaultfd", "setns", "mount", "pivot_root", "init_module", "reboot"):
        assert run(program, machine, call) == "EPERM", call
    for call in ("io_uring_setup", "io_uring_enter", "io_uring_register", "openat2", "clone3"):
        assert run(program, machine, call) == "ENOSYS", call
    # new namespaces: refused by flag, while a thread or a fork is as ever
    assert run(program, machine, "unshare", 0x10000000) == "EPERM"
    assert run(program, machine, "unshare", 0x40000000 | 0x200) == "EPERM"
    assert run(program, machine, "unshare", 0x200) == "allow"  # CLONE_FS: no namespace
    assert run(program, machine, "clone", 0x20000000 | 17) == "EPERM"
    assert run(program, machine, "clone", 0x003D0F00) == "allow"  # what pthread_create passes
    assert run(program, machine, "clone", 17) == "allow"  # fork: SIGCHLD
    assert all(NEW_NAMESPACES & flag for flag in (0x20000, 0x2000000, 0x4000000, 0x8000000, 0x80))


@pytest.mark.parametrize("machine", MACHINES)
def test_a_setuid_file_cannot_be_planted_and_ordinary_modes_pass(machine):
    program = assemble(base_rules(), machine)
    assert run(program, machine, "fchmodat", 3, 0, 0o4755) == "EPERM"
    assert run(program, machine, "fchmodat", 3, 0, 0o2755) == "EPERM"
    assert run(program, machine, "fchmodat", 3, 0, 0o755) == "allow"
    assert run(program, machine, "openat", 3, 0, 0o100 | 0o1, 0o4755) == "EPERM"  # O_CREAT, setuid
    assert run(program, machine, "openat", 3, 0, 0o100 | 0o1, 0o644) == "allow"
    assert run(program, machine, "openat", 3, 0, 0, 0o4755) == "allow"  # no O_CREAT: the mode is unused
    assert run(program, machine, "mknodat", 3, 0, 0o4755) == "EPERM"


@pytest.mark.parametrize("machine", MACHINES)
def test_another_abi_is_killed_and_an_unnamed_call_allowed(machine):
    program = assemble(base_rules(), machine)
    assert run(program, machine, "ptrace", arch=0x40000003) == "kill"  # i386
    assert run(program, machine, 0) == "allow"
    if machine == "x86_64":
        assert run(program, machine, 0x40000000 | 101) == "ENOSYS"  # ptrace through x32


@pytest.mark.parametrize("machine", MACHINES)
def test_partial_keeps_sockets_to_unix_streams_and_tcp_and_refuses_ipc(machine):
    program = assemble(base_rules() + partial_rules(supervised=True), machine)
    unix, inet, inet6, netlink = socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK
    stream, dgram, seqpacket, raw = socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET, socket.SOCK_RAW
    cloexec = socket.SOCK_CLOEXEC | socket.SOCK_NONBLOCK
    assert run(program, machine, "socket", unix, stream | cloexec) == "allow"
    assert run(program, machine, "socket", unix, seqpacket) == "allow"
    assert run(program, machine, "socket", unix, dgram) == "EPROTONOSUPPORT"
    assert run(program, machine, "socket", inet, stream | cloexec, 0) == "allow"
    assert run(program, machine, "socket", inet6, stream, socket.IPPROTO_TCP) == "allow"
    assert run(program, machine, "socket", inet, dgram) == "EPROTONOSUPPORT"
    assert run(program, machine, "socket", inet, raw, 1) == "EPROTONOSUPPORT"
    assert run(program, machine, "socket", inet, stream, socket.IPPROTO_UDP) == "EPROTONOSUPPORT"
    assert run(program, machine, "socket", netlink, raw) == "EAFNOSUPPORT"
    assert run(program, machine, "socketpair", unix, stream) == "allow"
    assert run(program, machine, "socketpair", unix, dgram | cloexec) == "EPROTONOSUPPORT"
    for call in ("shmget", "shmat", "msgget", "semget", "semop", "mq_open"):
        assert run(program, machine, call) == "EPERM", call
    for call in ("connect", "bind", "fchmodat", "fchownat", "utimensat", "setxattr", "removexattr"):
        assert run(program, machine, call, 3, 0, 0o644) == "notify", call
    # a setuid mode is refused before the supervisor is asked
    assert run(program, machine, "fchmodat", 3, 0, 0o4755) == "EPERM"
    unsupervised = assemble(base_rules() + partial_rules(supervised=False), machine)
    assert run(unsupervised, machine, "connect", 3) == "allow"


def test_every_rule_names_a_call_of_some_machine_and_why():
    rules = base_rules() + partial_rules(supervised=True)
    known = set(numbers("x86_64")) | set(numbers("aarch64"))
    assert {rule.call for rule in rules} <= known
    assert all(rule.why and rule.to_dict()["call"] == rule.call for rule in rules)
