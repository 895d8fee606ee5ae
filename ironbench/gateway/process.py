"""The gateway as a process of its own: its main (`python -m ironbench.gateway`),
the coordinator's handle on it (started, checked, stopped by its PID), and the link an
invocation reaches it by, wherever the invocation runs.

The process reads its configuration from the first line of its stdin and keeps reading:
stdin is a pipe only its coordinator holds, so when the coordinator ends in any way (a
crash, SIGKILL included) the pipe closes and the gateway exits at once, its port with it.
A model that crashes its process (a native library's fault) takes down the gateway, never
the coordinator, which sees the invocation's calls lost and starts another gateway.
"""

import atexit
import http.client
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, Any, Self

from ironbench.core.errors import IronbenchError
from ironbench.core.waits import WAKE_SECONDS

START_SECONDS = 60.0  # to bind its port, and then to check the served models (importing llm)
STOP_SECONDS = 2.0
CALL_SECONDS = 30.0  # an open or close of an invocation (a close waits for nothing)
DUMMY_API_KEY = "ironbench-gateway"  # what OpenAI clients need to send; the gateway asks for none
WORKER_GATEWAY_ENV = "IRONBENCH_WORKER_GATEWAY"  # on a Dask worker: auto | coordinator | own
WORKER_GATEWAY_CHOICES = ("auto", "coordinator", "own")


class GatewayError(IronbenchError):
    """The model gateway could not start, or stopped answering its coordinator."""

    exit_code = 1


# -- the process -----------------------------------------------------------------------------


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _watch_parent() -> None:
    """Exit the moment the coordinator's end of stdin closes: it stopped, or it died."""
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        os._exit(0)


def main() -> None:
    from ironbench.core.redact import Redactor
    from ironbench.gateway.backends import Serving
    from ironbench.gateway.server import Gateway, GatewayServer

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # its coordinator stops it, by its PID
    config = json.loads(sys.stdin.buffer.readline())
    serving = Serving.from_dict(config["serving"]) if config.get("serving") else None
    redactor = Redactor.from_environ(config.get("redact") or [])
    gateway = Gateway(config["secret"], serving, redactor or None)
    server = GatewayServer(gateway)
    threading.Thread(target=_watch_parent, name="parent-watch", daemon=True).start()
    _say({"port": server.server_address[1], "pid": os.getpid()})
    if gateway.backend is not None:
        backend = gateway.backend

        def check() -> None:
            try:
                backend.check()
            except Exception as exc:  # an unknown id, a plugin that cannot load: one line (the log has it all)
                _say({"error": str(exc) or type(exc).__name__})
                raise
            else:
                _say({"checked": True})

        threading.Thread(target=check, name="check", daemon=True).start()
    else:
        _say({"checked": True})
    server.serve_forever(poll_interval=3600)  # shutdown never comes: the process ends with its pipe


# -- the coordinator's handle ------------------------------------------------------------------


@dataclass(frozen=True)
class GatewayConfig:
    """What a gateway serves: an llm model (`serving`, as Serving.to_dict) or, replaying,
    only recorded calls (None); and the names whose values it redacts from what it records."""

    serving: dict[str, Any] | None
    redact: tuple[str, ...] = ()

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


class GatewayProcess:
    """One gateway process: started, checked, restarted when it died, stopped by its PID."""

    def __init__(self, config: GatewayConfig, log_path: Path | None = None) -> None:
        self.config = config
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.secret = ""
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._checked = False
        self._lock = threading.Lock()

    def start(self) -> "GatewayProcess":
        """Spawn it and wait for its port (checking the models goes on: see `ready`)."""
        from ironbench.gateway.server import new_secret
        from ironbench.targets import containment

        self.secret = new_secret()
        log: IO[bytes] | int = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = open(self.log_path, "ab")  # noqa: SIM115 (the child holds it; closed below)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ironbench.gateway"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                start_new_session=True,  # a terminal's Ctrl-C is the coordinator's to handle
            )
        finally:
            if not isinstance(log, int):
                log.close()
        containment.spare(self.process.pid)  # never swept as a target's leftover
        assert self.process.stdin is not None and self.process.stdout is not None  # both are PIPEs
        self.process.stdin.write(json.dumps({**asdict(self.config), "secret": self.secret}).encode() + b"\n")
        self.process.stdin.flush()
        self._lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stdout, self._lines), daemon=True).start()
        first = self._next("bind its port")
        self.port = int(first["port"])
        self._checked = self.config.serving is None
        return self

    @staticmethod
    def _read(stream: IO[bytes], lines: "queue.Queue[dict[str, Any] | None]") -> None:
        for raw in stream:
            try:
                lines.put(json.loads(raw))
            except ValueError:
                continue
        lines.put(None)

    def _next(self, what: str) -> dict[str, Any]:
        line = None
        deadline = time.monotonic() + START_SECONDS
        while (left := deadline - time.monotonic()) > 0:
            try:  # woken every fraction of a second: a Ctrl-C meanwhile is not held (core/waits.py)
                line = self._lines.get(timeout=min(left, WAKE_SECONDS))
                break
            except queue.Empty:
                continue
        if line is None:
            self.stop()
            where = f"; see {self.log_path}" if self.log_path else ""
            raise GatewayError(f"the model gateway did not {what} within {START_SECONDS:g} s{where}")
        return line

    def ready(self) -> None:
        """Wait until every served model id is known (ModelError, exit 2, when one is not)."""
        from ironbench.llms import ModelError

        while not self._checked:
            line = self._next("check the served models")
            if "error" in line:
                self.stop()
                raise ModelError(f"--serve-model: {line['error']}")
            self._checked = bool(line.get("checked"))

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def link(self, worker_gateway: str = "auto") -> "GatewayLink":
        return GatewayLink(
            f"http://127.0.0.1:{self.port}", self.secret, socket.gethostname(), self.config, worker_gateway
        )

    def restart_if_gone(self) -> bool:
        """Start it again if its process died (the calls it held are lost); whether it did."""
        with self._lock:
            if self.process is None or self.alive():
                return False
            self.stop()
            self.start()
            return True

    def stop(self) -> None:
        """Close its pipe (it exits by itself), then SIGTERM and, if need be, SIGKILL its PID."""
        from ironbench.targets import containment

        process, self.process = self.process, None
        if process is None:
            return
        for stream in (process.stdin, process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if process.poll() is not None:
                break
            try:
                process.send_signal(sig)
                process.wait(timeout=STOP_SECONDS)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        containment.spare(process.pid, False)
        if self.log_path is not None and self.log_path.is_file() and not self.log_path.stat().st_size:
            self.log_path.unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- how an invocation reaches a gateway ----------------------------------------------------------

_connections = threading.local()


@dataclass(frozen=True)
class GatewayLink:
    """A gateway's address, its control secret, the machine it runs on, and what it serves
    (so that a worker elsewhere can run its own). Picklable: it travels with Dask tasks."""

    url: str
    secret: str
    host: str
    config: GatewayConfig
    worker_gateway: str = "auto"

    def env(self, token: str) -> dict[str, str]:
        """What an invocation's environment gets: Ollama's and OpenAI's clients find the
        gateway there, at an address only this invocation is given."""
        base = f"{self.url}/i/{token}"
        return {
            "OLLAMA_HOST": base,
            "OPENAI_BASE_URL": f"{base}/v1",
            "OPENAI_API_BASE": f"{base}/v1",  # the older name some clients read
            "OPENAI_API_KEY": DUMMY_API_KEY,
        }

    def _request(self, method: str, path: str, body: dict | None = None) -> dict[str, Any]:
        host, _, port = self.url.removeprefix("http://").partition(":")
        pool: dict[str, http.client.HTTPConnection] = _connections.__dict__.setdefault("pool", {})
        data = json.dumps(body).encode() if body is not None else None
        headers = {"X-Ironbench-Secret": self.secret, "Content-Type": "application/json"}
        for attempt in (1, 2):  # a kept-alive connection the gateway closed: once more, afresh
            connection = pool.get(self.url)
            if connection is None:
                connection = pool[self.url] = http.client.HTTPConnection(host, int(port), timeout=CALL_SECONDS)
            try:
                connection.request(method, path, data, headers)
                response = connection.getresponse()
                payload = response.read()
            except (OSError, http.client.HTTPException) as exc:
                connection.close()
                pool.pop(self.url, None)
                if attempt == 2:
                    raise GatewayError(f"the model gateway at {self.url} is gone ({type(exc).__name__})") from None
                continue
            if response.status != 200:
                raise GatewayError(f"the model gateway at {self.url} answered {response.status}: {payload[:200]!r}")
            return json.loads(payload)
        raise AssertionError("unreachable")

    def open(self, token: str, replay: list[dict[str, Any]] | None = None) -> None:
        self._request("POST", "/_ironbench/open", {"token": token, "replay": replay})

    def close(self, token: str) -> list[dict[str, Any]]:
        return list(self._request("POST", "/_ironbench/close", {"token": token})["calls"])

    def reachable(self) -> bool:
        try:
            self._request("GET", "/_ironbench/ping")
        except GatewayError:
            return False
        return True


# -- on a Dask worker ---------------------------------------------------------------------------

_own: dict[str, GatewayProcess] = {}  # by the configuration they serve
_own_lock = threading.Lock()


def worker_link(link: GatewayLink) -> GatewayLink:
    """The gateway an invocation on a Dask worker uses: the coordinator's, when this machine
    reaches it (a worker on the coordinator's host: loopback), else one this worker process
    runs itself, serving the same models (started at its first invocation, kept while the
    worker lives). IRONBENCH_WORKER_GATEWAY (or the run's choice) says coordinator or own."""
    choice = os.environ.get(WORKER_GATEWAY_ENV) or link.worker_gateway
    if choice not in WORKER_GATEWAY_CHOICES:
        raise GatewayError(f"{WORKER_GATEWAY_ENV}={choice!r}: expected one of {', '.join(WORKER_GATEWAY_CHOICES)}")
    if choice == "coordinator" or (choice == "auto" and socket.gethostname() == link.host and link.reachable()):
        return link
    with _own_lock:
        key = link.config.to_json()
        gateway = _own.get(key)
        if gateway is None or not gateway.alive():
            if gateway is not None:
                gateway.stop()
            gateway = _own[key] = GatewayProcess(link.config).start()
            gateway.ready()
            if len(_own) == 1:
                atexit.register(_stop_own)
        return gateway.link(choice)


def _stop_own() -> None:
    for gateway in _own.values():
        gateway.stop()
