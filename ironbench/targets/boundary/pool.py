"""The harness's side of the trusted process: zygotes started on demand, one check at a time
each, kept warm between checks (a thread of the harness takes an idle one, gives it back).

A zygote is the harness's own child, spared by containment's sweeps. Its answer holds the
facts the check's verdict is decided from: it never passes through anything a brick can write.
A zygote that dies during a check was killed (it does not end on its own while it waits for a
judge): when by a signal, the only processes in a position to send it are the brick's, and
that is evidence of tampering.
"""

import atexit
import contextlib
import functools
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from ironbench.targets import containment
from ironbench.targets.boundary import procs
from ironbench.targets.boundary.protocol import (
    Answer,
    CheckOrder,
    Fact,
    FrameError,
    Frames,
    Message,
    Ready,
    Setup,
    Warm,
    decode_message,
    encode_message,
    frame,
)
from ironbench.targets.boundary.zygote import JUDGE_GRACE

START_SECONDS = 120.0  # a zygote imports pytest once; a loaded machine may take a while
ANSWER_GRACE = 5.0  # past the judge's own deadline (the zygote kills it at JUDGE_GRACE)
MAX_IDLE = 32
CLOSE_SECONDS = 5.0  # an idle zygote told to close cleans up first


class ZygoteLost(Exception):
    """The zygote could not answer: `fact` says what that makes of the check; `before` when it
    was gone before the check was sent (a fresh one may take it)."""

    def __init__(self, fact: Fact, before: bool = False) -> None:
        super().__init__(fact.line)
        self.fact = fact
        self.before = before


@functools.cache
def judges_root() -> str:
    """This process's folder for its zygotes' own (the judges' private folders, where each
    check's files are written before they are imported, and the host servers' programs): the
    zygotes' temporary folder, and part of every run's answer key, so that no target reads or
    writes it, whatever the run allows of the temporary folder it lies in."""
    folder = tempfile.mkdtemp(prefix="ironbench-judges-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


def zygote_env() -> dict[str, str]:
    """The zygote's whole environment: none of the harness's PYTHON* or PYTEST_* variables
    (no -p from the environment, no plugin autoload), reproducible hashing, its temporary
    folder the judges' own (`judges_root`). Bytecode is written as usual: the zygote imports
    only the environment's own packages."""
    env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL", "TZ") if name in os.environ}
    return {**env, "TMPDIR": judges_root(), "PYTHONHASHSEED": "0", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class Zygote:
    def __init__(self, setup: Setup | None = None) -> None:
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (its stderr, read when it fails)
        argv = [sys.executable, "-s", "-P", "-m", "ironbench.targets.boundary.zygote"]
        self.process = containment.start_spared(
            lambda: subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                env=zygote_env(),
                cwd=tempfile.gettempdir(),
                close_fds=True,
                start_new_session=True,
            )
        )
        self.ready = False
        self.closed = False  # it closed its side: it has ended, or is ending
        self.frames = Frames()
        if setup is not None:  # its host server and first judge start before any check comes
            self._send(Warm(setup))

    def _send(self, message: Message) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame(encode_message(message)))
        self.process.stdin.flush()

    def _receive(self, deadline: float) -> Message | None:
        """One message, or None when the zygote closed its side (`self.closed`) or the deadline passed."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while True:
            try:
                payload = self.frames.next()
            except FrameError:
                self.closed = True
                return None
            if payload is not None:
                return decode_message(payload)
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.closed = True
                    return None
                self.frames.feed(chunk)

    def _lost(self, before: bool) -> ZygoteLost:
        try:
            status = self.process.wait(2)
        except subprocess.TimeoutExpired:
            status = None
        if status is not None and status < 0 and not before:
            name = signal.Signals(-status).name if -status in signal.valid_signals() else f"signal {-status}"
            line = f"the check's trusted process was killed by {name} while the brick ran"
            return ZygoteLost(Fact("tampered", line, "harness"))
        self.log.seek(0)
        tail = self.log.read()[-2000:].decode("utf-8", "replace").strip().splitlines()[-1:] or [f"status {status}"]
        return ZygoteLost(Fact("harness_fault", f"the check's trusted process ended: {tail[0]}", "harness"), before)

    def wait_ready(self) -> None:
        """Until it has started (ZygoteLost when it cannot)."""
        if not self.ready:
            hello = self._receive(time.monotonic() + START_SECONDS)
            if not isinstance(hello, Ready):
                self.close()
                raise self._lost(before=True)
            self.ready = True

    def ask(self, order: CheckOrder) -> Answer:
        """What one check found (ZygoteLost when the zygote cannot say)."""
        self.wait_ready()
        try:
            self._send(order)
        except (BrokenPipeError, OSError):
            raise self._lost(before=True) from None
        answer = self._receive(time.monotonic() + order.timeout + JUDGE_GRACE + ANSWER_GRACE)
        if not isinstance(answer, Answer):
            if not self.closed:  # it did not answer in time: it and everything below it go
                self.close()
                raise ZygoteLost(Fact("timeout", f"killed after {order.timeout:g} s", "harness"))
            raise self._lost(before=False)  # (its end is seen before its exit status is)
        return answer

    def hang_up(self) -> None:
        """Its end of the channel closed: it cleans up (its waiting judge, its folders) and ends."""
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()

    def close(self, wait_s: float = 0.0) -> None:
        """Close it: given `wait_s`, it ends on its own; then it and everything below it are killed."""
        self.hang_up()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(wait_s)
        if self.process.poll() is None:
            procs.kill_tree(self.process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
        containment.spare(self.process.pid, False)
        if self.process.stdout is not None:
            with contextlib.suppress(OSError):
                self.process.stdout.close()
        self.log.close()


class _Pool:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.idle: list[Zygote] = []
        self.pid = os.getpid()

    def take(self) -> Zygote:
        with self.lock:
            if self.pid != os.getpid():  # a forked harness: its parent's zygotes are not its own
                self.idle, self.pid = [], os.getpid()
            while self.idle:
                zygote = self.idle.pop()
                if zygote.process.poll() is None:
                    return zygote
        return Zygote()

    def give(self, zygote: Zygote) -> None:
        with self.lock:
            if len(self.idle) < MAX_IDLE and self.pid == os.getpid():
                self.idle.append(zygote)
                return
        zygote.close()

    def prestart(self, count: int, setup: Setup) -> None:
        """Start zygotes up to `count` idle ones now, so that their start overlaps other work."""
        with self.lock:
            missing = count - len(self.idle) if self.pid == os.getpid() else 0
        started = [Zygote(setup) for _ in range(max(0, missing))]
        with self.lock:
            self.idle.extend(started)

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for zygote in idle:
            zygote.hang_up()
        for zygote in idle:
            zygote.close(CLOSE_SECONDS)


_POOL = _Pool()
atexit.register(_POOL.close)


def judge(order: CheckOrder) -> Answer:
    """What one check found, from a warm zygote (a fresh one if the one taken had died)."""
    for attempt in (1, 2):
        zygote = _POOL.take()
        try:
            answer = zygote.ask(order)
        except ZygoteLost as lost:
            zygote.close()
            if lost.before and attempt == 1:
                continue
            return Answer((lost.fact,))
        _POOL.give(zygote)
        return answer
    raise AssertionError("unreachable")


def prestart(count: int, setup: Setup) -> None:
    """Have `count` trusted processes starting, each with its host server for `setup` (checks
    are coming on that many threads)."""
    _POOL.prestart(min(count, MAX_IDLE), setup)


def close_all() -> None:
    """Close every idle zygote (the next check starts a new one)."""
    _POOL.close()
