"""Processes below a process, from /proc: what a zygote sweeps after each check, and what the
harness kills with a zygote it gives up on."""

import os
import signal
import time

_PROC = "/proc"


def _parents() -> dict[int, int]:
    found: dict[int, int] = {}
    try:
        names = os.listdir(_PROC)
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{_PROC}/{name}/stat", "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        fields = raw[raw.rfind(b")") + 2 :].split(b" ", 3)
        if len(fields) > 1 and fields[0] not in (b"Z", b"X"):
            found[int(name)] = int(fields[1])
    return found


def _children(pid: int) -> list[int] | None:
    """`pid`'s children from /proc/PID/task/*/children (None where the kernel has no such file)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"{_PROC}/{pid}/task/{tid}/children", "rb") as handle:
                found.extend(int(child) for child in handle.read().split())
        except FileNotFoundError:
            if tid == str(pid):
                return None
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below `pid`."""
    found: list[int] = []
    todo = [pid]
    while todo:
        children = _children(todo.pop())
        if children is None:
            return _scanned(pid)
        for child in children:
            if child not in found:
                found.append(child)
                todo.append(child)
    return [child for child in found if _alive(child)]


def state(pid: int) -> bytes:
    """`pid`'s state letter in /proc (R, S, T, Z...; b"" when there is no such process)."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return b""
    return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3]


def _alive(pid: int) -> bool:
    return state(pid) not in (b"", b"Z", b"X")


def stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP, SIGTSTP..., or a tracer's stop): it runs nothing until
    it is continued."""
    return state(pid) in (b"T", b"t")


def first_in_namespace(pid: int) -> bool:
    """Whether `pid` is the first process (pid 1) of its own pid namespace."""
    try:
        with open(f"{_PROC}/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"NSpid:"):
                    return line.split()[-1] == b"1"
    except OSError:
        pass
    return False


def children(pid: int) -> list[int]:
    """`pid`'s children (from one scan of /proc where the kernel has no children file)."""
    found = _children(pid)
    if found is None:
        return [child for child, parent in _parents().items() if parent == pid]
    return found


def _scanned(pid: int) -> list[int]:
    """Every live process below `pid`, from one scan of /proc (zombies are not counted)."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        if child not in found:
            found.append(child)
            todo.extend(children.get(child, []))
    return found


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def sweep(seconds: float = 5.0, keep: tuple[int, ...] = ()) -> int:
    """Kill every process below this one (but `keep`), reaping those that become its children:
    a subreaper's leftovers. Returns how many were killed."""
    me = os.getpid()
    killed: set[int] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        victims = [pid for pid in descendants(me) if pid not in keep]
        if not victims:
            break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        _reap()
        time.sleep(0.002)
    _reap()
    return len(killed)


def kill_children(keep: set[int]) -> list[int]:
    """Kill this process's children but `keep` (their own children are theirs to deal with);
    returns those killed, for the caller to reap."""
    children = _children(os.getpid())
    killed = []
    for child in children if children is not None else descendants(os.getpid()):
        if child not in keep:
            try:
                os.kill(child, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed.append(child)
    return killed


def kill_tree(pid: int) -> None:
    """Kill `pid` and every process below it, the lowest first seen."""
    for victim in [*descendants(pid), pid]:
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
