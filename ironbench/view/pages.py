"""The viewer's pages as HTML, from data already read: the runs, a run (the report's own
sections, with its live parts around them), a case, an invocation, a conversation, a
comparison, and errors. Pure; every text goes through report.markup, which escapes it.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

from ironbench import __version__
from ironbench.analysis.model_traffic import cost, plural
from ironbench.core.events import (
    AiOutputRejected,
    DecisionTaken,
    InvocationCompleted,
    ModelCalled,
    ModelCallPriced,
    RecordedEvent,
    VariantDropped,
    VariantGenerated,
)
from ironbench.core.kinds import JUDGED, LADDER_DECISIONS, MATERIAL
from ironbench.core.labels import group_of
from ironbench.core.model_calls import is_ref
from ironbench.core.outcome_codes import BY_CODE, outcome_code
from ironbench.report.markup import Markup, el, join, word_diff_html
from ironbench.report.page import PageParts
from ironbench.report.records import Thread
from ironbench.report.sections.gauntlet import conversation as conversation_markup
from ironbench.report.verdict import ORIGINS
from ironbench.report.widgets import Col, Td, number, section, strip, table
from ironbench.view.facts import ai_rewrite, run_href
from ironbench.view.progress import Progress
from ironbench.view.reader import CaseRow, Decided, RunRow
from ironbench.view.target_files import DebugFile

# The store's `aborted` is a run stopped before its end (Ctrl-C, a failing backend, a full
# disk): the viewer says "stopped". `interrupted`: still `running` in the store, but its
# coordinator is gone (ironbench resume continues it).
SHOWN_STATUS = {"aborted": "stopped"}
STATUSES = ("running", "finished", "stopped", "interrupted")
RECENT_FACTS = 50
RELOAD_SECONDS = 2  # a page whose report is being rendered, read without scripts, reloads this often


def shown_status(status: str) -> str:
    return SHOWN_STATUS.get(status, status)


def document(
    title: str,
    store: str,
    *body,
    stream: str | None = None,
    after: int | None = None,
    page: str = "",
    filtered: bool = False,
    run: str | None = None,
    pending: bool = False,
) -> str:
    """A whole page: the viewer's bar, `body`, and the report's style and script (served by
    this server: the Content-Security-Policy allows this origin's files only). `pending`: its
    report is still being rendered; the script fetches it, and without scripts the page
    reloads itself until it is there. `filtered`: the runs page lists some runs only; `run`:
    the run a run's page shows."""
    head = el(
        "head",
        None,
        Markup('<meta charset="utf-8">'),
        el("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        el("meta", {"name": "generator", "content": f"ironbench {__version__}"}),
        el("title", None, title),
        el("link", {"rel": "icon", "href": "data:,"}),  # no icon: a browser would ask for /favicon.ico
        el("link", {"rel": "stylesheet", "href": "/static/report.css"}),
        el("link", {"rel": "stylesheet", "href": "/static/view.css"}),
        el("noscript", None, el("meta", {"http-equiv": "refresh", "content": RELOAD_SECONDS})) if pending else None,
    )
    bar = el(
        "div",
        {"class": "topbar"},
        el("a", {"class": "brand", "href": "/"}, "ironbench view"),
        el("a", {"href": "/"}, "Runs"),
        el("a", {"href": "/compare"}, "Compare"),
        el("span", {"id": "live-state", "class": "live-state"}, "static" if stream is None else "connecting…"),
        el("span", {"class": "store", "title": "the store, opened read-only"}, store),
    )
    attrs = {
        "data-stream": stream,
        "data-after": after,
        "data-page": page,
        "data-pending": pending or None,
        "data-filtered": filtered,
        "data-run": run,
    }
    return (
        "<!doctype html>\n"
        + el(
            "html",
            {"lang": "en"},
            head,
            el(
                "body",
                attrs,
                bar,
                *body,
                el("footer", None, f"ironbench {__version__} · a read-only view of the event store"),
                el("script", {"src": "/static/report.js"}),
                el("script", {"src": "/static/view.js"}),
            ),
        )
        + "\n"
    )


def error_page(store: str, status: int, message: str) -> str:
    return document(
        f"ironbench view · {status}",
        store,
        el("main", None, section("error", "Not shown", None, el("p", {"class": "text"}, message))),
    )


# -- runs ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunsQuery:
    """The runs page's filter and order, from its address (a form without scripts)."""

    text: str = ""
    status: str = ""
    mode: str = ""
    sort: str = "started"
    order: str = "desc"

    SORTS = ("started", "suite", "status", "invocations", "successes")

    @classmethod
    def of(
        cls, /, q: str = "", status: str = "", mode: str = "", sort: str = "started", order: str = "", **_: str
    ) -> "RunsQuery":
        """From the address's query (`RunsQuery.of(**query_params)`); what it does not know is ignored."""
        return cls(
            q.strip(),
            status if status in STATUSES else "",
            mode,
            sort if sort in cls.SORTS else "started",
            "asc" if order == "asc" else "desc",
        )

    @property
    def filtered(self) -> bool:
        return bool(self.text or self.status or self.mode)


@dataclass(frozen=True, slots=True)
class Listed:
    """A run in the runs table: its row and its decisions in one line (`verdict_line`)."""

    row: RunRow
    verdict: str


def select_runs(runs: list[Listed], query: RunsQuery) -> list[Listed]:
    """The runs the query keeps, in its order."""
    text = query.text.lower()

    def keep(run: Listed) -> bool:
        row = run.row
        if query.status and shown_status(row.status) != query.status:
            return False
        if query.mode and row.mode != query.mode:
            return False
        haystack = " ".join(str(v or "") for v in (row.run_id, row.suite_id, row.label, row.mode))
        return not text or text in (haystack + " " + run.verdict).lower()

    def key(run: Listed) -> tuple:
        row = run.row
        started = row.started_utc or ""
        match query.sort:
            case "suite":
                return row.suite_id, started
            case "status":
                return shown_status(row.status), started
            case "invocations":
                return row.invocations or row.turns, started
            case "successes":
                return row.successes, started
            case _:  # started
                return started, row.run_id

    return sorted(filter(keep, runs), key=key, reverse=query.order == "desc")


def verdict_line(decided: Decided) -> str:
    """A run's decisions in one line (its page states each verdict with its evidence):
    `baseline: 3 stable, 1 exhausted · adversarial: 2 of 14 variants changed the outcome`."""
    parts = [f"fence below full: {decided.below_full}"] if decided.below_full else []
    if decided.fenced_out:  # failures that say nothing of the target: its page names what, and the flag
        parts.append(f"the fence caused {decided.fenced_out} failure{'s' if decided.fenced_out != 1 else ''}")
    engines = decided.engines
    for mode in ("baseline", "adversarial", "stress"):
        counts = decided.tallies.get(mode) or {}
        if mode == "baseline" and counts:
            parts.append("baseline: " + ", ".join(f"{n} {d.replace('_', ' ')}" for d, n in sorted(counts.items())))
        elif mode == "adversarial" and counts:
            judged = sum(counts.get(d, 0) for d in JUDGED)
            material = sum(counts.get(d, 0) for d in MATERIAL)
            text = f"adversarial: {material} of {judged} variants changed the outcome materially"
            if material:
                text += " (" + ", ".join(f"{counts.get(kind, 0)} {kind}" for kind in ("structural", "stochastic")) + ")"
            parts.append(text)
        elif mode == "stress" and counts:
            verdicts = [(d, counts.get(d, 0)) for d in LADDER_DECISIONS]
            ladders = sum(n for _, n in verdicts)
            parts.append(
                f"stress: {ladders} ladder{'s' if ladders != 1 else ''} decided"
                + "".join(f", {n} {d.replace('_', ' ')}" for d, n in verdicts if n)
            )
    if engines:
        parts.append(
            "conversations violated: " + ", ".join(f"{engine} {bad}/{total}" for engine, total, bad in engines)
        )
    return " · ".join(parts) or "no decision yet"


def status_badge(status: str, element_id: str | None = None) -> Markup:
    shown = shown_status(status)
    return el("span", {"class": f"badge s-{shown}", "id": element_id}, shown)


def run_row(row: RunRow, verdict: str) -> Markup:
    """One run in the runs table (also pushed to open pages when its counts move)."""
    gauntlet = row.gauntlet
    done = row.turns if gauntlet else row.invocations
    rate = f"{row.successes} ({row.successes / done:.0%})" if done and not gauntlet else "–"
    return el(
        "tr",
        {"data-run": row.run_id},
        el("td", None, el("a", {"href": run_href(row.run_id)}, row.run_id)),
        el("td", None, row.suite_id),
        el(
            "td",
            None,
            row.mode,
            " ",
            el(
                "span",
                {"class": "badge imported", "title": f"from {ORIGINS.get(row.imported, row.imported)}"},
                "imported",
            )
            if row.imported
            else None,
        ),
        el("td", {"class": "text"}, row.label or "–"),
        el("td", {"data-v": shown_status(row.status)}, status_badge(row.status)),
        el("td", {"class": "strip"}, (row.started_utc or "")[:19].replace("T", " ")),
        el(
            "td",
            {"class": "num", "data-v": done},
            f"{done} turns" if gauntlet else done,
            f" (+{row.infra_errors} infra)" if row.infra_errors else None,
        ),
        el("td", {"class": "num", "data-v": row.successes if not gauntlet else -1}, rate),
        _cost_cell(row),
        el("td", {"class": "text"}, verdict),
    )


def _cost_cell(row: RunRow) -> Markup:
    """What the run's priced model calls cost ("+ N unpriced" where some were not)."""
    from ironbench.core.prices import usd

    if row.cost_usd is None:
        return el("td", {"class": "num", "data-v": -1}, "–")
    unpriced = f" + {row.unpriced_calls} unpriced" if row.unpriced_calls else None
    return el("td", {"class": "num", "data-v": round(row.cost_usd * 1e9)}, usd(row.cost_usd), unpriced)


RUN_COLUMNS = [
    Col("Run"),
    Col("Suite"),
    Col("Mode"),
    Col("Label"),
    Col("Status", help="running, finished, stopped (aborted before its end) or interrupted (its coordinator is gone)"),
    Col("Started (UTC)"),
    Col("Invocations", True, "invocations recorded (gauntlet: turns); infrastructure errors apart"),
    Col("Successes", True),
    Col("Cost", True, "what the run's priced model calls cost (the costs view of `ironbench query`)"),
    Col("Verdict", help="the run's decisions in one line; its page states each verdict with its evidence"),
]


def compare_form(run_ids: Sequence[str], a: str | None = None, b: str | None = None) -> Markup:
    def choose(name: str, label: str, chosen: str | None) -> Markup:
        options = [el("option", {"value": r, "selected": r == chosen}, r) for r in reversed(run_ids)]
        return el("label", None, label, " ", el("select", {"name": name}, options))

    return el(
        "form",
        {"class": "pick", "action": "/compare", "method": "get"},
        choose("a", "A (reference)", a),
        choose("b", "B (candidate)", b),
        el("button", {"type": "submit"}, "Compare"),
    )


def runs_page(store: str, runs: list[Listed], shown: list[Listed], query: RunsQuery, after: int) -> str:
    def choose(name: str, values: Sequence[str], chosen: str) -> Markup:
        options = [el("option", {"value": ""}, f"any {name}")]
        options += [el("option", {"value": v, "selected": v == chosen}, v) for v in values]
        return el("select", {"name": name, "aria-label": name}, options)

    rows = [run.row for run in runs]
    modes = sorted({r.mode for r in rows})
    filters = el(
        "form",
        {"class": "pick", "action": "/", "method": "get"},
        el("input", {"type": "search", "name": "q", "value": query.text, "placeholder": "run, suite, label, verdict"}),
        choose("status", STATUSES, query.status),
        choose("mode", modes, query.mode),
        el(
            "select",
            {"name": "sort", "aria-label": "sort"},
            [el("option", {"value": s, "selected": s == query.sort}, f"by {s}") for s in RunsQuery.SORTS],
        ),
        el(
            "select",
            {"name": "order", "aria-label": "order"},
            [el("option", {"value": o, "selected": o == query.order}, o) for o in ("desc", "asc")],
        ),
        el("button", {"type": "submit"}, "Show"),
    )
    listing = el(
        "div",
        {"class": "scroll"},
        el(
            "table",
            {"class": "sortable", "id": "runs"},
            el("caption", None, f"{len(shown)} of {len(rows)} runs"),
            el(
                "thead",
                None,
                el(
                    "tr",
                    None,
                    [el("th", {"title": c.help, "data-numeric": c.numeric or None}, c.title) for c in RUN_COLUMNS],
                ),
            ),
            el("tbody", None, [run_row(run.row, run.verdict) for run in shown]),
        ),
    )
    running = sum(1 for r in rows if r.status == "running")
    return document(
        "ironbench view · runs",
        store,
        el(
            "header",
            None,
            el("h1", None, "Runs"),
            el("p", None, f"{len(rows)} runs in the store, {running} running; counts move as their events arrive."),
        ),
        el(
            "main",
            None,
            section("runs-list", "Every run", None, filters, listing),
            section(
                "compare-pick",
                "Compare two runs",
                "What `ironbench compare A B` decides, with its evidence: the address can be shared.",
                compare_form([r.run_id for r in rows]),
            ),
        ),
        stream="/stream",
        after=after,
        page="runs",
        filtered=query.filtered,
    )


# -- a run -----------------------------------------------------------------------------


def live_section(run: RunRow, progress: Progress, facts: list[Markup], others: Sequence[str]) -> Markup:
    run_id = run.run_id
    return section(
        "live",
        "Progress",
        None,
        el(
            "p",
            None,
            status_badge(run.status, "run-status"),
            " ",
            el("span", {"id": "progress-text", "class": "progress-text"}, progress.text(run.status)),
        ),
        el("progress", {"id": "progress", "max": progress.planned or None, "value": progress.done}),
        el(
            "p",
            None,
            el("a", {"href": run_href(run_id, "report.html")}, "The report as one file"),
            " (what `ironbench report` writes) · the run's events below, newest first, as they are appended.",
        ),
        el(
            "form",
            {"class": "pick", "action": "/compare", "method": "get"},
            el("input", {"type": "hidden", "name": "b", "value": run_id}),
            el(
                "label",
                None,
                "Compare with an earlier run: ",
                el("select", {"name": "a"}, [el("option", {"value": r}, r) for r in reversed(others) if r != run_id]),
            ),
            el("button", {"type": "submit"}, "Compare"),
        )
        if len(others) > 1
        else None,
        el("ol", {"id": "facts", "class": "facts", "aria-live": "polite"}, list(reversed(facts))),
    )


def drill_section(run_id: str, cases: list[CaseRow], conversations: list[tuple[str, str, int, int]]) -> Markup:
    """Links to every case (its groups and invocations) and every gauntlet conversation."""
    body = []
    if cases:
        body.append(
            table(
                [Col("Case"), Col("Mode"), Col("Groups", True), Col("Attempts", True), Col("Successes", True)],
                [
                    [
                        Td(el("a", {"href": run_href(run_id, "cases", c.case_id)}, c.case_id), c.case_id),
                        c.mode,
                        c.groups,
                        c.attempts,
                        c.successes,
                    ]
                    for c in cases
                ],
                filterable=len(cases) > 10,
            )
        )
    if conversations:
        body.append(
            table(
                [Col("Engine"), Col("Scenario"), Col("Conversation", True), Col("Turns", True)],
                [
                    [
                        engine,
                        scenario,
                        Td(
                            el(
                                "a",
                                {"href": run_href(run_id, "conversations", engine, scenario, conversation)},
                                f"conversation {conversation}",
                            ),
                            conversation,
                        ),
                        turns,
                    ]
                    for engine, scenario, conversation, turns in conversations
                ],
                filterable=len(conversations) > 10,
            )
        )
    return section(
        "drill",
        "Drill down",
        "Every invocation of a case with its outcome, output, instruction and debug files; "
        "every conversation turn by turn.",
        *(body or [el("p", None, "Nothing recorded yet.")]),
    )


def report_main(parts: PageParts, drill: Markup) -> Markup:
    """The report's sections and the drill-down links: what `/runs/RUN/sections` sends again."""
    return join([body for _, _, body in parts.sections] + [drill])


def pending_section(what: str) -> Markup:
    return section(
        "pending",
        "Report",
        None,
        el(
            "p",
            None,
            f"The {what} is being rendered (a large run takes a few seconds); it appears here when it is ready.",
        ),
    )


def run_page(
    store: str,
    run: RunRow,
    parts: PageParts | None,
    progress: Progress,
    facts: list[Markup],
    drill: Markup,
    after: int,
    others: Sequence[str],
) -> str:
    """The run's report (None: still being rendered) with its live parts above it."""
    run_id = run.run_id
    shown = parts.sections if parts else []
    nav = el(
        "nav",
        {"aria-label": "sections"},
        el("a", {"href": "#live"}, "Progress"),
        [el("a", {"href": f"#{key}"}, title) for key, title, _ in shown],
        el("a", {"href": "#drill"}, "Drill down"),
    )
    header = (
        parts.header
        if parts
        else el(
            "header",
            None,
            el("h1", None, f"ironbench report: {run_id}"),
            el("p", None, " · ".join(str(f) for f in (run.label, run.suite_id, run.mode) if f)),
        )
    )
    return document(
        parts.title if parts else f"ironbench · {run_id} · {run.mode}",
        store,
        header,
        nav,
        el("div", {"class": "main"}, live_section(run, progress, facts, others)),
        el("main", {"id": "report"}, report_main(parts, drill) if parts else join([pending_section("report"), drill])),
        stream=run_href(run_id, "stream"),
        after=after,
        page="run",
        run=run_id,
        pending=parts is None,
    )


# -- drill-down ----------------------------------------------------------------------------


def crumbs(*links: tuple[str, str | None]) -> Markup:
    items: list[Markup | str] = []
    for text, href in links:
        items.append(el("a", {"href": href}, text) if href else el("span", None, text))
        items.append(" › ")
    return el("p", {"class": "crumbs"}, items[:-1])


def _facts_table(rows: list[tuple[RecordedEvent, bool, bool]], run_id: str) -> Markup:
    body = []
    for recorded, superseded, surplus in rows:
        event = recorded.event
        assert isinstance(event, InvocationCompleted)  # case logs hold invocation_completed events only
        code = outcome_code(event)
        flags = []
        if event.rerun:
            flags.append(f"re-run {event.rerun}")
        if superseded:
            flags.append("superseded by a re-run (not evidence)")
        if surplus:
            flags.append("surplus: past the decision (not evidence)")
        if event.infra_error:
            flags.append(f"infrastructure error: {event.infra_error}")
        if event.harness_error:
            flags.append(f"harness error: {event.harness_error}")
        body.append(
            [
                Td(
                    el("a", {"href": run_href(run_id, "invocations", recorded.seq)}, f"run {event.run_index}"),
                    event.run_index,
                ),
                Td(join([strip(code), " ", BY_CODE[code].name]), code),
                event.attempts,
                event.repairs_triggered,
                Td(f"{event.duration_ms / 1000:.2f} s", event.duration_ms),
                "–" if event.exit_code is None else event.exit_code,
                Td("; ".join(flags) or "–", cls="text"),
            ]
        )
    return table(
        [
            Col("Invocation", True),
            Col("Outcome"),
            Col("Attempts", True),
            Col("Repairs", True),
            Col("Duration", True),
            Col("Exit", True),
            Col("Notes"),
        ],
        body,
    )


def _decision_text(decision: DecisionTaken) -> Markup:
    from ironbench.console.progress import decision_line

    return join(
        [
            el("span", {"class": f"badge d-{decision.decision}"}, decision.decision.replace("_", " ")),
            " ",
            decision_line("", decision).strip().removeprefix(":").strip(),
            el("br", None),
            el("span", {"class": "evidence"}, decision.reason),
        ]
    )


def case_page(
    store: str,
    run_id: str,
    case_id: str,
    base_instruction: str,
    logs: list[tuple[RecordedEvent, bool, bool]],
    decisions: list[RecordedEvent],
    variants: list[RecordedEvent],
    rejections: list[RecordedEvent],
) -> str:
    """Every group of a case (its variants, its stress levels), each with its instruction as a
    word diff against the base, its decision and every invocation; its AI rewrites, accepted
    and rejected with the reasons; the variants dropped."""
    by_group: dict[str, list[tuple[RecordedEvent, bool, bool]]] = {}
    for item in logs:
        by_group.setdefault(group_of(item[0].stream), []).append(item)
    decided = {d.event.group: d.event for d in decisions if isinstance(d.event, DecisionTaken)}
    parts = []
    mode = ""
    for group, items in by_group.items():
        first = items[0][0].event
        assert isinstance(first, InvocationCompleted)
        mode = first.mode
        decision = decided.get(group)
        instruction = first.instruction
        changed = instruction != base_instruction
        parts.append(
            el(
                "div",
                {"class": "group", "id": group},
                el("h3", None, group, " ", el("small", None, f"{len(items)} attempts")),
                el("p", None, _decision_text(decision)) if decision else el("p", None, "No decision yet."),
                el(
                    "p",
                    None,
                    el(
                        "b",
                        None,
                        "Instruction" + (" (word diff against the case's instruction): " if changed else ": "),
                    ),
                    el(
                        "span",
                        {"class": "diff"},
                        word_diff_html(base_instruction, instruction) if changed else instruction,
                    ),
                ),
                _facts_table(items, run_id),
            )
        )
    ladder = decided.get(f"stress/{case_id}")
    if ladder is not None:
        parts.insert(0, el("p", None, el("b", None, "The ladder's verdict: "), _decision_text(ladder)))
    accepted = [v for v in variants if isinstance(v.event, VariantGenerated) and ai_rewrite(v.event)]
    rejected = [r for r in rejections if isinstance(r.event, AiOutputRejected)]
    ai = []
    if accepted or rejected:
        rows = []
        for recorded in sorted(accepted + rejected, key=lambda r: r.seq):
            match recorded.event:
                case VariantGenerated() as event:
                    rows.append(
                        [
                            event.variant_id,
                            event.attempt,
                            str(event.metadata.get("model")),
                            Td(el("span", {"class": "badge ok"}, "accepted"), "accepted"),
                            Td(word_diff_html(base_instruction, event.instruction), cls="text"),
                            "–",
                        ]
                    )
                case AiOutputRejected() as event:
                    rows.append(
                        [
                            event.variant_id,
                            event.attempt,
                            event.model,
                            Td(el("span", {"class": "badge bad"}, "rejected"), "rejected"),
                            Td(event.ai_output, cls="text"),
                            Td(
                                el("ul", {"class": "reasons"}, [el("li", None, r) for r in event.failure_reasons]),
                                cls="reason",
                            ),
                        ]
                    )
        ai.append(
            section(
                "ai",
                "AI rewrites",
                "Each answer of the model, in order: accepted (as a word diff against the instruction) "
                "or rejected, with the reasons validation gave.",
                table(
                    [
                        Col("Variant"),
                        Col("Attempt", True),
                        Col("Model"),
                        Col("Verdict"),
                        Col("Rewrite"),
                        Col("Why rejected"),
                    ],
                    rows,
                ),
            )
        )
    dropped = [v.event for v in variants if isinstance(v.event, VariantDropped)]
    if dropped:
        ai.append(
            section(
                "dropped",
                "Variants dropped",
                "Candidates that broke the single-string contract: never run.",
                table(
                    [Col("Generator"), Col("Attempt", True), Col("Candidate"), Col("Reason")],
                    [
                        [d.generator, d.attempt, Td(d.candidate, cls="text"), Td(d.reason, cls="reason")]
                        for d in dropped
                    ],
                ),
            )
        )
    return document(
        f"ironbench · {run_id} · {case_id}",
        store,
        el(
            "header",
            None,
            el("h1", None, f"Case {case_id}"),
            el("p", None, f"{mode or 'case'} · run {run_id}"),
        ),
        el(
            "main",
            None,
            crumbs(("Runs", "/"), (run_id, run_href(run_id)), (case_id, None)),
            section(
                "case",
                "Instruction and groups",
                None,
                el("p", {"class": "text"}, el("b", None, "The case's instruction: "), base_instruction),
                *(parts or [el("p", None, "No invocation recorded yet.")]),
            ),
            *ai,
        ),
    )


def _output(event: InvocationCompleted, run_id: str, seq: int, stream: str, whole: bool) -> Markup:
    text = event.stdout if stream == "stdout" else event.stderr
    return el(
        "div",
        None,
        el(
            "h3",
            None,
            stream,
            " ",
            el("small", None, "as recorded in the event" + (" (head and tail)" if event.output_truncated else "")),
        ),
        el("pre", {"class": "text"}, text.rstrip() or "(nothing)"),
        el(
            "p",
            None,
            el("a", {"href": run_href(run_id, "invocations", seq, stream)}, f"the whole {stream} file"),
            " (capped, redacted), read in place",
        )
        if whole
        else None,
    )


def _text(value: object) -> str:
    """A message's content or an answer as text (a text held by a hash the store lacks: said so)."""
    if isinstance(value, dict) and is_ref(value):
        return f"(a text of {value.get('chars', '?')} characters held by sha256 {value['sha256']}, not in the store)"
    if value is None or isinstance(value, str):
        return value or "(nothing)"
    return _json(value)  # content in parts, as some clients send it


def _json(value: object, sort_keys: bool = False) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys)


def _exchange(call: ModelCalled) -> Markup:
    """A call's messages, the rest of its request, and its answer (or its error), one click away."""
    said = [
        [el("h4", None, str(message.get("role", "?"))), el("pre", {"class": "text"}, _text(message.get("content")))]
        for message in call.messages
    ]
    # the request's other options in their keys' order (sorted, as the gateway_calls view keeps them)
    options = (
        [el("h4", None, "options"), el("pre", {"class": "text"}, _json(call.options, sort_keys=True))]
        if call.options
        else []
    )
    answer = (
        [el("h4", None, "error"), el("pre", {"class": "text"}, call.error)]
        if call.error
        else [el("h4", None, "answer"), el("pre", {"class": "text"}, _text(call.answer))]
    )
    diverged = (
        [el("h4", None, "diverged from the recorded request"), el("pre", {"class": "text"}, call.divergence)]
        if call.divergence
        else []
    )
    count = len(call.messages)
    summary = f"{count} message{'s' if count != 1 else ''} and the {'error' if call.error else 'answer'}"
    return el("details", {"class": "exchange"}, el("summary", None, summary), *said, *options, *answer, *diverged)


def _price(priced: ModelCallPriced | None) -> tuple[str, int]:
    """A call's cost as the table shows it (how it was priced, when not by money: local, unpriced)."""
    from ironbench.core.prices import usd

    if priced is None:
        return "–", -1
    if priced.cost is None:
        return priced.pricing, -1
    shown = usd(Decimal(priced.cost)) + ("" if priced.pricing in ("table", "given") else f" ({priced.pricing})")
    return shown, round(float(priced.cost) * 1e9)


def _model_calls(
    event: InvocationCompleted, calls: Sequence[ModelCalled], prices: Mapping[int, ModelCallPriced]
) -> Markup | None:
    """The invocation's calls to the run's model gateway, in order, each with its cost (None: the
    run served no model)."""
    if event.model_calls is None:
        return None
    rows = [
        [
            (str(call.index), call.index),
            call.api,
            call.requested_model
            if call.requested_model == call.served_model
            else f"{call.requested_model} → {call.served_model}",
            "yes" if call.stream else "no",
            ("–" if call.prompt_tokens is None else f"{call.prompt_tokens:,}", call.prompt_tokens),
            ("–" if call.completion_tokens is None else f"{call.completion_tokens:,}", call.completion_tokens),
            (number(call.latency_ms, 1), call.latency_ms),
            _price(prices.get(call.index)),
            Td(
                f"{call.error_kind or 'error'} (HTTP {call.status})"
                + (f", retry after {number(call.retry_after, 1)} s" if call.retry_after is not None else "")
                if call.error
                else "–",
                cls="reason" if call.error else None,
            ),
            Td(_exchange(call), cls="text"),
        ]
        for call in calls
    ]
    return section(
        "model",
        "Model calls",
        "Every call the target made to the run's model gateway, in the order the gateway received them: "
        "the model it asked for and the one that answered, the tokens the model reported, the gateway's "
        "time answering, and what was said.",
        el(
            "p",
            None,
            el("b", None, f"{plural(event.model_calls, 'model call')}: "),
            cost(event.prompt_tokens, event.completion_tokens, event.model_seconds),
            ".",
        ),
        table(
            [
                Col("#", True),
                Col("API"),
                Col("Model", help="asked for → served"),
                Col("Stream"),
                Col("Prompt tokens", True),
                Col("Completion tokens", True),
                Col("Latency ms", True),
                Col("Cost", True, "priced from its tokens when it was recorded (the costs view)"),
                Col("Error"),
                Col("Messages and answer"),
            ],
            rows,
        )
        if rows
        else None,
    )


def invocation_page(
    store: str,
    recorded: RecordedEvent,
    superseded: bool,
    surplus: bool,
    base_instruction: str,
    served: Sequence[str],
    debug: list[DebugFile] | str,
    calls: Sequence[ModelCalled] = (),
    prices: Mapping[int, ModelCallPriced] | None = None,
) -> str:
    """One invocation: its facts, its instruction as a word diff against the base, what it
    printed (`served`: the streams whose whole file is served, too), its calls to the run's
    model gateway (when it served one), and the debug files the target wrote (or why they are
    not shown)."""
    event = recorded.event
    assert isinstance(event, InvocationCompleted)
    run_id, seq = recorded.run_id, recorded.seq
    code = outcome_code(event)
    facts = {
        "stream": recorded.stream,
        "outcome": join([strip(code), " ", BY_CODE[code].name]),
        "exit code": event.exit_code,
        "attempts": event.attempts,
        "repairs triggered": event.repairs_triggered,
        "duration": f"{event.duration_ms / 1000:.2f} s",
        "timed out": "yes" if event.timed_out else "no",
        "failure stage": event.failure_stage,
        "harness error": event.harness_error,
        "infrastructure error": event.infra_error,
        "re-run": event.rerun or None,
        "superseded": "yes: a later attempt of this slot replaced it (not evidence)" if superseded else None,
        "surplus": "yes: past its group's decision (not evidence)" if surplus or event.surplus else None,
        "brick": event.brick_path,
        "recorded": recorded.timestamp_utc,
        "key": event.key,
    }
    meta = el(
        "dl",
        {"class": "meta"},
        [[el("dt", None, k), el("dd", None, v)] for k, v in facts.items() if v not in (None, "")],
    )
    changed = event.instruction != base_instruction
    instruction = el(
        "p",
        None,
        el(
            "span",
            {"class": "diff"},
            word_diff_html(base_instruction, event.instruction) if changed else event.instruction,
        ),
    )
    if isinstance(debug, str):
        debug_body: list = [el("p", None, debug)]
    elif not debug:
        debug_body = [el("p", None, "The folder is there, and empty.")]
    else:
        debug_body = [
            table(
                [Col("File"), Col("Bytes", True)],
                [
                    [
                        Td(
                            el(
                                "a",
                                {
                                    "href": run_href(run_id, "invocations", seq, "debug")
                                    + "/"
                                    + "/".join(_quoted(f.name))
                                },
                                f.name,
                            ),
                            f.name,
                        ),
                        f.size,
                    ]
                    for f in debug
                ],
            )
        ]
    case_link = run_href(run_id, "cases", event.case_id)
    return document(
        f"ironbench · {run_id} · {recorded.stream}",
        store,
        el("header", None, el("h1", None, recorded.stream), el("p", None, f"an invocation of run {run_id}")),
        el(
            "main",
            None,
            crumbs(
                ("Runs", "/"), (run_id, run_href(run_id)), (event.case_id, case_link), (f"run {event.run_index}", None)
            ),
            section("facts", "What happened", None, meta),
            section(
                "instruction",
                "Instruction",
                "As a word diff against the case's instruction." if changed else "The case's instruction, unchanged.",
                instruction,
            ),
            section(
                "output",
                "Output",
                "What the target printed, as `ironbench log` shows it.",
                _output(event, run_id, seq, "stdout", "stdout" in served),
                _output(event, run_id, seq, "stderr", "stderr" in served),
            ),
            _model_calls(event, calls, prices or {}),
            section(
                "debug",
                "Debug files",
                join(
                    ["Read in place from the debug folder the target was given: ", el("code", None, event.debug_path)]
                ),
                *debug_body,
            ),
        ),
    )


def _quoted(name: str) -> list[str]:
    from urllib.parse import quote

    return [quote(part, safe="") for part in name.split("/")]


def conversation_page(store: str, run_id: str, thread: Thread, primary: str | None) -> str:
    title = f"{thread.engine} · {thread.scenario} · conversation {thread.conversation}"
    return document(
        f"ironbench · {run_id} · {title}",
        store,
        el("header", None, el("h1", None, title), el("p", None, f"{thread.domain} · run {run_id}")),
        el(
            "main",
            None,
            crumbs(("Runs", "/"), (run_id, run_href(run_id) + "#gauntlet"), (title, None)),
            section(
                "conversation",
                "Turn by turn",
                "Each prompt and answer, and each scorer's verdict on the answer.",
                conversation_markup(thread, primary, True),
            ),
        ),
    )


def compare_page(
    store: str,
    run_ids: Sequence[str],
    a: str | None,
    b: str | None,
    parts: PageParts | None,
    problem: str | None,
    pending: bool = False,
) -> str:
    """`ironbench compare A B` as a page: the report with its comparison (or the form alone;
    `pending`: the comparison is still being rendered)."""
    pick = section(
        "compare-pick",
        "Compare two runs",
        "B against A, as `ironbench compare A B` decides (alpha 0.05, the overall gate, failing on a regression).",
        compare_form(run_ids, a, b),
        el("p", {"class": "text"}, problem) if problem else None,
    )
    if parts is None:
        shown = [pending_section("comparison"), pick] if pending else [pick]
        return document("ironbench view · compare", store, el("main", None, shown), pending=pending)
    nav = el(
        "nav", {"aria-label": "sections"}, [el("a", {"href": f"#{key}"}, title) for key, title, _ in parts.sections]
    )
    link = "/compare?" + urlencode({"a": a, "b": b})
    return document(
        parts.title,
        store,
        parts.header,
        nav,
        el(
            "main",
            None,
            el("p", {"class": "crumbs"}, "Link to this comparison: ", el("a", {"href": link}, link)),
            [body for _, _, body in parts.sections],
            pick,
        ),
    )
