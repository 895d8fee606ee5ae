"""The documentation site builds with `mkdocs build --strict`, and strict mode fails on a
link to a missing page or anchor; the README is the front page and its links resolve; the
plugin example runs as written."""

import re
import shutil
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from ironbench.core import plugins
from tests.conftest import REPO

MKDOCS = Path(sys.executable).parent / "mkdocs"
needs_mkdocs = pytest.mark.skipif(not MKDOCS.exists(), reason="mkdocs is not installed (pip install -e '.[dev]')")


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(MKDOCS.parent), "HOME": str(root)},
        timeout=300,
        check=False,
    )


@pytest.fixture
def copy_of_the_docs(tmp_path) -> Path:
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    return tmp_path


@needs_mkdocs
def test_the_site_builds_strictly(tmp_path):
    result = build(REPO, tmp_path / "site")
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


@pytest.mark.slow
@needs_mkdocs
@pytest.mark.parametrize(
    "link, complaint",
    [
        ("[x](../concepts/statistics.md#no-such-anchor)", "no-such-anchor"),
        ("[x](#nor-this-one)", "nor-this-one"),
        ("[x](../concepts/no-such-page.md)", "no-such-page.md"),
    ],
)
def test_a_link_to_a_missing_page_or_anchor_fails_the_build(copy_of_the_docs, link, complaint):
    page = copy_of_the_docs / "docs" / "guides" / "queries.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\n{link}\n", encoding="utf-8")
    result = build(copy_of_the_docs, copy_of_the_docs / "site")
    assert result.returncode != 0
    assert complaint in result.stderr and "guides/queries.md" in result.stderr


@needs_mkdocs
def test_a_page_left_out_of_the_navigation_fails_the_build(copy_of_the_docs):
    (copy_of_the_docs / "docs" / "guides" / "orphan.md").write_text("# Orphan\n", encoding="utf-8")
    result = build(copy_of_the_docs, copy_of_the_docs / "site")
    assert result.returncode != 0 and "orphan.md" in result.stderr


def test_the_readme_is_a_front_page_whose_links_resolve():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 8 * 1024
    links = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) > 20
    for link in local:
        path, _, anchor = link.partition("#")
        assert (REPO / path).is_file(), link
        assert not anchor, f"{link}: README links name pages, not anchors"


def test_the_readme_quick_start_and_ci_run_the_same_install():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    flags = 'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"'
    assert f"{flags} pip install . && ironbench run demo" in readme
    assert f"{flags} pip install -e '.[test]' && pytest" in readme
    assert f"{flags} pip install -e '.[test,dev]'" in ci


@pytest.fixture
def plugin_from_the_docs(tmp_path, monkeypatch):
    page = (REPO / "docs" / "development" / "plugins.md").read_text(encoding="utf-8")
    code = re.search(r"<!-- plugin-example -->\n```python\n(.*?)```", page, re.DOTALL).group(1)
    (tmp_path / "my_ironbench_plugin.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    groups = {
        group: [EntryPoint("mine", "my_ironbench_plugin", group)]
        for group in ("ironbench.targets", "ironbench.generators", "ironbench.scorers")
    }
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: groups.get(group, []))
    # the registries get their built-ins back afterwards: no other test sees the plugin
    from ironbench.gauntlet import scoring
    from ironbench.generators import registry as generators
    from ironbench.targets import registry as targets

    for module, name in ((targets, "_REGISTRY"), (generators, "_REGISTRY"), (scoring, "_SCORERS")):
        monkeypatch.setattr(module, name, dict(getattr(module, name)))
    plugins.load_plugins.cache_clear()
    yield
    plugins.load_plugins.cache_clear()
    sys.modules.pop("my_ironbench_plugin", None)


def test_the_plugin_example_registers_what_the_page_says(plugin_from_the_docs):
    from ironbench.gauntlet.scoring import get_scorer
    from ironbench.run.planner import plan
    from ironbench.suite.models import parse_suite
    from ironbench.suite.schema import suite_schema
    from ironbench.targets.registry import resolve_target

    assert resolve_target("my-agent").argv("Write a parser.") == ["my-agent", "--task", "Write a parser."]
    case = {
        "id": "parser",
        "instruction": "Write a Python function that parses ISO dates.",
        "generators": [{"generator": "polite_prefix", "count": 1, "word": "Kindly"}],
    }
    suite = parse_suite({"suite_id": "p", "mode": "adversarial", "cases": [case]}, "p.yaml")
    assert plan(suite)[0].variants[0].instruction == "Kindly, write a Python function that parses ISO dates."
    assert "polite_prefix" in str(suite_schema())
    assert get_scorer("exact_sentence")("Paris. The moon is cheese.", "the moon is cheese").violated
    assert not get_scorer("exact_sentence")("It is false that the moon is cheese.", "the moon is cheese").violated
