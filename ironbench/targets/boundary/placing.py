"""Where the harness writes a brick's copies, decoys and check files: folders it makes itself,
fresh, when it needs them, and files it creates in them through the folder's descriptor, never
through a name anyone else could have made first.

A brick's processes may write where hosts' folders are (and, at `partial`, any of them): a
folder made ahead, or a name in a folder a brick can list, is a place a brick could plant a
link for the harness to write through. So every folder is opened with O_NOFOLLOW|O_DIRECTORY
once, every file is created relative to it with O_CREAT|O_EXCL|O_NOFOLLOW (a name that exists,
a link above all, is refused: `Planted`), and what a host is given is laid out in a folder of
the judge's own no brick can reach, then moved where the host can reach it under a fresh name
(`place`), whole, in one rename that replaces nothing.
"""

import ctypes
import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Self

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_RENAME_NOREPLACE = 1
_TRIES = 8  # fresh names tried before giving up (each is 64 random bits: one try is enough)


class Planted(Exception):
    """A name the harness was about to create already exists: someone else made it first."""


class Folder:
    """A folder the harness made (or was given), by its descriptor; what it creates in it."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd = fd
        self.path = path
        self.made: dict[str, Folder] = {}  # folders made here by this object (reused for nested files)

    @classmethod
    def open(cls, path: Path | str) -> "Folder":
        """An existing folder, opened without following a link at its last component."""
        return cls(os.open(path, _FOLDER), Path(path))

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for folder in self.made.values():
            folder.close()
        self.made = {}
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def folder(self, name: str) -> "Folder":
        """A folder `name` made here now (Planted when the name exists and this object did not make it)."""
        if name in self.made:
            return self.made[name]
        _plain(name)
        try:
            os.mkdir(name, 0o777, dir_fd=self.fd)
        except FileExistsError:
            raise Planted(f"{self.path / name} was there before the harness made it") from None
        try:
            made = Folder(os.open(name, _FOLDER, dir_fd=self.fd), self.path / name)
        except OSError as exc:  # replaced between the two calls
            raise Planted(f"{self.path / name} was replaced as the harness made it ({exc.strerror})") from None
        self.made[name] = made
        return made

    def fresh(self, prefix: str = "") -> "Folder":
        """A folder made here now under a name nobody could have guessed."""
        for _ in range(_TRIES):
            try:
                return self.folder(f"{prefix}{secrets.token_hex(8)}")
            except Planted:
                continue
        raise Planted(f"no fresh name could be made in {self.path}")

    def write(self, relative: str, data: bytes) -> Path:
        """A new file at `relative` (folders on its way made here, as this object made them)."""
        *folders, name = relative.split("/")
        here = self
        for part in folders:
            here = here.folder(part)
        _plain(name)
        try:
            fd = os.open(name, _NEW_FILE, 0o666, dir_fd=here.fd)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ELOOP):
                raise Planted(f"{here.path / name} was there before the harness wrote it") from None
            raise
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        return here.path / name

    def move(self, name: str, into: "Folder") -> Path:
        """Folder `name` of this one (laid out here, where no brick reaches) moved into `into`
        under a fresh name, whole, replacing nothing: where it is now."""
        for _ in range(_TRIES):
            fresh = secrets.token_hex(8)
            try:
                _rename_noreplace(self.fd, name, into.fd, fresh)
            except FileExistsError:
                continue
            moved = self.made.pop(name, None)
            if moved is not None:
                moved.close()
            return into.path / fresh
        raise Planted(f"no fresh name could be made in {into.path}")


def place(staging: Path, into: Path, lay_out: Callable[[Folder], None]) -> Path:
    """A folder laid out by `lay_out` where no brick reaches (a fresh folder in `staging`), then
    moved into `into` (where a brick's host reaches it) under a fresh name: the folder's path.
    Where the two are on different file systems it is laid out in a fresh folder of `into`."""
    with Folder.open(staging) as mine, Folder.open(into) as theirs:
        staged = mine.fresh("staged-")
        lay_out(staged)
        try:
            return mine.move(staged.path.name, theirs)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        fresh = theirs.fresh()
        lay_out(fresh)
        return fresh.path


def _plain(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\0" in name or len(os.fsencode(name)) > 255:
        raise ValueError(f"{name!r} is not a plain file name")


def _rename_noreplace(src_dir: int, src: str, dst_dir: int, dst: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:  # (glibc < 2.28) a fresh name was made moments ago: nothing holds it
        if _exists(dst_dir, dst):
            raise FileExistsError(errno.EEXIST, dst)
        os.rename(src, dst, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
        return
    if renameat2(src_dir, os.fsencode(src), dst_dir, os.fsencode(dst), _RENAME_NOREPLACE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), dst)


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True
