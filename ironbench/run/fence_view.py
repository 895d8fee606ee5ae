"""What a target of a run would see, without running the suite (`ironbench sandbox`): the fence
the run would make on this machine for its target, suite and options, described path by path,
and a shell started inside it."""

import os
import shutil
import signal
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ironbench.core.errors import IronbenchError
from ironbench.run.fencing import fenced
from ironbench.run.options import RunOptions
from ironbench.run.paths import RunPaths
from ironbench.sandbox import Fence, SandboxPolicy, credentials_line, withheld_credentials
from ironbench.suite import Suite, open_suite
from ironbench.targets import containment, resolve_target

SHELL_PROMPT = "(ironbench sandbox) $ "


@dataclass(frozen=True)
class FenceView:
    """A run's fence as its target would meet it (`to_dict` for tools, `lines` for people)."""

    level: str
    mechanism: str
    gaps: list[str]
    hidden: list[str]  # what exists of what it hides: empty (a folder) or absent
    answer_key: list[str]  # the run's own part of it: hidden again inside a read-back tree
    read_only: list[str]  # "/ (read-only)" and what is read back inside a hidden tree
    writable: list[str]
    home: str  # the target's HOME
    endpoints: list[str]
    variables: list[str]  # the names it gets that are set here (never a value)
    withheld_credentials: list[str]  # names of this environment's credentials it does not get
    memory: str
    refused: list[dict]  # the system calls seccomp refuses it: {call, action, why}
    target: list[str]  # the command whose needs were read back
    serves_model: bool = False  # the run serves a model: its gateway is reachable too, once started

    def to_dict(self) -> dict:
        return asdict(self)

    def lines(self) -> list[str]:
        said = [f"level: {self.level} ({self.mechanism})"]
        said += [f"gap: {gap}" for gap in self.gaps]
        if self.level == "none":
            return [
                *said,
                "a target runs unfenced: it reads, writes and reaches what you can, with your whole environment",
            ]
        key = set(self.answer_key)
        said += [f"hidden: {path}" + (" (the run's answer key)" if path in key else "") for path in self.hidden]
        said += [f"read-only: {path}" for path in self.read_only]
        said += [f"writable: {path}" for path in self.writable]
        said.append(f"home: {self.home} (what is allowed beneath your home is there too)")
        gateway = ["the run's model gateway (its port is chosen when the run starts)"] if self.serves_model else []
        said += [f"reachable: {e}" for e in [*gateway, *self.endpoints]] or ["reachable: nothing (no network)"]
        said.append(f"variables: {', '.join(self.variables) or 'none'} (names only; HOME and TMPDIR are its own)")
        line = credentials_line(self.withheld_credentials)
        if line is not None:
            said.append(line)
        said.append(f"memory: {self.memory}")
        why: dict[str, list[str]] = {}
        for rule in self.refused:
            why.setdefault(rule["why"], []).append(rule["call"])
        said += [f"refused: {', '.join(dict.fromkeys(calls))}: {reason}" for reason, calls in why.items()]
        return said


def target_fence(
    suite: Suite | None, suite_path: str | None, target: str | None, options: RunOptions, paths: RunPaths
) -> tuple[Fence, list[str]]:
    """The fence a run of `suite` (None: no suite, its answer key the output folder and store)
    with `options` would put around its target here, and the target's command (IronbenchError:
    neither a target nor a suite naming one)."""
    spec = target if target is not None else (suite.target if suite is not None else None)
    if spec is None:
        raise IronbenchError("name the target (--target CMD) or a SUITE whose target it is")
    argv = list(resolve_target(spec).argv_template)
    if suite is not None:
        options = fenced(options, paths, suite_path, suite)
    else:
        store = str(paths.store_path)
        hidden = (str(paths.out_dir), str(paths.store_path.parent), store, f"{store}-wal", f"{store}-shm")
        options = replace(options, sandbox=options.sandbox.with_run(hidden, None))
    return Fence(options.sandbox), argv


def fence_view(fence: Fence, argv: list[str], serves_model: bool = False) -> FenceView:
    """What `fence` shows a target started with `argv` (names of variables, never their values)."""
    described, plan = fence.describe(argv), fence.plan
    given = fence.environment({})
    return FenceView(
        level=plan.level,
        mechanism=plan.mechanism,
        gaps=list(plan.gaps),
        hidden=list(described["hidden"]),
        answer_key=[path for path in described["hidden"] if path in set(plan.answer_key)],
        read_only=list(described["readable"]),
        writable=list(described["writable"]),
        home=given["HOME"] if plan.level == "full" else "a private folder of its own, made per invocation",
        endpoints=list(plan.endpoints),
        variables=sorted(name for name in given if name not in ("HOME", "TMPDIR")) if plan.fenced else ["all of yours"],
        withheld_credentials=withheld_credentials(fence.policy, os.environ) if plan.fenced else [],
        memory=plan.memory,
        refused=[dict(rule) for rule in plan.refused],
        target=argv,
        serves_model=serves_model,
    )


def fence_shell(fence: Fence) -> int:
    """A shell ($SHELL, else /bin/sh) inside `fence`, on this terminal's streams, in a fresh
    working folder removed after; returns its exit code. It has a session of its own, as every
    target has: no job control, and Ctrl-C is not its (`exit` or Ctrl-D ends it)."""
    shell = os.environ.get("SHELL") or "/bin/sh"
    if shutil.which(shell) is None:
        shell = "/bin/sh"
    workdir = tempfile.mkdtemp(prefix="ironbench-sandbox-")
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    mark = containment.new_mark()  # what the shell started ends with it, as a target's does
    environment = fence.environment({"PS1": SHELL_PROMPT, containment.CONTAINMENT_VAR: mark})
    try:
        containment.enter()
        try:
            started = fence.start([shell], Path(workdir), environment, (0, 1, 2))
        except BaseException:
            containment.abandoned()
            raise
        containment.started(started.process.pid, mark)
        try:
            return started.process.wait()
        finally:
            containment.finish(started.process.pid)
            containment.reaped(started.process.pid)
            started.release()
    except OSError as exc:
        raise IronbenchError(f"the shell could not start inside the fence: {exc.strerror or exc}") from None
    finally:
        signal.signal(signal.SIGINT, interrupt)
        shutil.rmtree(workdir, ignore_errors=True)
        fence.close()


def what_a_target_sees(suite: str | None, target: str | None, policy: SandboxPolicy, paths: RunPaths) -> FenceView:
    """`ironbench sandbox`: the fence a run of `suite` (a file or shipped name; None: none) with
    `target` and `policy` would put around its target on this machine, described."""
    loaded, suite_path = open_suite(suite) if suite is not None else (None, None)
    fence, argv = target_fence(loaded, suite_path, target, RunOptions(sandbox=policy), paths)
    try:
        return fence_view(fence, argv, serves_model=loaded is not None and loaded.serving() is not None)
    finally:
        fence.close()


def shell_in_fence(suite: str | None, target: str | None, policy: SandboxPolicy, paths: RunPaths) -> int:
    """`ironbench sandbox --shell`: a shell inside that fence (`fence_shell`); its exit code."""
    loaded, suite_path = open_suite(suite) if suite is not None else (None, None)
    fence, _argv = target_fence(loaded, suite_path, target, RunOptions(sandbox=policy), paths)
    return fence_shell(fence)
