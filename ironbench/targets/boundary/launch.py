"""The seam through which the bricks' side is started: the one call a fence wraps.

A check's trusted side never starts the brick's side itself: it describes the start of the
*host server* (host.py: the clean interpreter that forks one host per brick) as a `HostLaunch`
(argv, working folder, environment, the descriptor it hands over, what it reads, where the
hosts' folders are made) and calls `launch_host`, which picks a `Launcher` by the name the
check's request carries. Every host is a fork of that server, inside whatever the launcher put
around it. `plain` starts it as a contained subprocess (its own session,
every other descriptor closed, stdin from /dev/null). A fence registers its own launcher under
its own name in LAUNCHERS; the harness names it in each check request (`launcher`).
"""

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ironbench.sandbox import SandboxPolicy


@dataclass(frozen=True, slots=True)
class HostLaunch:
    argv: tuple[str, ...]
    cwd: str  # the brick's copy lives here; the only folder the host may write
    env: dict[str, str]  # the whole environment: nothing else is inherited
    pass_fds: tuple[int, ...]  # the request and reply channels, nothing else
    stdout: int
    stderr: int
    reads: tuple[str, ...]  # what it must read: its program, the site folders (and the interpreter)
    writes: tuple[str, ...] = ()  # where the hosts' folders are made (each host writes only its own)


Launcher = Callable[[HostLaunch], "subprocess.Popen[bytes]"]


def plain(launch: HostLaunch) -> "subprocess.Popen[bytes]":
    """A plain subprocess: its own session, only the descriptors it is handed inherited."""
    return subprocess.Popen(
        list(launch.argv),
        cwd=launch.cwd,
        env=launch.env,
        stdin=subprocess.DEVNULL,
        stdout=launch.stdout,
        stderr=launch.stderr,
        pass_fds=launch.pass_fds,
        close_fds=True,
        start_new_session=True,
    )


def host_policy(launch: HostLaunch, wire: str) -> "SandboxPolicy":
    """The run's fence (`SandboxPolicy.to_wire`) as the host server gets it: the answer key
    hidden and the level the run took, as its targets have them; what the launch says it reads
    (its program, the site folders) read back; and nothing else the run allows its targets:
    no --allow-write folder (a brick would leave there what the next target reads), no
    --allow-net endpoint and no model gateway (no network at all)."""
    from ironbench.sandbox import SandboxPolicy

    policy = SandboxPolicy.from_wire(wire)
    given = (*launch.reads, *launch.writes)
    # the answer key but the folders the server is given (the bricks' roots hold its hosts' folders)
    hidden = tuple(h for h in policy.hidden if not any(g == h or g.startswith(h.rstrip("/") + "/") for g in given))
    return replace(
        policy,
        hidden=hidden,
        allow_read=(*policy.allow_read, *launch.reads),
        allow_write=launch.writes,
        allow_net=(),
        gateway=None,
    )


def fenced(launch: HostLaunch, wire: str) -> "subprocess.Popen[bytes]":
    """Inside the run's fence (`host_policy`): the answer key hidden, no network, nothing of
    the harness's to see or signal; it writes only where the hosts' folders are made, which is
    also its working folder (and each host only its own folder: host.py)."""
    from ironbench.sandbox import fence_for

    policy = host_policy(launch, wire)
    fence = fence_for(policy)
    workdir = Path(launch.writes[0] if launch.writes else launch.cwd)
    pipes = (subprocess.DEVNULL, launch.stdout, launch.stderr)
    return fence.start(list(launch.argv), workdir, dict(launch.env), pipes, launch.pass_fds).process


LAUNCHERS: dict[str, Launcher] = {"plain": plain}
FENCED = "fenced:"  # a launcher named so carries the fence's policy after the colon
# host.py's own words (it imports nothing of ironbench): a fenced server fences each host too,
# adding the filter it finds beside itself under this name
CONTAIN = "--contain"
HOST_FILTER = "host-filter.bpf"


def launch_host(launch: HostLaunch, launcher: str = "plain") -> "subprocess.Popen[bytes]":
    """Start a brick's host the way `launcher` says: `fenced:POLICY`, or a registered launcher
    (KeyError when none is registered by that name)."""
    if launcher.startswith(FENCED):
        return fenced(launch, launcher.removeprefix(FENCED))
    return LAUNCHERS[launcher](launch)


@cache
def host_program() -> dict[str, bytes]:
    """What the host server runs: host.py, codec.py and protocol.py compiled (hash-based .pyc, unchecked:
    the copy is the program), once per process; each server gets its own copy."""
    import importlib.util
    import marshal

    here = Path(__file__).parent
    compiled = {}
    for name in ("host", "codec", "protocol"):
        source = (here / f"{name}.py").read_bytes()
        code = compile(source, str(here / f"{name}.py"), "exec", dont_inherit=True)
        header = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + importlib.util.source_hash(source)
        compiled[f"{name}.pyc"] = header + marshal.dumps(code)
    return compiled
