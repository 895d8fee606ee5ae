"""`ironbench sandbox`: what a target of a run would see, and a shell inside its fence."""

import json
from typing import Annotated

import typer

from ironbench.cli.options import (
    DEFAULT_OUT,
    AllowNetOption,
    AllowReadOption,
    AllowWriteOption,
    MemoryOption,
    OutOption,
    PassEnvOption,
    SandboxOption,
    StoreOption,
    run_paths,
    say,
)


def sandbox(
    suite: Annotated[
        str | None,
        typer.Argument(
            metavar="[SUITE]",
            help="The suite the run would run (a file or a shipped name): its own fence settings and its "
            "answer key (its folder, its checks) count too.",
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The target as `ironbench run --target` takes it (a registered name or a command with "
            "{instruction}); what its command needs is read back. Default: the suite's.",
        ),
    ] = None,
    out: OutOption = DEFAULT_OUT,
    store: StoreOption = None,
    sandbox: SandboxOption = None,
    allow_read: AllowReadOption = None,
    allow_write: AllowWriteOption = None,
    allow_net: AllowNetOption = None,
    pass_env: PassEnvOption = None,
    memory: MemoryOption = None,
    shell: Annotated[
        bool,
        typer.Option(
            "--shell",
            help="Open a shell ($SHELL) inside that fence instead, in a fresh working folder; its exit code "
            "is this command's (`exit` or Ctrl-D ends it; it has no job control).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print it as one JSON object, for tools.")] = False,
) -> None:
    """What a target of this run would see, without running the suite: the fence's level and
    mechanism, every hidden, read-only and writable path, the endpoints and the variables it gets
    (names only), for the given --target, suite and the fence options `run` takes."""
    from ironbench.run.fence_view import shell_in_fence, what_a_target_sees
    from ironbench.sandbox import policy_from_options

    policy = policy_from_options(sandbox, allow_read, allow_write, allow_net, pass_env, memory)
    if shell:
        raise typer.Exit(shell_in_fence(suite, target, policy, run_paths(out, store)))
    view = what_a_target_sees(suite, target, policy, run_paths(out, store))
    if as_json:
        typer.echo(json.dumps(view.to_dict(), indent=2))
    else:
        say("\n".join(view.lines()))
