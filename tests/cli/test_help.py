"""--help reads well: defaults shown, no placeholders for flags, every argument described."""

import re

import pytest

from tests.conftest import cli


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "resume", "show", "project", "query", "compare", "export", "variants"])
def test_help_has_no_value_placeholder_on_flags_and_shows_store_default(command):
    text = cli(command, "--help", env={"COLUMNS": "200"}, check=True).stdout
    assert "<bool>" not in text
    assert "event store ." not in text
    if "--store" in text:
        assert "OUT/ironbench.db" in text


@pytest.mark.parametrize("command", ["show", "project", "resume"])
def test_run_argument_is_described(command):
    text = cli(command, "--help", env={"COLUMNS": "200"}, check=True).stdout
    assert re.search(r"RUN\s+<str>\s+\S", text)


def test_target_help_names_the_builtin_targets():
    text = cli("run", "--help", env={"COLUMNS": "200"}, check=True).stdout
    for name in ("ironclad", "forge", "fixture"):
        assert name in text


def test_version_and_variants_takes_out(tmp_path):
    from ironbench import __version__

    assert cli("--version", check=True).stdout.strip() == f"ironbench {__version__}"
    assert cli("variants", "suites/baseline.yaml", "--out", str(tmp_path / "o"), check=True).stdout
