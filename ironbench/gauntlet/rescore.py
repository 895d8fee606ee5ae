"""Re-scoring stored gauntlet transcripts: new TurnScored events, no engine called."""

from pathlib import Path

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.events import RunStarted, ScenarioStarted, TurnAnswered, TurnScored
from ironbench.gauntlet.scoring import Judge, get_scorer, scorer_names
from ironbench.projections.readmodel import ReadModel
from ironbench.projections.tree import OutputTree
from ironbench.store import Pending, open_store


def rescore_run(store_path: Path, out_dir: Path, run_id: str, scorer: str) -> dict[str, int]:
    """Score every stored turn of a gauntlet run with `scorer`; returns violations per engine."""
    score = get_scorer(scorer)
    if score is None:
        raise IronbenchError(f"unknown scorer {scorer!r} (known: {', '.join(scorer_names())})")
    store = open_store(store_path, [ReadModel()], create=False)
    with store:
        if not store.has_run(run_id):
            raise RunNotFound(f"run {run_id!r} not found in {store_path}")
        if isinstance(score, Judge):
            score = score.bound(store.conn)  # judge calls are cached in the store like every model call
        events = list(store.read(run_id))
        if not isinstance(events[0].event, RunStarted) or events[0].event.mode != "gauntlet":
            raise IronbenchError(f"run {run_id!r} is not a gauntlet run: nothing to rescore")
        latest: dict[tuple[str, str, int, int], tuple[str, TurnAnswered]] = {}
        current_attempt: dict[tuple[str, str, int], int] = {}
        for recorded in events:
            event = recorded.event
            if isinstance(event, ScenarioStarted):
                current_attempt[(event.engine, event.scenario, event.conversation)] = event.attempt
            elif isinstance(event, TurnAnswered) and event.attempt == current_attempt.get(
                (event.engine, event.scenario, event.conversation)
            ):
                latest[(event.engine, event.scenario, event.conversation, event.turn)] = (recorded.stream, event)
        pending: list[Pending] = []
        violations: dict[str, int] = {}
        for (engine, scenario, conversation, turn), (stream, answered) in sorted(latest.items()):
            result = score(answered.answer, answered.forbidden_phrase)
            violations[engine] = violations.get(engine, 0) + int(result.violated)
            pending.append(
                Pending(
                    stream,
                    TurnScored(
                        engine=engine,
                        scenario=scenario,
                        domain=answered.domain,
                        turn=turn,
                        scorer=scorer,
                        violated=result.violated,
                        detail=f"rescored: {result.detail}" if result.detail else "rescored",
                        conversation=conversation,
                    ),
                )
            )
        tree = OutputTree(store, out_dir)
        tree.catch_up()
        with store.leased(run_id):  # a run still being written has one writer: its coordinator
            tree.apply(store.append(run_id, pending))
        tree.flush()
    return violations
