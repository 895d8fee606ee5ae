"""The command that serves the store in a browser: `view`."""

from typing import Annotated

import typer

from ironbench.cli.options import DEFAULT_OUT, OutOption, StoreOption, run_paths


def view(
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free one).")] = 8765,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="Interface to listen on. Any but loopback needs a token (given, or generated and printed)."
        ),
    ] = "127.0.0.1",
    token: Annotated[
        str | None,
        typer.Option(
            "--token", envvar="IRONBENCH_VIEW_TOKEN", help="Require this token (the printed address carries it)."
        ),
    ] = None,
    open_browser: Annotated[bool, typer.Option("--open", help="Open the address in a browser.")] = False,
) -> None:
    """Serve the store as a live, read-only web app: runs, reports, drill-down, comparisons; Ctrl-C stops it."""
    from ironbench.view import Address, serve

    store_path = run_paths(out, store).store_path

    def ready(address: Address) -> None:
        typer.echo(f"ironbench view: {address.url} (the store {store_path}, read-only; Ctrl-C stops)", err=True)
        if open_browser:
            import webbrowser

            webbrowser.open(address.url)

    try:
        serve(store_path, host, port, token, ready)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a server stops: nothing to report
    typer.echo("ironbench view: stopped", err=True)
