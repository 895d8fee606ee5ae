"""Who may ask the viewer anything: the Host it serves (DNS rebinding), a same-origin page,
reads only, and, off loopback, a token; and the headers every answer carries (a strict
Content-Security-Policy: this origin's own style and script, nothing else, no framing).
"""

import hmac
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "ironbench_view"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_names(host: str, port: int) -> set[str]:
    """The `Host` values a browser sends to this server: its own address, and the names
    that lead to it. A wildcard bind answers on every address this machine has."""
    names = {host} if host not in ("0.0.0.0", "::") else set()
    if host in ("0.0.0.0", "::") or is_loopback(host):
        names |= {"localhost", "127.0.0.1", "::1"}
    if host in ("0.0.0.0", "::"):
        import psutil

        names |= {socket.gethostname(), socket.getfqdn()}
        for addresses in psutil.net_if_addrs().values():
            names |= {a.address.split("%")[0] for a in addresses if a.family in (socket.AF_INET, socket.AF_INET6)}
    return {_with_port(name, port) for name in names}


def _with_port(name: str, port: int) -> str:
    return f"[{name}]:{port}" if ":" in name and not name.startswith("[") else f"{name}:{port}"


def _page(status: int, text: str) -> tuple[int, bytes]:
    return status, f"ironbench view: {text}\n".encode()


@dataclass(frozen=True, slots=True)
class Asked:
    """What the guard reads of a request, once, from its ASGI scope: its method, path and query,
    and the headers that say who asks (a header given twice: its last value)."""

    method: str
    path: str
    query: tuple[tuple[str, str], ...]  # as given, in order (blank values left out)
    host: str  # lower case
    origin: str | None
    fetch_site: str | None  # Sec-Fetch-Site
    fetch_mode: str | None  # Sec-Fetch-Mode
    cookie: str

    @classmethod
    def of(cls, scope: Scope) -> "Asked":
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        return cls(
            scope["method"],
            scope["path"],
            tuple(parse_qsl(scope.get("query_string", b"").decode("latin-1"))),
            headers.get("host", "").lower(),
            headers.get("origin"),
            headers.get("sec-fetch-site"),
            headers.get("sec-fetch-mode"),
            headers.get("cookie", ""),
        )

    @property
    def token(self) -> str | None:
        """The token the address gives (its last, if it gives more than one)."""
        return next((value for name, value in reversed(self.query) if name == "token"), None)


class Guard:
    """ASGI middleware in front of every route."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], token: str | None) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = {f"http://{h}" for h in self.hosts}
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        asked = Asked.of(scope)
        refusal = self.refusal(asked)
        if refusal is not None:
            status, body = refusal
            await _answer(send, status, body, [(b"content-type", b"text/plain; charset=utf-8")])
            return
        if self.token is not None and asked.token is not None:
            # The token moves from the address into a cookie, and the address loses it
            # (it would otherwise stay in the history, and in every link copied from the page).
            rest = urlencode([(k, v) for k, v in asked.query if k != "token"])
            location = asked.path + (f"?{rest}" if rest else "")
            cookie = f"{COOKIE}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            await _answer(send, 303, b"", [(b"location", location.encode()), (b"set-cookie", cookie.encode())])
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = list(message.get("headers", []))
                names = {k.lower() for k, _ in given}
                extra = [h for h in HEADERS if h[0] not in names]
                if b"content-security-policy" not in names:
                    extra.append((b"content-security-policy", CSP.encode()))
                message = {**message, "headers": [*given, *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)

    def refusal(self, asked: Asked) -> tuple[int, bytes] | None:
        host = asked.host
        if host not in self.hosts:
            # A page elsewhere whose name was pointed at this machine (DNS rebinding) asks with its own name.
            return _page(421, f"refused: this server answers to {', '.join(sorted(self.hosts))}, not {host!r}")
        origin = asked.origin
        if origin is not None and origin.lower() not in self.origins:
            return _page(403, f"refused: requests from {origin!r} are not this viewer's own")
        if asked.fetch_site == "cross-site" and asked.fetch_mode != "navigate":
            return _page(403, "refused: a cross-site request")
        if asked.method not in ("GET", "HEAD"):
            return _page(405, "the viewer only reads: GET and HEAD")
        if self.token is not None:
            cookie = SimpleCookie(asked.cookie)
            given = asked.token or (cookie[COOKIE].value if COOKIE in cookie else "")
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return _page(401, "a token is needed: open the address `ironbench view` printed (it ends in ?token=…)")
        return None


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, *HEADERS, (b"content-security-policy", CSP.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
