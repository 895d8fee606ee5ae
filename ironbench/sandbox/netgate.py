"""The fence's network: a private network namespace per invocation, and the only ways out of it.

Run by the fence (never imported by a target), as its own process, standard library only:

    python -I -S netgate.py CONTROL_FD CONFIG_JSON

It forks a namespace maker (single-threaded: unprivileged, it first enters a user namespace
of its own, where it may make network namespaces). For each invocation the maker makes a
fresh network namespace, brings its loopback up, and listens inside it on every endpoint the
run allows (the model gateway's port on 127.0.0.1, a local server's port, a remote host's
port on a loopback address of its own), then hands the namespace and the listening sockets
to this process. This process keeps a few namespaces ready, gives one to the fence on
request (the fence starts the target inside it), accepts on its listeners and carries each
connection to the real endpoint on the host. Nothing else leaves the namespace: another
port, UDP, another invocation, the harness's own sockets are not there to be reached. A
namespace lives while its descriptors do; dropping an invocation closes them.

Each namespace also has its watch (watch.py: a packet socket on its loopback, with the filter
the fence sends in its config), made by the maker inside it and handed to the fence with the
namespace, which reads it once its program has ended: the connections refused there, the
names looked up (the machine's name servers are on its loopback, so a query is seen and fails
at once).

Control messages (SOCK_SEQPACKET, JSON): the fence sends {"op": "take"} and gets
{"id": N} with the namespace's descriptor and its watch's; {"op": "drop", "id": N} (no answer) closes it
and every connection made through it. At start this process sends {"ready": true, "userns": bool}
with the maker's user namespace descriptor when it has one. It ends when the fence's end
of the control socket closes, or when its parent dies.
"""

import ctypes
import fcntl
import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
SIOCSIFADDR = 0x8916
IFF_UP = 0x1
SO_ATTACH_FILTER = 26
ETH_P_IP = 0x0800
PREFETCH = 2
BUFFER = 65536
MAX_CONNECTIONS = 64  # open at once through one invocation's namespace: beyond, closed at once (2 threads and 2 descriptors each here)

_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _unshare(flags: int) -> None:
    if _libc.unshare(ctypes.c_int(flags)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare: {os.strerror(errno)}")


def _interface_up(name: bytes) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sh22x", name, 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(probe.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", name, flags | IFF_UP))


def _alias(index: int, address: str) -> None:
    """`address` (IPv4) on the loopback as an alias (lo:N): an endpoint named by a
    non-loopback address is reached at that same address inside the namespace."""
    name = f"lo:{index}".encode()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        sockaddr = struct.pack("HH4s8x", socket.AF_INET, 0, socket.inet_aton(address))
        fcntl.ioctl(probe.fileno(), SIOCSIFADDR, struct.pack("16s16s8x", name, sockaddr))
    _interface_up(name)


def _watch(program: bytes) -> int | None:
    """The namespace's watch: a packet socket on its loopback with the fence's filter (None:
    none can be made here)."""
    try:
        # no protocol until bind (watch.py's open_watch says why: a replaced hook waits ~15 ms)
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, 0)
    except OSError:
        return None
    try:
        code = ctypes.create_string_buffer(program, len(program))
        sock.setsockopt(
            socket.SOL_SOCKET, SO_ATTACH_FILTER, struct.pack("HL", len(program) // 8, ctypes.addressof(code))
        )
        sock.bind(("lo", ETH_P_IP))
    except OSError:
        sock.close()
        return None
    return sock.detach()


def _map_own_ids() -> None:
    uid, gid = os.getuid(), os.getgid()
    _unshare(CLONE_NEWUSER)
    for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1\n"), ("gid_map", f"{gid} {gid} 1\n")):
        fd = os.open(f"/proc/self/{path}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())  # os.write: a refused write raises here, not in a buffer's flush
        finally:
            os.close(fd)


def maker(channel: socket.socket, config: dict) -> None:
    """The namespace maker: one fresh network namespace, with its listeners, per request."""
    _die_with_parent()
    if config["userns"]:
        _map_own_ids()
        user = os.open("/proc/self/ns/user", os.O_RDONLY)
        socket.send_fds(channel, [b"user"], [user])
        os.close(user)
    else:
        channel.send(b"user")
    while True:
        request = channel.recv(16)
        if not request:
            return
        _unshare(CLONE_NEWNET)
        _interface_up(b"lo")
        for index, address in enumerate(config["aliases"], start=1):
            _alias(index, address)
        net = os.open("/proc/self/ns/net", os.O_RDONLY)
        seen = _watch(bytes.fromhex(config.get("watch", "")))
        listeners = []
        for endpoint in config["endpoints"]:
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(tuple(endpoint["listen"]))
            listener.listen(64)
            listeners.append(listener)
        watched = [] if seen is None else [seen]
        socket.send_fds(channel, [b"netw" if watched else b"net"], [net, *watched, *(s.fileno() for s in listeners)])
        os.close(net)
        for fd in watched:
            os.close(fd)
        for listener in listeners:
            listener.close()


class Gate:
    """This process's side: namespaces ready, handed out, and the connections through them."""

    def __init__(self, control: socket.socket, makers: socket.socket, config: dict) -> None:
        self.control = control
        self.makers = makers
        self.destinations = [tuple(endpoint["to"]) for endpoint in config["endpoints"]]
        self.count = len(self.destinations)
        self.ready: list[tuple[list[int], list[socket.socket]]] = []  # (the namespace and its watch, listeners)
        self.asked = 0
        self.given: dict[int, tuple[int, list[socket.socket]]] = {}
        self.connections: dict[int, set[socket.socket]] = {}
        self.open: dict[int, int] = {}  # connections accepted and not yet ended, per namespace
        self.lock = threading.Lock()
        self.next_id = 0
        self.selector = selectors.DefaultSelector()

    def refill(self) -> None:
        while len(self.ready) + self.asked < PREFETCH:
            self.makers.send(b"1")
            self.asked += 1

    def made(self) -> None:
        message, fds, _flags, _address = socket.recv_fds(self.makers, 16, 2 + self.count)
        own = 2 if message == b"netw" else 1
        if message not in (b"net", b"netw") or len(fds) != own + self.count:
            raise SystemExit(f"netgate: the namespace maker failed ({message!r})")
        self.asked -= 1
        self.ready.append((fds[:own], [socket.socket(fileno=fd) for fd in fds[own:]]))

    def take(self) -> None:
        while not self.ready:
            self.refill()
            self.made()
        (net, *watched), listeners = self.ready.pop(0)
        self.next_id += 1
        given = self.next_id
        self.given[given] = (net, listeners)
        with self.lock:
            self.connections[given] = set()
        for index, listener in enumerate(listeners):
            listener.setblocking(False)
            self.selector.register(listener, selectors.EVENT_READ, (given, index))
        socket.send_fds(self.control, [json.dumps({"id": given}).encode()], [net, *watched])
        for fd in watched:  # the fence's to read
            os.close(fd)
        self.refill()

    def drop(self, given: int) -> None:
        net, listeners = self.given.pop(given, (None, []))
        for listener in listeners:
            self.selector.unregister(listener)
            listener.close()
        if net is not None:
            os.close(net)
        with self.lock:
            connections = self.connections.pop(given, set())
            self.open.pop(given, None)
        for connection in connections:
            _close(connection)

    def accept(self, listener: socket.socket, given: int, index: int) -> None:
        try:
            inside, _ = listener.accept()
        except OSError:
            return
        with self.lock:
            if given not in self.connections or self.open.get(given, 0) >= MAX_CONNECTIONS:
                _close(inside)  # a target holds as many as it may: this one is refused
                return
            self.open[given] = self.open.get(given, 0) + 1
        inside.setblocking(True)
        threading.Thread(target=self.carrying, args=(inside, given, index), daemon=True).start()

    def carrying(self, inside: socket.socket, given: int, index: int) -> None:
        try:
            self.carry(inside, given, index)
        finally:
            with self.lock:
                if given in self.open:
                    self.open[given] -= 1

    def carry(self, inside: socket.socket, given: int, index: int) -> None:
        host, port = self.destinations[index]
        try:
            outside = socket.create_connection((host, port), timeout=30)
        except OSError:
            _close(inside)
            return
        outside.settimeout(None)
        for sock in (inside, outside):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.lock:
            held = self.connections.get(given)
            if held is None:  # dropped meanwhile
                _close(inside)
                _close(outside)
                return
            held.update((inside, outside))
        back = threading.Thread(target=_pump, args=(outside, inside), daemon=True)
        back.start()
        _pump(inside, outside)
        back.join()
        with self.lock:  # both ways ended: its descriptors go now, not when the invocation ends
            held = self.connections.get(given)
            if held is not None:
                held.difference_update((inside, outside))
        _close(inside)
        _close(outside)

    def serve(self) -> None:
        self.selector.register(self.control, selectors.EVENT_READ, "control")
        self.selector.register(self.makers, selectors.EVENT_READ, "maker")
        self.refill()
        while True:
            for key, _ in self.selector.select():
                if key.data == "control":
                    message = self.control.recv(4096)
                    if not message:
                        return
                    request = json.loads(message)
                    if request["op"] == "take":
                        self.take()
                    elif request["op"] == "drop":
                        self.drop(int(request["id"]))
                elif key.data == "maker":
                    self.made()
                else:
                    given, index = key.data
                    self.accept(key.fileobj, given, index)  # type: ignore[arg-type]


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            data = source.recv(BUFFER)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def main() -> None:
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the fence stops it, by closing its control socket
    control = socket.socket(fileno=int(sys.argv[1]))
    config = json.loads(sys.argv[2])
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()  # still single-threaded: safe
    if pid == 0:
        mine.close()
        control.close()
        try:
            maker(theirs, config)
        except OSError as exc:
            theirs.send(f"error {exc}".encode())
        os._exit(0)
    theirs.close()
    message, fds, _flags, _address = socket.recv_fds(mine, 4096, 1)
    if message != b"user":
        control.send(json.dumps({"error": message.decode(errors="replace")}).encode())
        return
    socket.send_fds(control, [json.dumps({"ready": True, "userns": bool(fds)}).encode()], fds)
    for fd in fds:
        os.close(fd)
    Gate(control, mine, config).serve()


if __name__ == "__main__":
    main()
