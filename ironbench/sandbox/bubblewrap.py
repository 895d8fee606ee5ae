"""The full fence: bubblewrap, with user, pid, mount, ipc, uts, cgroup and network namespaces of
the program's own and the seccomp filter of every level.

The system is bound read-only; each hidden folder of the answer key is an empty read-only tmpfs
(the machine's temporary and runtime folders and homes empty, private and writable), each hidden
file the empty /dev/null; what the program needs from a hidden tree is bound back read-only,
with the answer key inside it hidden again; its working folder and each --allow-write are writable. The program is the namespace's first
process (`--as-pid-1`): when it ends, the kernel ends every process it left, and the invocation
ends with it. Its network is a namespace with its loopback only, or, with endpoints, one from
the run's netgate where each endpoint listens (a run's many programs, as root, take their empty
ones made ahead by a thread of the harness). Its memory is capped before
it runs (its first process waits, `--block-fd`, until the harness has set the cap).
"""

import json
import os
import subprocess
import threading

from ironbench.sandbox.backend import Backend, Launch, Started, cap_memory, pipe_of, register_backend
from ironbench.sandbox.machine import MachineFence
from ironbench.sandbox.network import Namespaces, Network, inside, made_here
from ironbench.sandbox.plan import FencePlan, under
from ironbench.sandbox.policy import Endpoint, SandboxPolicy
from ironbench.sandbox.seccomp import Rule, assemble, base_rules
from ironbench.sandbox.watch import drain

# The machine's shared folders: the program gets empty, private, writable ones (its /dev, with
# its own /dev/shm, is bubblewrap's); the answer key's are empty and read-only.
PRIVATE_HIDDEN = ("/tmp", "/var/tmp", "/run", "/home", "/root")
OWN_DEV = ("/dev/shm",)
HOME = "/tmp/home"  # the program's own (Fence.environment), in its private /tmp
# (no --disable-userns: the seccomp filter refuses every way to a new namespace)
NAMESPACES = (
    "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--as-pid-1",
)  # fmt: skip
# A fence that starts more programs than this (a run's, not a check's host server), as root, takes
# their empty network namespaces made ahead by a thread of its own, entered by the starting thread;
# before, it makes each on the starting thread (as root: a namespace of its own, with its watch).
PREFETCH_AFTER = 2


def options(plan: FencePlan, needs: tuple[str, ...], workdir: str, existing: tuple[str, ...]) -> list[str]:
    """bubblewrap's options for one program (its network and plumbing aside): `needs`, what it
    reads; `existing`, the plan's hidden paths that exist now."""
    found = [*NAMESPACES, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    existing = tuple(sorted(existing))  # a tree before what lies in it
    size = str(plan.memory_mb << 20)
    trees = [h for h in existing if os.path.isdir(h)]
    sealed: dict[str, None] = {}  # hidden trees: empty, and read-only once what lies inside them is bound

    def hide(path: str) -> None:
        if path in trees:
            found.extend(["--size", size, "--tmpfs", path])
            if path not in PRIVATE_HIDDEN:
                sealed[path] = None
        else:
            found.extend(["--ro-bind", "/dev/null", path])

    readbacks = read_backs(plan, needs, existing)

    def read_back(path: str) -> bool:
        return any(under(path, tree) and path != tree for tree in readbacks)

    for hidden in existing:  # inside an emptied, read-only tree it is gone already; not inside /tmp
        if hidden in OWN_DEV or read_back(hidden):  # (inside what is read back: hidden once bound)
            continue
        if not any(under(hidden, tree) and hidden != tree for tree in trees if tree not in PRIVATE_HIDDEN):
            hide(hidden)
    found += ["--dir", HOME]
    for path in readbacks:
        found += ["--ro-bind-try", path, path]
    again: list[str] = []  # what a read-back tree holds of the hidden is hidden again (a tree once)
    for hidden in existing:
        if read_back(hidden) and not any(under(hidden, tree) for tree in again):
            hide(hidden)
            if hidden in trees:
                again.append(hidden)
    found += ["--bind", workdir, workdir]
    for path in plan.writable:
        found += ["--bind-try", path, path]
    for path, mirror, writable in plan.in_home(HOME):
        found += ["--bind-try" if writable else "--ro-bind-try", path, mirror]
    for hidden in sealed:
        found += ["--remount-ro", hidden]
    return [*found, "--chdir", workdir]


def read_backs(plan: FencePlan, needs: tuple[str, ...], existing: tuple[str, ...]) -> list[str]:
    """What the program needs that lies in a hidden tree, and each --allow-read."""
    wanted = dict.fromkeys([*needs, *plan.read_back])
    return [p for p in wanted if any(under(p, h) for h in existing)]


@register_backend
class Bubblewrap(Backend):
    name = "bubblewrap"
    level = "full"

    def __init__(self, plan: FencePlan, machine: MachineFence) -> None:
        super().__init__(plan, machine)
        assert machine.bwrap is not None  # unusable() said so otherwise
        self.bwrap = machine.bwrap
        self.filter = assemble(self.seccomp_rules())
        self.endpoints = tuple(Endpoint.parse(e) for e in plan.endpoints)
        self.network: Network | None = None
        self.lock = threading.Lock()
        self.starts = 0
        self.namespaces: Namespaces | None = None

    @classmethod
    def unusable(cls, machine: MachineFence, policy: SandboxPolicy) -> str | None:
        if machine.bwrap is None:
            return f"namespaces: {machine.refused}"
        if policy.endpoints() and os.geteuid() != 0 and machine.nsenter is None:
            return (
                "network: nsenter (util-linux) is not installed, so the allowed endpoints cannot be "
                "reached from a private network"
            )
        return None

    @classmethod
    def mechanism(cls, machine: MachineFence) -> str:
        return machine.mechanism

    @classmethod
    def gaps(cls, machine: MachineFence) -> tuple[str, ...]:
        names = (
            "names: a hidden folder's name shows (an empty folder, a line of /proc/self/mountinfo), never "
            "what it holds; so does the output folder's, in the path of the program's own working folder"
        )
        return (names,)

    @classmethod
    def seccomp_rules(cls) -> list[Rule]:
        return base_rules()

    def options(self, launch: Launch) -> list[str]:
        existing = tuple(h for h in self.plan.hidden if os.path.lexists(h))
        return options(self.plan, launch.needs, os.path.realpath(launch.workdir), existing)

    def start(self, launch: Launch) -> Started:
        found = self.options(launch)
        fds: list[int] = []
        lease: tuple[Network, int] | None = None
        prefix: list[str] = []
        net: int | None = None
        made: int | None = None
        seen: int | None = None  # its network's watch (watch.py), read once it has ended
        if self.endpoints:
            network = self._network()
            given, net, seen = network.take()
            lease = (network, given)
            prefix = network.enter(net)
            hosts = network.hosts_file()
            if hosts is not None:
                found += ["--ro-bind-data", str(pipe_of(hosts, fds)), "/etc/hosts"]
        else:
            made, seen = self._namespace()
            net = made
            if net is None:
                found.append("--unshare-net")
        found += ["--seccomp", str(pipe_of(self.filter, fds))]
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        fds += [info_write, block_read]
        found += ["--info-fd", str(info_write), "--block-fd", str(block_read)]
        arguments = pipe_of(("\0".join(found) + "\0").encode(), fds)
        command = [*prefix, self.bwrap, "--args", str(arguments), "--", *launch.argv]
        pipes = launch.pipes

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                command, cwd=launch.workdir, env=launch.env, stdin=pipes[0], stdout=pipes[1], stderr=pipes[2],
                start_new_session=True, pass_fds=(*fds, *launch.pass_fds),
            )  # fmt: skip

        def release() -> None:
            nonlocal seen
            if seen is not None:
                watched, seen = seen, None
                drain(watched, launch.seen)
            if lease is not None:
                lease[0].drop(lease[1])

        try:
            if net is not None and not prefix:
                process = inside(net, popen)
            else:
                process = popen()
        except BaseException:
            os.close(info_read)
            os.close(block_write)
            release()
            raise
        finally:
            for fd in fds if made is None else (*fds, made):
                os.close(fd)
        try:
            self._cap_and_go(info_read, block_write)
        except OSError:
            process.kill()
            process.wait()
            release()
            raise
        return Started(process, release, launch.seen)

    def _cap_and_go(self, info_read: int, block_write: int) -> None:
        """The program waits (--block-fd) until its memory is capped: everything it starts
        inherits the cap. OSError: the cap could not be set."""
        try:
            data = b""
            while chunk := os.read(info_read, 4096):
                data += chunk
            try:
                child = int(json.loads(data)["child-pid"])
            except (ValueError, KeyError):
                return  # bubblewrap failed before its child started: its exit says why
            cap_memory(child, self.plan.memory_mb)
            try:
                os.write(block_write, b"1")
            except OSError:
                pass
        finally:
            os.close(info_read)
            os.close(block_write)

    def _namespace(self) -> tuple[int | None, int | None]:
        """An empty network namespace of the harness's (as root) and its watch: one made ahead
        for a fence that starts many programs, else made now. Not root: (None, None), and
        bubblewrap makes one (with no watch: what the program tries is known from its output)."""
        if os.geteuid() != 0:
            return None, None
        with self.lock:
            self.starts += 1
            if self.starts > PREFETCH_AFTER and self.namespaces is None:
                self.namespaces = Namespaces()
            namespaces = self.namespaces
        try:
            return namespaces.take() if namespaces is not None else made_here()
        except OSError:
            return None, None  # none can be made here: bubblewrap makes its own

    def _network(self) -> Network:
        with self.lock:
            if self.network is None:
                self.network = Network(self.endpoints)
            return self.network

    def close(self) -> None:
        with self.lock:
            if self.network is not None:
                self.network.close()
                self.network = None
            if self.namespaces is not None:
                self.namespaces.close()
                self.namespaces = None
