"""One check, judged: the brick's host forked by the host server, the check's own code run
here (a process forked from the zygote, which never imports what the target wrote), and what
each found sent back as facts (the verdict is decided once, from them: verdict.decide).

A python check's source runs in a namespace of its own whose builtins are the real ones; a name
it uses and does not define is looked up in the brick's module, as a remote value (old checks
call helpers their brick defines; HumanEval's suite gives its own copy of the helpers its tests
call). A pytest check's files run from a private folder with a private ini, no conftest, no
plugin autoload, no cache; `import BRICK` in them gives the brick's module over the boundary.
Every other import is the judge's own (imports.py): a brick saved under the name of a module the
judge has is refused before it runs.
"""

import contextlib
import linecache
import os
import secrets
import select
import signal
import socket
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from ironbench.core.kinds import CheckVerdict
from ironbench.targets.boundary import imports, remote
from ironbench.targets.boundary.placing import Folder, Planted, place
from ironbench.targets.boundary.protocol import (
    Answer,
    CheckOrder,
    Fact,
    FrameError,
    Frames,
    HostOrder,
    Op,
    Setup,
    encode_message,
)
from ironbench.targets.boundary.remote import (
    BoundaryRefused,
    BrickGone,
    BrickModule,
    CheckTimeout,
    Findings,
    RemoteCallable,
    RemoteObject,
    Session,
)
from ironbench.targets.boundary.tamper import Capture, Watch
from ironbench.targets.brick import Brick

OUTPUT_CAP = 64 * 1024  # bytes of each of the host's streams kept
ALARM_GRACE = 0.5  # past the deadline, a check busy on its own side is interrupted
CHECK_FILENAME = "<check>"
DECOY_FOLDER = "ironbench_check"  # where a brick looking for its check would look (watched)
DECOY = "def test_hidden():\n    assert True\n"
HOST_START_SECONDS = 60.0  # the host server forks a host in milliseconds; a loaded machine is slow
EXIT_REPORT_SECONDS = 2.0  # a host that has ended: the time the server gets to report how
HOST_FOLDER = "brick"  # the brick's copies: the host's working folder, the only one it writes
NAME_MAX = 255  # bytes of a file's name (Linux)
PLACE_TRIES = 3  # a folder laid out again when a name in it was taken as it was written


@dataclass
class Ran:
    """What the check's own code concluded (one fact among the others the judge found)."""

    verdict: CheckVerdict
    detail: str = ""
    passed: int | None = None
    failed: int | None = None

    def fact(self) -> Fact:
        return Fact(self.verdict, self.detail, "check")


def host_env(folder: str) -> dict[str, str]:
    """The host's whole environment: nothing of the harness's (no secrets, no PYTHON* of its
    own), a home and temporary folder inside its own folder, reproducible hashing."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": folder,
        "TMPDIR": folder,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
    }


def copy_brick(brick: Brick, folder: Folder) -> Path:
    """The brick's copy in `folder`, and the files taken beside it (its own test), written from
    the bytes the harness took (targets/brick.py): nothing is read from the target's folder
    here, and nothing is written through a name that was there before (placing.py)."""
    copied = folder.write(brick.name, brick.content)
    for name, data in brick.beside:
        folder.write(name, data)
    return copied


def decoy_name(module: str) -> str:
    """The decoy test's file name for a brick's module: `test_MODULE.py`, cut to a name's
    bytes (a brick's name may be as long as a name can be, in any script)."""
    name = f"test_{module}".encode()[: NAME_MAX - 3].decode("utf-8", "ignore")
    return f"{name}.py"


class ForkedHost:
    """A host the host server forked: its pid, then its exit code, as the server writes them on
    the host's status pipe (closed without one when the server itself has gone)."""

    def __init__(self, status_fd: int, wait_s: float) -> None:
        self.fd = status_fd
        self.frames = Frames(64)
        self.gone = False  # the pipe closed: no more news
        self.returncode: int | None = None
        told = self._told(wait_s)
        if told is None:
            raise OSError("the host server did not start a host")
        self.pid = told

    def _told(self, wait_s: float) -> int | None:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                payload = self.frames.next()
            except FrameError:
                payload, self.gone = None, True
            if payload is not None:
                return int(payload)
            if self.gone:
                return None
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None
            chunk = os.read(self.fd, 64)
            if not chunk:
                self.gone = True
            self.frames.feed(chunk)

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._told(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            self.returncode = self._told(3600.0 if timeout is None else timeout)
            if self.returncode is None and not self.gone:
                raise subprocess.TimeoutExpired("host", timeout or 0.0)
        return self.returncode


class Judge:
    """One check's trusted side, in two steps: `prepare` (before its check is known: its folder
    laid out, its host started and waiting) and `run` (the check itself)."""

    def __init__(self, setup: Setup, server: socket.socket, mark: str, folder: Path, private: Path) -> None:
        self.setup = setup
        self.server = server  # the host server's control socket
        self.mark = mark  # the host server's honeypot (on its command line, which its hosts share)
        self.folder = folder  # the check's folder: the host's, decoys
        self.private = private  # the judge's own: the check's files, its output
        self.host_dir = folder  # the brick's folder once placed (a fresh one: `_placed`)
        self.module = ""  # the brick's module name, once it is copied in
        self.order: CheckOrder | None = None
        self.imported = imports.Imported(())
        self.findings = Findings()
        self.started = time.monotonic()
        self.deadline = self.started + 3600.0
        self.session: Session | None = None
        self.captures: list[Capture] = []
        self.watch = Watch([])
        self.decoys: list[str] = []
        self.check_files: dict[str, str] = {}

    # -- the host -----------------------------------------------------------------------------

    def prepare(self) -> None:
        """The host started, waiting for its first request (in the check's folder: nothing is
        written there before the check comes, and then only in a folder made for it)."""
        self.start_host()

    def start_host(self) -> Session:
        """Ask the host server for a fresh host in this check's folder, on pipes of its own."""
        folder = str(self.folder)
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        status_r, status_w = os.pipe()
        order = encode_message(HostOrder(folder, host_env(folder)))
        try:
            socket.send_fds(self.server, [order], [request_r, reply_w, out_w, err_w, status_w])
        finally:
            for fd in (request_r, reply_w, out_w, err_w, status_w):
                os.close(fd)
        process = ForkedHost(status_r, HOST_START_SECONDS)
        out, err = Capture(self.mark, OUTPUT_CAP), Capture(self.mark, OUTPUT_CAP)
        self.captures = [out, err]
        outputs = {out_r: (out, "stdout"), err_r: (err, "stderr")}
        self.session = Session(process, request_w, reply_r, outputs, self.deadline, self.findings)
        return self.session

    def stop_host(self) -> None:
        """After the check: a host that ended by itself before now ended early; then it is killed."""
        session = self.session
        if session is None:
            return
        process = session.process
        status = process.poll()
        if status is None and _ended(process.pid):  # ended, not yet reaped by the server: its status comes
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = process.wait(EXIT_REPORT_SECONDS)
        if status is not None and status >= 0 and not self.findings.ended and session.dead is None and self.order:
            line = f"the brick's process exited (status {status}) before the check finished"
            self.findings.add("tampered", line, "host")
        if status is None:  # not reaped yet: its pid (its group's) is still its own
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        session.drain(0.0)  # what it printed is in the pipes already; the server reaps it
        for capture, stream in zip(self.captures, ("stdout", "stderr"), strict=True):
            for line in capture.evidence(stream):
                self.findings.add("tampered", line, "host")

    # -- the check ----------------------------------------------------------------------------

    def run(self, order: CheckOrder) -> Answer:
        """The check of `order`'s brick: the facts the check and its host gave (never a verdict)."""
        self.order = order
        self.imported = imports.Imported([order.source, *order.files.values()])
        self.started = time.monotonic()
        self.deadline = self.started + float(order.timeout)
        if self.session is not None:
            self.session.deadline = self.deadline
        sys.dont_write_bytecode = True  # the check's files are compiled in a folder removed after
        signal.signal(signal.SIGALRM, self._alarm)
        signal.setitimer(signal.ITIMER_REAL, max(0.01, self.deadline - time.monotonic()) + ALARM_GRACE)
        ran: Ran | None = None
        try:
            refused = self._placed()
            if refused is not None:
                self.findings.facts.append(refused)
            else:
                ran = self._run()
        except CheckTimeout:
            ran = None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        self.stop_host()
        for path in self.watch.opened():
            self._opened(path)
        self.watch.close()
        if self.findings.timed_out:
            self.findings.add("timeout", f"killed after {order.timeout:g} s")
        facts = [*self.findings.facts, *([ran.fact()] if ran is not None else [])]
        return Answer(
            tuple(facts),
            tuple(self.findings.notes),
            ran.passed if ran else None,
            ran.failed if ran else None,
            int((time.monotonic() - self.started) * 1000),
        )

    def _placed(self) -> Fact | None:
        """The brick copied in beside its host, the decoys laid and watched; why not, when its
        name is one of the judge's modules."""
        assert self.order is not None
        brick = Brick.from_wire(self.order.brick)
        refused = imports.refusal(brick.module, self.imported)
        if refused is not None:
            return refused
        self.module = brick.module
        self.host_dir = self._lay_out(brick)
        decoy = self.host_dir.parent / DECOY_FOLDER / decoy_name(self.module)
        self.decoys = [str(decoy)]
        self.watch = Watch(self.decoys)
        if self.session is not None and self.session.process.poll() is not None:
            self.start_host()  # the host waiting for this check ended before it had a brick: a fresh one
        return None

    def _lay_out(self, brick: Brick) -> Path:
        """The brick's folder (its copies) beside the decoys' folder, laid out where no brick
        reaches and moved into the check's folder under a fresh name: the brick's folder. A
        name found taken (another brick's process planted it as the judge wrote) and the folder
        is laid out again under another fresh name."""

        def lay_out(folder: Folder) -> None:
            copy_brick(brick, folder.folder(HOST_FOLDER))
            folder.folder(DECOY_FOLDER).write(decoy_name(brick.module), DECOY.encode())

        for attempt in range(PLACE_TRIES):
            try:
                return place(self.private, self.folder, lay_out) / HOST_FOLDER
            except Planted:
                if attempt == PLACE_TRIES - 1:
                    raise
        raise AssertionError("unreachable")

    def _bound(self) -> frozenset[str]:
        """The names the check's `import` statements bind (read when a star import needs them)."""
        return self.imported.bound

    def _alarm(self, signum: int, frame: object) -> None:
        self.findings.timed_out = True
        raise CheckTimeout("the check's time ran out")

    def _opened(self, path: str) -> None:
        folder = str(self.folder)
        if path in self.decoys or path.startswith(folder):
            name = os.path.relpath(path, folder)
            self.findings.add("tampered", f"the brick opened {name}, where a check would be (a decoy)")
        else:
            shown = os.path.relpath(path, self.private) if path.startswith(str(self.private)) else path
            self.findings.add("tampered", f"the brick opened the check's own {shown}")

    def _run(self) -> Ran:
        session, order = self.session, self.order
        assert session is not None and order is not None  # prepared
        brick = str(self.host_dir / f"{self.module}.py")
        entry = order.entry_point if order.kind == "python" else ""
        try:  # the entry point comes with the module: one exchange fewer
            answer = session.request(
                Op.IMPORT, None, (brick, self.module, list(self.setup.paths), str(self.host_dir), entry)
            )
        except (BrickGone, BoundaryRefused) as exc:
            return Ran("import_error", str(exc))
        except CheckTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001 (the brick's exception at import is its verdict)
            print(_note_of(exc) or _last_line(exc), file=sys.stderr)
            return Ran("import_error", _last_line(exc))
        if type(answer) is not tuple or len(answer) != 2 or not isinstance(answer[0], RemoteObject):
            return Ran("import_error", "the brick's import answered no module")
        module, candidate = answer
        proxy = BrickModule(self.module, session, module)
        if order.kind == "python":
            return self.python(session, module, proxy, candidate)
        return self.pytest(proxy)

    def python(self, session: Session, module: RemoteObject, proxy: BrickModule, candidate: object) -> Ran:
        order = self.order
        assert order is not None
        entry = order.entry_point
        if not isinstance(candidate, RemoteCallable):
            return Ran("no_entry_point", f"module {self.module} defines no callable {entry}")
        remote.scoped_import(
            self.module, proxy, lambda g: g is not None and g.get("__name__") == "__check__", self._bound
        )
        namespace: dict = {
            "__name__": "__check__",
            "__builtins__": imports.CheckBuiltins(session, module),
            entry: candidate,
        }
        source = order.source
        linecache.cache[CHECK_FILENAME] = (len(source), None, source.splitlines(True), CHECK_FILENAME)
        asked = session.asked
        try:
            exec(compile(source, CHECK_FILENAME, "exec"), namespace)  # noqa: S102 (the suite's own check, trusted)
            check = namespace["check"]
        except (CheckTimeout, BrickGone, BoundaryRefused):
            raise
        except BaseException:  # noqa: BLE001 (a check source that does not run: the check's fault, unless the brick took part)
            why = _failed()
            if session.asked != asked:  # it failed on a name it asked of the brick: the brick's answer
                return Ran("wrong", why)
            return Ran("harness_fault", f"the check's source does not define check(candidate): {why}")
        try:
            check(candidate)
        except CheckTimeout:
            raise
        except BaseException:  # noqa: BLE001 (whatever the check raised, the brick's exceptions too, is its verdict)
            return Ran("wrong", _failed())
        return Ran("correct")

    def pytest(self, proxy: BrickModule) -> Ran:
        import pytest as pytest_

        order = self.order
        assert order is not None
        with Folder.open(self.private) as private:
            checks = private.folder("checks")
            for name, text in order.files.items():
                self.check_files[str(checks.write(name, text.encode("utf-8")))] = text
            ini = private.write("pytest.ini", b"[pytest]\n")
            checks_path = checks.path
        # the check's own files, watched whenever the check is not reading them (before its run,
        # and after pytest collected them); its folders only before its run (once on sys.path,
        # any import lists them)
        folders = Watch([str(self.private), str(checks_path)])
        files = Watch(list(self.check_files))
        prefix = str(checks_path) + os.sep
        remote.scoped_import(
            self.module,
            proxy,
            lambda g: g is not None and str(g.get("__file__", "")).startswith(prefix),
            self._bound,
        )
        tally = _Tally(self, files)
        for path in [*folders.opened(), *files.opened()]:
            self._opened(path)
        folders.close()
        # pytest's scratch (tmp_path) is in the check's folder, where the brick may write (honest
        # bricks write files their check names there); no host makes a link (seccomp.host_rules),
        # so the judge writes through none
        args = [
            "-c", str(ini), "--rootdir", str(self.private), "-p", "no:cacheprovider", "--noconftest",
            "-q", "--color=no", "--basetemp", str(self.host_dir.parent / f"scratch-{secrets.token_hex(8)}"), *_collected(checks_path, order.files),
        ]  # fmt: skip
        os.environ.pop("PYTEST_ADDOPTS", None)
        try:
            code = int(pytest_.main(args, plugins=[tally]))
        finally:
            for path in files.opened() if tally.collected else []:
                self._opened(path)
            files.close()
        passed, failed = tally.passed, tally.failed
        if code == 0 and not passed:  # every test skipped (a brick's attribute may decide a skipif)
            return Ran("wrong", "no test passed: every test collected was skipped", passed, failed)
        if code == 0:
            return Ran("correct", "", passed, failed)
        if code == 5:
            return Ran("harness_fault", "the check collected no tests", passed, failed)
        if code in (1, 2) and self.findings.missing and (tally.collect_errors or failed or tally.errors):
            missing = ", ".join(self.findings.missing)
            return Ran("no_entry_point", f"the tests cannot reach {missing} by its name", passed, failed)
        if code in (1, 2):
            return Ran("wrong", tally.first_failure, passed, failed)
        return Ran("harness_fault", f"pytest ended with exit code {code}", passed, failed)


def _collected(checks: Path, files: dict[str, str]) -> list[str]:
    """What pytest is given: a check that names one file, that file by its path (pytest runs a
    file it is given whatever its name: `check_add.py` too); a folder, the folder, collected by
    pytest's own rules (`test_*.py`, `*_test.py`)."""
    if len(files) == 1:
        (name,) = files
        return [str(checks / name)]
    return [str(checks)]


class _Tally:
    """The pytest check's plugin: counts, the first failure, and the windows of the file watch."""

    def __init__(self, judge: Judge, files: Watch) -> None:
        self.judge = judge
        self.files = files
        self.passed = 0
        self.failed = 0
        self.errors = 0
        self.collect_errors = 0
        self.collected = False
        self.first_failure = ""

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.collect_errors += 1
            self.first_failure = self.first_failure or f"{report.nodeid}: collection failed"

    def pytest_collection_finish(self, session) -> None:
        # the files were read to collect them; from now on the check reads their lines from here
        for path, text in self.judge.check_files.items():
            linecache.cache[path] = (len(text), None, text.splitlines(True), path)
        self.files.opened()
        self.collected = True

    def pytest_runtest_makereport(self, item, call) -> None:
        # a test runner's outcome raised by the brick (unittest.SkipTest, pytest's skip) arrives
        # as a class of its own, so it fails the test; that it tried is evidence
        value = call.excinfo.value if call.excinfo is not None else None
        if value is not None and vars(value).get(remote.BRICK_RAISED) and remote.runner_outcome(type(value)):
            self.judge.findings.add("tampered", f"the brick raised {type(value).__name__}, a test runner's own outcome")

    def pytest_runtest_logreport(self, report) -> None:
        if report.when == "call":
            if report.passed:
                self.passed += 1
            elif report.failed:
                self.failed += 1
        elif report.failed:
            self.errors += 1
        if report.failed and not self.first_failure:
            crash = getattr(report.longrepr, "reprcrash", None)
            self.first_failure = f"{report.nodeid}: {crash.message}" if crash is not None else report.nodeid


def _ended(pid: int) -> bool:
    """Whether `pid` has ended and waits to be reaped (a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return False
    return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3] in (b"Z", b"X")


def _failed() -> str:
    trace = traceback.format_exc()
    print(trace, file=sys.stderr, end="")
    lines = traceback.format_exception_only(*sys.exc_info()[:2])
    return lines[0].strip() if lines else ""


def _last_line(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return lines[0].strip() if lines else type(exc).__name__


def _note_of(exc: BaseException) -> str:
    notes = getattr(exc, "__notes__", None) or []
    return "\n".join(str(n) for n in notes)
