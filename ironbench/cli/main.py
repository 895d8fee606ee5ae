"""ironbench's command line: the app, its commands registered in the order --help lists them,
and the one place errors become a line on stderr and an exit code. Commands live in the
modules beside this one; each parses its options and calls one library function."""

import sys
from typing import Annotated

import typer

from ironbench.cli import compare, gauntlet, history, inspect, run, sandbox, store, suite, view
from ironbench.core.errors import IronbenchError

HELP = "Benchmark harness for LLM-driven systems: every invocation an event, every answer a query."

app = typer.Typer(
    name="ironbench", help=HELP, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)
db_app = typer.Typer(help="Manage the event store's schema.", no_args_is_help=True)

# Typer labels on/off flags with a `<bool>` value placeholder, though a flag takes no
# value; show nothing there instead.
if hasattr(typer.core.TyperOption, "display_type_rich"):
    _display_type = typer.core.TyperOption.display_type_rich
    typer.core.TyperOption.display_type_rich = (  # type: ignore[method-assign]
        lambda self, ctx: None if self.is_flag else _display_type(self, ctx)
    )


def _version(value: bool) -> None:
    if value:
        from ironbench import __version__

        typer.echo(f"ironbench {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_version, is_eager=True, help="Print ironbench's version and exit."),
    ] = None,
) -> None:
    """Benchmark harness for LLM-driven systems: every invocation an event, every answer a query."""


for command in (
    suite.init,
    run.run,
    run.resume,
    run.replay,
    history.import_,
    run.check,
    inspect.runs,
    inspect.show,
    inspect.log,
    store.project,
    store.verify,
    inspect.query,
    compare.compare,
    compare.report,
    view.view,
    sandbox.sandbox,
    compare.plan,
    gauntlet.rescore,
    suite.variants,
    inspect.export,
    suite.schema,
):
    app.command(command.__name__.rstrip("_"))(command)
app.add_typer(db_app, name="db")
db_app.command("upgrade")(store.db_upgrade)


def main() -> None:
    from ironbench.console.printable import printable

    try:
        code = app(prog_name="ironbench", standalone_mode=False)
    except typer.TyperException as exc:  # click's errors, as vendored by typer
        exit_code = getattr(exc, "exit_code", 2)
        if type(exc).__name__ == "NoArgsIsHelpError":
            typer.echo(exc.format_message(), err=True)
            sys.exit(exit_code)
        # A bad option is bad input like any other: one line, not a usage box.
        ctx = getattr(exc, "ctx", None)
        command = f"{ctx.command_path}: " if ctx is not None else ""
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        print(f"ironbench: error: {printable(command + message)}", file=sys.stderr)
        sys.exit(exit_code)
    except typer.Abort:
        print("ironbench: aborted", file=sys.stderr)
        sys.exit(130)
    except IronbenchError as exc:  # an interruption or a full disk is no mistake: no "error:"
        from ironbench.core.errors import RunStopped

        # a run that stopped itself quotes what its target printed, line by line
        said = printable(str(exc), keep_newlines=isinstance(exc, RunStopped))
        print(f"ironbench: {exc.prefix}{said}", file=sys.stderr)
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
