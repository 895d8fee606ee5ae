"""What a run's fence hides: the answer key of the run, added to the policy it asks for."""

from dataclasses import replace
from pathlib import Path

from ironbench.core.errors import SandboxError
from ironbench.run.checking import suite_check_paths
from ironbench.run.options import RunOptions
from ironbench.run.paths import RunPaths
from ironbench.sandbox import Fence, fence_for
from ironbench.suite import Suite, humaneval
from ironbench.targets import bricks_roots, judges_root


def answer_key(paths: RunPaths, suite_path: str | None, suite: Suite) -> tuple[str, ...]:
    """What a run's targets and checks must not read: the output folder with the store and every
    working directory, the store wherever it is, the suite's folder and every check's, and what
    a shipped suite was built from (HumanEval's data), and the judges' own folder."""
    found = [str(paths.out_dir), str(paths.store_path.parent)]
    found += [f"{paths.store_path}{suffix}" for suffix in ("", "-wal", "-shm")]
    if suite_path is not None and Path(suite_path).exists():
        found += [str(Path(suite_path).resolve().parent), str(Path(suite_path).resolve())]
    elif suite_path in humaneval.SUITES:
        found += humaneval.sources()
    checks = suite_check_paths(suite)
    found += [*checks, *(str(Path(check).parent) for check in checks if Path(check).is_file())]
    found += [judges_root(), *bricks_roots()]  # where each check's files are written for its judge and its host
    return tuple(found)


def fenced(options: RunOptions, paths: RunPaths, suite_path: str | None, suite: Suite) -> RunOptions:
    """The options with the suite's own fence added to the command line's, and the run's answer
    key hidden by it."""
    policy = options.sandbox
    asked = suite.sandbox
    if asked is not None:
        for path in (*asked.allow_read, *asked.allow_write):
            if not Path(path).exists():
                raise SandboxError(f"{suite_path or 'suite'}: sandbox: {path}: no such file or folder")
        policy = policy.with_suite(
            asked.mode, asked.allow_read, asked.allow_write, asked.allow_net, asked.pass_env, asked.memory_mb
        )
    return replace(options, sandbox=policy.with_run(answer_key(paths, suite_path, suite), None))


def checks_fence(options: RunOptions, paths: RunPaths, suite_path: str | None, suite: Suite) -> Fence:
    """The fence the checks of a recorded run run under here (`ironbench check`)."""
    return fence_for(fenced(options, paths, suite_path, suite).sandbox)
