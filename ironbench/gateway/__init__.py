"""The model gateway: a per-run HTTP server on loopback that speaks Ollama's and OpenAI's
APIs, answers through any llm model (or an invocation's recorded calls), and records every
call against the invocation that made it."""

from ironbench.gateway.backends import Serving
from ironbench.gateway.process import GatewayConfig, GatewayError, GatewayLink, GatewayProcess, worker_link

__all__ = ["GatewayConfig", "GatewayError", "GatewayLink", "GatewayProcess", "Serving", "worker_link"]
