"""The check's trusted process, kept warm: pytest and the boundary imported once, a judge forked
per check.

    python -s -P -m ironbench.targets.boundary.zygote

It talks to the harness on its stdin and stdout (each message: its length, then JSON), one
check at a time: single-threaded, so forking is safe. Each judge runs in a child with its
output in a private folder and its verdict on a pipe of its own (no brick ever holds either);
the zygote keeps the check's deadline, and after each judge kills whatever is left below it
(it is a subreaper: a brick's process that left its session comes back to it). It and its
judges are not dumpable: a brick's process (same user) can neither trace them nor read their
memory, descriptors or folders through /proc.
"""

import ctypes
import importlib
import json
import os
import select
import shutil
import signal
import struct
import sys
import tempfile
import time
import traceback
from pathlib import Path

from ironbench.targets.boundary import procs

JUDGE_GRACE = 3.0  # past the check's timeout, a judge that has not answered is killed
OUTPUT_KEPT = 64 * 1024  # characters of a judge's output sent back (head and tail)
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
_LENGTH = struct.Struct("<I")
# What HumanEval's checks import, and what a pytest session loads lazily: imported once here.
_WARM = ("math", "random", "copy", "re", "string", "hashlib", "itertools", "collections", "fractions", "decimal")


def send(fd: int, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> dict | None:
    header = _read(fd, _LENGTH.size)
    if header is None:
        return None
    data = _read(fd, _LENGTH.unpack(header)[0])
    return None if data is None else json.loads(data)


def _read(fd: int, n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _harden() -> None:
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _warm() -> None:
    import _pytest.config
    import pytest  # noqa: F401

    import ironbench.targets.boundary.judge  # noqa: F401

    for name in (*_pytest.config.essential_plugins, *_pytest.config.default_plugins):
        try:
            importlib.import_module(f"_pytest.{name}")
        except ImportError:
            pass
    for name in _WARM:
        importlib.import_module(name)


def _kept(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    if len(text) <= OUTPUT_KEPT:
        return text
    half = OUTPUT_KEPT // 2
    return f"{text[:half]}\n...[{len(text) - 2 * half} characters dropped by ironbench]...\n{text[-half:]}"


def _judge_in_child(request: dict, private: Path, result_w: int) -> None:
    """In the forked child: judge, write the verdict on its own pipe, exit without cleanup."""
    code = 0
    try:
        out = os.open(private / "output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.chdir(private)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from ironbench.targets.boundary.judge import judge

        result = judge(request, private)
        sys.stdout.flush()
        sys.stderr.flush()
        send(result_w, result)
    except BaseException:  # noqa: BLE001 (the judge's own failure: the zygote reports it)
        traceback.print_exc()
        sys.stderr.flush()
        code = 1
    finally:
        os._exit(code)


def check(request: dict, root: str, channels: tuple[int, int]) -> dict:
    private = Path(tempfile.mkdtemp(dir=root))
    result_r, result_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(result_r)
        for fd in channels:
            os.close(fd)
        _judge_in_child(request, private, result_w)
    os.close(result_w)
    deadline = started + float(request["timeout"]) + JUDGE_GRACE
    data = bytearray()
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([result_r], [], [], left)
        if ready:
            chunk = os.read(result_r, 1 << 16)
            if not chunk:
                break
            data += chunk
    os.close(result_r)
    _, status = os.waitpid(pid, 0)
    procs.sweep()
    output = _kept(private / "output.txt")
    shutil.rmtree(private, ignore_errors=True)
    duration_ms = int((time.monotonic() - started) * 1000)
    if timed_out:
        return {
            "verdict": "timeout",
            "detail": f"killed after {request['timeout']:g} s",
            "duration_ms": duration_ms,
            "output": output,
        }
    if len(data) >= _LENGTH.size:
        return {**json.loads(bytes(data[_LENGTH.size :])), "output": output}
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        detail = f"the check's own process was killed by {name} while the brick ran"
        return {"verdict": "tampered", "detail": detail, "duration_ms": duration_ms, "output": output}
    last = output.strip().splitlines()[-1:] or [""]
    detail = f"the check's process failed: {last[0]}"
    return {"verdict": "harness_fault", "detail": detail, "duration_ms": duration_ms, "output": output}


def main() -> None:
    channel_in, channel_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the harness's Ctrl-C is the harness's to handle
    _harden()
    _warm()
    root = tempfile.mkdtemp(prefix="ironbench-trusted-")
    try:
        send(channel_out, {"ready": os.getpid()})
        while (request := receive(channel_in)) is not None:
            send(channel_out, check(request, root, (channel_in, channel_out)))
    finally:
        procs.sweep()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
