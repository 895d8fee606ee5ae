"""The model gateway: a per-run HTTP server on loopback that speaks Ollama's and OpenAI's
APIs, answers through any llm model (or an invocation's recorded calls), and records every
call against the invocation that made it."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.gateway.backends import REPLAY_MODEL, Serving
from ironbench.gateway.process import GatewayConfig, GatewayError, GatewayLink, GatewayProcess, worker_link

__all__ = ["REPLAY_MODEL", "GatewayConfig", "GatewayError", "GatewayLink", "GatewayProcess", "Serving", "worker_link"]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.gateway.backends import parse_serving as parse_serving
    from ironbench.gateway.server import new_token as new_token

_EXPORTS = {
    "new_token": "server",
    "parse_serving": "backends",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
