"""Suite files: safe YAML in, a typed and contract-checked Suite out; and their JSON Schema."""

from ironbench.suite.models import AdversarialCase, BaselineCase, Scenario, StressCase, Suite, load_suite, parse_suite
from ironbench.suite.schema import schema_text, suite_schema

__all__ = [
    "AdversarialCase",
    "BaselineCase",
    "Scenario",
    "StressCase",
    "Suite",
    "load_suite",
    "parse_suite",
    "schema_text",
    "suite_schema",
]
