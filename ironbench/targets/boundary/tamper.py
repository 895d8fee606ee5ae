"""Evidence of tampering the harness can gather without the brick's help (best effort).

- `planted`: what the saved brick's folder holds that pytest or Python would load on their
  own (conftest.py, a pytest plugin, a .pth file, sitecustomize.py / usercustomize.py).
- `Capture`: one stream of the host's output, head and tail kept, scanned for the harness's
  marker (a honeypot on the host's command line: a brick that prints it read its command line
  to imitate a verdict) and for the verdict line the old check driver printed.
- `Watch`: inotify on files only a brick looking for the check would open (decoys beside its
  folder, the check's own files while the check is not reading them).
"""

import ctypes
import os
import re
import struct
from collections import deque
from collections.abc import Iterable
from functools import cache

MARK_PREFIX = "IRONBENCH-CHECK-"
# The old driver's verdict line (`MARK verdict detail`): no honest brick prints one.
_VERDICT_LINE = re.compile(
    rb"IRONBENCH-CHECK-[0-9a-f]{32} (correct|wrong|no_entry_point|import_error|timeout|harness_fault|tampered)\b"
)
_IN_OPEN = 0x20
_IN_DONT_FOLLOW = 0x02000000  # a decoy swapped for a link watches nothing else
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")


def planted(names: Iterable[str]) -> list[str]:
    """Of the names beside a saved brick, those a test runner or the interpreter loads on its own."""
    return [
        name
        for name in sorted(names)
        if name in ("conftest.py", "sitecustomize.py", "usercustomize.py")
        or name.endswith(".pth")
        or (name.startswith("pytest_") and name.endswith(".py"))
    ]


class Capture:
    """The host's stdout or stderr: at most `cap` bytes kept (head and tail), every byte scanned."""

    def __init__(self, mark: str, cap: int) -> None:
        self.mark = mark.encode()
        self.cap = cap
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.dropped = 0
        self.carry = b""
        self.found: list[str] = []

    def write(self, chunk: bytes) -> None:
        window = self.carry + chunk
        if self.mark in window and "mark" not in self.found:
            self.found.append("mark")
        if _VERDICT_LINE.search(window) and "verdict" not in self.found:
            self.found.append("verdict")
        self.carry = window[-(len(self.mark) + 40) :]
        room = self.cap // 2 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail.append(chunk)
            self.tail_size += len(chunk)
            while self.tail_size - len(self.tail[0]) >= self.cap // 2:
                self.tail_size -= len(first := self.tail.popleft())
                self.dropped += len(first)

    def text(self) -> str:
        tail = b"".join(self.tail)
        if len(tail) > self.cap // 2:
            self.dropped += len(tail) - self.cap // 2
            tail = tail[-(self.cap // 2) :]
        middle = f"\n...[{self.dropped} bytes dropped by ironbench]...\n".encode() if self.dropped else b""
        return (bytes(self.head) + middle + tail).decode("utf-8", "replace")

    def evidence(self, stream: str) -> list[str]:
        said = {
            "mark": f"the brick's {stream} carries the check's verdict marker (it read the harness's command line)",
            "verdict": f"the brick's {stream} carries a verdict line in the form of the harness's own",
        }
        return [said[kind] for kind in self.found]


@cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


class Watch:
    """Which of some paths were opened since the last look (inotify; nothing where there is none)."""

    def __init__(self, paths: list[str]) -> None:
        self.fd = -1
        self.paths: dict[int, str] = {}
        libc = _libc()
        if libc is None or not paths:
            return
        try:
            fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except AttributeError:
            return
        if fd < 0:
            return
        self.fd = fd
        for path in paths:
            wd = libc.inotify_add_watch(fd, os.fsencode(path), _IN_OPEN | _IN_DONT_FOLLOW)
            if wd >= 0:
                self.paths[wd] = path

    def opened(self) -> list[str]:
        """The watched paths (or, for a folder, the names in it) opened since the last call."""
        found: list[str] = []
        while self.fd >= 0:
            try:
                data = os.read(self.fd, 65536)
            except (BlockingIOError, OSError):
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, _mask, _cookie, size = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size : offset + _EVENT.size + size].rstrip(b"\0").decode("utf-8", "replace")
                offset += _EVENT.size + size
                path = self.paths.get(wd)
                if path is not None:
                    where = os.path.join(path, name) if name else path
                    if where not in found:
                        found.append(where)
        return found

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
