"""The fence around every program a run starts on a target's behalf (the target itself, a
check of its brick): what it may read, write, reach, see and signal, and how much memory.

One `Fence` per process that starts targets (the coordinator, each Dask worker), built from
the run's `SandboxPolicy` and what the machine allows (`machine_fence`):

- full: bubblewrap. Its own user, pid, mount, ipc and uts namespaces: the system read-only,
  homes, /tmp, /run and the answer key (the output folder with the store, the suite's and
  the checks' folders) hidden, what the program needs to run read back, its working
  directory and a private /tmp writable; it sees no other process and signals none. A
  network namespace of its own: with nothing allowed, just its loopback; with endpoints (the
  model gateway, --allow-net), a namespace per invocation from the run's netgate, where each
  endpoint listens and is carried to the real one, and nothing else is there.
- partial: Landlock and seccomp on a fresh thread, inherited by the program: files by an
  allow-list, TCP by port, signals kept inside; each fence missing is named.
- none: the program as it is (`--sandbox off`, or a machine with neither).

At every level the program gets only the variables it needs (the base set, the harness's own,
each --pass-env) and an address-space cap.
"""

import atexit
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ironbench.core.errors import SandboxError
from ironbench.sandbox import kernel
from ironbench.sandbox.machine import MachineFence, machine_fence
from ironbench.sandbox.policy import Endpoint, SandboxPolicy

NETGATE = Path(__file__).with_name("netgate.py")
LEVEL_CAP_VARIABLE = "IRONBENCH_FENCE_LEVEL"  # tests: cap the level the machine allows (full, partial, none)
SYSTEM_HIDDEN = ("/tmp", "/var/tmp", "/run", "/home", "/root", "/dev/shm")
WRITABLE_HIDDEN = ("/tmp", "/dev/shm")  # the program's own temporary folders: empty, private, writable
HOSTNAME_BASE = "127.77.0."  # a hostname endpoint listens at its own loopback address inside
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
LEVELS = ("none", "partial", "full")
HELPERS: set[int] = set()  # the fence's own processes (netgates): never a target's leftovers
_PIPES = (subprocess.DEVNULL, subprocess.PIPE, subprocess.PIPE)


@dataclass(frozen=True, slots=True)
class Started:
    """A fenced program, started: its process and what ends its fence once it has ended."""

    process: subprocess.Popen[bytes]
    release: Callable[[], None]


def _under(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")


def _existing(paths: Iterable[str]) -> list[str]:
    return sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})


class Fence:
    """A process's fence for one run's programs (see the module's docstring)."""

    def __init__(self, policy: SandboxPolicy, machine: MachineFence | None = None) -> None:
        self.policy = policy
        machine = machine or machine_fence()
        cap = os.environ.get(LEVEL_CAP_VARIABLE)
        if cap in LEVELS and LEVELS.index(cap) < LEVELS.index(machine.level):
            machine = MachineFence(
                cap,
                machine.mechanism if cap != "none" else "none",
                (f"capped at {cap} by {LEVEL_CAP_VARIABLE}",),
                machine.bwrap if cap == "full" else None,
                machine.nsenter,
                machine.landlock_abi if cap != "none" else 0,
            )
            if cap == "partial":
                machine = _partial_of(machine)
        self.machine = machine
        self.endpoints = policy.endpoints()
        missing = list(machine.missing)
        level = machine.level
        if level == "full" and self.endpoints and machine.nsenter is None:
            level = "partial"
            missing.append(
                "network: nsenter (util-linux) is not installed, so the allowed endpoints cannot be "
                "reached from a private network"
            )
        if not policy.fenced:
            level, missing = "none", ["files, processes and network: --sandbox off"]
        if policy.mode == "on" and level != "full":
            raise SandboxError(f"--sandbox on: this machine allows the {level} fence only: {'; '.join(missing)}")
        self.level = level
        self.missing = tuple(missing)
        self._readbacks: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._network: _Network | None = None
        self._lock = threading.Lock()
        self._allow_list: list[str] | None = None

    # -- what it is --------------------------------------------------------------------------

    @property
    def hidden(self) -> list[str]:
        """What is hidden now: the answer key (as it exists: a store is made after its run's
        fence), homes, and at full the machine's shared temporary and runtime folders."""
        return _existing([*self.policy.hidden, *(SYSTEM_HIDDEN if self.level == "full" else ()), _home()])

    @property
    def mechanism(self) -> str:
        if self.level == "none":
            return "none"
        return self.machine.mechanism

    def describe(self, argv: list[str] | None = None) -> dict[str, Any]:
        """What a program started under this fence can and cannot do (recorded with the run)."""
        return {
            "level": self.level,
            "mechanism": self.mechanism,
            "missing": list(self.missing),
            "hidden": sorted({*self.policy.hidden, *self.hidden}) if self.level != "none" else [],
            "readable": ["/ (read-only)", *self.readbacks(argv or [])] if self.level != "none" else ["everything"],
            "writable": (
                ["its working directory", "a private temporary folder", *self.policy.allow_write]
                if self.level != "none"
                else ["everything the user can write"]
            ),
            "reachable": [str(e) for e in self.endpoints] if self.level != "none" else ["everything"],
            "environment": "base set, the harness's own and --pass-env" if self.level != "none" else "the harness's",
            "memory_mb": self.policy.memory_mb,
        }

    def environment(self, env: dict[str, str], home: str | None = None) -> dict[str, str]:
        """The program's variables: at a fenced level the policy's set, its own HOME and TMPDIR,
        then the harness's `env`; unfenced, the harness's whole environment and `env`."""
        if self.level == "none":
            return {**os.environ, **env}
        home = home or "/tmp/home"
        tmp = "/tmp" if self.level == "full" else home
        return {**self.policy.environment(dict(os.environ)), "HOME": home, "TMPDIR": tmp, **env}

    # -- what a program needs to run ---------------------------------------------------------

    def readbacks(self, argv: list[str]) -> tuple[str, ...]:
        """What `argv` needs that lies in a hidden tree (its interpreter, its program, its
        modules), and every --allow-read: read back, read-only."""
        key = tuple(argv)
        if key not in self._readbacks:
            hidden = [*self.policy.hidden, *SYSTEM_HIDDEN, _home()]
            needed = [*_program_paths(argv), *self.policy.allow_read]
            self._readbacks[key] = tuple(p for p in _existing(needed) if any(_under(p, h) for h in hidden))
        return self._readbacks[key]

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
        streams as `pipes` says (subprocess's DEVNULL, PIPE...), `pass_fds` inherited, from the
        thread that will wait for it: the full fence's process dies with the thread that started it."""
        popen: dict[str, Any] = {
            "stdin": pipes[0], "stdout": pipes[1], "stderr": pipes[2], "start_new_session": True,
            "pass_fds": pass_fds,
        }  # fmt: skip
        if self.level == "full":
            return self._start_full(argv, workdir, env, popen)
        if self.level == "partial":
            return self._start_partial(argv, workdir, env, popen)
        process = subprocess.Popen(argv, cwd=workdir, env=env, **popen)
        _cap(process.pid, self.policy.memory_mb)
        return Started(process, lambda: None)

    def _start_full(self, argv: list[str], workdir: Path, env: dict[str, str], popen: dict) -> Started:
        assert self.machine.bwrap is not None  # a full fence runs bubblewrap
        workdir = Path(os.path.realpath(workdir))
        options = self._bwrap_options(argv, workdir)
        fds: list[int] = []
        prefix: list[str] = []
        lease: tuple[_Network, int] | None = None
        if self.endpoints:
            network = self._network_gate()
            given, net = network.take()
            lease = (network, given)
            prefix = network.enter(net)
            hosts = network.hosts_file()
            if hosts is not None:
                options += ["--ro-bind-data", str(_pipe_of(hosts, fds)), "/etc/hosts"]
        else:
            options.append("--unshare-net")
        options += ["--seccomp", str(_pipe_of(kernel.seccomp_filter(tcp_only=False), fds))]
        info_read, info_write = os.pipe()
        block_read, block_write = os.pipe()
        fds += [info_write, block_read]
        options += ["--info-fd", str(info_write), "--block-fd", str(block_read)]
        arguments = _pipe_of(("\0".join(options) + "\0").encode(), fds)
        command = [*prefix, self.machine.bwrap, "--args", str(arguments), "--", *argv]
        try:
            process = subprocess.Popen(
                command, cwd=workdir, env=env, **{**popen, "pass_fds": (*fds, *popen["pass_fds"])}
            )
        except BaseException:
            os.close(info_read)
            os.close(block_write)
            if lease is not None:
                lease[0].drop(lease[1])
            raise
        finally:
            for fd in fds:
                os.close(fd)
        self._cap_and_go(info_read, block_write)

        def release() -> None:
            if lease is not None:
                lease[0].drop(lease[1])

        return Started(process, release)

    def _cap_and_go(self, info_read: int, block_write: int) -> None:
        """The sandbox's first process waits (--block-fd) until its memory is capped: every
        process of the sandbox inherits the cap."""
        try:
            data = b""
            while chunk := os.read(info_read, 4096):
                data += chunk
            try:
                child = int(json.loads(data)["child-pid"])
                limit = self.policy.memory_mb << 20
                resource.prlimit(child, resource.RLIMIT_AS, (limit, limit))
            except (ValueError, KeyError, OSError):
                pass  # bubblewrap failed before its child started: its exit says why
            try:
                os.write(block_write, b"1")
            except OSError:
                pass
        finally:
            os.close(info_read)
            os.close(block_write)

    def _bwrap_options(self, argv: list[str], workdir: Path) -> list[str]:
        options = [
            "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--disable-userns", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
        ]  # fmt: skip
        size = str(self.policy.memory_mb << 20)
        sealed = []  # hidden trees: empty, and read-only once what lies inside them is bound
        hidden_trees = [h for h in self.hidden if os.path.isdir(h)]
        for hidden in self.hidden:
            if not os.path.isdir(hidden) and any(_under(hidden, tree) for tree in hidden_trees):
                continue  # a file in an empty tree is gone already: binding over it would show its name
            if os.path.isdir(hidden):
                options += ["--size", size, "--tmpfs", hidden]
                if hidden not in WRITABLE_HIDDEN:
                    sealed.append(hidden)
            else:
                options += ["--ro-bind", "/dev/null", hidden]
        options += ["--dir", "/tmp/home"]
        readbacks = self.readbacks(argv)
        for path in readbacks:
            options += ["--ro-bind-try", path, path]
        # what a read-back tree holds of the answer key is hidden again
        for hidden in self.policy.hidden:
            if any(_under(hidden, path) and hidden != path for path in readbacks) and os.path.exists(hidden):
                options += ["--tmpfs", hidden] if os.path.isdir(hidden) else ["--ro-bind", "/dev/null", hidden]
        options += ["--bind", str(workdir), str(workdir)]
        for path in self.policy.allow_write:
            options += ["--bind-try", path, path]
        for hidden in sealed:
            options += ["--remount-ro", hidden]
        options += ["--chdir", str(workdir)]
        return options

    def _network_gate(self) -> "_Network":
        with self._lock:
            if self._network is None:
                self._network = _Network(self.endpoints)
            return self._network

    def _start_partial(self, argv: list[str], workdir: Path, env: dict[str, str], popen: dict) -> Started:
        """Landlock and seccomp are set on a thread of their own (they stay with it), which
        then starts the program: it inherits both."""
        private = tempfile.mkdtemp(prefix="ironbench-fenced-")
        env = {**env, "HOME": private, "TMPDIR": private}
        rules = kernel.Ruleset(
            read=(*self._partial_allow_list(), *self.readbacks(argv), private, str(workdir)),
            write=(str(workdir), private, "/dev/null", *self.policy.allow_write),
            connect=tuple(sorted({e.port for e in self.endpoints})),
        )
        started: list[subprocess.Popen[bytes]] = []
        failed: list[BaseException] = []

        def fenced() -> None:
            try:
                kernel.landlock(rules)
                kernel.seccomp(kernel.seccomp_filter(tcp_only=True))
                started.append(subprocess.Popen(argv, cwd=workdir, env=env, **popen))
            except BaseException as exc:  # noqa: BLE001 (carried to the caller's thread)
                failed.append(exc)

        thread = threading.Thread(target=fenced, name="ironbench-fence")
        thread.start()
        thread.join()
        if failed:
            shutil.rmtree(private, ignore_errors=True)
            raise failed[0]
        _cap(started[0].pid, self.policy.memory_mb)
        return Started(started[0], lambda: shutil.rmtree(private, ignore_errors=True))

    def _partial_allow_list(self) -> list[str]:
        """Landlock allows, it does not deny: to hide a tree, every sibling on the way to it is
        allowed instead (computed once per fence)."""
        if self._allow_list is None:
            hidden = [*self.hidden, *_existing(SYSTEM_HIDDEN)]
            self._allow_list = _around(hidden)
        return self._allow_list

    def close(self) -> None:
        with self._lock:
            if self._network is not None:
                self._network.close()
                self._network = None


def _partial_of(machine: MachineFence) -> MachineFence:
    abi = machine.landlock_abi or kernel.landlock_abi()
    missing = (
        "processes: the harness's processes are visible (no pid namespace)",
        "network: TCP ports are fenced, not hosts (no network namespace)",
        *machine.missing,
    )
    return MachineFence("partial", f"landlock {abi} + seccomp", missing, None, None, abi)


def _home() -> str:
    return os.path.expanduser("~")


def _cap(pid: int, memory_mb: int) -> None:
    """An address-space cap on a program just started (below the full fence, whose first
    process waits for its cap, what the program allocated in its first moments is not capped)."""
    if memory_mb:
        limit = memory_mb << 20
        try:
            resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
        except (OSError, ValueError):
            pass  # it has ended already


def _pipe_of(data: bytes, fds: list[int]) -> int:
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


def _program_paths(argv: list[str]) -> list[str]:
    """What running `argv` reads: its executable, each file or folder it names (a script's
    folder with it), and for a Python interpreter its prefixes, its path and the package of
    each `-m` module, as that interpreter reports them."""
    found: list[str] = []
    executable = shutil.which(argv[0]) if argv else None
    if executable:
        found += [executable, os.path.realpath(executable)]
    for part in argv[1:]:
        if os.path.isabs(part) and os.path.exists(part):
            found.append(part if os.path.isdir(part) else os.path.dirname(part))
    interpreter = next((p for p in argv if _PYTHON.search(os.path.basename(p)) and shutil.which(p)), None)
    if interpreter is not None:
        modules = [argv[i + 1].split(".")[0] for i, p in enumerate(argv[:-1]) if p == "-m"]
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


def _around(hidden: list[str]) -> list[str]:
    """Every path that is neither hidden nor on the way to something hidden, on the way down
    from / to each hidden tree (what Landlock allows to read instead of denying those)."""
    hidden = [os.path.realpath(h) for h in hidden]
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

    walk("/")
    return sorted(allowed)


class _Network:
    """The run's netgate process, and the namespaces it hands out (netgate.py)."""

    def __init__(self, endpoints: tuple[Endpoint, ...]) -> None:
        self.userns = os.geteuid() != 0
        self.hostnames: dict[str, str] = {}
        aliases: list[str] = []
        listening = []
        for endpoint in endpoints:
            if endpoint.literal:
                address = endpoint.host
                if not endpoint.loopback and address not in aliases:
                    aliases.append(address)
            else:
                address = self.hostnames.setdefault(endpoint.host, f"{HOSTNAME_BASE}{len(self.hostnames) + 1}")
            listening.append({"listen": [address, endpoint.port], "to": [endpoint.host, endpoint.port]})
        config = {"userns": self.userns, "aliases": aliases, "endpoints": listening}
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(NETGATE), str(theirs.fileno()), json.dumps(config)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        finally:
            theirs.close()
        HELPERS.add(self.process.pid)
        message, fds, _flags, _address = socket.recv_fds(self.control, 4096, 1)
        said = json.loads(message or b"{}")
        if not said.get("ready"):
            self.close()
            raise SandboxError(f"the fence's network could not start: {said.get('error', 'it ended')}")
        self.user_fd = fds[0] if fds else None
        self.lock = threading.Lock()
        self.held: dict[int, int] = {}
        atexit.register(self.close)

    def take(self) -> tuple[int, int]:
        """A fresh namespace: its id and this process's descriptor of it."""
        with self.lock:
            self.control.send(b'{"op": "take"}')
            message, fds, _flags, _address = socket.recv_fds(self.control, 4096, 1)
            if not message or not fds:
                raise SandboxError("the fence's network ended")
            given = int(json.loads(message)["id"])
            self.held[given] = fds[0]
            return given, fds[0]

    def enter(self, net: int) -> list[str]:
        """The command that starts what follows it inside the namespace (it execs: no process of its own)."""
        me = os.getpid()
        nsenter = shutil.which("nsenter") or "nsenter"
        if self.user_fd is None:
            return [nsenter, f"--net=/proc/{me}/fd/{net}", "--"]
        return [nsenter, f"--user=/proc/{me}/fd/{self.user_fd}", f"--net=/proc/{me}/fd/{net}", "--preserve-credentials", "--"]  # fmt: skip

    def hosts_file(self) -> bytes | None:
        """/etc/hosts as the program sees it: the machine's, with each allowed host name at the
        loopback address it is carried from (None: no host names)."""
        if not self.hostnames:
            return None
        try:
            text = Path("/etc/hosts").read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = "127.0.0.1 localhost\n"
        return (text.rstrip("\n") + "\n" + "".join(f"{a} {h}\n" for h, a in self.hostnames.items())).encode()

    def drop(self, given: int) -> None:
        with self.lock:
            fd = self.held.pop(given, None)
            if fd is not None:
                os.close(fd)
            try:
                self.control.send(json.dumps({"op": "drop", "id": given}).encode())
            except OSError:
                pass

    def close(self) -> None:
        try:
            self.control.close()
        except OSError:
            pass
        for fd in list(getattr(self, "held", {}).values()):
            try:
                os.close(fd)
            except OSError:
                pass
        if getattr(self, "user_fd", None) is not None:
            try:
                os.close(self.user_fd)  # type: ignore[arg-type]
            except OSError:
                pass
            self.user_fd = None
        process = getattr(self, "process", None)
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        if process is not None:
            HELPERS.discard(process.pid)


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
