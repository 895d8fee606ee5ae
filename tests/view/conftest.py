"""A store with every kind of run (the report's examples) and one run whose target echoes its
hostile instruction and leaves debug files: built once per test session, served read-only."""

from dataclasses import dataclass
from pathlib import Path

import llm
import pytest

from ironbench.run.runner import RunPaths, start_run
from ironbench.suite.models import parse_suite
from tests.conftest import SCRIPTED_TARGET
from tests.fixtures import llm_scripted
from tests.report.examples import INJECTED, Examples, build_examples, environment, scripted


@dataclass(frozen=True)
class Store:
    examples: Examples
    drill: str  # a baseline run with debug files and output that holds markup

    @property
    def path(self) -> Path:
        return self.examples.paths.store_path


def drill_run(paths: RunPaths) -> str:
    suite = parse_suite(
        {
            "suite_id": "drill",
            "mode": "baseline",
            "target": SCRIPTED_TARGET,
            "timeout_seconds": 30,
            "debug_enabled": True,
            "cases": [{"id": "echo", "instruction": "Write a parser. " + INJECTED, "runs": 3}],
        },
        "drill.yaml",
    )
    with scripted({"echo": ["success", "validation", "success"]}), environment({"SCRIPTED_ECHO": "1"}):
        return start_run(suite, paths)


@pytest.fixture(scope="session")
def store(tmp_path_factory) -> Store:
    if not llm.plugins.pm.is_registered(llm_scripted):
        llm.plugins.pm.register(llm_scripted, name="ironbench-tests-scripted")
    examples = build_examples(tmp_path_factory.mktemp("view") / "out", llm_scripted.ScriptedRewriter)
    return Store(examples, drill_run(examples.paths))
