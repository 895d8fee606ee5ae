"""Commands about suite files: `init`, `variants`, `schema`."""

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

SuiteArgument = Annotated[
    str,
    typer.Argument(
        metavar="SUITE",
        help="A suite YAML file, or the name of a shipped suite: demo, baseline, adversarial, stress, "
        "gauntlet, humaneval, humaneval-adversarial (a path wins over a name; `ironbench init` copies the "
        "YAML ones to a folder of yours).",
    ),
]


def init(
    folder: Annotated[
        Path, typer.Argument(metavar="[DIR]", help="The folder to write into (created if needed).")
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Overwrite files of the same names.")] = False,
) -> None:
    """Write the example suites, their JSON Schema (for your editor) and an outcome-rules example into a folder."""
    from ironbench.suite import init_folder

    result = init_folder(folder, force)
    for path in result.written:
        say(str(path))
    baseline, agent = result.folder / "baseline.yaml", (result.folder / "toy_agent.py").resolve()
    say(f"next: ironbench run {baseline} --target fixture")
    say(
        f'  or: ironbench run {baseline} --target "python {agent} {{instruction}}" --rules {result.folder / "agent_rules.yaml"}'
    )


def variants(
    suite: SuiteArgument,
    format: Annotated[ReportFormat, typer.Option("--format", "-f")] = ReportFormat.table,
    out: OutOption = DEFAULT_OUT,
) -> None:
    """Preview every variant and ladder level of a suite, diffed against its base, and how often each
    runs; invokes nothing.

    A variant runs once; one that differs materially from the baseline is repeated up to runs_per_variant times (the spec's 3 when the suite does not set it; a case's material_repeats overrides it). The same suite and seeds give the same plan."""
    from dataclasses import asdict

    from ironbench.run.preview import preview, preview_lines
    from ironbench.suite import open_suite

    items = preview(open_suite(suite)[0])
    if format is ReportFormat.json:
        typer.echo(json.dumps([asdict(i) for i in items], indent=2))
        return
    for line in preview_lines(items):
        say(line)


def schema(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")] = None,
) -> None:
    """Print the JSON Schema of suite files (for editors: yaml-language-server, CI linters)."""
    from ironbench.suite import schema_text

    if output is None:
        typer.echo(schema_text(), nl=False)
    else:
        output.write_text(schema_text(), encoding="utf-8")
        typer.echo(str(output))
