"""A sequential gate's verdict in words (`run --against`): what it decided, when, on what evidence."""

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ironbench.analysis.compare.prose import pp
from ironbench.core.events import Event, GateDesigned, GateLooked
from ironbench.store import open_store

# What a case's `gated` decision says in a table: the gate decided it with every other case.
GATED = "decided by the gate at round {round}"


@dataclass(frozen=True)
class GateVerdict:
    """A run's gate: its design, every look in order, and the verdict of the last."""

    run_id: str
    design: GateDesigned
    looks: list[GateLooked]

    @classmethod
    def of(cls, run_id: str, events: Iterable[Event]) -> "GateVerdict | None":
        """The gate from a run's `gate_designed` and `gate_looked` events (None without a design)."""
        design: GateDesigned | None = None
        looks: list[GateLooked] = []
        for event in events:
            if isinstance(event, GateDesigned):
                design = event
            elif isinstance(event, GateLooked):
                looks.append(event)
        return None if design is None else cls(run_id, design, sorted(looks, key=lambda e: e.round))

    @property
    def last(self) -> GateLooked | None:
        return self.looks[-1] if self.looks else None

    @property
    def decided(self) -> bool:
        return self.last is not None and self.last.decision != "continue"

    @property
    def failed(self) -> bool:
        """The run's exit: 1 when the gate said `regressed`, or compare's test did at the cap."""
        return self.last is not None and self.last.failed

    @property
    def fixed_invocations(self) -> int:
        return self.design.cap * len(self.design.cases)

    def sentence(self) -> str:
        return gate_sentence(self.design, self.looks)

    def headline(self) -> str:
        """The verdict in a few words, with the run's exit: the sentence gives its evidence."""
        e = self.last
        if e is None:
            return f"Gate against {self.design.against}: no look yet."
        if e.decision == "continue":
            return f"Gate against {self.design.against}: not decided yet (look {e.look}, round {e.round})."
        found = "regressed" if e.failed else "not shown regressed"
        said = e.decision if e.decision != "undecided" else f"undecided at the cap, {found} by compare's test"
        return f"Gate against {self.design.against}: {said} ({'FAIL, exit 1' if e.failed else 'pass, exit 0'})."

    def story(self) -> list[str]:
        """One line per look: the round, B's invocations, the statistic between its boundaries."""
        return [look_line(e) for e in self.looks]


def look_line(e: GateLooked) -> str:
    """One look: the round, B's invocations, B − A with its repeated interval, z between the boundaries."""
    return (
        f"look {e.look} after round {e.round} ({e.invocations} invocations of B): Δ B − A = {pp(-e.drop)} "
        f"[{pp(e.low)}, {pp(e.high)}], z = {e.z:.2f} against {e.lower:.2f} / {e.upper:.2f}: {e.decision}"
    )


def gate_sentence(design: GateDesigned, looks: list[GateLooked]) -> str:
    """The gate's verdict as one paragraph, like compare's: the finding, its interval, the
    boundary crossed and when, the invocations against the fixed design's, pass or FAIL."""
    cases = len(design.cases)
    fixed = design.cap * cases
    terms = (
        f"sequential gate against {design.against}: alpha {design.alpha}, {design.power:.0%} power at a drop "
        f"of {design.margin:.0%}"
    )
    if not looks:
        return f"The gate has not looked yet: B needs {design.looks[0]} run(s) of every case first ({terms})."
    e = looks[-1]
    level = 1 - 2 * design.alpha
    interval = (
        f"Δ success rate B − A = {pp(-e.drop)} (repeated {level:.0%} CI {pp(e.low)} to {pp(e.high)}, {cases} cases)"
    )
    spent = (
        f"{e.invocations} invocations of B, against the fixed design's {fixed} "
        f"({e.invocations / fixed:.0%}; {design.cap} runs per case from `plan` at A's {design.rate:.0%})"
    )
    where = f"at look {e.look} of {len(design.looks)}, after round {e.round}"
    if e.decision == "continue":
        return (
            f"Not decided yet {where}: {interval}; z = {e.z:.2f} lies between the boundaries {e.lower:.2f} and "
            f"{e.upper:.2f}; {spent} ({terms})."
        )
    if e.decision == "regressed":
        text = (
            f"B's success rate is lower than A's: {interval}; z = {e.z:.2f} crossed the upper boundary "
            f"{e.upper:.2f} {where}"
        )
    elif e.decision == "not regressed":
        text = (
            f"B is not worse than A by {design.margin:.0%} or more: {interval}; z = {e.z:.2f} crossed the lower "
            f"boundary {e.lower:.2f} {where} (a drop of {design.margin:.0%} would have crossed the upper one "
            f"with {design.power:.0%} power)"
        )
    else:
        found = "lower" if e.failed else "not shown lower"
        text = (
            f"Undecided at the cap ({design.cap} runs per case): z = {e.z:.2f} lies between the boundaries "
            f"{e.lower:.2f} and {e.upper:.2f}; {interval}. A's runs hold too little to decide at these error "
            f"rates, so compare's fixed-design test on the same data decides: B's success rate is {found}, "
            f"p(regression) = {e.p_fixed:.3g} (exact test stratified by case, one-sided, alpha {design.alpha})"
        )
    return f"{text}. {spent}. {'FAIL' if e.failed else 'pass'} ({terms})."


def gate_verdict(store_path: Path, run_id: str) -> GateVerdict | None:
    """The gate of a run made with `--against`; None for any other run."""
    with open_store(store_path, create=False) as store:
        return GateVerdict.of(run_id, [r.event for r in store.read(run_id, types=("gate_designed", "gate_looked"))])
