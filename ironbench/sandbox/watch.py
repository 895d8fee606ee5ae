"""What the fence saw a program try that its plan refuses, recorded per program and bounded: the
connections its network refused and the names it looked up (a packet socket on the loopback of
the program's own network namespace, filtered in the kernel, read once the program has ended),
the connects partial's supervisor refused, and each allowed path missing when it started.

The packet socket costs the program nothing: the kernel copies to it only the few packets its
filter keeps (a TCP connection's first packet and a reset, a query to a name server), each cut
to the bytes read here, into a buffer of the kernel's own size; what does not fit is dropped,
never waited for. A refused connection is a first packet answered by a reset; a look-up is a
query sent to a name server of the machine, which the fence puts on the program's loopback
(`nameservers`) so that the query is seen there and fails at once.
"""

import ctypes
import ipaddress
import os
import queue
import socket
import struct
import threading
from dataclasses import dataclass

MAX_SEEN = 32  # a program's sightings kept (the first, each once)
MAX_PACKETS = 1024  # packets read of one program's watch
ETH_P_IP = 0x0800
_SO_ATTACH_FILTER = 26
_SKF_AD_PKTTYPE = 0xFFFFF000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE: the packet's direction
_PACKET_HOST = 0  # received (each loopback packet also passes once as sent)
_TCP, _UDP, _DNS = 6, 17, 53
_SYN, _RST, _ACK = 0x02, 0x04, 0x10
_KEEP_TCP, _KEEP_DNS = 64, 512  # bytes kept of a packet: headers, a query's question


@dataclass(frozen=True, slots=True)
class Seen:
    """One thing a program tried that its fence refused: `kind` endpoint (HOST:PORT), lookup (a
    host name), path (a unix socket's path), missing (an allowed path absent when it started);
    `by` what saw it (network, supervisor, fence)."""

    kind: str
    what: str
    by: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "what": self.what, "by": self.by}


class Sightings:
    """A program's sightings, each once, the first MAX_SEEN (threads of the fence add to it)."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], Seen] = {}
        self._lock = threading.Lock()

    def add(self, kind: str, what: str, by: str) -> None:
        with self._lock:
            if len(self._found) < MAX_SEEN:
                self._found.setdefault((kind, what), Seen(kind, what, by))

    def items(self) -> tuple[Seen, ...]:
        with self._lock:
            return tuple(self._found.values())


def _program() -> bytes:
    """The classic BPF program of the watch (a SOCK_DGRAM packet socket: offset 0 is the IPv4
    header): received TCP packets with SYN and no ACK, or with RST; received UDP to port 53."""
    ld_w_abs, ldb_abs, ldxb_msh, ldh_ind, ldb_ind = 0x20, 0x30, 0xB1, 0x48, 0x50
    jeq, jset, alu_and, ret = 0x15, 0x45, 0x54, 0x06
    program = [
        (ld_w_abs, 0, 0, _SKF_AD_PKTTYPE),  # 0
        (jeq, 0, 13, _PACKET_HOST),  # 1: not received -> drop (15)
        (ldb_abs, 0, 0, 9),  # 2: protocol
        (jeq, 5, 0, _TCP),  # 3: -> tcp (9)
        (jeq, 0, 10, _UDP),  # 4: -> drop (15)
        (ldxb_msh, 0, 0, 0),  # 5: X = the IP header's length
        (ldh_ind, 0, 0, 2),  # 6: destination port
        (jeq, 0, 7, _DNS),  # 7: -> drop (15)
        (ret, 0, 0, _KEEP_DNS),  # 8
        (ldxb_msh, 0, 0, 0),  # 9: tcp
        (ldb_ind, 0, 0, 13),  # 10: flags
        (jset, 2, 0, _RST),  # 11: -> keep (14)
        (alu_and, 0, 0, _SYN | _ACK),  # 12
        (jeq, 0, 1, _SYN),  # 13: -> drop (15)
        (ret, 0, 0, _KEEP_TCP),  # 14: keep
        (ret, 0, 0, 0),  # 15: drop
    ]
    return b"".join(struct.pack("HBBI", code, yes, no, k & 0xFFFFFFFF) for code, yes, no, k in program)


FILTER = _program()


def open_watch() -> int:
    """A packet socket on the loopback of the calling thread's network namespace, filtered to
    what `drain` reads, non-blocking: its descriptor (OSError: it cannot be made here)."""
    # made with no protocol, so that no packet hook exists until bind adds the one it needs: a
    # hook replaced (a socket made with ETH_P_IP, then bound) waits for the kernel's RCU grace
    # period, some 15 ms on each invocation's path
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM | socket.SOCK_NONBLOCK, 0)
    try:
        code = ctypes.create_string_buffer(FILTER, len(FILTER))
        program = struct.pack("HL", len(FILTER) // 8, ctypes.addressof(code))
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, program)
        sock.bind(("lo", ETH_P_IP))
        # what arrived before the filter was attached is read as well: none yet (nothing runs here)
        return sock.detach()
    except BaseException:
        sock.close()
        raise


def _close_each(fds: "queue.SimpleQueue[int]") -> None:
    while True:
        os.close(fds.get())


_closing: tuple[int, "queue.SimpleQueue[int]"] | None = None  # (the process it serves, its queue)
_closing_lock = threading.Lock()


def _close_later(fd: int) -> None:
    """Close a read watch on a thread of this process's own: closing a packet socket waits for
    the kernel's RCU grace period (some 12 ms), which no invocation should wait for."""
    global _closing
    with _closing_lock:
        if _closing is None or _closing[0] != os.getpid():  # (a forked process starts its own)
            fds: queue.SimpleQueue[int] = queue.SimpleQueue()
            threading.Thread(target=_close_each, args=(fds,), name="ironbench-watch-closer", daemon=True).start()
            _closing = (os.getpid(), fds)
        _closing[1].put(fd)


def drain(fd: int, seen: Sightings, by: str = "network") -> None:
    """Read a program's watch (it has ended) into `seen`, and close it: each connection refused
    (HOST:PORT), each name looked up."""
    syns: dict[tuple[bytes, int, bytes, int], int] = {}
    resets: list[tuple[bytes, int, bytes, int, int]] = []
    names: list[str] = []
    try:
        for _ in range(MAX_PACKETS):
            try:
                packet = os.read(fd, _KEEP_DNS)
            except BlockingIOError:
                break
            except OSError:
                break
            _parse(packet, syns, resets, names)
    finally:
        _close_later(fd)
    for source, sport, destination, dport, ack in resets:
        first = syns.get((destination, dport, source, sport))
        if first is not None and ack == (first + 1) & 0xFFFFFFFF:
            seen.add("endpoint", f"{socket.inet_ntoa(source)}:{sport}", by)
    for name in names:
        seen.add("lookup", name, by)


def _parse(
    packet: bytes,
    syns: dict[tuple[bytes, int, bytes, int], int],
    resets: list[tuple[bytes, int, bytes, int, int]],
    names: list[str],
) -> None:
    if len(packet) < 20 or packet[0] >> 4 != 4:
        return
    header = (packet[0] & 0x0F) * 4
    source, destination = packet[12:16], packet[16:20]
    if packet[9] == _TCP and len(packet) >= header + 14:
        sport, dport, seq, ack = struct.unpack_from("!HHII", packet, header)
        flags = packet[header + 13]
        if flags & _RST and flags & _ACK:
            resets.append((source, sport, destination, dport, ack))
        elif flags & _SYN and not flags & _ACK:
            syns.setdefault((source, sport, destination, dport), seq)
    elif packet[9] == _UDP:
        name = question(packet[header + 8 :])
        if name is not None and name not in names:
            names.append(name)


def question(message: bytes) -> str | None:
    """The name a DNS query asks for (None: no query, a reverse look-up, a name not read)."""
    if len(message) < 13 or message[2] & 0x80 or struct.unpack_from("!H", message, 4)[0] < 1:
        return None
    labels, at = [], 12
    while at < len(message):
        size = message[at]
        if size == 0:
            break
        if size > 63 or at + 1 + size > len(message):
            return None  # compressed or cut: not a question read here
        labels.append(message[at + 1 : at + 1 + size])
        at += 1 + size
    else:
        return None
    try:
        name = b".".join(labels).decode("ascii").lower()
    except UnicodeDecodeError:
        return None
    if not name or name.endswith((".in-addr.arpa", ".ip6.arpa")) or not all(c.isalnum() or c in "-._" for c in name):
        return None
    return name


def nameservers(path: str = "/etc/resolv.conf") -> tuple[str, ...]:
    """The machine's IPv4 name servers that are not on the loopback: put on the loopback of a
    program's network namespace, its queries to them are seen there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(65536).splitlines()
    except OSError:
        return ()
    found: list[str] = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "nameserver":
            try:
                address = ipaddress.ip_address(parts[1])
            except ValueError:
                continue
            if address.version == 4 and not address.is_loopback and str(address) not in found:
                found.append(str(address))
    return tuple(found[:3])
