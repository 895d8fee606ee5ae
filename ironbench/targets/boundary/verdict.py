"""A check's verdict, decided once: from the facts every layer found, by one precedence.

Each layer adds what it found as a `Fact` (the verdict it makes on its own, and its one line of
evidence): the harness (no brick, a broken check, files planted beside the brick), the zygote (a
judge or host server lost, a deadline passed), the judge (what the check's own code concluded,
the brick's host exiting or crashing, an answer that cannot cross, evidence of tampering), the
harness's pool (the trusted process lost). `decide` takes the fact whose verdict comes first in
PRECEDENCE: evidence of tampering over everything; no brick over what a check would say of it;
a harness fault (the harness's own, or the check's: never one a brick can choose) over the
brick's verdicts; then the deadline, then what the check concluded.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import get_args

from ironbench.core.kinds import CheckVerdict
from ironbench.targets.boundary.protocol import Fact

PRECEDENCE: tuple[CheckVerdict, ...] = (
    "tampered",
    "no_brick",
    "harness_fault",
    "timeout",
    "import_error",
    "no_entry_point",
    "wrong",
    "correct",
)
assert sorted(PRECEDENCE) == sorted(get_args(CheckVerdict)), "every verdict has its place"
DETAIL_CAP = 500
_NOTED = ("timeout", "import_error", "no_entry_point", "wrong")  # the brick's own verdicts, not correct


@dataclass(frozen=True, slots=True)
class Decided:
    verdict: CheckVerdict
    detail: str


def decide(facts: Iterable[Fact], notes: Iterable[str] = ()) -> Decided:
    """The verdict the facts make: the first in PRECEDENCE any of them makes, with the lines of
    the facts that make it (a layer's before the check's own: the check's failure a crash caused
    says less than the crash), and what the check itself said when the layers overruled it;
    `notes` are said beside the brick's own verdicts that are not correct (why it may be wrong).
    No fact at all is the harness's fault."""
    found = [fact for fact in facts if fact.verdict in PRECEDENCE]
    if not found:
        return Decided("harness_fault", "no layer of the check said anything")
    verdict: CheckVerdict = PRECEDENCE[min(PRECEDENCE.index(fact.verdict) for fact in found)]  # type: ignore[arg-type]
    making = [fact for fact in found if fact.verdict == verdict and fact.line]
    # what a layer found says more than the check's own failure it caused (a crash, not its BrickGone)
    lines = list(dict.fromkeys([f.line for f in making if f.layer != "check"] or [f.line for f in making]))
    own = next((fact for fact in found if fact.layer == "check"), None)
    if own is not None and own.verdict != verdict and verdict == "tampered":
        lines.append(f"(the check said {own.verdict}" + (f": {own.line})" if own.line else ")"))
    if verdict in _NOTED:
        lines += [f"({note})" for note in dict.fromkeys(notes)]
    detail = " ".join("; ".join(lines).replace("; (", " (").split())
    return Decided(verdict, detail[:DETAIL_CAP])
