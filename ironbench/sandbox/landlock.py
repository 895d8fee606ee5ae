"""The partial fence: Landlock, seccomp and no capabilities, set on a fresh thread that then
starts the program, which inherits them (what machines without user namespaces allow).

Landlock allows, it does not deny: to hide a tree, every sibling on the way down to it is
allowed instead (`around`), and a read-back tree that holds part of the answer key is allowed
the same way, around what it holds. TCP is fenced by port, signals and abstract unix sockets
stay inside (Landlock ABI 4 and 6), and the seccomp filter of every level is given with what
`partial` adds (seccomp.partial_rules). The harness makes itself not dumpable, so that the
program, which has no CAP_SYS_PTRACE, cannot read its environment or descriptors in /proc.
"""

import os
import shutil
import subprocess
import tempfile
import threading

from ironbench.sandbox import kernel
from ironbench.sandbox.backend import Backend, Launch, Started, register_backend, started_capped
from ironbench.sandbox.machine import MachineFence
from ironbench.sandbox.network import on_thread
from ironbench.sandbox.plan import FencePlan, under
from ironbench.sandbox.policy import Endpoint, SandboxPolicy
from ironbench.sandbox.seccomp import Rule, assemble, base_rules, partial_rules
from ironbench.sandbox.supervisor import Supervisor

LANDLOCK_NET_ABI = 4  # TCP ports
LANDLOCK_SCOPE_ABI = 6  # signals and abstract unix sockets


def around(hidden: list[str], root: str = "/") -> list[str]:
    """Every path beneath `root` that is neither hidden nor on the way to something hidden, on
    the way down to each hidden path (what Landlock allows instead of denying those). A link is
    listed as it is: it is never followed to allow what it leads to."""
    hidden = [h for h in (os.path.realpath(h) for h in hidden) if under(h, root)]
    allowed: set[str] = set()

    def walk(folder: str) -> None:
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            path = os.path.join(folder, name)
            if path in hidden:
                continue
            if any(h.startswith(path + "/") for h in hidden) and os.path.isdir(path) and not os.path.islink(path):
                walk(path)
            else:
                allowed.add(path)

    if root in hidden:
        return []
    if not any(h != root for h in hidden):
        return [root]
    walk(root)
    return sorted(allowed)


def rules(
    plan: FencePlan, allowed: list[str], needs: tuple[str, ...], workdir: str, private: str, abi: int
) -> kernel.Ruleset:
    """The Landlock ruleset of one program: `allowed` (around the hidden, from /), what it needs
    and --allow-read (around the hidden inside each), its folder and private folder."""
    existing = [h for h in plan.hidden if os.path.lexists(h)]
    read_back: list[str] = []
    for path in dict.fromkeys([*needs, *plan.read_back]):
        if any(under(path, h) for h in existing):
            read_back += around([h for h in existing if under(h, path) and h != path], path)
    ports = tuple(sorted({Endpoint.parse(e).port for e in plan.endpoints}))
    return kernel.Ruleset(
        read=(*allowed, *read_back, private, workdir),
        write=(workdir, private, "/dev/null", *plan.writable),
        connect=ports if abi >= LANDLOCK_NET_ABI else None,
    )


@register_backend
class Landlock(Backend):
    name = "landlock"
    level = "partial"

    def __init__(self, plan: FencePlan, machine: MachineFence) -> None:
        super().__init__(plan, machine)
        self.abi = machine.landlock_abi
        self.filter = assemble(self.seccomp_rules())
        self.lock = threading.Lock()
        self.allowed: list[str] | None = None
        kernel.not_dumpable()

    @classmethod
    def unusable(cls, machine: MachineFence, policy: SandboxPolicy) -> str | None:
        if (machine.landlock_abi) < 1:
            return "files: Landlock is not available"
        return None

    @classmethod
    def mechanism(cls, machine: MachineFence) -> str:
        return f"landlock {machine.landlock_abi} + seccomp"

    @classmethod
    def gaps(cls, machine: MachineFence) -> tuple[str, ...]:
        abi = machine.landlock_abi
        processes = (
            "processes: every process's command line and status show (no pid namespace), and the "
            "environment of another process of the user's that holds no capability"
        )
        found = [
            processes,
            "network: TCP ports are fenced, not hosts (no network namespace)"
            if abi >= LANDLOCK_NET_ABI
            else f"network: Landlock ABI {abi} fences no TCP ports",
        ]
        if abi < LANDLOCK_SCOPE_ABI:
            found.append(f"signals: Landlock ABI {abi} cannot keep signals inside")
        found += [
            "names: a hidden path's existence shows (stat), never what it holds; abstract unix names are the machine's",
            "/dev/shm: none (POSIX shared memory and semaphores fail)",
        ]
        return tuple(found)

    @classmethod
    def seccomp_rules(cls) -> list[Rule]:
        return [*base_rules(), *partial_rules(supervised=True)]

    def _allowed(self) -> list[str]:
        """What is readable from / (computed once per fence: it walks the way to each hidden path)."""
        with self.lock:
            if self.allowed is None:
                self.allowed = around([h for h in self.plan.hidden if os.path.lexists(h)])
            return self.allowed

    def start(self, launch: Launch) -> Started:
        private = tempfile.mkdtemp(prefix="ironbench-fenced-")
        for path, mirror, _writable in self.plan.in_home(private):  # a link: Landlock decides what it leads to
            try:
                os.makedirs(os.path.dirname(mirror), exist_ok=True)
                os.symlink(path, mirror)
            except OSError:
                pass  # the program finds it at its own path only
        env = {**launch.env, "HOME": private, "TMPDIR": private}
        workdir = os.path.realpath(launch.workdir)
        ruleset = rules(self.plan, self._allowed(), launch.needs, workdir, private, self.abi)
        supervisor = Supervisor(ruleset.write, ruleset.connect, launch.seen)  # here: its thread holds no filter

        def fence_thread() -> None:
            kernel.landlock(ruleset)
            kernel.drop_capabilities()
            listener = kernel.seccomp(self.filter, listener=True)
            assert listener is not None  # asked for
            supervisor.listen(listener)

        def popen() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                launch.argv, cwd=launch.workdir, env=env, stdin=launch.pipes[0], stdout=launch.pipes[1],
                stderr=launch.pipes[2], start_new_session=True, pass_fds=launch.pass_fds,
            )  # fmt: skip

        def release() -> None:
            supervisor.stop()
            shutil.rmtree(private, ignore_errors=True)

        try:
            process = on_thread(fence_thread, popen)
        except BaseException:
            release()
            raise
        return started_capped(process, self.plan.memory_mb, release, launch.seen)
