"""The reference pages follow the code: their generated blocks are current, and every command,
argument and option of the command line has its entry."""

import importlib.util
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

CLI_PAGE = REPO / "docs" / "reference" / "cli.md"


def _generator():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "tools" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


def test_every_generated_block_is_current():
    # In a fresh interpreter: a test that registered a plugin generator in this one would
    # otherwise show up in the schema.
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "docs_reference.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_the_check_names_a_stale_page(monkeypatch):
    page, _ = GENERATOR.BLOCKS["exit-codes"]
    current = GENERATOR.page_block("exit-codes")
    stale = {"exit-codes": (page, lambda: current + "\n| `NewError` | 2 | new |")}
    monkeypatch.setattr(GENERATOR, "BLOCKS", stale)
    monkeypatch.setattr(sys, "argv", ["docs_reference.py", "--check"])
    with pytest.raises(SystemExit, match="stale generated reference in reference/exit-codes.md"):
        GENERATOR.main()


def missing_entries(page: str) -> list[str]:
    """Every command, argument and option the command line has that `page` does not document
    under that command's own heading."""
    import typer.main

    from ironbench.cli.main import app

    sections = dict(re.findall(r"^## (ironbench[^{\n]*?) \{#[^}]+\}\n(.*?)(?=^## |\Z)", page, re.MULTILINE | re.DOTALL))
    missing = []

    def walk(group, path):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                walk(command, [*path, name])
                continue
            title = " ".join([*path, name])
            section = sections.get(title)
            if section is None:
                missing.append(title)
                continue
            for param in command.params:
                if type(param).__name__ == "TyperArgument":
                    names = [(param.metavar or param.name.upper()).strip("[]")]
                else:
                    names = [*param.opts, *param.secondary_opts]
                for flag in names:
                    if not re.search(rf"`[^`]*(?<![\w-]){re.escape(flag)}\b", section):
                        missing.append(f"{title} {flag}")

    root = typer.main.get_command(app)
    walk(root, ["ironbench"])
    preamble = page.split("\n## ", 1)[0]
    missing += [o for p in root.params for o in p.opts if f"`{o}`" not in preamble]
    return missing


def test_every_command_argument_and_option_has_a_reference_entry():
    assert missing_entries(CLI_PAGE.read_text(encoding="utf-8")) == []


def test_a_missing_entry_is_named():
    page = CLI_PAGE.read_text(encoding="utf-8")
    without_speculate = "\n".join(line for line in page.splitlines() if not line.startswith("| `--speculate`"))
    assert missing_entries(without_speculate) == ["ironbench run --speculate"]
    without_plan = re.sub(r"^## ironbench plan .*?(?=^## )", "", page, flags=re.MULTILINE | re.DOTALL)
    assert missing_entries(without_plan) == ["ironbench plan"]
