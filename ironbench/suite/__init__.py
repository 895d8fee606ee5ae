"""Suite files: safe YAML in, a typed and contract-checked Suite out; their JSON Schema; and a
run's recorded suite read back as the same typed Suite."""

from ironbench.suite.models import AdversarialCase, BaselineCase, Scenario, StressCase, Suite, load_suite, parse_suite
from ironbench.suite.recorded import recorded_suite, suite_of_run
from ironbench.suite.schema import schema_text, suite_schema

__all__ = [
    "AdversarialCase",
    "BaselineCase",
    "Scenario",
    "StressCase",
    "Suite",
    "load_suite",
    "parse_suite",
    "recorded_suite",
    "schema_text",
    "suite_of_run",
    "suite_schema",
]
