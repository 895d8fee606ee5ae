"""The fence around every program a run starts on a target's behalf (the target itself, a
check of its brick): what it may read, write, reach, see and signal, and how much memory.

One `Fence` per process that starts targets (the coordinator, each Dask worker, a check's
trusted process), made from the run's `SandboxPolicy` and what the machine allows
(`machine_fence`): its plan (plan.py), made once, is applied to each program by the backend the
plan names (backend.py): bubblewrap at full (bubblewrap.py), Landlock at partial (landlock.py),
none below. At every level the program gets only the variables it needs (the base set, the
harness's own, each --pass-env) and an address-space cap; a cap that cannot be set fails the
start, saying so.
"""

import atexit
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ironbench.sandbox import bubblewrap, landlock  # noqa: F401  (they register their backends)
from ironbench.sandbox.backend import BACKENDS, Launch, Started
from ironbench.sandbox.denials import Denial, Program, explain
from ironbench.sandbox.machine import MachineFence, machine_fence
from ironbench.sandbox.plan import LEVEL_CAP_VARIABLE, LEVELS, SYSTEM_HIDDEN, FencePlan, make_plan  # noqa: F401
from ironbench.sandbox.policy import SandboxPolicy
from ironbench.sandbox.watch import Seen, Sightings

_PYTHON = re.compile(r"python[0-9.]*$")
_INTERPRETER_PROBE = (
    "import sys, json, importlib.util\n"
    "found = [sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path]\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        spec = importlib.util.find_spec(name)\n"
    "    except Exception:\n"
    "        spec = None\n"
    "    if spec is not None:\n"
    "        found += list(spec.submodule_search_locations or []) or [spec.origin or '']\n"
    "print(json.dumps([p for p in found if p]))\n"
)
_PIPES = (subprocess.DEVNULL, subprocess.PIPE, subprocess.PIPE)


def _existing(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)}))


class Fence:
    """A process's fence for one run's programs (see the module's docstring). Its `policy` is
    the run's with the level this fence has: a process that fences for the run elsewhere (a
    check's host server) is given that policy, and takes that level or refuses."""

    def __init__(self, policy: SandboxPolicy, machine: MachineFence | None = None) -> None:
        machine = machine or machine_fence()
        self.plan: FencePlan = make_plan(policy, machine)
        self.policy = policy.at_level(self.plan.level)
        self.machine = machine
        self.backend = BACKENDS[self.plan.backend](self.plan, machine)
        self._needs: dict[tuple, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    # -- what it is --------------------------------------------------------------------------

    @property
    def level(self) -> str:
        return self.plan.level

    @property
    def mechanism(self) -> str:
        return self.plan.mechanism

    @property
    def missing(self) -> tuple[str, ...]:
        return self.plan.gaps

    def describe(self, argv: list[str] | None = None) -> dict[str, Any]:
        """What a program started under this fence can and cannot do (recorded with the run)."""
        plan = self.plan
        if not plan.fenced:
            return {
                "level": "none", "mechanism": "none", "missing": list(plan.gaps), "hidden": [],
                "readable": ["everything"], "writable": ["everything the user can write"],
                "reachable": ["everything"], "environment": "the harness's", "memory_mb": plan.memory_mb,
            }  # fmt: skip
        needs = self.needs(argv or [])
        hidden = _existing(plan.hidden)
        return {
            "level": plan.level,
            "mechanism": plan.mechanism,
            "missing": list(plan.gaps),
            "hidden": list(hidden),
            "readable": ["/ (read-only)", *bubblewrap.read_backs(plan, needs, hidden)],
            "writable": ["its working directory", "a private temporary folder", *plan.writable],
            "reachable": list(plan.endpoints),
            "environment": "base set, the harness's own and --pass-env",
            "memory_mb": plan.memory_mb,
        }

    def environment(self, env: dict[str, str], home: str | None = None) -> dict[str, str]:
        """The program's variables: at a fenced level the plan's names, its own HOME and TMPDIR,
        then the harness's `env`; unfenced, the harness's whole environment and `env`."""
        if not self.plan.fenced:
            return {**os.environ, **env}
        home = home or bubblewrap.HOME
        tmp = "/tmp" if self.level == "full" else home
        return {**self.policy.environment(dict(os.environ)), "HOME": home, "TMPDIR": tmp, **env}

    # -- what a program needs to run ---------------------------------------------------------

    def needs(self, argv: list[str]) -> tuple[str, ...]:
        """What running `argv` reads: its executable, each file or folder it names (a script's
        folder with it), and for a Python interpreter its prefixes, its path and the package of
        each `-m` module, as that interpreter reports them (asked once per interpreter and
        modules: an instruction in the command does not ask again)."""
        executable = shutil.which(argv[0]) if argv else None
        named = tuple(part for part in argv[1:] if os.path.isabs(part) and os.path.exists(part))
        interpreter = next((p for p in argv if _PYTHON.search(os.path.basename(p)) and shutil.which(p)), None)
        modules = tuple(argv[i + 1].split(".")[0] for i, p in enumerate(argv[:-1]) if p == "-m")
        key = (executable, interpreter, modules, named)
        with self._lock:
            found = self._needs.get(key)
        if found is None:
            folders = [p if os.path.isdir(p) else os.path.dirname(p) for p in named]
            found = _existing([*_program_paths(executable, interpreter, modules), *folders])
            with self._lock:
                self._needs[key] = found
        return found

    # -- starting a program ------------------------------------------------------------------

    def start(
        self,
        argv: list[str],
        workdir: Path,
        env: dict[str, str],
        pipes: tuple[int, int, int] = _PIPES,
        pass_fds: tuple[int, ...] = (),
    ) -> Started:
        """Start `argv` in `workdir` in a session of its own, under this fence, its standard
        streams as `pipes` says (subprocess's DEVNULL, PIPE...), `pass_fds` inherited (OSError:
        it could not be started, or fenced as the plan says). What the fence refuses it is in
        the result's `seen` once its `release` has run (an allowed path missing now, already)."""
        needs = self.needs(argv) if self.plan.fenced else ()
        seen = Sightings()
        for path in (*self.plan.read_back, *self.plan.writable):
            if not os.path.lexists(path):
                seen.add("missing", path, "fence")
        return self.backend.start(Launch(argv, Path(workdir), env, pipes, pass_fds, needs, seen))

    def denials(
        self, output: str, instruction: str, failed: bool, workdir: Path, env: dict[str, str], seen: tuple[Seen, ...]
    ) -> tuple[Denial, ...]:
        """What this fence denied a program it started with the harness's `env` added (what it
        printed, its instruction, whether it failed, what the fence saw): denials.explain."""
        if not self.plan.fenced:
            return ()
        program = Program(output, instruction, failed, str(workdir), frozenset(self.environment(env)), seen)
        return explain(self.plan, program, os.environ)

    def close(self) -> None:
        self.backend.close()


def _program_paths(executable: str | None, interpreter: str | None, modules: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    if executable:
        found += [executable, os.path.realpath(executable)]
    if interpreter is not None:
        try:
            done = subprocess.run(
                [interpreter, "-c", _INTERPRETER_PROBE, *modules],
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
            found += json.loads(done.stdout.strip().splitlines()[-1])
        except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
            pass
        found.append(os.path.dirname(os.path.dirname(os.path.realpath(shutil.which(interpreter) or interpreter))))
    return found


_fences: dict[SandboxPolicy, Fence] = {}
_fences_lock = threading.Lock()


def fence_for(policy: SandboxPolicy) -> Fence:
    """This process's fence for `policy`, made at its first use and kept while the process lives
    (a Dask worker runs many invocations of one run under the same fence)."""
    with _fences_lock:
        fence = _fences.get(policy)
        if fence is None:
            fence = _fences[policy] = Fence(policy)
            if len(_fences) == 1:
                atexit.register(close_fences)
        return fence


def close_fences() -> None:
    """End every fence this process made (their netgates): a run's end on its coordinator."""
    with _fences_lock:
        fences = list(_fences.values())
        _fences.clear()
    for fence in fences:
        fence.close()
