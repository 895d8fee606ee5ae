"""The fence's network namespaces: the client side of the run's netgate (netgate.py: the process
that makes a private network namespace per invocation with the run's endpoints listening in it),
empty namespaces made ahead in this process, and how a program is started inside one."""

import atexit
import ctypes
import fcntl
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ironbench.core.errors import SandboxError
from ironbench.sandbox import watch
from ironbench.sandbox.policy import Endpoint

NETGATE = Path(__file__).with_name("netgate.py")
HOSTNAME_BASE = "127.77.0."  # a hostname endpoint listens at its own loopback address inside
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCSIFADDR, IFF_UP = 0x8913, 0x8914, 0x8916, 0x1
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
        aliases += [server for server in watch.nameservers() if server not in aliases]
        config = {"userns": self.userns, "aliases": aliases, "endpoints": listening, "watch": watch.FILTER.hex()}
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

    def take(self) -> tuple[int, int, int | None]:
        """A fresh namespace: its id, this process's descriptor of it, and its watch (watch.py;
        None: none could be made there), the caller's to drain."""
        with self.lock:
            self.control.send(b'{"op": "take"}')
            message, fds, _flags, _address = socket.recv_fds(self.control, 4096, 2)
            if not message or not fds:
                raise SandboxError("the fence's network ended")
            given = int(json.loads(message)["id"])
            self.held[given] = fds[0]
            return given, fds[0], fds[1] if len(fds) > 1 else None

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
    alone and never undo: restrict itself), so that what it starts inherits it and the caller's
    thread stays as it was. Its exception is the caller's."""
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


def fresh_namespace(own: int) -> tuple[int, int | None]:
    """A new network namespace made by the calling thread, which is then back in `own` (a
    descriptor of its namespace): its loopback up with the machine's name servers on it, and
    its watch (watch.py; None: none can be made). OSError: no namespace can be made here."""
    if _libc.unshare(CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    seen: int | None = None
    try:
        net = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        loopback_up()
        try:
            for index, server in enumerate(watch.nameservers(), start=1):
                _alias(index, server)
            seen = watch.open_watch()
        except OSError:
            pass  # no watch: what the program tries is known from its output only
    finally:
        _setns(own)
    return net, seen


def made_here() -> tuple[int, int | None]:
    """`fresh_namespace` made now, on the calling thread (OSError: none can be made here)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        return fresh_namespace(own)
    finally:
        os.close(own)


class Namespaces:
    """Empty network namespaces (`fresh_namespace`), made ahead on a thread of this process, so
    that a program's start takes one ready instead of making it (root only: no user namespace
    is needed to make one). The thread makes the next while the last one taken is in use."""

    def __init__(self, ahead: int = 2) -> None:
        self.ahead = ahead
        self.ready: list[tuple[int, int | None]] = []
        self.failed: OSError | None = None
        self.closed = False
        self.condition = threading.Condition()
        self.thread = threading.Thread(target=self._make, name="ironbench-netns", daemon=True)
        self.thread.start()

    def take(self) -> tuple[int, int | None]:
        """A fresh namespace's descriptor and its watch's, the caller's to close (OSError: none
        can be made)."""
        with self.condition:
            while not self.ready and self.failed is None:
                self.condition.wait()
            if not self.ready:
                raise OSError(self.failed.errno if self.failed else 0, f"no network namespace: {self.failed}")
            net = self.ready.pop(0)
            self.condition.notify_all()
            return net

    def _make(self) -> None:
        own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            while True:
                with self.condition:
                    while len(self.ready) >= self.ahead and not self.closed:
                        self.condition.wait()
                    if self.closed:
                        return
                try:
                    made = fresh_namespace(own)
                except OSError as exc:
                    with self.condition:
                        self.failed = exc
                        self.condition.notify_all()
                    return
                with self.condition:
                    self.ready.append(made)
                    self.condition.notify_all()
        finally:
            os.close(own)

    def close(self) -> None:
        with self.condition:
            self.closed = True
            ready, self.ready = self.ready, []
            self.condition.notify_all()
        for net, seen in ready:
            os.close(net)
            if seen is not None:
                os.close(seen)


def loopback_up(name: bytes = b"lo") -> None:
    """The calling thread's network namespace with its loopback (or the alias `name`) up."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sh22x", name, 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(probe.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", name, flags | IFF_UP))


def _alias(index: int, address: str) -> None:
    """`address` (IPv4) on the calling thread's loopback, as lo:N (netgate.py does the same)."""
    name = f"lo:{index}".encode()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        sockaddr = struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton(address))
        fcntl.ioctl(probe.fileno(), SIOCSIFADDR, struct.pack("16s16s8x", name, sockaddr))
    loopback_up(name)


def _setns(net: int) -> None:
    if _libc.setns(net, CLONE_NEWNET) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"the fence's network namespace cannot be entered: {os.strerror(code)}")


def inside(net: int, start: Callable[[], T]) -> T:
    """`start()` with this thread in the network namespace `net` (a descriptor of it), then back
    in its own: what it starts stays inside (a thread's network namespace is its own; no other
    thread is moved)."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        _setns(net)
        try:
            return start()
        finally:
            _setns(own)  # an OSError here leaves the thread outside its own network: it is raised
    finally:
        os.close(own)
