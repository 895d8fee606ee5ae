"""`run --against A`: B's baseline cases run in rounds under one sequential regression gate.

Every case runs round by round (its own stopping rule set aside); after the rounds the
design looks at, the gate reads every case's first `round` outcomes, records the look,
and either stops every case at that round or lets the next rounds start. Decisions read
outcomes in run-index order, so any number of jobs, here or on a cluster, gives the same
looks; a resumed run reads its recorded looks and never looks at the same round again.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ironbench.core.errors import IronbenchError, RunNotFound
from ironbench.core.events import DecisionTaken, GateDesigned, GateLooked, InvocationCompleted, RunStarted
from ironbench.core.outcome import Outcome
from ironbench.run.options import Against
from ironbench.run.planner import BASE_VARIANT
from ironbench.run.stopping import StopDecision, evidence
from ironbench.stats import GateDesign, design_gate, look, significant, stratified_exact_test
from ironbench.store import EventStore
from ironbench.suite import BaselineCase, Suite


class AgainstError(IronbenchError):
    """`--against` names a run the gate cannot hold B against."""


def reference_counts(store: EventStore, against: str, suite: Suite) -> list[tuple[int, int]]:
    """A's evidence per case of `suite`, in the suite's order: (successes, runs), read as
    `compare` reads it (infrastructure and harness errors and surplus runs are no evidence)."""
    if not store.has_run(against):
        raise RunNotFound(f"--against {against}: no such run in {store.path}")
    if any(not isinstance(case, BaselineCase) for case in suite.cases):
        raise AgainstError(
            f"--against {against}: the gate compares baseline cases; suite {suite.suite_id} has cases of "
            "another mode (run them without --against, then `compare`)"
        )
    started = next(store.read(against, types=("run_started",)), None)
    if started is None or not isinstance(started.event, RunStarted) or started.event.suite_id != suite.suite_id:
        other = started.event.suite_id if started is not None and isinstance(started.event, RunStarted) else "?"
        raise AgainstError(f"--against {against}: it ran suite {other}, not {suite.suite_id}")
    live: dict[str, dict[int, bool]] = {}
    for recorded in store.read(against, types=("invocation_completed", "decision_taken")):
        event = recorded.event
        if isinstance(event, InvocationCompleted) and event.variant_id == BASE_VARIANT and not event.surplus:
            slots = live.setdefault(event.case_id, {})
            if event.infra_error is None and event.harness_error is None:
                slots[event.run_index] = event.success
        elif isinstance(event, DecisionTaken):
            for index in event.surplus_runs or ():
                live.get(event.case_id, {}).pop(index, None)
    counts = []
    for case in suite.cases:
        outcomes = list(live.get(case.id, {}).values())
        if not outcomes:
            raise AgainstError(f"--against {against}: case {case.id} has no runs there to hold B against")
        counts.append((sum(outcomes), len(outcomes)))
    return counts


@dataclass
class GateState:
    """The gate of one run: its design, A's counts, and the looks taken so far."""

    against: Against
    cases: list[str]
    a: list[tuple[int, int]]
    design: GateDesign = field(init=False)
    looks: dict[int, GateLooked] = field(default_factory=dict)  # by round

    def __post_init__(self) -> None:
        self.design = design_gate(self.a, self.against.drop, self.against.alpha, self.against.power)

    @property
    def verdict(self) -> GateLooked | None:
        """The look that decided, if one has."""
        return next((e for e in self.looks.values() if e.decision != "continue"), None)

    def designed(self) -> GateDesigned:
        d = self.design
        return GateDesigned(
            against=self.against.run,
            margin=d.margin,
            alpha=d.alpha,
            power=d.power,
            rate=d.rate,
            cap=d.cap,
            looks=list(d.looks),
            upper=list(d.upper),
            lower=list(d.lower),
            met=d.met,
            cases=list(self.cases),
            a_successes=[s for s, _ in self.a],
            a_runs=[n for _, n in self.a],
        )

    def due(self, rounds: int) -> int | None:
        """The round to look at now that every case has `rounds` outcomes, if any."""
        if self.verdict is not None:
            return None
        pending = [r for r in self.design.looks if r <= rounds and r not in self.looks]
        return pending[0] if pending else None

    def take_look(self, prefixes: Sequence[Sequence[Outcome]], rounds: int) -> GateLooked:
        """The look after `rounds` rounds, from every case's outcomes in run order."""
        b = [sum(1 for o in prefix[:rounds] if o.success) for prefix in prefixes]
        seen = look(self.design, self.a, b, rounds)
        p_fixed, failed = None, seen.decision == "regressed"
        if seen.decision == "undecided":  # compare's fixed-design test on the same data
            p_fixed = stratified_exact_test([(sa, na, sb, rounds) for (sa, na), sb in zip(self.a, b, strict=True)])
            failed = significant(p_fixed.p_regression, self.design.alpha)
        event = GateLooked(
            round=rounds,
            look=seen.look,
            invocations=rounds * len(self.cases),
            drop=seen.drop,
            se=seen.se,
            z=seen.z,
            upper=seen.upper,
            lower=seen.lower,
            low=seen.low,
            high=seen.high,
            decision=seen.decision,
            p_fixed=None if p_fixed is None else float(p_fixed.p_regression),
            failed=failed,
        )
        self.looks[rounds] = event
        return event

    def rule(self) -> tuple[Callable[[Sequence[Outcome]], StopDecision | None], Callable[[Sequence[Outcome]], int]]:
        """A case's decision rule under the gate, and when it can next decide."""

        def decide(outcomes: Sequence[Outcome]) -> StopDecision | None:
            verdict = self.verdict
            if verdict is None or len(outcomes) != verdict.round:
                return None
            return evidence(
                outcomes,
                "gated",
                f"the regression gate against {self.against.run} stopped every case after round "
                f"{verdict.round}: {verdict.decision}",
            )

        def earliest(outcomes: Sequence[Outcome]) -> int:
            verdict = self.verdict
            if verdict is not None:
                return verdict.round
            return self.design.next_look(len(outcomes) + 1)

        return decide, earliest
