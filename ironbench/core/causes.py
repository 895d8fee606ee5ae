"""Why a validation failed: causes read from the debug files a target wrote, by rules kept as data.

The rules live beside the outcome rules (`failure_causes:` in a rules YAML): which files hold
a validation attempt's output, which of them record a failure, the cause patterns tried in
order, and the patterns that count tests. A target with another format gets its own rules
file; nothing here knows pytest.

The debug files are the target's, so they are data (as targets/brick.py takes a brick): their
folder is opened beneath the working folder one component at a time without following a link,
each file opened from that folder's descriptor without following one, regular files only, each
read up to a cap, and no more names listed than a cap allows.
"""

import os
import re
import stat
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, field_validator

from ironbench.core.kinds import FAILURE_CAUSES, AttemptCauseName

MAX_DEBUG_BYTES = 4 * 1024 * 1024  # a debug file is a test run's output: a larger one is read up to here
MAX_DEBUG_FILES = 64
MAX_DEBUG_TOTAL = 8 * 1024 * 1024  # read of an invocation's debug files, all told: the rest is not read
MAX_DEBUG_NAMES = 10_000  # a debug folder holding more names is not read: no causes
_OPEN_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)


def _compiles(value: str) -> str:
    try:
        re.compile(value, re.MULTILINE)
    except re.error as exc:
        raise ValueError(f"{value!r} is not a regular expression: {exc}") from None
    return value


class CauseRule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    cause: AttemptCauseName
    pattern: str

    @field_validator("pattern")
    @classmethod
    def _compiled(cls, value: str) -> str:
        return _compiles(value)


class FailureCauseRules(BaseModel):
    """Where a target records its validation attempts, and how to tell why each failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    directory: str  # relative to the invocation's working directory
    # A debug file of one attempt; the named group `attempt` numbers it.
    files: str
    # Present in a file whose attempt failed (none: every matching file is a failure).
    failed_when: str | None = None
    causes: list[CauseRule]  # the first whose pattern is found names the cause; none: other
    # The line that sums up a test run; counts are read from the last one found.
    summary: str | None = None
    passed: str | None = None  # with one group: the number of tests that passed
    failed: str | None = None

    @field_validator("files", "failed_when", "summary", "passed", "failed")
    @classmethod
    def _compiled(cls, value: str | None) -> str | None:
        return value if value is None else _compiles(value)

    @field_validator("files")
    @classmethod
    def _numbers_attempts(cls, value: str) -> str:
        if "attempt" not in re.compile(value).groupindex:
            raise ValueError(f"{value!r} needs a named group (?P<attempt>...) numbering the attempt")
        return value

    @cached_property
    def compiled(self) -> dict[str, re.Pattern]:
        fields = {"files": self.files, "failed_when": self.failed_when, "summary": self.summary}
        fields |= {"passed": self.passed, "failed": self.failed}
        return {name: re.compile(value, re.MULTILINE) for name, value in fields.items() if value is not None}

    @cached_property
    def cause_patterns(self) -> list[tuple[str, re.Pattern]]:  # (an AttemptCauseName, its pattern)
        return [(rule.cause, re.compile(rule.pattern, re.MULTILINE)) for rule in self.causes]


@dataclass(frozen=True, slots=True)
class AttemptCause:
    """One failed validation attempt: its number, its cause and the tests it counted."""

    attempt: int
    cause: str
    passed: int | None = None
    failed: int | None = None
    file: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


MAX_LINE = 1024  # characters of a line a rule reads
MAX_RUN = 64  # a run of spaces or tabs longer than this reads as this long
_LONG_RUN = re.compile(rf"[ \t]{{{MAX_RUN + 1},}}")


def as_lines(text: str) -> list[str]:
    """`text` as the lines its rules read, one at a time: each cut, its trailing blanks and its
    long runs of blanks shortened. The rules are line rules (`^`...`$`), and a target's output
    is its own: matched whole, a pattern such as `^E?\\s*Error` crosses every newline of a
    file of newlines, and `(?P<path>.+?)\\s*$` every blank of a long line, in time that grows
    with the square of the text (minutes of the harness's processor for a few kilobytes)."""
    lines = []
    for line in text.splitlines():
        line = line[:MAX_LINE].rstrip()
        lines.append(_LONG_RUN.sub(" " * MAX_RUN, line) if "  " in line or "\t" in line else line)
    return lines


def first_match(pattern: re.Pattern, lines: list[str]) -> re.Match | None:
    """The first line's match of `pattern` (None: no line matches)."""
    for line in lines:
        found = pattern.search(line)
        if found is not None:
            return found
    return None


def _count(pattern: re.Pattern | None, lines: list[str]) -> int | None:
    if pattern is None:
        return None
    found = first_match(pattern, lines)
    return int(found.group(1)) if found else None


def test_counts(rules: FailureCauseRules, text: str | list[str]) -> tuple[int | None, int | None]:
    """(passed, failed) from the last summary line (the whole text without a summary rule);
    a summary without one of them counts it as 0."""
    patterns = rules.compiled
    where = as_lines(text) if isinstance(text, str) else text
    if "summary" in patterns:
        summaries = [line for line in where if patterns["summary"].search(line)]
        if not summaries:
            return None, None
        where = summaries[-1:]
    passed, failed = _count(patterns.get("passed"), where), _count(patterns.get("failed"), where)
    if "summary" in patterns:
        passed, failed = passed or 0, failed or 0
    return passed, failed


def classify(rules: FailureCauseRules, text: str, lines: list[str] | None = None) -> tuple[str, int | None, int | None]:
    """The cause of one failed attempt from its recorded output (`lines`: as_lines of it, when
    the caller has them), and its test counts."""
    lines = as_lines(text) if lines is None else lines
    cause = next((c for c, p in rules.cause_patterns if first_match(p, lines)), "other")
    passed, failed = test_counts(rules, lines)
    return cause, passed, failed


def read_causes(rules: FailureCauseRules, workdir: Path) -> list[AttemptCause]:
    """Every failed attempt recorded under the working directory's debug folder, by attempt
    number (a later file of the same attempt wins), read as data (see the module's docstring).
    What cannot be read so is skipped: the target is hostile until proven otherwise, and its
    debug files are its own."""
    folder = _debug_folder(workdir, rules.directory)
    if folder is None:
        return []
    try:
        names = _names(folder)
        found: dict[int, AttemptCause] = {}
        left = MAX_DEBUG_TOTAL
        for name in names[: MAX_DEBUG_FILES * 4]:
            match = rules.compiled["files"].fullmatch(name)
            if match is None or left <= 0:
                continue
            data = _read(folder, name)
            if data is None:
                continue
            left -= len(data)
            text = data.decode("utf-8", errors="replace")
            lines = as_lines(text)
            if "failed_when" in rules.compiled and not first_match(rules.compiled["failed_when"], lines):
                continue
            attempt = int(match.group("attempt"))
            cause, passed, failed = classify(rules, text, lines)
            found[attempt] = AttemptCause(attempt, cause, passed, failed, name)
    finally:
        os.close(folder)
    return [found[k] for k in sorted(found)][:MAX_DEBUG_FILES]


def _debug_folder(workdir: Path, directory: str) -> int | None:
    """A descriptor of the rules' debug folder beneath `workdir`, each component opened from
    the last without following a link (None: not there, not a plain folder, or climbing out)."""
    parts = [part for part in PurePosixPath(directory).parts if part not in ("", ".")]
    if PurePosixPath(directory).is_absolute() or ".." in parts:
        return None
    try:
        fd = os.open(workdir, _OPEN_FOLDER)
    except OSError:
        return None
    for part in parts:
        try:
            following = os.open(part, _OPEN_FOLDER, dir_fd=fd)
        except OSError:
            os.close(fd)
            return None
        os.close(fd)
        fd = following
    return fd


def _names(folder: int) -> list[str]:
    """The folder's names, sorted (none when it holds more than MAX_DEBUG_NAMES)."""
    found: list[str] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            found.append(entry.name)
            if len(found) > MAX_DEBUG_NAMES:
                return []
    return sorted(found)


def _read(folder: int, name: str) -> bytes | None:
    """A regular file of `folder` of one name, opened without following a link, up to
    MAX_DEBUG_BYTES (None: not one, or unreadable)."""
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=folder)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:  # a hard link: a file of elsewhere
            return None
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size < MAX_DEBUG_BYTES and (chunk := os.read(fd, min(1 << 20, MAX_DEBUG_BYTES - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


__all__ = ["FAILURE_CAUSES", "AttemptCause", "FailureCauseRules", "classify", "read_causes", "test_counts"]
