"""Waits a Ctrl-C cuts short, even one that did not wake the waiting thread."""

import signal
import threading
import time
from concurrent.futures import Future

import pytest

from ironbench.core import waits


def _ctrl_c_on_another_thread(after: float) -> dict[str, float]:
    """SIGINT caught by a thread of its own `after` seconds from now: the main thread's wait
    is not interrupted by it (as when one arrives just before that wait blocks)."""
    sent: dict[str, float] = {}

    def send() -> None:
        time.sleep(after)
        sent["at"] = time.monotonic()
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    threading.Thread(target=send, daemon=True).start()
    return sent


def test_first_done_gives_what_completed_or_nothing_at_its_timeout():
    done, waiting = Future(), Future()
    done.set_result(1)
    assert waits.first_done([done, waiting]) == {done}
    started = time.monotonic()
    assert waits.first_done([waiting], timeout=0.3) == set()
    assert 0.3 <= time.monotonic() - started < 0.3 + 2 * waits.WAKE_SECONDS + 1
    assert waits.first_done([]) == set()


def test_a_ctrl_c_during_first_done_is_raised_within_a_wake(ctrl_c_raises):
    later: Future[int] = Future()
    done = threading.Timer(10, later.set_result, (1,))
    done.daemon = True
    done.start()
    sent = _ctrl_c_on_another_thread(0.2)
    with pytest.raises(KeyboardInterrupt):
        waits.first_done([later])  # a bare wait() would hold it until the future completes
    assert time.monotonic() - sent["at"] < waits.WAKE_SECONDS + 1
    done.cancel()


def test_a_ctrl_c_during_sleep_is_raised_within_a_wake(ctrl_c_raises):
    sent = _ctrl_c_on_another_thread(0.2)
    with pytest.raises(KeyboardInterrupt):
        waits.sleep(10)
    assert time.monotonic() - sent["at"] < waits.WAKE_SECONDS + 1
