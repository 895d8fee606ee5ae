"""The check's trusted process, kept warm: the boundary imported once (pytest once a pytest check
has come), a judge forked per check.

    python -s -P -m ironbench.targets.boundary.zygote

It talks to the harness on its stdin and stdout (protocol.py's messages and framing), one
check at a time: single-threaded, so forking is safe. It starts the *host server* (host.py)
through the launch seam, and a judge ahead of each check: the judge lays out its folder and has
the server fork its host, then waits; when a check comes, the waiting judge gets it and the next
one is forked at once, so neither a judge nor a host costs a check its start. Each judge writes
its output in a private folder and its answer on a pipe of its own (no brick ever holds
either); the zygote keeps the check's deadline and watches the host server (killed during a
check: the brick did it), adds what it saw to the judge's facts, and after each check kills
whatever else is left among its children (it is a subreaper). It and its judges are not dumpable: a brick's process (same user) can
neither trace them nor read their memory, descriptors or folders through /proc.
"""

import contextlib
import ctypes
import importlib
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ironbench.targets.boundary import procs
from ironbench.targets.boundary.judge import Judge, host_env
from ironbench.targets.boundary.launch import (
    CONTAIN,
    FENCED,
    HOST_FILTER,
    HostLaunch,
    host_program,
    launch_host,
)
from ironbench.targets.boundary.protocol import (
    Answer,
    CheckOrder,
    Fact,
    FrameError,
    Frames,
    HostStarted,
    Ready,
    Setup,
    Warm,
    decode_message,
    receive,
    send,
)
from ironbench.targets.boundary.tamper import MARK_PREFIX

JUDGE_GRACE = 5.0  # past the check's timeout, a judge that has not answered is killed
WATCH_SECONDS = 0.2  # how often the host server is looked at while a check runs (stopped: replaced)
OUTPUT_KEPT = 64 * 1024  # characters of a judge's output sent back (head and tail)
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
# What HumanEval's checks import: imported once here, before any fork.
_WARM = ("math", "random", "copy", "re", "string", "hashlib", "itertools", "collections", "fractions", "decimal")


def _harden() -> None:
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def warm_pytest() -> None:
    """pytest and every plugin it loads by default, imported here before judges are forked."""
    import _pytest.config
    import pytest  # noqa: F401

    for name in (*_pytest.config.essential_plugins, *_pytest.config.default_plugins):
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:
            continue


def kept(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) <= OUTPUT_KEPT:
        return text
    half = OUTPUT_KEPT // 2
    return f"{text[:half]}\n...[{len(text) - 2 * half} characters dropped by ironbench]...\n{text[-half:]}"


def _child(judge_of: Callable[[Path, Path], Judge], folder: Path, private: Path, order_r: int, result_w: int) -> None:
    """In a forked child: prepare, say which host it has, wait for the check, judge it, answer,
    clean up, exit."""
    code = 0
    try:
        out = os.open(private / "output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.chdir(private)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        judge = judge_of(folder, private)
        judge.prepare()
        assert judge.session is not None
        send(result_w, HostStarted(judge.session.process.pid))
        order = receive(order_r)
        if not isinstance(order, CheckOrder):  # never given a check: its host goes, and it
            judge.stop_host()
        else:
            answer = judge.run(order)
            sys.stdout.flush()
            sys.stderr.flush()
            send(result_w, replace(answer, output=kept(private / "output.txt")))
    except BaseException:  # noqa: BLE001 (the judge's own failure: the zygote reports it)
        traceback.print_exc()
        sys.stderr.flush()
        code = 1
    finally:
        if code == 0:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)
        os._exit(code)


@dataclass
class Waiting:
    """A judge forked ahead of its check."""

    pid: int
    setup: Setup
    folder: Path
    private: Path
    order_w: int
    result_r: int
    host: int = 0  # its host's pid, once it says


@dataclass
class HostServer:
    """The process that forks the hosts (started through the launch seam: a fence wraps it)."""

    process: "subprocess.Popen[bytes]"
    control: socket.socket
    mark: str
    program: Path
    folders: Path  # where its hosts' folders are made: its own, shared with no other server's hosts
    pid: int = 0  # the server's own process, once known (inside bubblewrap: its monitor's child)

    def serving(self) -> int:
        """The server's own pid (0: not known yet): the process started, or, when that is
        bubblewrap's monitor, the one child it starts; and when that is its namespace's first
        process (host.py's bare init), the one child it forks, the server."""
        if not self.pid:
            pid = self.process.pid
            try:
                with open(f"/proc/{pid}/comm", "rb") as handle:
                    wrapped = handle.read().strip() == b"bwrap"
            except OSError:
                return 0
            if wrapped:
                found = procs.children(pid)
                pid = found[0] if len(found) == 1 else 0
            if pid and procs.first_in_namespace(pid):
                found = procs.children(pid)
                pid = found[0] if len(found) == 1 else 0
            self.pid = pid
        return self.pid

    def stopped(self) -> bool:
        """Whether the server is stopped: it forks no host and kills nothing until continued."""
        pid = self.serving()
        return bool(pid) and procs.stopped(pid)


class Zygote:
    def __init__(self, channels: tuple[int, int]) -> None:
        self.channels = channels
        self.root = tempfile.mkdtemp()  # named like any temporary folder: nothing says "checks here"
        self.waiting: Waiting | None = None
        self.server: HostServer | None = None
        self.setup: Setup | None = None
        self.done: tuple[Waiting, int | None] | None = None  # the judge that answered last, its status if reaped
        self.server_lost = ""  # how the host server ended during the last check, if it did
        self.ending: list[Waiting] = []  # judges that answered and are ending on their own
        self.killed: set[int] = set()  # leftovers killed, to be reaped
        self.pytest = False

    # -- the host server ------------------------------------------------------------------------

    def start_server(self, setup: Setup) -> HostServer:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # its program stays out of the hosts' folders: a brick can never rewrite the next server
        # beside the hosts' folders (the server reads it; no host writes there), never in the
        # judges' folder, which the fence hides again inside whatever a run lets be read
        program = Path(tempfile.mkdtemp(prefix="ironbench-host-", dir=setup.root or self.root))
        for name, code in host_program().items():
            (program / name).write_bytes(code)
        mark = f"{MARK_PREFIX}{uuid.uuid4().hex}"
        # a folder of its own for its hosts' folders: a brick of another zygote's check (run at the
        # same time) cannot list, open or plant in this one's (a decoy opened by another brick
        # would be evidence against the wrong one)
        folders = Path(tempfile.mkdtemp(prefix="ironbench-hosts-", dir=setup.root))
        contain: tuple[str, ...] = ()
        if setup.launcher.startswith(FENCED):  # each host fenced in its own folder as well
            from ironbench.sandbox import host_filter

            (program / HOST_FILTER).write_bytes(host_filter())
            contain = (CONTAIN,)
        serve = ("--serve", str(theirs.fileno()), mark, *contain)
        launch = HostLaunch(
            argv=(setup.python, "-s", "-S", "-P", str(program / "host.pyc"), *serve),
            cwd=str(program),
            env=host_env(str(program)),
            pass_fds=(theirs.fileno(),),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            reads=(str(program), *setup.paths),
            writes=(str(folders),),
        )
        try:
            process = launch_host(launch, setup.launcher)
        finally:
            theirs.close()
        return HostServer(process, mine, mark, program, folders)

    def stop_server(self) -> None:
        server, self.server = self.server, None
        if server is None:
            return
        if server.stopped():  # it would never read its control's end: at once, with its hosts
            procs.kill_tree(server.process.pid)
        server.control.close()  # it kills its hosts and ends
        try:
            server.process.wait(5)
        except subprocess.TimeoutExpired:
            procs.kill_tree(server.process.pid)
            server.process.wait()
        shutil.rmtree(server.program, ignore_errors=True)
        shutil.rmtree(server.folders, ignore_errors=True)

    def ensure(self, setup: Setup) -> HostServer:
        """A host server for `setup` (a new one when the setup changed, or the last one ended or
        is stopped)."""
        server = self.server
        alive = server is not None and server.process.poll() is None and not server.stopped()
        if server is None or not alive or self.setup != setup:
            if server is not None and not alive:  # the judge waiting for a host from it ends at once
                procs.kill_tree(server.process.pid)
            if self.waiting is not None:
                judge, self.waiting = self.waiting, None
                self.discard(judge)
            self.stop_server()
            self.server = self.start_server(setup)
            self.setup = setup
        assert self.server is not None
        return self.server

    # -- judges ---------------------------------------------------------------------------------

    def fork(self, setup: Setup, running: Waiting | None = None) -> Waiting:
        server = self.ensure(setup)
        folder = Path(tempfile.mkdtemp(prefix="ironbench-check-", dir=server.folders))
        private = Path(tempfile.mkdtemp(dir=self.root))
        order_r, order_w = os.pipe()
        result_r, result_w = os.pipe()
        mine = [*self.channels, *(w.result_r for w in (self.waiting, running) if w is not None)]
        mine += [self.waiting.order_w] if self.waiting is not None else []
        pid = os.fork()
        if pid == 0:  # the child never returns here
            try:
                for fd in (order_w, result_r, *mine):
                    with contextlib.suppress(OSError):
                        os.close(fd)
            finally:
                _child(
                    lambda folder, private: Judge(setup, server.control, server.mark, folder, private),
                    folder,
                    private,
                    order_r,
                    result_w,
                )
        os.close(order_r)
        os.close(result_w)
        return Waiting(pid, setup, folder, private, order_w, result_r)

    def discard(self, waiting: Waiting) -> None:
        os.close(waiting.order_w)  # it reads the end of its orders, stops its host and exits
        os.close(waiting.result_r)
        os.waitpid(waiting.pid, 0)

    def warm(self, setup: Setup) -> None:
        """Before any check: the host server and the first judge started."""
        self.ensure(setup)
        if self.waiting is None:
            self.waiting = self.fork(setup)

    def check(self, order: CheckOrder) -> Answer:
        setup = order.setup
        if order.kind == "pytest" and not self.pytest:
            warm_pytest()  # judges forked from now on have it
            self.pytest = True
        self.ensure(setup)
        judge, self.waiting = self.waiting, None
        if judge is None or judge.setup != setup:
            if judge is not None:
                self.discard(judge)
            judge = self.fork(setup)
        started = time.monotonic()
        try:
            send(judge.order_w, order)
        except OSError:  # it died waiting: a fresh one
            self.discard(judge)
            judge = self.fork(setup)
            send(judge.order_w, order)
        os.close(judge.order_w)
        self.waiting = self.fork(setup, judge)  # the next check's judge starts its host meanwhile
        answer = self.wait(judge, started + float(order.timeout) + JUDGE_GRACE, order.timeout)
        if not self.server_lost and self.server is not None and self.server.stopped():
            self.server_lost = self._lose(self.server)  # stopped as the check ended
        if answer.duration_ms is None:
            answer = replace(answer, duration_ms=int((time.monotonic() - started) * 1000))
        if self.server_lost:
            line = f"the brick's parent (the process that forked it) was {self.server_lost} while the brick ran"
            answer = answer.adding(Fact("tampered", line, "zygote"))
        return answer

    def wait(self, judge: Waiting, deadline: float, timeout: float) -> Answer:
        """The judge's answer (or what its end says), watching the host server meanwhile."""
        frames = Frames()
        timed_out = False
        answer: Answer | None = None
        server = self.server
        watched: list = [judge.result_r, *([server.control] if server is not None else [])]
        self.server_lost = ""
        while answer is None:
            try:
                while (payload := frames.next()) is not None:
                    message = decode_message(payload)
                    if isinstance(message, HostStarted):
                        judge.host = message.pid
                    elif isinstance(message, Answer):
                        answer = message
                        break
            except FrameError:
                break  # (the judge's own channel: no brick holds it) its end is read below
            if answer is not None:
                break
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                os.kill(judge.pid, signal.SIGKILL)
                break
            ready, _, _ = select.select(watched, [], [], min(left, WATCH_SECONDS))
            if server is not None and server.control in watched:
                if server.control in ready:
                    watched.remove(server.control)
                    self.server_lost = self._server_end(server)
                elif server.stopped():
                    watched.remove(server.control)
                    self.server_lost = self._lose(server)
            if judge.result_r in ready:
                chunk = os.read(judge.result_r, 1 << 16)
                if not chunk:
                    break
                frames.feed(chunk)
        os.close(judge.result_r)
        if answer is not None:
            self.done = (judge, None)
            return answer
        _, status = os.waitpid(judge.pid, 0)
        output = kept(judge.private / "output.txt")
        self.done = (judge, status)
        if timed_out:
            return Answer((Fact("timeout", f"killed after {timeout:g} s", "zygote"),), output=output)
        if os.WIFSIGNALED(status):
            name = signal.Signals(os.WTERMSIG(status)).name
            line = f"the check's own process was killed by {name} while the brick ran"
            return Answer((Fact("tampered", line, "zygote"),), output=output)
        last = output.strip().splitlines()[-1:] or [""]
        return Answer((Fact("harness_fault", f"the check's process failed: {last[0]}", "zygote"),), output=output)

    @staticmethod
    def _lose(server: HostServer) -> str:
        """A stopped server killed now, with its hosts (the check's own among them): the judges
        waiting on it learn at once, and the next check gets a fresh one."""
        procs.kill_tree(server.process.pid)
        return "stopped"

    @staticmethod
    def _server_end(server: HostServer) -> str:
        """How the host server ended (its control socket closed: it has, or is about to)."""
        try:
            status = server.process.wait(2)
        except subprocess.TimeoutExpired:
            return "closed"
        return f"killed by {signal.Signals(-status).name}" if status < 0 else f"ended (status {status})"

    def after(self) -> None:
        """After the answer went out, without waiting on anything: the judges that have ended
        reaped, the host of a judge that was killed killed, any other child of this process (a
        brick's leftover come back to the subreaper) killed; a host server that ended replaced."""
        assert self.done is not None
        judge, status = self.done
        if status is None:
            self.ending.append(judge)  # it removes its own folders as it ends
        else:
            if judge.host:  # killed before it stopped its host
                with contextlib.suppress(OSError):
                    os.killpg(judge.host, signal.SIGKILL)
            shutil.rmtree(judge.folder, ignore_errors=True)
            shutil.rmtree(judge.private, ignore_errors=True)
        if self.server_lost:
            if self.waiting is not None:
                waiting, self.waiting = self.waiting, None
                self.discard(waiting)
            self.stop_server()
        self.reap()
        known = {j.pid for j in self.ending} | self.killed
        known |= {self.waiting.pid} if self.waiting else set()
        known |= {self.server.process.pid} if self.server else set()
        self.killed |= set(procs.kill_children(known))

    def reap(self) -> None:
        """The judges that have ended and the leftovers killed, reaped (never the host server:
        its Popen reaps it)."""
        for pid in [*(j.pid for j in self.ending), *self.killed]:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.ending = [j for j in self.ending if j.pid != pid]
                self.killed.discard(pid)

    def close(self) -> None:
        if self.waiting is not None:
            waiting, self.waiting = self.waiting, None
            self.discard(waiting)
        self.stop_server()
        for judge in self.ending:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(judge.pid, 0)
        procs.sweep()
        shutil.rmtree(self.root, ignore_errors=True)


def main() -> None:
    channel_in, channel_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness's Ctrl-C is the harness's to handle
    _harden()
    for name in _WARM:
        importlib.import_module(name)
    zygote = Zygote((channel_in, channel_out))
    try:
        send(channel_out, Ready(os.getpid()))
        while (message := receive(channel_in)) is not None:
            if isinstance(message, Warm):
                zygote.warm(message.setup)
            elif isinstance(message, CheckOrder):
                send(channel_out, zygote.check(message))
                zygote.after()
    finally:
        zygote.close()


if __name__ == "__main__":
    main()
