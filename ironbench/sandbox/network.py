"""The client side of the run's netgate (netgate.py): the process that makes a private network
namespace per invocation with the run's endpoints listening in it, and how a program is started
inside one."""

import atexit
import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ironbench.core.errors import SandboxError
from ironbench.sandbox.policy import Endpoint

NETGATE = Path(__file__).with_name("netgate.py")
HOSTNAME_BASE = "127.77.0."  # a hostname endpoint listens at its own loopback address inside
CLONE_NEWNET = 0x40000000
HELPERS: set[int] = set()  # the fence's own processes (netgates): never a target's leftovers
_libc = ctypes.CDLL(None, use_errno=True)
T = TypeVar("T")


class Network:
    """The run's netgate process, and the namespaces it hands out."""

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
        """The command that starts what follows it inside the namespace (it execs: no process of
        its own); none when this process may enter it on a thread of its own (`inside`)."""
        if self.user_fd is None:
            return []
        me = os.getpid()
        nsenter = shutil.which("nsenter") or "nsenter"
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


def on_thread(prepare: Callable[[], None], start: Callable[[], T]) -> T:
    """`start()` on a fresh thread that first ran `prepare()` (what a thread may do to itself
    alone: enter a network namespace, restrict itself), so that what it starts inherits it and
    the caller's thread stays as it was. Its exception is the caller's."""
    done: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            prepare()
            done.append(start())
        except BaseException as exc:  # noqa: BLE001 (carried to the caller's thread)
            failed.append(exc)

    thread = threading.Thread(target=run, name="ironbench-fence")
    thread.start()
    thread.join()
    if failed:
        raise failed[0]
    return done[0]


def enter_net(net: int) -> None:
    """This thread into the network namespace `net` (a descriptor of it)."""
    if _libc.setns(net, CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"the fence's network namespace cannot be entered: {os.strerror(code)}")
