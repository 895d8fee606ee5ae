"""Files written whole or not at all, and a failed write named for people (a full disk, a read-only place).

A file is written beside its final name and renamed over it: a reader, a crash or a kill
mid-write sees the old content or the new, never half of it, and a full disk leaves the
old file as it was. (Not fsync'd: every such file is derived from the store, which SQLite
keeps durable, and `ironbench project --rebuild` writes it again.)
"""

import errno
import os
import threading
from pathlib import Path

from ironbench.core.errors import StoreError, StoreFull, StoreUnwritable

_FULL = {errno.ENOSPC, errno.EDQUOT}
_UNWRITABLE = {errno.EROFS, errno.EACCES, errno.EPERM}


def file_failure(path: Path, exc: OSError, what: str = "the output folder") -> StoreError:
    """The StoreError an OSError from writing `path` means; `what` names the place for people."""
    if exc.errno in _FULL:
        return StoreFull(f"{what}'s disk is full ({path}: {exc.strerror})")
    if exc.errno in _UNWRITABLE:
        return StoreUnwritable(f"{path}: cannot write {what} ({exc.strerror})")
    return StoreError(f"{path}: cannot write {what}: {exc.strerror or exc}")


def _partial(path: str) -> str:
    """Where `path` is written before it is renamed into place: hidden, and unique to this
    process and thread, so two writers of one file never write into each other's. (As
    strings: a rebuild writes tens of thousands of files, and Path's parsing shows.)"""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.{os.getpid()}-{threading.get_ident()}.tmp")


def is_partial(path: Path) -> bool:
    """A leftover of a write that was killed before its rename."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def write_atomic(path: Path | str, content: str | bytes, what: str = "the output folder") -> None:
    """Replace `path` with `content` in one step; an OSError becomes the StoreError it means."""
    data = content.encode("utf-8") if isinstance(content, str) else content
    target = os.fspath(path)
    partial = _partial(target)
    try:
        try:
            handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            handle = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(partial, target)
    except OSError as exc:
        _remove(partial)
        raise file_failure(Path(target), exc, what) from None
    except BaseException:
        _remove(partial)
        raise


def _remove(partial: str) -> None:
    try:
        os.unlink(partial)
    except FileNotFoundError:
        pass


def escaped(text: str) -> str:
    """`text` as UTF-8 can hold it: a lone surrogate (Python keeps one in a string a program
    made: a brick's exception message, a file name decoded with surrogateescape) written as
    its escape (`\\udcff`), everything else as it is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text
