"""The backends that apply a fence's plan, registered by name: each says its level, its mechanism
on this machine, what keeps it from running here, its gaps and the system calls it refuses, and
starts one program under the plan. bubblewrap (full) and Landlock (partial) register in their own
modules, `none` here; another (a container runtime) registers the same way, touching no other."""

import errno
import os
import resource
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ironbench.sandbox.machine import MachineFence
from ironbench.sandbox.plan import FencePlan
from ironbench.sandbox.policy import SandboxPolicy
from ironbench.sandbox.seccomp import Rule
from ironbench.sandbox.watch import Sightings


@dataclass(frozen=True, slots=True)
class Started:
    """A fenced program, started: its process, what ends its fence once it has ended, and what
    its fence saw it try and refused (complete once `release` has run)."""

    process: subprocess.Popen[bytes]
    release: Callable[[], None]
    seen: Sightings = field(default_factory=Sightings)


@dataclass(frozen=True, slots=True)
class Launch:
    """One program to start: its command, working folder, whole environment, standard streams
    (subprocess's DEVNULL, PIPE...), the descriptors it inherits, and what it needs to read
    (its executable, the files its command names, its interpreter's folders: `Fence.needs`),
    and where its backend records what it refuses it."""

    argv: list[str]
    workdir: Path
    env: dict[str, str]
    pipes: tuple[int, int, int]
    pass_fds: tuple[int, ...]
    needs: tuple[str, ...]
    seen: Sightings = field(default_factory=Sightings)


class Backend:
    """A way to apply a plan (see the module's docstring); one instance per fence."""

    name: ClassVar[str]
    level: ClassVar[str]

    def __init__(self, plan: FencePlan, machine: MachineFence) -> None:
        self.plan = plan
        self.machine = machine

    @classmethod
    def unusable(cls, machine: MachineFence, policy: SandboxPolicy) -> str | None:
        """Why it cannot apply `policy` on `machine` (a gap of the level below), or None."""
        return None

    @classmethod
    def mechanism(cls, machine: MachineFence) -> str:
        return cls.name

    @classmethod
    def gaps(cls, machine: MachineFence) -> tuple[str, ...]:
        """What it does not fence on `machine`, each named."""
        return ()

    @classmethod
    def seccomp_rules(cls) -> list[Rule]:
        return []

    def start(self, launch: Launch) -> Started:
        raise NotImplementedError

    def close(self) -> None:
        """End what it keeps for its programs (a network gate)."""


BACKENDS: dict[str, type[Backend]] = {}


def register_backend(backend: type[Backend]) -> type[Backend]:
    """Make `backend` one a plan may choose (by its level: the highest the machine allows)."""
    BACKENDS[backend.name] = backend
    return backend


def cap_memory(pid: int, memory_mb: int) -> None:
    """An address-space cap on a program just started (OSError when it cannot be set; a program
    that has ended already needs none)."""
    limit = memory_mb << 20
    try:
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
    except ProcessLookupError:
        pass
    except (OSError, ValueError) as exc:
        raise OSError(
            getattr(exc, "errno", None) or errno.EPERM, f"the fence could not cap its memory at {memory_mb} MB: {exc}"
        ) from None


def started_capped(
    process: subprocess.Popen[bytes], memory_mb: int, release: Callable[[], None], seen: Sightings
) -> Started:
    """`process` capped now; when the cap cannot be set it is killed, and the error raised."""
    try:
        cap_memory(process.pid, memory_mb)
    except OSError:
        process.kill()
        process.wait()
        release()
        raise
    return Started(process, release, seen)


def pipe_of(data: bytes, fds: list[int]) -> int:
    """A pipe's reading end holding `data` (added to `fds`, which the caller passes and closes)."""
    read, write = os.pipe()
    try:
        if len(data) > 60_000:  # more than a pipe holds: written by a thread as it is read
            threading.Thread(target=_write_all, args=(write, data), daemon=True).start()
            write = -1
        else:
            os.write(write, data)
    finally:
        if write >= 0:
            os.close(write)
    fds.append(read)
    return read


def _write_all(fd: int, data: bytes) -> None:
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


@register_backend
class Unfenced(Backend):
    """No fence: the program as it is (`--sandbox off`, or a machine with neither fence)."""

    name = "none"
    level = "none"

    def start(self, launch: Launch) -> Started:
        process = subprocess.Popen(
            launch.argv, cwd=launch.workdir, env=launch.env, stdin=launch.pipes[0], stdout=launch.pipes[1],
            stderr=launch.pipes[2], start_new_session=True, pass_fds=launch.pass_fds,
        )  # fmt: skip
        return started_capped(process, self.plan.memory_mb, lambda: None, launch.seen)
