"""`ironbench check --references SUITE`: each of a suite's checks run on its reference solution,
fenced like a run's checks, with no target and nothing recorded."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ironbench.core.errors import IronbenchError
from ironbench.core.events import CheckProven
from ironbench.run.checking import CheckPlan, prove_checks
from ironbench.run.fencing import checks_fence
from ironbench.run.options import DEFAULT_OPTIONS
from ironbench.run.paths import RunPaths
from ironbench.suite import Suite
from ironbench.targets import prepare_checks


@dataclass
class Proven:
    """What proving a suite's checks found: each proof, the checks naming no reference, the time."""

    proofs: list[CheckProven] = field(default_factory=list)
    unproven: int = 0  # checks that name no reference
    seconds: float = 0.0

    @property
    def broken(self) -> list[CheckProven]:
        return [proof for proof in self.proofs if proof.broken]


def prove_suite(
    suite: Suite,
    paths: RunPaths,
    suite_path: str | None = None,
    jobs: int = 1,
    note: Callable[[str], None] = lambda line: None,
) -> Proven:
    """Run each check of `suite` that names a reference on it, on `jobs` threads here, in the
    fence a run of it would have (IronbenchError: no check names a reference)."""
    if suite.mode == "gauntlet":
        raise IronbenchError(f"{suite.suite_id} is a gauntlet suite: it has no checks to prove")
    plan = CheckPlan.of(suite)
    checks = plan.checks()
    referenced = sum(1 for material, _ in checks.values() if material.reference is not None)
    if not referenced:
        raise IronbenchError(f"{suite_path or suite.suite_id}: no check names a reference solution: nothing to prove")
    fence = checks_fence(DEFAULT_OPTIONS, paths, suite_path, suite)
    prepare_checks(max(1, jobs), None, fence)
    note(f"{suite.suite_id}: proving {referenced} check{'s' if referenced != 1 else ''} on their references")
    began = time.monotonic()
    proofs = prove_checks(plan, fence, jobs=max(1, jobs))
    return Proven(proofs, len(checks) - referenced, time.monotonic() - began)
