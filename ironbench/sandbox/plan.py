"""The fence as a plan in plain data: what a run's programs may see, read, write, reach and use,
and which backend applies it; made once per run and process from the run's policy and what the
machine allows, and read by whoever explains the fence (the run's record, a denial's hint).

A plan names paths, never what lies in them: `hidden` (the answer key, the machine's shared
temporary and runtime folders, homes), `read_back` (what a program needs from a hidden tree, and
each --allow-read), `writable` (each --allow-write; every program also writes its own working
folder and a private temporary one), the endpoints it reaches, the names of the variables it
gets, its memory, the system calls it is refused, and each gap of the level, named. What it
allows beneath the user's home is also where the program's own home has it (`in_home`): a
program reads `~/.config/agent` as the user does.
"""

import os
import resource
from dataclasses import asdict, dataclass, field
from typing import Any

from ironbench.core.errors import SandboxError
from ironbench.core.kinds import FENCE_LEVELS as LEVELS
from ironbench.sandbox.machine import MachineFence
from ironbench.sandbox.policy import BASE_ENV, HARNESS_ENV, SandboxPolicy

LEVEL_CAP_VARIABLE = "IRONBENCH_FENCE_LEVEL"  # tests: cap the level the machine allows (full, partial, none)
SYSTEM_HIDDEN = ("/tmp", "/var/tmp", "/run", "/home", "/root", "/dev/shm")


def under(path: str, tree: str) -> bool:
    """Whether `path` is `tree` or lies beneath it (both absolute and resolved)."""
    return path == tree or path.startswith(tree.rstrip("/") + "/")


@dataclass(frozen=True, slots=True)
class FencePlan:
    """One run's fence on one machine (see the module's docstring); `to_dict` is its record."""

    level: str
    backend: str  # the registered backend that applies it (backend.py: bubblewrap, landlock, none)
    mechanism: str  # what it is here, with its version ("bubblewrap 0.11.0", "landlock 7 + seccomp")
    gaps: tuple[str, ...]  # what this level does not fence here, each named ("processes: ...")
    hidden: tuple[str, ...]  # absolute paths; those that do not exist yet are hidden once they do
    answer_key: tuple[str, ...]  # the run's own part of `hidden`: hidden again inside a read-back tree
    read_back: tuple[str, ...]  # --allow-read: read-only, even inside a hidden tree
    writable: tuple[str, ...]  # --allow-write
    endpoints: tuple[str, ...]  # HOST:PORT, the model gateway first
    environment: tuple[str, ...]  # the names of the variables passed (each when set), besides HOME and TMPDIR
    memory_mb: int  # the address-space cap programs get
    memory: str  # how and when it is set, or why it is not what the run asked
    refused: tuple[dict, ...] = field(default=())  # seccomp's rules: {call, action, why}
    home: str = ""  # the user's home (hidden), whose allowed paths the program's own home has too

    @property
    def fenced(self) -> bool:
        return self.level != "none"

    def to_dict(self) -> dict:
        return asdict(self)

    def in_home(self, home: str) -> list[tuple[str, str, bool]]:
        """Each allowed path beneath the user's home, where the program's own home (`home`) has
        it too, and whether it is writable: (path, its place beneath `home`, writable). Not one
        that holds part of the answer key (that stays at its own path, hidden again there)."""
        if not self.home or self.home == "/":
            return []
        found: list[tuple[str, str, bool]] = []
        for paths, writable in ((self.read_back, False), (self.writable, True)):
            for path in paths:
                if path != self.home and under(path, self.home) and not any(under(k, path) for k in self.answer_key):
                    found.append((path, os.path.join(home, os.path.relpath(path, self.home)), writable))
        return found

    @classmethod
    def from_dict(cls, data: dict) -> "FencePlan":
        names = cls.__dataclass_fields__
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}
        return cls(**values)


def level_cap(policy: SandboxPolicy) -> tuple[str, str | None]:
    """The highest level a plan may take, and why it is capped (None: it is not): the level the
    run's fence has (a process fencing for it elsewhere, a check's host server, takes that level
    and no other), else the test variable's."""
    if policy.level is not None:
        return policy.level, None
    cap = os.environ.get(LEVEL_CAP_VARIABLE)
    if cap in LEVELS:
        return cap, f"capped at {cap} by {LEVEL_CAP_VARIABLE}"
    return "full", None


def _writes_beside_the_key(policy: SandboxPolicy) -> None:
    """SandboxError when a folder the target may write holds a hidden path (or is one): what it
    may write it may also read, and no fence hides a file inside a folder it lets a program
    write (a read allowance re-hides them; a write allowance cannot). A folder inside a hidden
    one is fine: only it is given."""
    for allowed in policy.allow_write:
        where = os.path.realpath(allowed)
        for hidden in policy.hidden:
            if under(hidden, where):
                raise SandboxError(
                    f"--allow-write {allowed}: holds {hidden}, which a target must not reach (the run's suite, "
                    "checks, output folder, store, or the judges' own folder): allow a folder beside them"
                )


def make_plan(policy: SandboxPolicy, machine: MachineFence) -> FencePlan:
    """The plan of `policy` on `machine`: the highest registered backend the machine allows,
    below the cap (SandboxError: `--sandbox on` below full, or the run's level not reachable)."""
    from ironbench.sandbox.backend import BACKENDS

    if policy.fenced:
        _writes_beside_the_key(policy)
    cap, capped = level_cap(policy)
    gaps: list[str] = []
    chosen = BACKENDS["none"]
    if not policy.fenced:
        gaps.append("files, processes and network: --sandbox off")
    else:
        for backend in sorted(BACKENDS.values(), key=lambda b: LEVELS.index(b.level), reverse=True):
            if LEVELS.index(backend.level) > LEVELS.index(cap):
                continue
            why = backend.unusable(machine, policy)
            if why is None:
                chosen = backend
                break
            gaps.append(why)
        if capped:
            gaps = [capped]
        gaps = [*chosen.gaps(machine), *gaps]
    level = chosen.level
    if policy.mode == "on" and level != "full":
        raise SandboxError(f"--sandbox on: this machine allows the {level} fence only: {'; '.join(gaps)}")
    if policy.level is not None and level != policy.level:
        raise SandboxError(
            f"the run's fence is {policy.level}, and this process reaches {level} only: {'; '.join(gaps)}"
        )
    memory_mb, memory = _memory(policy.memory_mb, level, chosen.name)
    if memory_mb != policy.memory_mb:
        gaps.append(f"memory: {memory}")
    return FencePlan(
        level=level,
        backend=chosen.name,
        mechanism=chosen.mechanism(machine),
        gaps=tuple(gaps),
        hidden=tuple(dict.fromkeys([*policy.hidden, *SYSTEM_HIDDEN, os.path.expanduser("~")]))
        if level != "none"
        else (),
        answer_key=tuple(policy.hidden),
        read_back=tuple(policy.allow_read),
        writable=tuple(policy.allow_write),
        endpoints=tuple(str(e) for e in policy.endpoints()),
        environment=tuple(dict.fromkeys([*BASE_ENV, *HARNESS_ENV, *policy.pass_env])),
        memory_mb=memory_mb,
        memory=memory,
        refused=tuple(rule.to_dict() for rule in chosen.seccomp_rules()),
        home=os.path.realpath(os.path.expanduser("~")) if level != "none" else "",
    )


def _memory(asked_mb: int, level: str, backend: str) -> tuple[int, str]:
    """The cap programs can be given (this process's hard limit, when it is lower and cannot be
    raised), and how it is set."""
    when = "before it starts" if backend == "bubblewrap" else "just after it starts"
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY and hard < asked_mb << 20 and os.geteuid() != 0:
        capped = hard >> 20
        return capped, f"{capped} MB of address space (this process's own hard limit), not {asked_mb} MB"
    return asked_mb, f"{asked_mb} MB of address space, capped {when}"
