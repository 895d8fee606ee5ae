"""Commands about suite files: `variants`, `schema`."""

import json
from pathlib import Path
from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    OutOption,
    ReportFormat,
    say,
)


def variants(
    suite: Annotated[Path, typer.Argument(help="Suite YAML file.")],
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    out: OutOption = DEFAULT_OUT,
) -> None:
    """Preview every variant and ladder level of a suite, diffed against its base; invokes nothing."""
    from dataclasses import asdict

    from ironbench.run.preview import preview, preview_lines
    from ironbench.suite.models import load_suite

    items = preview(load_suite(suite))
    if format is ReportFormat.json:
        typer.echo(json.dumps([asdict(i) for i in items], indent=2))
        return
    for line in preview_lines(items):
        say(line)


def schema(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """Print the JSON Schema of suite files (for editors: yaml-language-server, CI linters)."""
    from ironbench.suite.schema import schema_text

    if output is None:
        typer.echo(schema_text(), nl=False)
    else:
        output.write_text(schema_text(), encoding="utf-8")
        typer.echo(str(output))
