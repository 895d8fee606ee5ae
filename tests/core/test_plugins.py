"""Plugins register through entry points exactly like the built-ins do."""

import sys
from importlib.metadata import EntryPoint

import pytest

from ironbench.core import plugins


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    (tmp_path / "my_ironbench_plugin.py").write_text(
        "from ironbench.targets.registry import register_target\n"
        "from ironbench.generators.registry import GeneratorParams, register_generator\n"
        "from ironbench.gauntlet.scoring import Score, register_scorer\n"
        "register_target('echo-agent', lambda: ['echo', '{instruction}'])\n"
        "class Shout(GeneratorParams):\n    pass\n"
        "register_generator('shout', 'variant', Shout)(lambda base, params, rng: base.upper())\n"
        "register_scorer('always')(lambda answer, phrase: Score(True, 'always'))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    groups = {
        group: [EntryPoint("mine", "my_ironbench_plugin", group)]
        for group in ("ironbench.targets", "ironbench.generators", "ironbench.scorers")
    }
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: groups.get(group, []))
    plugins.load_plugins.cache_clear()
    yield
    plugins.load_plugins.cache_clear()
    sys.modules.pop("my_ironbench_plugin", None)


def test_a_plugin_adds_a_target_a_generator_and_a_scorer(plugin_module):
    from ironbench.gauntlet.scoring import get_scorer
    from ironbench.suite.models import parse_suite
    from ironbench.targets.registry import resolve_target

    assert resolve_target("echo-agent").argv("hi") == ["echo", "hi"]
    suite = parse_suite(
        {
            "suite_id": "p",
            "mode": "adversarial",
            "cases": [
                {"id": "c", "instruction": "Write a parser.", "generators": [{"generator": "shout", "count": 1}]}
            ],
        },
        "p.yaml",
    )
    from ironbench.run.planner import plan

    assert plan(suite)[0].variants[0].instruction == "WRITE A PARSER."
    assert get_scorer("always")("x", "y").violated
