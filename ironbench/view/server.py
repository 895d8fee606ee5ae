"""Serving the viewer: the socket (loopback unless told otherwise, then with a token), uvicorn,
and a Ctrl-C that stops at once (open streams end with it instead of holding the server)."""

import asyncio
import secrets
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from ironbench.core.errors import IronbenchError
from ironbench.view.guard import host_names, is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


@dataclass(frozen=True)
class Address:
    host: str
    port: int
    token: str | None

    @property
    def url(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        if self.host in ("0.0.0.0", "::"):
            shown = socket.gethostname()
        return f"http://{shown}:{self.port}/" + (f"?token={self.token}" if self.token else "")


def listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as exc:
        raise IronbenchError(
            f"view: cannot listen on {host}:{port}: {exc.strerror or exc} (pass another --port)"
        ) from None
    sock.set_inheritable(True)
    return sock


def serve(
    store_path: Path,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    ready: Callable[[Address], None] = lambda address: None,
) -> None:
    """Serve the store until Ctrl-C (or SIGTERM). Off loopback a token is required: the given
    one, or a new one, printed in the address."""
    from ironbench.view.app import Viewer, create_app, page_wait

    wait = page_wait()
    if not is_loopback(host) and token is None:
        token = secrets.token_urlsafe(18)
    viewer = Viewer(store_path)  # refuses a missing store, or one at another schema, before listening
    sock = listen(host, port)
    address = Address(host, sock.getsockname()[1], token)
    app = create_app(viewer, host_names(host, address.port), token, wait)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2)
    try:
        ViewServer(config, viewer.stopping, lambda: ready(address)).run(sockets=[sock])
    finally:
        sock.close()
        viewer.close()


class ViewServer(uvicorn.Server):
    """uvicorn's server, whose exit signal also ends every open event stream at once (uvicorn
    would otherwise wait for them, and a page's stream never ends by itself)."""

    def __init__(self, config: uvicorn.Config, stopping: asyncio.Event, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.stopping, self.ready = stopping, ready
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self.ready()

    def handle_exit(self, sig: int, frame: object) -> None:
        if self.loop is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        super().handle_exit(sig, frame)  # type: ignore[arg-type]
