"""`ironbench view` as a user starts it: a real subprocess on loopback, its address read from
what it prints; plain HTTP requests to it (any Host, Origin or method a test needs), and its
server-sent events read as a browser would."""

import http.client
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from tests.conftest import REPO

ADDRESS = re.compile(r"ironbench view: (http://([^/\s]+)/(\?token=\S+)?)")


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


class Served:
    """One viewer process; `Served(store)` starts it and waits until it listens."""

    def __init__(
        self, store: Path, *args: str, port: int = 0, timeout: float = 60, env: dict[str, str] | None = None
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ironbench.cli.main", "view", "--store", str(store), "--port", str(port), *args],
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            # a shell running the tests in the background leaves SIGINT ignored; the viewer must not inherit that
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
        )
        deadline = time.monotonic() + timeout
        self.first_line = ""
        while True:
            line = self.process.stderr.readline()
            found = ADDRESS.search(line)
            if found:
                self.first_line = line
                self.url, self.netloc, token = found.group(1), found.group(2), found.group(3)
                self.token = token.removeprefix("?token=") if token else None
                break
            if not line or time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"the viewer did not start: {line}{self.process.stderr.read()}")
        self.port = int(self.netloc.rsplit(":", 1)[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def get(self, path: str, headers: dict | None = None, method: str = "GET") -> Answer:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
            for name, value in sent.items():
                conn.putheader(name, value)
            conn.endheaders()
            response = conn.getresponse()
            return Answer(
                response.status, {k.lower(): v for k, v in response.getheaders()}, response.read().decode("utf-8")
            )
        finally:
            conn.close()

    def events(
        self,
        path: str,
        count: int | None = None,
        last_event_id: int | None = None,
        until: str | None = None,
        timeout: float = 20,
    ) -> list[dict]:
        """A stream's server-sent events, parsed ({id, event, data}), up to the `count`th or the
        first of kind `until` (included), then disconnect. (The stream itself never ends.)"""
        import json

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Host": f"127.0.0.1:{self.port}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("content-type").startswith("text/event-stream")
        found: list[dict] = []
        current: dict = {}
        try:
            while count is None or len(found) < count:
                line = response.fp.readline().decode("utf-8").rstrip("\n")
                if line == "":
                    if "event" in current:
                        current["data"] = json.loads(current["data"])
                        found.append(current)
                        if current["event"] == until:
                            break
                    current = {}
                elif not line.startswith(":"):
                    name, _, value = line.partition(": ")
                    current[name] = int(value) if name == "id" else value
        finally:
            conn.close()
        return found

    def stop(self, timeout: float = 10) -> tuple[float, int, str]:
        """Ctrl-C: how long it took to exit, the exit code, and what it printed."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGINT)
        try:
            _, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
            raise AssertionError(f"the viewer did not stop within {timeout} s of Ctrl-C") from None
        return time.monotonic() - started, self.process.returncode, err

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
