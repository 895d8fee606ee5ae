"""The documentation's reference, generated from the code rather than retyped.

Each block sits between `<!-- generated: NAME:begin -->` and `<!-- generated: NAME:end -->`
in a page under docs/reference/; the prose around it is written by hand.

    python tools/docs_reference.py           # print every block
    python tools/docs_reference.py --write   # replace the blocks in the pages
    python tools/docs_reference.py --check   # exit 1 naming a page whose block is stale

tests/docs/test_reference.py fails when a block is stale, so the pages follow the code.
"""

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _cell(text: object) -> str:
    """Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


# -- the command line -----------------------------------------------------------------------------


def _commands():
    """(path, click command) for every command, in --help order, groups' commands after their group."""
    import typer.main

    from ironbench.cli.main import app

    root = typer.main.get_command(app)

    def walk(group, path):
        for name, command in group.commands.items():
            if getattr(command, "hidden", False):
                continue
            if hasattr(command, "commands"):
                yield from walk(command, [*path, name])
            else:
                yield [*path, name], command

    return root, list(walk(root, ["ironbench"]))


def _context(command, path):
    from typer._click import Context

    return Context(command, info_name=" ".join(path))


def command_anchor(path: list[str]) -> str:
    return "-".join(path)


def _argument_usage(param) -> str:
    name = param.metavar or param.name.upper()
    if param.multiple or (param.nargs or 1) != 1:
        name += "..."
    return name if param.required or name.startswith("[") else f"[{name}]"


def cli_reference() -> str:
    root, commands = _commands()
    lines = [
        "| command | what it does |",
        "| --- | --- |",
    ]
    for path, command in commands:
        summary = (command.help or "").split("\n\n")[0]
        lines.append(f"| [`{' '.join(path[1:])}`](#{command_anchor(path)}) | {_cell(summary)} |")
    lines += ["", "Options of `ironbench` itself:", ""]
    ctx = _context(root, ["ironbench"])
    lines += ["| option | description |", "| --- | --- |"]
    for param in root.params:
        record = param.get_help_record(ctx)
        if record:
            lines.append(f"| `{_cell(record[0])}` | {_cell(record[1])} |")
    for path, command in commands:
        ctx = _context(command, path)
        arguments = [p for p in command.params if type(p).__name__ == "TyperArgument"]
        options = [p for p in command.params if type(p).__name__ != "TyperArgument"]
        usage = " ".join([*path, "[OPTIONS]" if options else "", *(_argument_usage(a) for a in arguments)])
        lines += ["", f"## {' '.join(path)} {{#{command_anchor(path)}}}", "", "```text", " ".join(usage.split()), "```"]
        lines += ["", (command.help or "").strip()]
        if arguments:
            lines += ["", "| argument | description |", "| --- | --- |"]
            for param in arguments:
                name = (param.metavar or param.name.upper()).strip("[]")
                lines.append(f"| `{name}` | {_cell(param.help or '')} |")
        if options:
            lines += ["", "| option | description |", "| --- | --- |"]
            for param in options:
                flags, text = param.get_help_record(ctx) or (" / ".join(param.opts), param.help or "")
                lines.append(f"| `{_cell(flags)}` | {_cell(text)} |")
    return "\n".join(lines)


# -- suite files ----------------------------------------------------------------------------------


def _type(schema: dict) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(s) for s in schema[key])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        return f"map to {_type(schema['additionalProperties'])}"
    bounds = [
        f"{symbol} {schema[key]}"
        for key, symbol in (
            ("minimum", "≥"),
            ("exclusiveMinimum", ">"),
            ("maximum", "≤"),
            ("exclusiveMaximum", "<"),
            ("minLength", "length ≥"),
            ("maxLength", "length ≤"),
            ("maxItems", "at most items:"),
        )
        if key in schema
    ]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _properties_table(definition: dict) -> list[str]:
    required = set(definition.get("required", []))
    lines = ["| field | type | default | description |", "| --- | --- | --- | --- |"]
    for name, prop in definition.get("properties", {}).items():
        default = "required" if name in required else f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        lines.append(f"| `{name}` | {_cell(_type(prop))} | {_cell(default)} | {_cell(prop.get('description', ''))} |")
    return lines


def schema_reference() -> str:
    from ironbench.suite.schema import suite_schema

    schema = suite_schema()
    lines = ["## Suite", "", *_properties_table(schema)]
    for name, definition in sorted(schema["$defs"].items()):
        lines += ["", f"## {name} {{#{name.lower()}}}", ""]
        if definition.get("description"):
            lines += [_cell(definition["description"]), ""]
        if "oneOf" in definition and not definition.get("properties", {}).keys() - {"generator"}:
            for entry in definition["oneOf"]:
                lines += [f"### `{entry['title']}`", "", _cell(entry["properties"]["generator"].get("description", ""))]
                params = {k: v for k, v in entry["properties"].items() if k != "generator"}
                lines += ["", *_properties_table({**entry, "properties": params}), ""]
            continue
        lines += _properties_table(definition)
    return "\n".join(lines).rstrip()


# -- the SQL views --------------------------------------------------------------------------------

VIEW_NOTES = {
    "runs": "One row per run: suite, mode, status, target, the target's version, label and recorded environment.",
    "invocations": "One row per invocation slot's live attempt: the outcome and how it was reached. Filter "
    "`infra_error IS NULL` for rates. `correct` is the harness's check of the brick it saved (null: not "
    "checked), `check_verdict` that check's verdict (`correct`, `wrong`, `no_entry_point`, `import_error`, "
    "`timeout`, `tampered`, `harness_fault`), `failure_cause` why a failed run failed: `fence` when what "
    "its fence withheld is why (`fence_denials` says what), else its last failed validation attempt's cause.",
    "superseded_invocations": "Attempts a re-run replaced (their backend failed): kept, never evidence.",
    "surplus_invocations": "Runs past their group's decision (`--speculate`): kept, counted in nothing.",
    "checks": "The latest check of each saved brick (a re-check by `ironbench check` replaces it): kind, "
    "verdict, tests passed and failed where the checker counts them, duration, detail and output.",
    "failure_causes": "Why each failed validation attempt failed, read from the target's debug files by the "
    "outcome rules' `failure_causes`: syntax_error, import_error, no_tests_collected, assertions_failed "
    "(with counts), timeout, other.",
    "decisions": "Every decision with its evidence: n, successes, Wilson interval, chance agreement, bounds, "
    "direction and p-value where they apply, and the baseline reference.",
    "variants": "Every variant and ladder level: its generator, parameters, seed and text, or why it was dropped.",
    "rejections": "Every AI rewrite the harness rejected, with its reasons.",
    "turns": "Every gauntlet turn: engine, scenario, conversation, prompt and answer.",
    "turn_scores": "Every scorer's verdict on every gauntlet turn.",
    "model_calls": "Every call a target made to its run's model gateway (`--serve-model`), every attempt of a "
    "slot: API, requested and served model, messages, answer, tokens, latency, error; texts of 1,024 characters "
    "or more held by their sha256 (`model_texts`).",
    "model_texts": "The long texts of a run's model calls, once each, by sha256.",
    "costs": "What every model call of a run cost, priced when it was recorded: the target's calls through the "
    "gateway (`caller` target, with the invocation's key, attempt and call index) and ironbench's own "
    "(`ai_rewrite`, `rewrite_guard`, `engine`); tokens (input counts cached ones, `cached_tokens` apart), "
    "model seconds, `pricing` (table, given, local, unpriced, replayed, cached), `cost_usd` (null: unpriced; "
    "`cost` the same exactly, as text) and what priced it (`price_table`, `provider`, `priced_model`).",
    "gates": "Per run made with `run --against`: the reference run, the margin, alpha and power, A's planning "
    "rate, the cap (the fixed design's runs per case), the last round the design can run, and whether its "
    "boundaries meet there.",
    "gate_looks": "Every look of a sequential gate: the round, B's invocations so far, the drop (A − B) with its "
    "standard error and statistic, the boundaries, the repeated interval of B − A, and what it concluded.",
    "events": "The event log itself: sequence, ids, stream, type, time and the JSON payload.",
    "variant_shortfalls": "Every generator that made fewer variants of a case than its entry asked for: how many "
    "were asked and made, why no more (the generator's own account: no safe site for a shuffle, no word of the "
    "synonym map, ...), the distinct wordings it can make of the instruction where it says, and the candidates "
    "dropped for the single-string contract.",
    "fence_denials": "What the fence withheld from each invocation, one row per denial: its kind (`variable`, "
    "`path`, `endpoint`, `missing`: an allowed path the machine did not have), what, the flag that allows it "
    "(null: none is suggested, `note` says why), how it is known (`output`, or the fence's `network`, "
    "`supervisor`), whether the output shows the invocation failed for it (`explains`) and whether it did "
    "(`caused`: its `failure_cause` is `fence`).",
    "decision_kinds": "Every decision kind: what it decides (baseline, variant, level, ladder), whether it is a "
    "judged variant, and whether a material one. Count by it: `JOIN decision_kinds USING (decision)`.",
    "outcome_codes": "Every outcome code of a run strip: its name, colour, mark, whether it is evidence about "
    "the target, and whether the target succeeded.",
}


def views_reference() -> str:
    from ironbench.analysis.query import _VIEWS, connect, vocabulary_views
    from ironbench.store.migrate import upgrade

    lines: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        store = Path(folder) / "ironbench.db"
        upgrade(store)
        con = connect(store)
        try:
            for view in [*_VIEWS, *vocabulary_views()]:
                columns = con.execute(f"DESCRIBE {view}").fetchall()
                lines += [f"## {view}", "", VIEW_NOTES[view], "", "| column | type |", "| --- | --- |"]
                lines += [f"| `{name}` | {kind} |" for name, kind, *_ in columns]
                lines.append("")
        finally:
            con.close()
    return "\n".join(lines).rstrip()


# -- exit codes -----------------------------------------------------------------------------------


def exit_codes_reference() -> str:
    from ironbench.core import errors

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    lines = ["| error | exit code | when |", "| --- | --- | --- |"]
    for cls in [errors.IronbenchError, *subclasses(errors.IronbenchError)]:
        if cls.__module__ != errors.__name__:
            continue
        lines.append(f"| `{cls.__name__}` | {cls.exit_code} | {_cell(cls.__doc__ or '')} |")
    return "\n".join(lines)


BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "cli": ("reference/cli.md", cli_reference),
    "suite-schema": ("reference/suite-schema.md", schema_reference),
    "views": ("reference/views.md", views_reference),
    "exit-codes": ("reference/exit-codes.md", exit_codes_reference),
}


def marked(name: str) -> re.Pattern:
    return re.compile(rf"(<!-- generated: {name}:begin -->)(.*?)(<!-- generated: {name}:end -->)", re.DOTALL)


def page_block(name: str) -> str:
    """The block as the page holds it now."""
    page, _ = BLOCKS[name]
    found = marked(name).search((DOCS / page).read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"docs/{page}: no `{name}` block markers")
    return found.group(2).strip("\n")


def write(name: str, block: str) -> None:
    page, _ = BLOCKS[name]
    path = DOCS / page
    text = path.read_text(encoding="utf-8")
    path.write_text(marked(name).sub(lambda m: f"{m.group(1)}\n{block}\n{m.group(3)}", text), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="replace the blocks in the pages")
    parser.add_argument("--check", action="store_true", help="exit 1 when a page's block is stale")
    args = parser.parse_args()
    stale = []
    for name, (page, generate) in BLOCKS.items():
        block = generate()
        if args.write:
            write(name, block)
        elif args.check:
            if page_block(name) != block:
                stale.append(page)
        else:
            print(f"<!-- {page} -->\n{block}\n")
    if stale:
        sys.exit(f"stale generated reference in {', '.join(stale)}: run python tools/docs_reference.py --write")


if __name__ == "__main__":
    main()
