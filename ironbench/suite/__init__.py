"""Suite files: safe YAML in, a typed and contract-checked Suite out; their JSON Schema; and a
run's recorded suite read back as the same typed Suite."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
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

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.suite.humaneval import current_check as current_check
    from ironbench.suite.models import MATERIAL_REPEATS as MATERIAL_REPEATS
    from ironbench.suite.models import CommandEngineSpec as CommandEngineSpec
    from ironbench.suite.models import ConfidenceStop as ConfidenceStop
    from ironbench.suite.models import FixedStop as FixedStop
    from ironbench.suite.models import GuardedEngineSpec as GuardedEngineSpec
    from ironbench.suite.models import LlmEngineSpec as LlmEngineSpec
    from ironbench.suite.models import PytestCheck as PytestCheck
    from ironbench.suite.models import PythonEngineSpec as PythonEngineSpec
    from ironbench.suite.models import SeedStop as SeedStop
    from ironbench.suite.models import VariantEntry as VariantEntry
    from ironbench.suite.shipped import init_folder as init_folder
    from ironbench.suite.shipped import open_suite as open_suite

_EXPORTS = {
    "PytestCheck": "models",
    "CommandEngineSpec": "models",
    "ConfidenceStop": "models",
    "FixedStop": "models",
    "GuardedEngineSpec": "models",
    "LlmEngineSpec": "models",
    "MATERIAL_REPEATS": "models",
    "PythonEngineSpec": "models",
    "SeedStop": "models",
    "VariantEntry": "models",
    "init_folder": "shipped",
    "open_suite": "shipped",
    "current_check": "humaneval",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
