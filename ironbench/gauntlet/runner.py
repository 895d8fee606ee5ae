"""Running a gauntlet: every engine through every scenario, each turn an event."""

import time
from collections.abc import Callable

from ironbench.errors import IronbenchError
from ironbench.events import (
    RecordedEvent, RunFinished, ScenarioFinished, ScenarioStarted, TurnAnswered, TurnScored,
)
from ironbench.gauntlet.engines import EngineError, build_engine, close_engine
from ironbench.gauntlet.scoring import DEFAULT_SCORERS, get_scorer
from ironbench.store.eventstore import Pending
from ironbench.suite import Suite

Append = Callable[[list[Pending]], list[RecordedEvent]]


def _stream(engine: str, scenario: str) -> str:
    return f"gauntlet/{engine}/{scenario}"


def run_gauntlet(suite: Suite, run_id: str, append: Append, note: Callable[[str], None],
                 history: list[RecordedEvent] = ()) -> str:
    """Scenario by scenario, every engine side by side; a resumed run redoes only the
    scenarios an engine had not finished (from turn 1: conversation state is not kept)."""
    finished = {(e.event.engine, e.event.scenario) for e in history if isinstance(e.event, ScenarioFinished)}
    attempts: dict[tuple[str, str], int] = {}
    for e in history:
        if isinstance(e.event, ScenarioStarted):
            key = (e.event.engine, e.event.scenario)
            attempts[key] = max(attempts.get(key, 0), e.event.attempt)
    clean: dict[tuple[str, str], int] = {}
    for e in history:  # turns an earlier session already finished and scored
        if isinstance(e.event, TurnScored) and e.event.scorer == "negation_aware" and not e.event.violated \
                and (e.event.engine, e.event.scenario) in finished:
            clean[(e.event.engine, e.event.scenario)] = clean.get((e.event.engine, e.event.scenario), 0) + 1
    for scenario in suite.scenarios:
        for spec in suite.engines:
            if (spec.name, scenario.name) in finished:
                continue
            attempt = attempts.get((spec.name, scenario.name), 0) + 1
            clean[(spec.name, scenario.name)] = _run_scenario(suite, run_id, spec, scenario, attempt, append, note)
    turns = sum(len(s.prompts) for s in suite.scenarios) * len(suite.engines)
    append([Pending("run", RunFinished(invocations=turns, successes=sum(clean.values())),
                    idempotency_key=f"finished:{run_id}")])
    return "finished"


def _run_scenario(suite, run_id, spec, scenario, attempt, append: Append, note) -> int:
    """Returns how many turns had no (negation-aware) violation."""
    clean = 0
    stream = _stream(spec.name, scenario.name)
    append([Pending(stream, ScenarioStarted(engine=spec.name, scenario=scenario.name, domain=scenario.domain,
                                            attempt=attempt, engine_spec=spec.model_dump(mode="json")))])
    # A new engine per scenario, then reset(): no memory of any earlier scenario survives.
    engine = build_engine(spec, ("gauntlet", suite.suite_id, scenario.name))
    try:
        engine.reset()
        for turn, prompt in enumerate(scenario.prompts, start=1):
            started = time.perf_counter()
            try:
                answer = engine.answer(prompt)
            except IronbenchError:
                raise
            except Exception as exc:  # a user's engine failing is a harness fault, reported in one line
                raise EngineError(f"engine {spec.name!r} failed on {scenario.name} turn {turn}: {exc}") from exc
            duration_ms = int((time.perf_counter() - started) * 1000)
            key = f"{run_id}/{spec.name}/{scenario.name}/{attempt}/{turn:02d}"
            pending = [Pending(f"{stream}/turn_{turn:02d}", TurnAnswered(
                engine=spec.name, scenario=scenario.name, domain=scenario.domain, attempt=attempt, turn=turn,
                prompt=prompt, answer=answer, duration_ms=duration_ms, forbidden_phrase=scenario.forbidden_phrase,
            ), idempotency_key=f"turn:{key}")]
            verdicts = []
            for name in DEFAULT_SCORERS:
                score = get_scorer(name)(answer, scenario.forbidden_phrase)
                verdicts.append(f"{name}={'VIOLATED' if score.violated else 'ok'}")
                clean += name == "negation_aware" and not score.violated
                pending.append(Pending(f"{stream}/turn_{turn:02d}", TurnScored(
                    engine=spec.name, scenario=scenario.name, domain=scenario.domain, turn=turn, scorer=name,
                    violated=score.violated, detail=score.detail,
                ), idempotency_key=f"score:{key}/{name}"))
            append(pending)
            shown = " ".join(answer.split())
            note(f"[{spec.name}] {scenario.name} turn {turn}: {shown[:90]}{'…' if len(shown) > 90 else ''} "
                 f"({', '.join(verdicts)})")
        append([Pending(stream, ScenarioFinished(engine=spec.name, scenario=scenario.name, attempt=attempt,
                                                 turns=len(scenario.prompts)))])
    finally:
        close_engine(engine)
    return clean
