"""One line per stored fact, for a run's live list: an invocation's outcome, a decision with
its evidence, an AI rewrite accepted or rejected, a gauntlet turn, the run starting or ending.

The same markup is written into the page by the server (scripts off) and pushed to open
pages over server-sent events; every text from a suite, a target or a model is escaped
(report.markup builds it).
"""

from urllib.parse import quote

from ironbench.analysis.gate_verdict import look_line
from ironbench.console.progress import decision_line
from ironbench.core import events
from ironbench.core.events import RecordedEvent
from ironbench.core.outcome_codes import BY_CODE, outcome_code
from ironbench.report.markup import Markup, el
from ironbench.report.widgets import strip

# The events a run's page lists; an invocation starting is shown by the progress bar only.
LISTED = (
    "run_started",
    "variant_generated",
    "variant_dropped",
    "ai_output_rejected",
    "invocation_completed",
    "decision_taken",
    "turn_answered",
    "turn_scored",
    "gate_designed",
    "gate_looked",
    "run_finished",
    "run_aborted",
)
EXCERPT = 300  # characters of a model's answer or a rewrite shown in the list


def run_href(run_id: str, *parts: str | int) -> str:
    """`/runs/RUN/…`, every part quoted (ids may hold any character a suite allows)."""
    return "/runs/" + "/".join(quote(str(p), safe="") for p in (run_id, *parts))


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…"


def ai_rewrite(event: events.VariantGenerated) -> bool:
    """Whether a model wrote the variant (its generator's metadata says so)."""
    return event.metadata.get("source") == "ai"


def listed(recorded: RecordedEvent) -> bool:
    """Whether a run's page lists this event (AI rewrites only among generated variants: the
    deterministic ones are all made when the run starts, and the report lists them)."""
    if recorded.type not in LISTED:
        return False
    if isinstance(recorded.event, events.VariantGenerated):
        return ai_rewrite(recorded.event)
    return True


def fact_item(recorded: RecordedEvent) -> Markup:
    """The event's line: `<li data-seq data-appended>` with a time, a badge and a sentence."""
    badge, body = _said(recorded)
    return el(
        "li",
        {"class": f"fact t-{recorded.type}", "data-seq": recorded.seq, "data-appended": recorded.timestamp_utc},
        el("time", {"datetime": recorded.timestamp_utc}, recorded.timestamp_utc[11:19]),
        " ",
        badge,
        " ",
        body,
    )


def _said(recorded: RecordedEvent) -> tuple[Markup | None, list]:
    """What an event's line shows: its badge and its sentence."""
    run_id = recorded.run_id
    match recorded.event:
        case events.InvocationCompleted() as event:
            code = outcome_code(event)
            facts = [BY_CODE[code].name, f"{event.attempts} attempt{'s' if event.attempts != 1 else ''}"]
            if event.repairs_triggered:
                facts.append(f"{event.repairs_triggered} repair{'s' if event.repairs_triggered != 1 else ''}")
            facts.append(f"{event.duration_ms / 1000:.1f} s")
            if event.rerun:
                facts.append(f"re-run {event.rerun}")
            if event.surplus:
                facts.append("surplus: past its decision, not evidence")
            link = el("a", {"href": run_href(run_id, "invocations", recorded.seq)}, recorded.stream)
            return strip(code), [link, ": " + ", ".join(facts)]
        case events.DecisionTaken() as event:
            return el("span", {"class": f"badge d-{event.decision}"}, event.decision.replace("_", " ")), [
                el("a", {"href": run_href(run_id, "cases", event.case_id)}, event.group),
                # the terminal's line for the decision, without its case (the link names the group)
                ": " + decision_line("", event).strip().removeprefix(":").strip(),
            ]
        case events.AiOutputRejected() as event:
            return el("span", {"class": "badge bad"}, "rejected"), [
                el("a", {"href": run_href(run_id, "cases", event.case_id)}, f"{event.case_id}/{event.variant_id}"),
                f" attempt {event.attempt} ({event.model}): " + "; ".join(event.failure_reasons) + ". The answer: ",
                el("span", {"class": "text"}, _excerpt(event.ai_output)),
            ]
        case events.VariantGenerated() as event:
            return el("span", {"class": "badge ok"}, "accepted"), [
                el("a", {"href": run_href(run_id, "cases", event.case_id)}, f"{event.case_id}/{event.variant_id}"),
                f" attempt {event.attempt} ({event.metadata.get('model')}): ",
                el("span", {"class": "text"}, _excerpt(event.instruction)),
            ]
        case events.VariantDropped() as event:
            return el("span", {"class": "badge"}, "dropped"), [
                f"{event.case_id}/{event.generator} attempt {event.attempt}: {event.reason}"
            ]
        case events.TurnAnswered() as event:
            where = run_href(run_id, "conversations", event.engine, event.scenario, event.conversation)
            return el("span", {"class": "badge"}, f"turn {event.turn}"), [
                el("a", {"href": where}, f"{event.engine} · {event.scenario} · conversation {event.conversation}"),
                f" answered in {event.duration_ms / 1000:.1f} s: ",
                el("span", {"class": "text"}, _excerpt(event.answer)),
            ]
        case events.TurnScored() as event:
            return el("span", {"class": "badge " + ("bad" if event.violated else "ok")}, event.scorer), [
                f"{event.engine} · {event.scenario} · conversation {event.conversation}, turn {event.turn}: "
                + ("violated" if event.violated else "clean")
                + (f" ({event.detail})" if event.detail else "")
            ]
        case events.GateDesigned() as event:
            planned = (
                f"gate against {event.against}: at most {event.cap} runs per case ({event.cap * len(event.cases)} "
                f"invocations), looks after rounds {', '.join(map(str, event.looks))}; alpha {event.alpha:g}, "
                f"{event.power:.0%} power at a drop of {event.margin:.0%}"
            )
            return el("span", {"class": "badge"}, "gate"), [planned]
        case events.GateLooked() as event:
            kind = "bad" if event.failed else "ok" if event.decision != "continue" else ""
            return el("span", {"class": f"badge {kind}".strip()}, event.decision), [look_line(event)]
        case events.RunStarted() as event:
            return el("span", {"class": "badge"}, "started"), [f"run of {event.suite_id} ({event.mode}) started"]
        case events.RunFinished():
            return el("span", {"class": "badge ok"}, "finished"), ["run finished"]
        case events.RunAborted() as event:
            return el("span", {"class": "badge bad"}, "stopped"), [f"run stopped: {event.reason}"]
        case _:
            return None, [f"{recorded.stream}: {recorded.type}"]
