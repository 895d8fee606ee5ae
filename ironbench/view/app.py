"""The viewer's ASGI app: its routes, what each reads, and what keeps a viewer from costing
a run anything (one tail for every page; a report rendered in a worker process at most once
per change of its run, however many pages show it: render.py).
"""

import asyncio
import os
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from ironbench.core.errors import IronbenchError, RunNotFound, StoreError
from ironbench.core.events import InvocationCompleted
from ironbench.report.markup import Markup
from ironbench.report.page import PageParts
from ironbench.view import pages, target_files
from ironbench.view.facts import fact_item, listed
from ironbench.view.guard import Guard
from ironbench.view.live import TICK_SECONDS, Described, Tail, stream
from ironbench.view.progress import (
    LIVE,
    Progress,
    eta,
    most_to_take,
    planned_groups,
)
from ironbench.view.reader import CaseRow, Decided, Reader, RunRow, check_store
from ironbench.view.render import Renderer, report_file, report_parts

if TYPE_CHECKING:
    from ironbench.run.planner import Group

# A page waits this long for its report; past it, the page comes without (its live parts
# and links are there) and gets the report when it is rendered: by script, or, without
# one, by reloading itself.
PAGE_WAIT = 0.6
PAGE_WAIT_VARIABLE = "IRONBENCH_VIEW_PAGE_WAIT"


def page_wait() -> float:
    given = os.environ.get(PAGE_WAIT_VARIABLE, "")
    try:
        return max(0.0, float(given)) if given else PAGE_WAIT
    except ValueError:
        raise IronbenchError(f"{PAGE_WAIT_VARIABLE}={given!r}: not a number of seconds") from None


def _static(name: str) -> tuple[str, str]:
    from ironbench.report.page import CSS, SCRIPT

    if name == "report.css":
        return CSS, "text/css"
    if name == "report.js":
        return SCRIPT, "text/javascript"
    text = resources.files("ironbench.view").joinpath("static", name).read_text(encoding="utf-8")
    return text, "text/css" if name.endswith(".css") else "text/javascript"


STATIC = ("report.css", "report.js", "view.css", "view.js")


class Viewer:
    """Everything the routes share: the store's readers, the tail, the caches."""

    def __init__(self, store_path: Path, tick: float = TICK_SECONDS) -> None:
        check_store(store_path)
        self.store_path = Path(store_path)
        self.label = str(store_path)
        self.reader = Reader(self.store_path)  # the pages'
        self.tail = Tail(Reader(self.store_path), self.describe, tick)  # the tail's own connection
        self.stopping = asyncio.Event()
        self.static = {name: _static(name) for name in STATIC}
        self.plans: dict[str, list[Group] | None] = {}
        self.below_full: dict[str, str | None] = {}  # an ended run's fence below full (read once)
        self.renderer = Renderer(self.store_path)

    def close(self) -> None:
        self.renderer.close()
        self.reader.close()
        self.tail.reader.close()

    # -- a run as pages see it -----------------------------------------------------------

    def describe(self, reader: Reader, run_id: str) -> Described:
        """A run's status, counts and progress, and its row in the runs table (pushed to pages)."""
        row = reader.run(run_id)
        verdict = pages.verdict_line(self.decided(reader, row))
        progress = self.progress(reader, row)
        return Described(
            run_id,
            pages.shown_status(row.status),
            progress.done,
            progress.planned,
            progress.decisions,
            progress.text(row.status),
            pages.run_row(row, verdict),
            self.pace(run_id),
        )

    def decided(self, reader: Reader, row: RunRow) -> Decided:
        from ironbench.projections.gauntlet_summary import PRIMARY_SCORER

        run_id = row.run_id
        engines = reader.violations(PRIMARY_SCORER, run_id).get(run_id, []) if row.gauntlet else []
        below = self.below_full.get(run_id)
        if run_id not in self.below_full:
            fence = reader.fence(run_id) if not row.imported else None
            below = fence.short() if fence is not None and fence.below_full else None
            if row.status != LIVE:  # a live run's late workers may still say theirs
                self.below_full[run_id] = below
        fenced_out = reader.fenced_out(run_id) if not row.gauntlet else 0
        return Decided(reader.tallies(run_id).get(run_id, {}), engines, below, fenced_out)

    def progress(self, reader: Reader, row: RunRow) -> Progress:
        run_id, status = row.run_id, row.status
        if row.gauntlet:
            turns = reader.suite(run_id).planned_turns
            remaining = (turns or 0) - row.turns
            pace = eta(reader.recent_completions(run_id), remaining) if status == LIVE and turns else None
            return Progress("turns", row.turns, turns, 0, 0, pace, row.cost_usd)
        live = status in (LIVE, "interrupted")
        plan = self.plans.get(run_id)
        if plan is None and live:  # an ended run took what it took: no plan needed
            plan = planned_groups(reader.suite(run_id), reader.ai_variants(run_id))
            if row.invocations or status != LIVE:  # AI rewrites are all made before the first invocation
                self.plans[run_id] = plan
        counts = reader.group_counts(run_id)
        decided = reader.decided_groups(run_id)
        decisions = Decided(reader.tallies(run_id).get(run_id, {})).decisions
        planned = row.invocations if not live else None
        if plan is not None and live:
            planned = most_to_take(plan, counts, decided, live=True)
        remaining = (planned or 0) - row.invocations
        pace = eta(reader.recent_completions(run_id), remaining) if status == LIVE and planned else None
        return Progress("invocations", row.invocations, planned, row.successes, decisions, pace, row.cost_usd)

    def pace(self, run_id: str) -> float:
        """Seconds between two renderings of a running run's report on an open page."""
        return self.renderer.pace(("run", run_id))

    # -- reports, rendered in the worker once per change of their runs (render.py) ------------

    async def report(self, run_id: str, wait: float | None = None) -> tuple[PageParts | None, Markup]:
        """The run's report sections (report.page.parts, as `ironbench report` renders them;
        None if not rendered within `wait` seconds) and the drill-down links."""

        def read() -> tuple[int, str, list[CaseRow], list[tuple[str, str, int, int]]]:
            status = self.reader.run(run_id).status
            return self.reader.last_seq(run_id), status, self.reader.cases(run_id), self.reader.conversations(run_id)

        last, status, cases, conversations = await self.read(read)
        parts = await self.renderer.get(
            ("run", run_id), last, status == LIVE, report_parts, self.store_path, run_id, wait=wait
        )
        assert parts is None or isinstance(parts, PageParts)  # report_parts returns nothing else
        return parts, pages.drill_section(run_id, cases, conversations)

    async def comparison(self, a: str, b: str, wait: float | None = None) -> PageParts | None:
        """B's report with its comparison against A, as `ironbench report B --compare A`."""

        def read() -> tuple[int, bool]:
            runs = [self.reader.run(a), self.reader.run(b)]  # RunNotFound for either before any rendering
            last = max(self.reader.last_seq(a), self.reader.last_seq(b))
            return last, any(r.status == LIVE for r in runs)

        last, live = await self.read(read)
        parts = await self.renderer.get(("compare", a, b), last, live, report_parts, self.store_path, b, a, wait=wait)
        assert parts is None or isinstance(parts, PageParts)
        return parts

    async def report_file(self, run_id: str) -> str:
        last, status = await self.read(lambda: (self.reader.last_seq(run_id), self.reader.run(run_id).status))
        page = await self.renderer.get(("file", run_id), last, status == LIVE, report_file, self.store_path, run_id)
        assert isinstance(page, str)
        return page

    async def read(self, function: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(function, *args)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status, headers={"cache-control": "no-store"})


@dataclass(frozen=True, slots=True)
class At:
    """Where a request asks: its route's path parameters, typed (`{seq:int}` and
    `{conversation:int}` arrive as numbers); a route without one leaves it empty."""

    run_id: str = ""
    case_id: str = ""
    seq: int = 0
    stream: str = ""
    name: str = ""
    engine: str = ""
    scenario: str = ""
    conversation: int = 0

    @classmethod
    def of(cls, request: Request) -> "At":
        return cls(**request.path_params)


def _pair(a: str = "", b: str = "", **_: str) -> tuple[str | None, str | None]:
    """The runs a comparison's address names: A (the reference) and B (None: not chosen)."""
    return a or None, b or None


def _after(request: Request) -> int | None:
    for given in (request.headers.get("last-event-id"), request.query_params.get("after")):
        if given is not None and given.strip().isdigit():
            return int(given)
    return None


def create_app(viewer: Viewer, hosts: set[str], token: str | None, wait: float = PAGE_WAIT) -> Guard:
    """The Starlette app behind its guard; a page waits `wait` seconds for its report."""
    reader = viewer.reader

    async def runs(request: Request) -> Response:
        query = pages.RunsQuery.of(**request.query_params)

        def read() -> tuple[int, list[pages.Listed]]:
            after = reader.last_seq()
            rows = reader.runs()
            from ironbench.projections.gauntlet_summary import PRIMARY_SCORER

            tallies = reader.tallies()
            violations = reader.violations(PRIMARY_SCORER)
            listed = [
                pages.Listed(r, pages.verdict_line(Decided(tallies.get(r.run_id, {}), violations.get(r.run_id, []))))
                for r in rows
            ]
            return after, listed

        after, listed = await viewer.read(read)
        shown = pages.select_runs(listed, query)
        return _html(pages.runs_page(viewer.label, listed, shown, query, after))

    async def run(request: Request) -> Response:
        run_id = At.of(request).run_id

        def read() -> tuple[int, RunRow, Progress, list[Markup], list[str]]:
            after = reader.last_seq()
            row = reader.run(run_id)
            recent = [
                e for e in reader.events(0, after, run_id, limit=4 * pages.RECENT_FACTS, newest=True) if listed(e)
            ]
            return (
                after,
                row,
                viewer.progress(reader, row),
                [fact_item(f) for f in recent[-pages.RECENT_FACTS :]],
                [r.run_id for r in reader.runs()],
            )

        (after, row, progress, recent, others), (parts, drill) = await asyncio.gather(
            viewer.read(read), viewer.report(run_id, wait)
        )
        return _html(pages.run_page(viewer.label, row, parts, progress, recent, drill, after, others))

    async def sections(request: Request) -> Response:
        parts, drill = await viewer.report(At.of(request).run_id)
        assert parts is not None  # waited for
        return _html(pages.report_main(parts, drill))

    async def standalone(request: Request) -> Response:
        from ironbench.report.page import CSP

        page = await viewer.report_file(At.of(request).run_id)
        # the file as `ironbench report` writes it: its inline style and script allowed by their hashes
        return HTMLResponse(page, headers={"content-security-policy": CSP})

    async def events(request: Request) -> Response:
        run_id = At.of(request).run_id or None
        if run_id is not None:
            await viewer.read(reader.run, run_id)  # 404 before the stream starts
        return StreamingResponse(
            stream(viewer.tail, reader, run_id, _after(request), viewer.stopping),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def case(request: Request) -> Response:
        at = At.of(request)
        run_id, case_id = at.run_id, at.case_id

        def read() -> str:
            base = reader.suite(run_id).instruction_of(case_id) or ""
            return pages.case_page(
                viewer.label,
                run_id,
                case_id,
                base,
                reader.case_logs(run_id, case_id),
                reader.of_case(run_id, case_id, "decision_taken"),
                reader.of_case(run_id, case_id, "variant_generated", "variant_dropped"),
                reader.of_case(run_id, case_id, "ai_output_rejected"),
            )

        return _html(await viewer.read(read))

    def _invocation(run_id: str, seq: int) -> tuple:
        recorded, superseded, surplus = reader.invocation(run_id, seq)
        assert isinstance(recorded.event, InvocationCompleted)  # reader.invocation reads no other type
        return recorded, recorded.event, superseded, surplus

    async def invocation(request: Request) -> Response:
        at = At.of(request)
        run_id, seq = at.run_id, at.seq

        def read() -> str:
            recorded, event, superseded, surplus = _invocation(run_id, seq)
            base = reader.suite(run_id).instruction_of(event.case_id) or event.instruction
            served = []  # the streams whose whole file is served
            for name in ("stdout", "stderr"):
                try:
                    target_files.output_file(event, name)
                    served.append(name)
                except target_files.NotServed:
                    pass
            debug: list[target_files.DebugFile] | str
            if not event.debug_enabled:
                debug = "Debug output was not enabled for this run (the suite's debug_enabled)."
            else:
                try:
                    debug = target_files.debug_files(event)
                except target_files.NotServed as exc:
                    debug = str(exc)
            calls = reader.model_calls(recorded, event) if event.model_calls is not None else []
            prices = reader.call_prices(recorded, event) if calls else {}
            return pages.invocation_page(
                viewer.label, recorded, superseded, surplus, base, served, debug, calls, prices
            )

        return _html(await viewer.read(read))

    async def shown_file(request: Request, find: Callable[[InvocationCompleted, str], Path], name: str) -> Response:
        """A file of an invocation, read in place (`find` says where it is and refuses what it must)."""
        at = At.of(request)

        def read() -> tuple[str, int]:
            _, event, _, _ = _invocation(at.run_id, at.seq)
            return target_files.read_shown(find(event, name))

        text, size = await viewer.read(read)
        return _text(text, size)

    async def output(request: Request) -> Response:
        name = At.of(request).stream
        if name not in ("stdout", "stderr"):
            raise RunNotFound(f"no {name!r} of an invocation")
        return await shown_file(request, target_files.output_file, name)

    async def debug_file(request: Request) -> Response:
        return await shown_file(request, target_files.debug_file, At.of(request).name)

    async def conversation(request: Request) -> Response:
        from ironbench.projections.gauntlet_summary import PRIMARY_SCORER

        at = At.of(request)
        thread = await viewer.read(reader.conversation, at.run_id, at.engine, at.scenario, at.conversation)
        scorers = {s.scorer for t in thread.turns for s in t.scores or ()}
        primary = PRIMARY_SCORER if PRIMARY_SCORER in scorers else min(scorers, default=None)
        return _html(pages.conversation_page(viewer.label, at.run_id, thread, primary))

    async def compare(request: Request) -> Response:
        a, b = _pair(**request.query_params)
        run_ids = [r.run_id for r in await viewer.read(reader.runs)]
        if a is None or b is None:
            return _html(pages.compare_page(viewer.label, run_ids, a, b, None, None))
        try:
            parts = await viewer.comparison(a, b, wait)
        except IronbenchError as exc:
            return _html(pages.compare_page(viewer.label, run_ids, a, b, None, str(exc)), 400)
        return _html(pages.compare_page(viewer.label, run_ids, a, b, parts, None, pending=parts is None))

    async def static(request: Request) -> Response:
        name = At.of(request).name
        if name not in viewer.static:
            return PlainTextResponse("not found", 404)
        text, media = viewer.static[name]
        return Response(text, media_type=media, headers={"cache-control": "no-cache"})

    async def no_icon(request: Request) -> Response:
        # asked for by a browser showing a file's text (the viewer's own pages name no icon)
        return Response(status_code=204, headers={"cache-control": "max-age=86400"})

    async def failed(request: Request, exc: Exception) -> Response:
        status = 400
        if isinstance(exc, target_files.Refused):
            status = 403
        elif isinstance(exc, RunNotFound | target_files.NotServed):
            status = 404
        elif isinstance(exc, StoreError):
            status = 503
        return _html(pages.error_page(viewer.label, status, str(exc)), status)

    @asynccontextmanager
    async def lifespan(app: Starlette):  # type: ignore[no-untyped-def]
        task = asyncio.create_task(viewer.tail.run(viewer.stopping))
        warming = asyncio.create_task(viewer.renderer.start())
        try:
            yield
        finally:
            viewer.stopping.set()
            warming.cancel()
            await task

    app = Starlette(
        routes=[
            Route("/", runs),
            Route("/stream", events),
            Route("/compare", compare),
            Route("/static/{name}", static),
            Route("/favicon.ico", no_icon),
            Route("/runs/{run_id}", run),
            Route("/runs/{run_id}/stream", events),
            Route("/runs/{run_id}/sections", sections),
            Route("/runs/{run_id}/report.html", standalone),
            Route("/runs/{run_id}/cases/{case_id}", case),
            Route("/runs/{run_id}/invocations/{seq:int}", invocation),
            Route("/runs/{run_id}/invocations/{seq:int}/debug/{name:path}", debug_file),
            Route("/runs/{run_id}/invocations/{seq:int}/{stream}", output),
            Route("/runs/{run_id}/conversations/{engine}/{scenario}/{conversation:int}", conversation),
        ],
        exception_handlers={IronbenchError: failed},
        lifespan=lifespan,
    )
    return Guard(app, hosts, token)


def _text(text: str, size: int) -> Response:
    if size > target_files.SHOWN_BYTES:
        text += f"\n...[ironbench view shows the first {target_files.SHOWN_BYTES} of {size} bytes]...\n"
    # text/plain and nosniff: whatever a target wrote in the file, a browser shows it as text
    return PlainTextResponse(text, headers={"content-disposition": "inline", "cache-control": "no-store"})
