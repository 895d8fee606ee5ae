"""`ironbench check --references SUITE`: each of a suite's checks run on its reference solution,
fenced like a run's checks, with no target and nothing recorded."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ironbench.core.errors import IronbenchError
from ironbench.core.events import CheckProven
from ironbench.run.checking import check_material, prove_checks
from ironbench.run.fencing import checks_fence
from ironbench.run.options import DEFAULT_OPTIONS
from ironbench.run.paths import RunPaths
from ironbench.suite import StressCase, Suite
from ironbench.targets import CheckMaterial, check_timeout, prepare_checks


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
    cache: dict[str, CheckMaterial] = {}
    checks: dict[str, CheckMaterial] = {}
    cases: dict[str, list[str]] = {}
    timeouts: dict[str, float] = {}
    for case in suite.cases:
        levels = [None, *case.level_checks] if isinstance(case, StressCase) else [None]
        for level in levels:
            material = check_material(suite, case.id, level, cache)
            if material is None:
                continue
            checks[f"{case.id}/{level}"] = material
            if case.id not in cases.setdefault(material.sha256, []):
                cases[material.sha256].append(case.id)
            timeout = check_timeout(suite.case_timeout(case))
            timeouts[material.sha256] = max(timeouts.get(material.sha256, 0.0), timeout)
    unique = {m.sha256: m for m in checks.values()}
    referenced = sum(1 for m in unique.values() if m.reference is not None)
    if not referenced:
        raise IronbenchError(f"{suite_path or suite.suite_id}: no check names a reference solution: nothing to prove")
    fence = checks_fence(DEFAULT_OPTIONS, paths, suite_path, suite)
    prepare_checks(max(1, jobs), None, fence)
    note(f"{suite.suite_id}: proving {referenced} check{'s' if referenced != 1 else ''} on their references")
    began = time.monotonic()
    proofs = prove_checks(checks, cases, timeouts, fence, jobs=max(1, jobs))
    return Proven(proofs, len(unique) - referenced, time.monotonic() - began)
