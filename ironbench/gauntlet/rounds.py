"""Running a gauntlet: every engine through every scenario, each turn an event."""

import time
from collections.abc import Callable, Sequence
from typing import Any

from ironbench.core.errors import BudgetExhausted, IronbenchError
from ironbench.core.events import (
    RecordedEvent,
    RunFinished,
    ScenarioFinished,
    ScenarioStarted,
    TurnAnswered,
    TurnScored,
)
from ironbench.core.prices import ENGINE
from ironbench.core.spending import Spending
from ironbench.gauntlet.engines import EngineError, build_engine, close_engine
from ironbench.gauntlet.scoring import DEFAULT_SCORERS, get_scorer
from ironbench.llms import CallUsage
from ironbench.store import Pending
from ironbench.suite import Suite

Append = Callable[[list[Pending]], list[RecordedEvent]]


def _stream(engine: str, scenario: str, conversation: int = 1) -> str:
    base = f"gauntlet/{engine}/{scenario}"
    return base if conversation == 1 else f"{base}/conversation_{conversation:02d}"


def run_gauntlet(
    suite: Suite,
    run_id: str,
    append: Append,
    note: Callable[[str], None],
    history: Sequence[RecordedEvent] = (),
    spending: Spending | None = None,
) -> str:
    """Scenario by scenario and conversation by conversation, every engine side by side; a
    resumed run redoes only the conversations an engine had not finished (from turn 1:
    conversation state is not kept). Every model call of an engine is priced (`spending`);
    once the recorded cost reaches its budget no conversation starts (BudgetExhausted)."""

    def slot(event: ScenarioStarted | ScenarioFinished | TurnScored) -> tuple[str, str, int]:
        return event.engine, event.scenario, event.conversation

    finished = {slot(e.event) for e in history if isinstance(e.event, ScenarioFinished)}
    attempts: dict[tuple[str, str, int], int] = {}
    for e in history:
        if isinstance(e.event, ScenarioStarted):
            attempts[slot(e.event)] = max(attempts.get(slot(e.event), 0), e.event.attempt)
    clean: dict[tuple[str, str, int], int] = {}
    for e in history:  # turns an earlier session already finished and scored
        if (
            isinstance(e.event, TurnScored)
            and e.event.scorer == "negation_aware"
            and not e.event.violated
            and slot(e.event) in finished
        ):
            clean[slot(e.event)] = clean.get(slot(e.event), 0) + 1
    turns = 0
    for scenario in suite.scenarios:
        for conversation in range(1, suite.conversations_of(scenario) + 1):
            for spec in suite.engines:
                turns += len(scenario.prompts)
                key = (spec.name, scenario.name, conversation)
                if key in finished:
                    continue
                if spending is not None and spending.reached:
                    done = sum(1 for e in history if isinstance(e.event, TurnAnswered)) + sum(clean.values())
                    append([Pending("run", spending.reached_event(done))])
                    raise BudgetExhausted(spending.line(run_id, done))
                clean[key] = _run_scenario(
                    suite, run_id, spec, scenario, conversation, attempts.get(key, 0) + 1, append, note, spending
                )
    ended = RunFinished(invocations=turns, successes=sum(clean.values()))
    append([Pending("run", ended, idempotency_key=f"finished:{run_id}")])
    return "finished"


def _run_scenario(
    suite, run_id, spec, scenario, conversation: int, attempt: int, append: Append, note, spending: Spending | None
) -> int:
    """One conversation; returns how many turns had no (negation-aware) violation. Each turn's
    model calls are recorded priced, with the turn."""
    clean = 0
    stream = _stream(spec.name, scenario.name, conversation)
    # which conversation every event of it belongs to
    where: dict[str, Any] = {"engine": spec.name, "scenario": scenario.name, "conversation": conversation}
    started_event = ScenarioStarted(
        **where, domain=scenario.domain, attempt=attempt, engine_spec=spec.model_dump(mode="json")
    )
    append([Pending(stream, started_event)])
    # A new engine per conversation, then reset(): no memory of any other conversation
    # survives. Conversation 1 keeps the seeds runs had before conversations existed.
    seed_parts = ("gauntlet", suite.suite_id, scenario.name) + ((conversation,) if conversation > 1 else ())
    calls: list[CallUsage] = []
    engine = build_engine(spec, seed_parts, suite.timeout_seconds, calls.append if spending is not None else None)
    label = scenario.name if conversation == 1 else f"{scenario.name} #{conversation}"
    try:
        engine.reset()
        for turn, prompt in enumerate(scenario.prompts, start=1):
            started = time.perf_counter()
            try:
                answer = engine.answer(prompt)
            except IronbenchError:
                raise
            except Exception as exc:  # a user's engine failing is a harness fault, reported in one line
                raise EngineError(f"engine {spec.name!r} failed on {label} turn {turn}: {exc}") from exc
            duration_ms = int((time.perf_counter() - started) * 1000)
            slot = scenario.name if conversation == 1 else f"{scenario.name}/c{conversation}"
            key = f"{run_id}/{spec.name}/{slot}/{attempt}/{turn:02d}"
            at_turn = {**where, "domain": scenario.domain, "turn": turn}
            answered = TurnAnswered(
                **at_turn,
                attempt=attempt,
                prompt=prompt,
                answer=answer,
                duration_ms=duration_ms,
                forbidden_phrase=scenario.forbidden_phrase,
            )
            pending = [Pending(f"{stream}/turn_{turn:02d}", answered, idempotency_key=f"turn:{key}")]
            if spending is not None:
                pending += [
                    Pending(
                        f"{stream}/turn_{turn:02d}",
                        spending.priced(
                            ENGINE,
                            call.model,
                            call.input_tokens,
                            call.output_tokens,
                            call.cached_tokens,
                            call.seconds,
                            case_id=scenario.name,
                            variant_id=spec.name,
                            index=index,
                        ),
                        idempotency_key=f"priced:{key}/{index}",
                    )
                    for index, call in enumerate(calls, start=1)
                ]
                calls.clear()
            verdicts = []
            for name in DEFAULT_SCORERS:
                scorer = get_scorer(name)
                assert scorer is not None  # the default scorers are built in
                score = scorer(answer, scenario.forbidden_phrase)
                verdicts.append(f"{name}={'VIOLATED' if score.violated else 'ok'}")
                clean += name == "negation_aware" and not score.violated
                scored = TurnScored(**at_turn, scorer=name, violated=score.violated, detail=score.detail)
                pending.append(Pending(f"{stream}/turn_{turn:02d}", scored, idempotency_key=f"score:{key}/{name}"))
            append(pending)
            shown = " ".join(answer.split())
            note(
                f"[{spec.name}] {label} turn {turn}: {shown[:90]}{'…' if len(shown) > 90 else ''} "
                f"({', '.join(verdicts)})"
            )
        append([Pending(stream, ScenarioFinished(**where, attempt=attempt, turns=len(scenario.prompts)))])
    finally:
        close_engine(engine)
    return clean
