"""Finding the baseline an adversarial variant is judged against, in the store."""

from ironbench.events import DecisionTaken, InvocationCompleted
from ironbench.keys import instruction_hash
from ironbench.outcome import Outcome
from ironbench.store.eventstore import EventStore


def latest_baseline(store: EventStore, instruction: str) -> tuple[str, list[Outcome], bool] | None:
    """The latest baseline group of exactly this instruction: (run id, outcomes in run
    order, whether it was stable), or None when the store holds none."""
    row = store.conn.execute(
        "SELECT run_id, group_path FROM invocations WHERE instruction_hash = ? AND case_mode = 'baseline' "
        "ORDER BY seq DESC LIMIT 1", (instruction_hash(instruction),)
    ).fetchone()
    if row is None:
        return None
    run_id, group = row
    outcomes: list[tuple[int, Outcome]] = []
    stable = False
    for recorded in store.read(run_id, types=("invocation_completed", "decision_taken"), stream_prefix=group):
        event = recorded.event
        if isinstance(event, InvocationCompleted) and recorded.stream.rsplit("/", 1)[0] == group:
            outcomes.append((event.run_index, Outcome(event.success, event.failure_stage, event.attempts,
                                                      event.repairs_triggered)))
        elif isinstance(event, DecisionTaken) and recorded.stream == group:
            stable = event.decision == "stable"
    return run_id, [o for _, o in sorted(outcomes)], stable
