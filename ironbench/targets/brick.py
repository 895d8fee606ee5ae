"""A brick as the harness takes it from a target's folder: bytes read once through descriptors
opened beneath that folder without following a link, never a path the harness opens again.

The target names its brick (`[SUCCESS] ... saved to: verified_bricks/add.py`); that name is
data. It is taken only as a regular file reached from the target's working folder one
component at a time, each opened relative to the last with `O_NOFOLLOW` (no `..`, no absolute
path outside the folder, no symbolic link at any step, no hard link to a file elsewhere), of at
most `MAX_BRICK_BYTES`; its own test (`test_<name>.py` beside it) the same way. What cannot be
taken is no brick, with the reason; a name that leads into the answer key (the run's hidden
trees), or a link beside the brick that does, is evidence of tampering. Everything after this (the digest, the check's copies) is
made from the bytes taken here.
"""

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_BRICK_BYTES = 64 * 1024 * 1024  # a brick is source code: a larger "brick" is not taken
MAX_NEIGHBOURS = 1000  # the names beside a brick looked at for a link into the answer key
MAX_FOLDER_NAMES = 10_000  # a brick's folder holding more is not read whole: no brick
_OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO named as the brick opens at once instead of waiting for a writer
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


@dataclass(frozen=True, slots=True)
class Brick:
    """A brick taken from the target's folder: its name as saved, its bytes, the files taken
    beside it (its own test), and the names its folder held (evidence of what a test runner
    would load on its own)."""

    path: str  # as the target named it
    name: str  # its file name (`add.py`)
    content: bytes
    beside: tuple[tuple[str, bytes], ...] = ()
    neighbours: tuple[str, ...] = ()

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def module(self) -> str:
        return self.name.removesuffix(".py")

    def to_wire(self) -> dict:
        """The brick as plain data (its bytes as latin-1 text), for a process that checks it."""
        return {
            "path": self.path,
            "name": self.name,
            "content": self.content.decode("latin-1"),
            "beside": [[name, data.decode("latin-1")] for name, data in self.beside],
            "neighbours": list(self.neighbours),
        }

    @classmethod
    def from_wire(cls, data: dict) -> "Brick":
        return cls(
            str(data["path"]),
            str(data["name"]),
            str(data["content"]).encode("latin-1"),
            tuple((str(name), str(text).encode("latin-1")) for name, text in data.get("beside", ())),
            tuple(str(name) for name in data.get("neighbours", ())),
        )


@dataclass(frozen=True, slots=True)
class NoBrick:
    """Why the brick a target named was not taken; `tampered` when the name leads into the
    answer key (the evidence is in `reason`)."""

    path: str
    reason: str
    tampered: bool = False


class _Refused(Exception):
    pass


def take_brick(workdir: Path | str, named: str, answer_key: tuple[str, ...] = ()) -> Brick | NoBrick:
    """The brick `named` (relative to `workdir`, or absolute beneath it), taken as data; or why
    not. `answer_key`: the run's hidden trees, to tell a name that leads there (tampering) from
    one that merely leads nowhere."""
    try:
        parts = _parts(Path(workdir), named)
        root = os.open(workdir, _OPEN_FOLDER)
    except _Refused as refused:
        return _refusal(workdir, named, str(refused), answer_key)
    except OSError as exc:
        return NoBrick(named, f"the working folder cannot be opened: {exc.strerror or exc}")
    try:
        folder = _walk(root, parts[:-1], named)
        try:
            content = _read(folder, parts[-1], named)
            neighbours = _names(folder, named)
            beside = []
            own_test = f"test_{parts[-1]}"
            if own_test in neighbours:
                try:
                    beside.append((own_test, _read(folder, own_test, own_test)))
                except _Refused:
                    pass  # its test is not taken: the brick is checked without it
            planted = _links_into(folder, neighbours, workdir, named, answer_key)
        finally:
            if folder != root:
                os.close(folder)
    except _Refused as refused:
        return _refusal(workdir, named, str(refused), answer_key)
    finally:
        os.close(root)
    if planted is not None:
        return planted
    return Brick(named, parts[-1], content, tuple(beside), neighbours)


def as_recorded(taken: Brick | NoBrick, recorded_sha256: str | None) -> Brick | NoBrick:
    """A brick taken again after its run (`ironbench check RUN`), only when its bytes are the
    ones the run took (its recorded digest): a brick changed since is not the run's, and is no
    brick, with both digests (None recorded: a run from before digests, taken as it is)."""
    if isinstance(taken, NoBrick) or not recorded_sha256 or taken.sha256 == recorded_sha256:
        return taken
    return NoBrick(
        taken.path,
        f"the brick {taken.path} is not the one the run saved: its bytes changed since the run "
        f"(sha256 {taken.sha256}, the run recorded {recorded_sha256})",
    )


def _parts(workdir: Path, named: str) -> list[str]:
    """The components of `named` below `workdir`: refused when absolute outside it, climbing
    (`..`), empty or holding a NUL."""
    if not named or "\0" in named:
        raise _Refused(f"the brick's path {named!r} is no path")
    path = PurePosixPath(named)
    if path.is_absolute():
        # as the harness made the folder, or as the target saw it (the fence binds it at its real path)
        base = next(
            (b for b in (PurePosixPath(workdir), PurePosixPath(os.path.realpath(workdir))) if path.is_relative_to(b)),
            None,
        )
        if base is None:
            raise _Refused(f"the brick's path {named} is outside the target's working folder")
        path = path.relative_to(base)
    parts = [part for part in path.parts if part != "."]
    if ".." in parts:
        raise _Refused(f"the brick's path {named} climbs out of its folder ('..')")
    if not parts:
        raise _Refused(f"the brick's path {named!r} names the working folder itself")
    return parts


def _walk(root: int, folders: list[str], named: str) -> int:
    fd = root
    try:
        for part in folders:
            try:
                following = os.open(part, _OPEN_FOLDER, dir_fd=fd)
            except OSError as exc:
                raise _Refused(_why(exc, named, part)) from None
            if fd != root:
                os.close(fd)
            fd = following
    except BaseException:
        if fd != root:
            os.close(fd)
        raise
    return fd


def _read(folder: int, name: str, named: str) -> bytes:
    """A regular file of `folder`, opened without following a link, read from its descriptor."""
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=folder)
    except OSError as exc:
        raise _Refused(_why(exc, named, name)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f"the brick {named} is not a regular file")
        if info.st_nlink != 1:
            raise _Refused(f"the brick {named} is a hard link ({info.st_nlink} names): a copy of a file elsewhere")
        if info.st_size > MAX_BRICK_BYTES:
            raise _Refused(f"the brick {named} is larger than {MAX_BRICK_BYTES:,} bytes")
        os.set_blocking(fd, True)
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_BRICK_BYTES:
                raise _Refused(f"the brick {named} grew past {MAX_BRICK_BYTES:,} bytes while read")
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _Refused(f"the brick {named} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _why(exc: OSError, named: str, part: str) -> str:
    if exc.errno == errno.ELOOP:
        return f"the brick's path {named} goes through a symbolic link ({part})"
    if exc.errno == errno.ENOTDIR:
        return f"the brick's path {named} goes through {part}, which is not a folder"
    if exc.errno == errno.ENOENT:
        return f"the saved brick {named} is not in the target's working folder"
    return f"the brick {named} cannot be opened: {exc.strerror or exc}"


def _names(folder: int, named: str) -> tuple[str, ...]:
    """The names in the brick's folder (a folder of more than MAX_FOLDER_NAMES is refused: the
    harness reads no unbounded listing a target made)."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            found.append(entry.name)
            if len(found) > MAX_FOLDER_NAMES:
                raise _Refused(f"the folder of the brick {named} holds more than {MAX_FOLDER_NAMES:,} names")
    return tuple(sorted(found))


def _links_into(
    folder: int, neighbours: tuple[str, ...], workdir: Path | str, named: str, answer_key: tuple[str, ...]
) -> NoBrick | None:
    """Tampering when a link beside the brick (its own test, a data file) leads into the answer
    key: none is taken, but a brick that lays a way to its check beside itself is gaming it."""
    if not answer_key:
        return None
    for name in neighbours[:MAX_NEIGHBOURS]:
        try:
            if not stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
                continue
        except OSError:
            continue
        beside = os.path.join(os.path.dirname(named), name)
        found = _refusal(workdir, beside, f"{beside} beside the brick is a symbolic link", answer_key)
        if found.tampered:
            return NoBrick(named, found.reason, tampered=True)
    return None


def _refusal(workdir: Path | str, named: str, reason: str, answer_key: tuple[str, ...]) -> NoBrick:
    """A refusal, marked as tampering when the name (followed as the kernel would, which the
    harness never does to read it) leads into the answer key, not back into the target's own
    folder (which lies in the answer key's output folder)."""
    try:
        leads_to = os.path.realpath(os.path.join(workdir, named))
        own = os.path.realpath(workdir)
    except (OSError, ValueError):
        return NoBrick(named, reason)
    if _beneath(leads_to, own):
        return NoBrick(named, reason)
    for tree in answer_key:
        if _beneath(leads_to, tree):
            return NoBrick(named, f"{reason}: it leads into the answer key ({leads_to})", tampered=True)
    return NoBrick(named, reason)


def _beneath(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")
