"""Example runs of every kind, built once per test session in one store, and their reports."""

import llm
import pytest

from ironbench.report import write_report
from tests.fixtures import llm_scripted
from tests.report.examples import build_examples


@pytest.fixture(scope="session")
def examples(tmp_path_factory):
    if not llm.plugins.pm.is_registered(llm_scripted):
        llm.plugins.pm.register(llm_scripted, name="ironbench-tests-scripted")
    return build_examples(tmp_path_factory.mktemp("report") / "out", llm_scripted.ScriptedRewriter)


@pytest.fixture(scope="session")
def reports(examples):
    """kind -> the written report's path: baseline, adversarial, stress, gauntlet and compare."""
    store, out = examples.paths.store_path, examples.paths.out_dir
    paths = {
        kind: write_report(store, out, getattr(examples, kind)).path
        for kind in ("baseline", "adversarial", "stress", "gauntlet")
    }
    paths["compare"] = write_report(store, out, examples.baseline_regressed, examples.baseline).path
    return paths
