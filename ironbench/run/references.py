"""Finding the baseline an adversarial variant is judged against, in the store."""

from dataclasses import dataclass

from ironbench.core.events import DecisionTaken, InvocationCompleted, RunStarted
from ironbench.core.keys import instruction_hash
from ironbench.core.labels import group_of
from ironbench.core.outcome import Outcome, same_rules
from ironbench.store import EventStore

DECIDED = ("stable", "exhausted")


@dataclass(frozen=True)
class StoredBaseline:
    run_id: str
    group: str
    outcomes: list[Outcome]  # live, non-infra outcomes in run order
    decision: str

    @property
    def stable(self) -> bool:
        return self.decision == "stable"


def _same_setup(
    started: RunStarted, target_argv: list[str], ironclad_version: str, environment: dict, rules: dict | None
) -> bool:
    return (
        list(started.target_argv) == list(target_argv)
        and started.ironclad_version == ironclad_version
        and started.environment == (environment or {})
        and same_rules(started.rules, rules)
    )


def _baseline_group(store: EventStore, run_id: str, group: str) -> StoredBaseline | None:
    """A decided baseline group, unless most of its attempts were harness or infra errors."""
    live: dict[int, InvocationCompleted] = {}
    attempts = broken = 0
    decision = None
    for recorded in store.read(run_id, types=("invocation_completed", "decision_taken"), stream_prefix=group):
        event = recorded.event
        if isinstance(event, InvocationCompleted) and group_of(recorded.stream) == group and not event.surplus:
            attempts += 1
            broken += event.infra_error is not None or event.harness_error is not None
            live[event.run_index] = event  # a re-run of the slot supersedes its earlier attempt
        elif isinstance(event, DecisionTaken) and recorded.stream == group:
            decision = event.decision
            for index in event.surplus_runs or ():  # past the decision (--speculate): no evidence
                live.pop(index, None)
    outcomes = [
        Outcome(e.success, e.failure_stage, e.attempts, e.repairs_triggered)
        for _, e in sorted(live.items())
        if e.infra_error is None and e.harness_error is None
    ]
    if decision not in DECIDED or not outcomes or 2 * broken > attempts:
        return None
    return StoredBaseline(run_id, group, outcomes, decision)


def latest_baseline(
    store: EventStore,
    instruction: str,
    target_argv: list[str],
    ironclad_version: str,
    environment: dict,
    exclude_run: str | None = None,
    rules: dict | None = None,
    case_id: str | None = None,
) -> StoredBaseline | None:
    """The latest decided baseline group of exactly this instruction, taken with the same
    target argv, target version, recorded environment and outcome rules; None when the
    store holds none.

    A baseline from another target, version or backend says nothing about this one, one
    whose outcomes were read by other rules cannot be compared with them, and one made
    mostly of harness or infrastructure errors says nothing at all. With `case_id` (a suite's
    `base_case`), only that baseline case's groups count.
    """
    rows = store.conn.execute(
        "SELECT run_id, group_path, max(seq) AS last FROM invocations "
        "WHERE instruction_hash = ?1 AND case_mode = 'baseline' AND (?2 IS NULL OR case_id = ?2) "
        "GROUP BY run_id, group_path ORDER BY last DESC",
        (instruction_hash(instruction), case_id),
    ).fetchall()
    setups: dict[str, bool] = {}
    for run_id, group, _ in rows:
        if run_id == exclude_run:
            continue
        if run_id not in setups:
            started = next(store.read(run_id, types=("run_started",)), None)
            setups[run_id] = (
                started is not None
                and isinstance(started.event, RunStarted)
                and _same_setup(started.event, target_argv, ironclad_version, environment, rules)
            )
        if setups[run_id]:
            found = _baseline_group(store, run_id, group)
            if found is not None:
                return found
    return None
