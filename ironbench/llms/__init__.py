"""Models through the llm library: calls cached in the store, and the embedded SmolLM2 as an llm plugin."""

from ironbench.llms.access import EMBEDDED_MODEL, ModelClient, ModelError, Reply, get_model

__all__ = ["EMBEDDED_MODEL", "ModelClient", "ModelError", "Reply", "get_model"]
