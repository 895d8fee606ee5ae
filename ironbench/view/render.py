"""Reports for the viewer's pages, rendered in a worker process and kept while they hold.

The report reads the store through DuckDB's sqlite scanner, which carries its own copy of
SQLite. Two SQLite copies in one process break SQLite's file locks: POSIX locks belong to
the process, so when one copy closes the store the other's locks go with it, and the next
process to open the store may rebuild its shared WAL index under a writer that has it
mapped (a run died of SIGBUS that way). So the viewer's own process keeps its read-only
SQLite connections and never runs DuckDB; one spawned worker renders, and the locks the
viewer holds keep any other process from rebuilding the index.

A rendering is reused while its run has no new event, and, for a run in progress, for a
while after (`pace`): a page shows the run's progress and events live, so its report
sections may lag a few seconds, and twenty open pages cost one rendering, not twenty.
"""

import asyncio
import os
import signal
import threading
import time
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path

from ironbench.core.errors import StoreError
from ironbench.report.page import PageParts

KEPT = 8  # renderings kept (a 10,000-invocation run's is about 2 MB)
PACE_FLOOR = 10.0  # a running run's report is rendered again at most this often...
PACE_FACTOR = 20.0  # ...or 20 times as long as it took, so rendering takes at most 5% of a core
PARENT_CHECK_SECONDS = 0.5


def _worker_start(viewer: int) -> None:
    # Ctrl-C reaches the whole process group; the viewer ends its worker itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A viewer killed outright cannot end it: the worker ends when it sees its parent gone
    # (an orphan would hold the store open, and whatever pipes the viewer was given).
    # (The viewer's pid is given: one killed while this started has already left it an orphan.)

    def watch() -> None:
        while os.getppid() == viewer:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    import ironbench.report.gather
    import ironbench.report.page
    import ironbench.report.verdict  # noqa: F401  (loaded once, before the first page asks)


def _ready() -> bool:
    return True


def report_parts(store_path: Path, run_id: str, compare_base: str | None = None) -> PageParts:
    """The report's parts for `run_id` (and its comparison against `compare_base`): in the worker."""
    from ironbench.report.gather import gather
    from ironbench.report.page import parts
    from ironbench.report.verdict import verdicts

    data = gather(store_path, run_id, compare_base)
    return parts(data, verdicts(data))


def report_file(store_path: Path, run_id: str) -> str:
    """The self-contained page `ironbench report` writes: in the worker."""
    from ironbench.report.gather import gather
    from ironbench.report.page import render
    from ironbench.report.verdict import verdicts

    data = gather(store_path, run_id)
    return render(data, verdicts(data))


@dataclass
class Rendering:
    value: PageParts | str
    last_seq: int  # the newest event of its runs when it was rendered
    rendered: float  # time.monotonic()
    seconds: float  # how long it took


class Renderer:
    """One worker process, and the renderings it made."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = Path(store_path)
        self.kept: OrderedDict[tuple, Rendering] = OrderedDict()
        self.pending: dict[tuple, tuple[int, asyncio.Future]] = {}  # key -> (its last event, the rendering)
        self.pool: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                1, mp_context=get_context("spawn"), initializer=_worker_start, initargs=(os.getpid(),)
            )
        return self.pool

    async def start(self) -> None:
        """Start the worker (its imports take a second or so) before the first page needs it."""
        await asyncio.get_running_loop().run_in_executor(self._pool(), _ready)

    def close(self) -> None:
        """End the worker at once, whatever it is rendering (Ctrl-C must not wait for a report)."""
        pool, self.pool = self.pool, None
        if pool is None:
            return
        # ProcessPoolExecutor has no public way to end its workers before Python 3.14
        # (terminate_workers): its process table is read as the standard library keeps it.
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(5)

    def pace(self, key: tuple) -> float:
        """Seconds a running run's rendering is reused for."""
        kept = self.kept.get(key)
        return max(PACE_FLOOR, PACE_FACTOR * (kept.seconds if kept else 0.0))

    async def get(
        self, key: tuple, last_seq: int, live: bool, function, *args, wait: float | None = None
    ) -> PageParts | str | None:
        """`function(*args)` rendered in the worker, or the kept rendering while it holds:
        no event since, or (`live`) one rendered less than `pace` seconds ago. With `wait`,
        None if it takes longer: the rendering goes on, for the page's next request."""
        kept = self._holding(key, last_seq, live)
        if kept is not None:
            return kept.value
        # Pages asking at once for the same report wait for one rendering (of a run in
        # progress, whatever its newest event; of an ended run, of that very event).
        pending = self.pending.get(key)
        if pending is not None and (pending[0] == last_seq or live):
            task = pending[1]
        else:
            task = asyncio.ensure_future(self._render(key, last_seq, function, args))
            self.pending[key] = (last_seq, task)
            task.add_done_callback(lambda done: self._done(key, done))
        try:
            # shielded: a page that goes (or stops waiting) does not cancel the others' rendering
            return (await asyncio.wait_for(asyncio.shield(task), wait)).value
        except TimeoutError:
            return None

    async def _render(self, key: tuple, last_seq: int, function, args: tuple) -> Rendering:
        started = time.perf_counter()
        try:
            value = await asyncio.get_running_loop().run_in_executor(self._pool(), function, *args)
        except BrokenProcessPool:
            self.pool = None  # the next page starts a new worker
            raise StoreError("the viewer's report worker stopped; reload the page") from None
        kept = Rendering(value, last_seq, time.monotonic(), time.perf_counter() - started)
        self.kept[key] = kept
        while len(self.kept) > KEPT:
            self.kept.popitem(last=False)
        return kept

    def _done(self, key: tuple, task: asyncio.Future) -> None:
        if key in self.pending and self.pending[key][1] is task:
            del self.pending[key]
        if not task.cancelled():
            task.exception()  # retrieved: a page that stopped waiting is told by its next request

    def _holding(self, key: tuple, last_seq: int, live: bool) -> Rendering | None:
        kept = self.kept.get(key)
        if kept is None:
            return None
        fresh = kept.last_seq == last_seq or (live and time.monotonic() - kept.rendered < self.pace(key))
        if not fresh:
            return None
        self.kept.move_to_end(key)
        return kept
