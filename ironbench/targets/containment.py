"""Containment: nothing a target spawned outlives its invocation.

Killing the target's process group is not enough: a descendant can call setsid()
and leave it, and once its parent exits it is re-parented, out of sight. On Linux
the harness makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER) while
invocations run, so such orphans are re-parented to the harness instead of init:
every process a target ever spawned stays inside the harness's own process tree,
found by one scan of /proc. Each process there is attributed to an invocation by

  1. its session or process group (a target starts its own session),
  2. its parent, if the parent is attributed (a descendant of a descendant),
  3. the invocation's mark in its environment (CONTAINMENT_VAR), which orphans
     inherit unless they scrub their environment.

Concurrent invocations (--jobs N, on threads) each sweep only what is theirs. A
process that left the session and scrubbed its environment cannot be attributed:
it is swept when no invocation is running any more (at the latest when a run's
last invocation ends), and only if it was born while invocations were running.

A harness that dies (SIGKILL, a crash) sweeps nothing: a watchdog process does it then.
It holds a pipe from the harness and, once the pipe closes, kills every target still there
(its session and group), their descendants, and every process carrying one of the harness's
marks. What scrubbed its environment and left its target's session escapes it: a fence (a
pid namespace that dies with its parent) covers that.

Elsewhere (no /proc, no prctl) only the process group is killed.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass

CONTAINMENT_VAR = "IRONBENCH_CONTAINMENT_ID"
PR_SET_CHILD_SUBREAPER = 36
SWEEP_SECONDS = 5.0
_PROC = "/proc"
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass(frozen=True, slots=True)
class _Process:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    starttime: int  # clock ticks since boot

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")


def _read_stat(pid: int) -> _Process | None:
    try:
        fd = os.open(f"{_PROC}/{pid}/stat", os.O_RDONLY)
        try:
            raw = os.read(fd, 1024)
        finally:
            os.close(fd)
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split(b" ", 20)
    return _Process(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode(), int(fields[19]))


def _processes() -> dict[int, _Process]:
    found: dict[int, _Process] = {}
    for name in os.listdir(_PROC):
        if name.isdigit():
            process = _read_stat(int(name))
            if process is not None:
                found[process.pid] = process
    return found


def _mark_of(pid: int) -> str | None:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    prefix = CONTAINMENT_VAR.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode("ascii", "replace")
    return None


def _boot_ticks() -> int:
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _CLOCK_TICKS)


class _Registry:
    """The invocations running in this process; while any runs, the process is a subreaper."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active: dict[int, str] = {}  # target pid -> its mark
        # targets started and not yet reaped by their own Popen (which reads their exit
        # status there): a sweep never reaps one, even after its invocation finished
        self.unreaped: set[int] = set()
        self.entering = 0  # targets being started, not yet registered
        self.busy_since = 0
        self.stopped_threads: weakref.WeakSet = weakref.WeakSet()
        self.spared: set[int] = set()  # the harness's own children (a model gateway): never swept
        self.watchdog: subprocess.Popen[bytes] | None = None
        self.watched: dict[int, int] = {}  # what the watchdog was told: unreaped target pid -> start time
        self.marks = uuid.uuid4().hex[:16]  # the prefix of every mark this process gives
        self.prctl: Callable[..., int] | None = None
        if os.path.isdir(_PROC) and hasattr(time, "CLOCK_BOOTTIME"):
            try:
                self.prctl = ctypes.CDLL(None, use_errno=True).prctl
            except (OSError, AttributeError):
                pass

    @property
    def supported(self) -> bool:
        return self.prctl is not None

    def _idle(self) -> bool:
        return not self.active and not self.entering

    def _subreaper(self, on: int) -> None:
        """prctl(PR_SET_CHILD_SUBREAPER, on): only called when supported."""
        assert self.prctl is not None
        self.prctl(PR_SET_CHILD_SUBREAPER, on, 0, 0, 0)

    def enter(self) -> None:
        """Before a target starts: the first running invocation makes the process a subreaper."""
        with self.lock:
            if self.supported and self._idle():
                self.busy_since = _boot_ticks()
                self._subreaper(1)
            if self.supported:
                self._watchdog()
            self.entering += 1

    def _watchdog(self) -> None:
        """Start the watchdog if it is not running (the first target, or it was killed); under the lock."""
        if (self.watchdog is not None and self.watchdog.poll() is None) or not sys.executable:
            return
        if self.watchdog is not None:
            self.spared.discard(self.watchdog.pid)
        try:
            self.watchdog = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), self.marks],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a terminal's Ctrl-C is the harness's to handle
                env={},  # none of the harness's variables (its keys): below the full fence, a target may read them
            )
        except OSError:
            self.watchdog = None  # no watchdog: a crash leaves targets, as it always did
            return
        self.spared.add(self.watchdog.pid)
        assert self.watchdog.stdin is not None  # a PIPE
        os.set_blocking(self.watchdog.stdin.fileno(), False)  # a stalled watchdog never blocks a target
        for pid, start in self.watched.items():
            self._tell(f"+{pid} {start}")

    def _tell(self, line: str) -> None:
        if self.watchdog is None or self.watchdog.stdin is None:
            return
        try:
            os.write(self.watchdog.stdin.fileno(), line.encode() + b"\n")
        except OSError:  # full (it stalls) or closed (it died: the next target starts another)
            pass

    def started(self, pid: int, mark: str) -> None:
        process = _read_stat(pid) if self.supported else None
        with self.lock:
            self.entering -= 1
            self.active[pid] = mark
            self.unreaped.add(pid)
            if process is not None:
                self.watched[pid] = process.starttime
                self._tell(f"+{pid} {process.starttime}")
            stopped = threading.current_thread() in self.stopped_threads
        if stopped:  # started after the run was interrupted, by one of its invocations
            kill_group(pid)

    def abandoned(self) -> None:
        """The target never started."""
        with self.lock:
            self.entering -= 1
            if self.supported and self._idle():
                self._subreaper(0)

    def reaped(self, pid: int) -> None:
        """The target's Popen has collected its exit status."""
        with self.lock:
            self.unreaped.discard(pid)
            if self.watched.pop(pid, None) is not None:
                self._tell(f"-{pid}")

    def finish(self, pid: int) -> int:
        """The target has ended or been killed: sweep what it left; returns how many were killed."""
        with self.lock:
            mark = self.active.pop(pid)
            if not self.supported:
                kill_group(pid)
                return 0
            if self._idle():
                # The last one out also sweeps what nobody can be told apart by, under
                # the lock, so that no invocation starts (and gets swept) meanwhile.
                killed = _sweep(pid, mark, {}, self.busy_since, frozenset(self.unreaped))
                self._subreaper(0)
                return killed
            others, keep = dict(self.active), frozenset(self.unreaped)
        return _sweep(pid, mark, others, None, keep)

    def stop_all(self) -> None:
        """The run was interrupted: kill every running target's process group, and any target
        the threads now running invocations go on to start (their results will not be
        recorded); each invocation then returns and sweeps the rest as usual."""
        with self.lock:
            running = list(self.active)
            others = (t for t in threading.enumerate() if t is not threading.current_thread())
            self.stopped_threads = weakref.WeakSet(others)
        for pid in running:  # not yet reaped, so the pid (the target's group) is still its own
            kill_group(pid)


_registry = _Registry()


def spare(pid: int, on: bool = True) -> None:
    """A child the harness started itself (a model gateway), which no sweep may take for a
    target's leftover, even when it was started while invocations ran."""
    with _registry.lock:
        (_registry.spared.add if on else _registry.spared.discard)(pid)


def _fence_helpers() -> set[int]:
    """The fence's own processes (its netgates): never a target's leftovers. Imported when a
    sweep asks, so that this file also runs alone, as the watchdog (`python -I -S containment.py`)."""
    from ironbench.sandbox import HELPERS

    return HELPERS


def start_spared(start: Callable[[], "subprocess.Popen[bytes]"]) -> "subprocess.Popen[bytes]":
    """Start a child the harness owns (a check's trusted process) and spare it, with no sweep
    in between: a sweep holds the same lock."""
    with _registry.lock:
        process = start()
        _registry.spared.add(process.pid)
    return process


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _owner(
    process: _Process, procs: dict[int, _Process], me: int, targets: dict[int, str], memo: dict[int, int | None]
) -> int | None:
    """The target pid a process belongs to, or None (the harness's own, or unattributable)."""
    if process.pid in memo:
        return memo[process.pid]
    memo[process.pid] = None  # guards against a cycle in a table read while processes change
    owner: int | None = None
    if process.sid in targets:
        owner = process.sid
    elif process.pgid in targets:
        owner = process.pgid
    elif process.ppid != me and process.ppid in procs:
        owner = _owner(procs[process.ppid], procs, me, targets, memo)
    elif process.ppid == me and not process.zombie:
        mark = _mark_of(process.pid)
        owner = next((pid for pid, m in targets.items() if m == mark), None)
    memo[process.pid] = owner
    return owner


def _top(process: _Process, procs: dict[int, _Process], me: int) -> _Process | None:
    """The harness's direct child that `process` descends from, or None if it is not ours."""
    for _ in range(len(procs)):
        if process.ppid == me:
            return process
        parent = procs.get(process.ppid)
        if parent is None:
            return None
        process = parent
    return None


def _kill(process: _Process) -> None:
    """SIGKILL through a pidfd after checking the pid still names the same process, so a
    recycled pid is never hit."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        again = _read_stat(process.pid)
        if again is None or again.starttime != process.starttime:
            return
        if pidfd is not None:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(process.pid, signal.SIGKILL)
    except OSError:
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _sweep(
    target_pid: int, mark: str, others: dict[int, str], last_since: int | None, keep: frozenset[int] = frozenset()
) -> int:
    """Kill every live process of this invocation (and, when it was the last one running,
    every unattributable process born since invocations began) and reap those that were
    re-parented to the harness. The target itself, and every target in `keep` (another
    invocation's, whose invocation may have finished first), is left for its Popen to reap:
    reaping it here would take its exit status (Popen then reports 0, a false success), and
    until then its pid, which is its session and group id, cannot be recycled."""
    me = os.getpid()
    targets = {**others, target_pid: mark}
    killed: dict[int, int] = {}  # pid -> start time
    deadline = time.monotonic() + SWEEP_SECONDS
    while True:
        procs = _processes()
        memo: dict[int, int | None] = {}
        victims: list[_Process] = []
        dying = False  # killed, dead, but not yet re-parented to the harness to be reaped
        for process in procs.values():
            top = _top(process, procs, me) if process.pid != me else None
            if top is None:
                continue
            owner = _owner(process, procs, me, targets, memo)
            if owner is None and last_since is not None:
                spared = top.pid in _registry.spared or top.pid in _fence_helpers()
                ours = top.starttime >= last_since and top.pid not in targets and not spared
            else:
                ours = owner == target_pid
            if not ours and killed.get(process.pid) != process.starttime:
                continue
            if not process.zombie:
                victims.append(process)
            elif process.ppid == me and process.pid not in targets and process.pid not in keep:
                _reap(process.pid)
            elif process.pid in killed and process.pid not in targets:
                dying = True
        if (not victims and not dying) or time.monotonic() > deadline:
            return len(killed)
        if victims:
            kill_group(target_pid)
        for process in victims:
            _kill(process)
            killed[process.pid] = process.starttime
        time.sleep(0.002)


enter = _registry.enter
started = _registry.started
abandoned = _registry.abandoned
finish = _registry.finish
reaped = _registry.reaped
stop_all = _registry.stop_all


def new_mark() -> str:
    """A new invocation's mark: unique, and carrying this process's prefix (what its watchdog kills)."""
    return _registry.marks + uuid.uuid4().hex


def _under(process: _Process, roots: set[int], procs: dict[int, _Process]) -> bool:
    """Whether `process` is one of `roots` or descends from one."""
    for _ in range(len(procs)):
        if process.pid in roots:
            return True
        parent = procs.get(process.ppid)
        if parent is None or parent.pid == process.pid:
            return False
        process = parent
    return False


def _kill_left(targets: dict[int, int], marks: str) -> None:
    """What a harness that ended left: every target it had not reaped (pid -> start time) with
    its session, group and descendants, and every process carrying a mark that starts with
    `marks`, with its descendants; killed until none is left (at most SWEEP_SECONDS)."""
    me = os.getpid()
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        procs = _processes()
        # a target gone (reaped by init meanwhile) still names its session and group: its pid
        # is not reused while they have members; one reused by another process names theirs
        leaders = {pid for pid, start in targets.items() if pid not in procs or procs[pid].starttime == start}
        roots = {p.pid for p in procs.values() if leaders & {p.pid, p.sid, p.pgid}}
        roots |= {p.pid for p in procs.values() if not p.zombie and (_mark_of(p.pid) or "").startswith(marks)}
        roots.discard(me)
        victims = [p for p in procs.values() if p.pid != me and not p.zombie and _under(p, roots, procs)]
        if not victims:
            return
        for pid in leaders & procs.keys():  # not reaped: its group is still its own
            kill_group(pid)
        for process in victims:
            _kill(process)
        time.sleep(0.01)


def _watchdog_main(marks: str) -> None:
    """The watchdog's main (this file run as a script: it imports nothing of ironbench). Its
    harness tells it each target it starts ("+PID START") and reaps ("-PID") on stdin; when
    that pipe closes (the harness ended, however), it kills what they left (`_kill_left`)."""
    targets: dict[int, int] = {}
    for line in sys.stdin.buffer:
        op, fields = line[:1], line[1:].split()
        if op == b"+" and len(fields) == 2 and all(f.isdigit() for f in fields):
            targets[int(fields[0])] = int(fields[1])
        elif op == b"-" and fields and fields[0].isdigit():
            targets.pop(int(fields[0]), None)
    _kill_left(targets, marks)


if __name__ == "__main__":
    _watchdog_main(sys.argv[1])
