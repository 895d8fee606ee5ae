"""The store's tail, shared by every open page, and the server-sent events it becomes.

One task reads `events` past the last sequence number it saw (a cheap indexed read, a few
times a second, whatever the number of pages) and hands each batch to every subscribed
stream. A stream first catches up from the store, from the sequence number its page last
saw (`Last-Event-ID`, or the page's own) up to where the tail stood when it subscribed, then
follows the tail: each event is sent once, in the store's order, with `id: <seq>`, so a page
that reconnects resumes exactly where it stopped.
"""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

import anyio

from ironbench.core.events import RecordedEvent
from ironbench.report.markup import Markup
from ironbench.view.facts import fact_item, listed
from ironbench.view.reader import Reader

TICK_SECONDS = 0.1  # how often the tail looks for new events: well inside the 1 s a page promises
BATCH = 2000  # events read at once
QUEUE = 200  # batches a slow page may fall behind before its stream is closed (it reconnects and catches up)
PING_SECONDS = 15.0


class Pushed(Protocol):
    """What a server-sent event carries: a record, as JSON."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class _Record:
    def to_dict(self) -> dict[str, Any]:
        """Its fields by name, in their order (a page's script reads them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class Fact(_Record):
    """A run's event as its page lists it: its line (`facts.fact_item`)."""

    seq: int
    html: Markup


@dataclass(frozen=True, slots=True)
class Described(_Record):
    """A run as open pages show it after a batch: its status, its progress and its row in the runs table."""

    run: str
    status: str  # as the viewer shows it (`pages.shown_status`)
    done: int
    planned: int | None
    decisions: int
    text: str  # the progress in words (`Progress.text`)
    row: Markup  # its row in the runs table (`pages.run_row`)
    pace: float  # seconds between two renderings of its report on an open page


def message(kind: str, seq: int, data: Pushed) -> str:
    """One server-sent event; the JSON is one line, so `data:` needs no splitting."""
    return f"id: {seq}\nevent: {kind}\ndata: {json.dumps(data.to_dict(), separators=(',', ':'))}\n\n"


@dataclass
class Batch:
    """Events after one sequence number up to `last`: the listed ones with their line, and
    each touched run's description (status, counts, progress) as it stands after them."""

    last: int
    facts: list[tuple[RecordedEvent, Markup]]
    runs: dict[str, Described]
    _sent: dict[int, str] = field(default_factory=dict)

    def events(self, run_id: str | None, after: int) -> str:
        """The server-sent events one stream gets: a run's page, its facts and its progress;
        the runs page (`run_id` None), every touched run's progress."""
        out = []
        if run_id is not None:
            for recorded, line in self.facts:
                if recorded.run_id == run_id and recorded.seq > after:
                    if recorded.seq not in self._sent:
                        self._sent[recorded.seq] = message("fact", recorded.seq, Fact(recorded.seq, line))
                    out.append(self._sent[recorded.seq])
            if run_id in self.runs:
                out.append(message("progress", self.last, self.runs[run_id]))
        else:
            out += [message("progress", self.last, described) for described in self.runs.values()]
        return "".join(out)


# A run as open pages see it after a batch (status, counts, progress), read with the given reader.
Describe = Callable[[Reader, str], Described]


def read_batch(
    reader: Reader, describe: Describe, after: int, until: int | None = None, run_id: str | None = None
) -> Batch | None:
    """The events after `after` (up to `until`; of one run, or of all), or None when there are none."""
    found = reader.events(after, until, run_id, limit=BATCH)
    if not found:
        return None
    runs = dict.fromkeys(f.run_id for f in found)
    return Batch(
        found[-1].seq,
        [(f, fact_item(f)) for f in found if listed(f)],
        {run: describe(reader, run) for run in runs},
    )


class Subscription:
    """One stream's queue of batches; `dropped` once it fell too far behind."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Batch] = asyncio.Queue(QUEUE)
        self.dropped = False


class Tail:
    """Follows `events` for every stream of this server."""

    def __init__(self, reader: Reader, describe: Describe, tick: float = TICK_SECONDS) -> None:
        self.reader, self.describe, self.tick = reader, describe, tick
        self.position = reader.last_seq()
        self.subscriptions: set[Subscription] = set()

    def subscribe(self) -> tuple[Subscription, int]:
        """A subscription to the batches after the returned position (taken with no await in
        between, so nothing the tail reads can fall between a stream's catch-up and its queue)."""
        subscription = Subscription()
        self.subscriptions.add(subscription)
        return subscription, self.position

    def unsubscribe(self, subscription: Subscription) -> None:
        self.subscriptions.discard(subscription)

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            if self.subscriptions:
                batch = await anyio.to_thread.run_sync(read_batch, self.reader, self.describe, self.position)
                if batch is not None:
                    self.position = batch.last
                    for subscription in list(self.subscriptions):
                        try:
                            subscription.queue.put_nowait(batch)
                        except asyncio.QueueFull:  # too slow to keep up: it reconnects and catches up
                            subscription.dropped = True
                            self.subscriptions.discard(subscription)
            else:
                # No page listens: only the position moves, so an idle viewer reads next to nothing.
                seq = await anyio.to_thread.run_sync(self.reader.last_seq)
                if not self.subscriptions:  # one may have subscribed at the old position meanwhile
                    self.position = seq
            try:
                await asyncio.wait_for(stopping.wait(), self.tick)
            except TimeoutError:
                pass


async def stream(
    tail: Tail, reader: Reader, run_id: str | None, after: int | None, stopping: asyncio.Event
) -> AsyncIterator[str]:
    """A page's server-sent events: the catch-up from `after`, then the tail, until the page
    goes or the server stops."""
    subscription, until = tail.subscribe()
    try:
        yield "retry: 1000\n\n"
        sent = until if after is None else after
        while sent < until:
            batch = await anyio.to_thread.run_sync(read_batch, reader, tail.describe, sent, until, run_id)
            if batch is None:
                break
            yield batch.events(run_id, sent)
            sent = batch.last
        sent = max(sent, until)
        while not stopping.is_set():
            if subscription.dropped and subscription.queue.empty():
                return  # the page reconnects with its Last-Event-ID and catches up from the store
            getting = asyncio.ensure_future(subscription.queue.get())
            stopped = asyncio.ensure_future(stopping.wait())
            try:
                done, _ = await asyncio.wait(
                    {getting, stopped}, timeout=PING_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                stopped.cancel()
                if not getting.done():
                    getting.cancel()
            if getting not in done:
                if not done:
                    yield ": still here\n\n"  # a comment line: keeps proxies and the page's connection open
                continue
            batch = getting.result()
            text = batch.events(run_id, sent)
            sent = max(sent, batch.last)
            if text:
                yield text
    finally:
        tail.unsubscribe(subscription)
