"""The files an invocation left, read in place: only those its event records (the capped
stdout and stderr) and those under the debug folder it records, never a path a request names.

A target is hostile until proven otherwise: it may leave a symlink where its debug folder
should be, or inside it. A debug folder is served only where it truly is (inside the
invocation's working folder, no symlink on the way), and a file in it only if its real
path stays inside; a name with `..` or an absolute one is refused before any lookup.
"""

import os
import socket
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ironbench.core.errors import IronbenchError
from ironbench.core.events import InvocationCompleted
from ironbench.run.executors import DEBUG_DIR

SHOWN_BYTES = 8 * 1024 * 1024  # a file is shown up to this much (the rest is named, not sent)
LISTED_FILES = 500


class NotServed(IronbenchError):
    """A file the viewer does not serve: not recorded here, or gone."""


class Refused(NotServed):
    """A name or a path that would lead out of what the run recorded: `..`, a symlink out."""


@dataclass(frozen=True)
class DebugFile:
    name: str  # relative to the debug folder, with /
    size: int


def local(recorded: str | None) -> Path | None:
    """A recorded path on this machine; `host:path` from a cluster worker only if the host is this one."""
    if not recorded:
        return None
    host, sep, rest = recorded.partition(":")
    if sep and "/" not in host and rest.startswith("/"):
        return Path(rest) if host == socket.gethostname() else None
    return Path(recorded)


def output_file(event: InvocationCompleted, stream: str) -> Path:
    """The capped stdout or stderr file the event records, if it is still a plain file where recorded."""
    recorded = local(event.stdout_path if stream == "stdout" else event.stderr_path)
    if recorded is None or not recorded.is_absolute():
        raise NotServed(f"no {stream} file recorded on this machine")
    if not recorded.exists() and not recorded.is_symlink():
        raise NotServed(f"{recorded}: not there any more")
    if recorded.is_symlink() or not recorded.is_file():
        raise Refused(f"{recorded}: not a plain file where the run recorded it")
    return recorded


def debug_root(event: InvocationCompleted) -> Path:
    """The debug folder the event records, resolved; refused if any part of it inside the
    invocation's working folder is a symlink (the target made those parts)."""
    recorded = local(event.debug_path)
    if recorded is None or not recorded.is_absolute():
        raise NotServed("no debug folder recorded on this machine")
    below = DEBUG_DIR.parts if recorded.parts[-len(DEBUG_DIR.parts) :] == DEBUG_DIR.parts else recorded.parts[-1:]
    workdir = Path(*recorded.parts[: -len(below)])
    try:
        root = recorded.resolve(strict=True)
        expected = workdir.resolve(strict=True).joinpath(*below)
    except OSError:
        raise NotServed(f"{recorded}: not there (the target wrote no debug files, or they were removed)") from None
    if root != expected or not root.is_dir():
        raise Refused(f"{recorded}: refused, a symlink leads out of the invocation's working folder")
    return root


def debug_files(event: InvocationCompleted) -> list[DebugFile]:
    """The files under the debug folder (not following links; a link whose target stays inside is listed)."""
    root = debug_root(event)
    found: list[DebugFile] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            try:
                real = path.resolve(strict=True)
            except OSError:
                continue
            if real.is_relative_to(root) and real.is_file():
                found.append(DebugFile(relative, real.stat().st_size))
            if len(found) >= LISTED_FILES:
                return found
    return found


def debug_file(event: InvocationCompleted, name: str) -> Path:
    """One file under the debug folder, by its relative name."""
    parts = PurePosixPath(name).parts
    if not parts or name.startswith("/") or "\\" in name or "\x00" in name or any(p in ("..", ".") for p in parts):
        raise Refused(f"{name!r}: not a file name inside the debug folder")
    root = debug_root(event)
    try:
        real = root.joinpath(*parts).resolve(strict=True)
    except OSError:
        raise NotServed(f"{name}: no such debug file") from None
    if not real.is_relative_to(root) or not real.is_file():
        raise Refused(f"{name}: refused, it leads out of the debug folder")
    return real


def read_shown(path: Path) -> tuple[str, int]:
    """The file's text (up to SHOWN_BYTES, undecodable bytes replaced) and its whole size."""
    size = path.stat().st_size
    with open(path, "rb") as file:
        data = file.read(SHOWN_BYTES)
    return data.decode("utf-8", errors="replace"), size
