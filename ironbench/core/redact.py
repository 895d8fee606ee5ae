"""Secret redaction: values of secret-looking environment variables never reach the store.

Targets inherit the environment (they need their API keys), so a target that prints
its environment would otherwise put those keys into every event, file and log.
"""

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
# Shorter values of secret-looking names ("1", "yes", "en_US") are too common to
# replace everywhere without garbling output; a name passed with --redact is
# redacted whatever its length.
MIN_SECRET_LENGTH = 8


def secret_values(environ: Mapping[str, str], names: Iterable[str] = ()) -> dict[str, str]:
    """value -> the variable it came from, for every variable whose value must not be stored."""
    explicit = set(names)
    found: dict[str, str] = {}
    for name in sorted(environ):
        value = environ[name]
        if name in explicit and value or SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH:
            found.setdefault(value, name)
    return found


class Redactor:
    """Replaces every occurrence of a secret value with `[REDACTED:NAME]`."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.names = dict(secrets)
        # Longest first, so a secret containing another is replaced whole.
        ordered = sorted(self.names, key=len, reverse=True)
        self._text = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self._bytes_names = {value.encode("utf-8"): name for value, name in self.names.items()}
        self._bytes = re.compile(b"|".join(re.escape(v.encode("utf-8")) for v in ordered)) if ordered else None
        self.longest = max((len(v) for v in self._bytes_names), default=0)

    @classmethod
    def from_environ(cls, names: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> "Redactor":
        return cls(secret_values(os.environ if environ is None else environ, names))

    def __bool__(self) -> bool:
        return self._text is not None

    def text(self, value: str) -> str:
        if self._text is None or not value:
            return value
        return self._text.sub(lambda m: f"[REDACTED:{self.names[m.group(0)]}]", value)

    def value(self, data: Any) -> Any:
        """Every string inside a JSON-like value (dict keys included) redacted."""
        if self._text is None:
            return data
        if isinstance(data, str):
            return self.text(data)
        if isinstance(data, dict):
            return {self.value(k): self.value(v) for k, v in data.items()}
        if isinstance(data, (list, tuple)):
            return [self.value(v) for v in data]
        return data

    def _replace_bytes(self, match: re.Match) -> bytes:
        return f"[REDACTED:{self._bytes_names[match.group(0)]}]".encode()

    def stream(self) -> "StreamRedactor":
        return StreamRedactor(self)


class StreamRedactor:
    """Redacts a byte stream that arrives in chunks: a secret split across two chunks
    is still found, because the last len(longest secret) - 1 bytes are held back
    until the next chunk (or the end) shows whether they start a secret."""

    def __init__(self, redactor: Redactor) -> None:
        self.pattern = redactor._bytes
        self.replace = redactor._replace_bytes
        self.hold = max(redactor.longest - 1, 0)
        self.carry = b""

    def feed(self, chunk: bytes) -> bytes:
        if self.pattern is None:
            return chunk
        buffer = self.carry + chunk
        safe_end = len(buffer) - self.hold  # a match starting before this lies wholly in buffer
        out: list[bytes] = []
        position = 0
        for match in self.pattern.finditer(buffer):
            if match.start() >= safe_end:
                break
            out.append(buffer[position : match.start()])
            out.append(self.replace(match))
            position = match.end()
        cut = max(position, safe_end)
        out.append(buffer[position:cut])
        self.carry = buffer[cut:]
        return b"".join(out)

    def finish(self) -> bytes:
        rest, self.carry = self.carry, b""
        if self.pattern is None or not rest:
            return rest
        return self.pattern.sub(self.replace, rest)
