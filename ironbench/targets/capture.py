"""Output capture: a target's stream, redacted, to a capped file plus a head+tail text in memory.

Whatever a target prints, the harness holds at most HEAD + TAIL bytes (plus one pipe
read) per stream, and the file on disk at most FILE_CAP bytes plus a marker line.
"""

from collections import deque
from pathlib import Path

from ironbench.core.redact import Redactor

FILE_CAP = 64 * 1024 * 1024
FILE_TAIL = 1024 * 1024  # the end of a truncated file: where tracebacks are
TEXT_HEAD = 1024 * 1024
TEXT_TAIL = 1024 * 1024


def dropped_marker(dropped: int) -> bytes:
    return f"\n...[{dropped} bytes dropped by ironbench]...\n".encode()


class _Tail:
    """The last `size` bytes seen, kept as chunks so trimming never copies the whole tail."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.chunks: deque[bytes] = deque()
        self.length = 0

    def add(self, chunk: bytes) -> None:
        self.chunks.append(chunk)
        self.length += len(chunk)
        while self.chunks and self.length - len(self.chunks[0]) >= self.size:
            self.length -= len(self.chunks.popleft())

    def last(self, size: int) -> bytes:
        data = b"".join(self.chunks)
        return data[-size:] if size else b""


class OutputCapture:
    """One stream of one invocation. Call write() per chunk, then finish() once."""

    def __init__(
        self,
        path: Path,
        redactor: Redactor | None = None,
        file_cap: int = FILE_CAP,
        file_tail: int = FILE_TAIL,
        text_head: int = TEXT_HEAD,
        text_tail: int = TEXT_TAIL,
    ) -> None:
        self.path = path
        self.redactor = redactor.stream() if redactor else None
        self.file = open(path, "wb")  # noqa: SIM115 (lives as long as the capture; close() closes it)
        self.file_head = file_cap - file_tail
        self.file_tail = file_tail
        self.text_head = text_head
        self.text_tail = text_tail
        self.head = bytearray()
        self.tail = _Tail(max(file_tail, text_tail))
        self.total = 0
        self.written = 0

    def write(self, chunk: bytes) -> None:
        if self.redactor is not None:
            chunk = self.redactor.feed(chunk)
        self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        if not chunk:
            return
        self.total += len(chunk)
        if len(self.head) < self.text_head:
            self.head += chunk[: self.text_head - len(self.head)]
        if self.written < self.file_head:
            part = chunk[: self.file_head - self.written]
            self.file.write(part)
            self.written += len(part)
        self.tail.add(chunk)

    def finish(self) -> str:
        """Close the file (appending marker and tail when it was cut); returns the head+tail text."""
        if self.redactor is not None:
            self._take(self.redactor.finish())
        if self.total > self.written:
            beyond = self.total - self.written
            kept = min(beyond, self.file_tail)
            if beyond > kept:
                self.file.write(dropped_marker(beyond - kept))
            self.file.write(self.tail.last(kept))
        self.file.close()
        return self.text()

    @property
    def truncated(self) -> bool:
        return self.total > self.text_head + self.text_tail

    def text(self) -> str:
        if not self.truncated:
            rest = self.tail.last(self.total - len(self.head))
            return (bytes(self.head) + rest).decode("utf-8", "replace")
        dropped = self.total - self.text_head - self.text_tail
        data = bytes(self.head) + dropped_marker(dropped) + self.tail.last(self.text_tail)
        return data.decode("utf-8", "replace")
