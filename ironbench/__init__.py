"""ironbench: a benchmark harness for LLM-driven systems, built on an event store."""

__version__ = "0.1.0"
