"""Waits on a coordinator's main thread that a Ctrl-C (or SIGTERM) always cuts short.

CPython runs a Python signal handler between bytecodes of the main thread, and a blocking
wait (on a Future, a queue, a sleep) is cut short only when the signal interrupts that very
system call. A signal that lands just before the wait blocks, or on another thread (the
kernel picks any thread that does not block it), stays pending until the wait ends by
itself: a run waiting on a target held for minutes would hold its Ctrl-C as long. These
waits block at most WAKE_SECONDS at a time, so a pending signal is acted on within that.
"""

import time
from collections.abc import Collection
from concurrent.futures import FIRST_COMPLETED, Future, wait
from typing import TypeVar

WAKE_SECONDS = 0.25

T = TypeVar("T")


def first_done(futures: Collection["Future[T]"], timeout: float | None = None) -> set["Future[T]"]:
    """The futures done once any is (none when `timeout` seconds pass first)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        step = WAKE_SECONDS if deadline is None else max(0.0, min(WAKE_SECONDS, deadline - time.monotonic()))
        done, _ = wait(futures, timeout=step, return_when=FIRST_COMPLETED)
        if done or not futures or (deadline is not None and time.monotonic() >= deadline):
            return done


def sleep(seconds: float) -> None:
    """time.sleep(seconds), woken every WAKE_SECONDS."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        time.sleep(min(left, WAKE_SECONDS))
