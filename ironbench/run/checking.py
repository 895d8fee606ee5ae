"""Checks of saved bricks: the check plan (which check each case's runs get, with the case's own
timeout), proving its checks on their references, and the events they make.

The plan is built once from a suite and shared by a run (its invocations' tasks check where
the brick was saved: executors.run_invocation), `ironbench check RUN` (recheck.py) and proving
(`ironbench check --references`, proving.py).
"""

import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from ironbench.core.events import CheckCompleted, CheckProven, InvocationCompleted
from ironbench.core.kinds import reference_is_file
from ironbench.core.redact import Redactor
from ironbench.run.planner import Group
from ironbench.sandbox import Fence
from ironbench.suite import PytestCheck, StressCase, Suite, current_check
from ironbench.targets import CALIBRATION, CheckMaterial, CheckResult, check_timeout, prove


@dataclass(frozen=True, slots=True)
class PlannedCheck:
    """The check of one case's runs (at one stress level), and its timeout: the case's own."""

    case_id: str
    material: CheckMaterial
    timeout_s: float


Slot = tuple[str, int | None]  # a case, and a stress level with a check of its own (else None)


class CheckPlan:
    """A suite's checks, built once: each case's check (and each stress level's own, which may be
    none) with the case's own timeout (`check_timeout`), a check read once however many cases
    share it; what their proofs on their references found, once proven."""

    def __init__(self, slots: dict[Slot, PlannedCheck | None], stress: frozenset[str]) -> None:
        self.slots = slots
        self.stress = stress  # the stress cases: their levels may have checks of their own

    @classmethod
    def of(cls, suite: Suite) -> "CheckPlan":
        """Every check the suite names, read now (SuiteError when one cannot be)."""
        read: dict[str, CheckMaterial] = {}
        slots: dict[Slot, PlannedCheck | None] = {}
        for case in suite.cases:
            timeout = check_timeout(suite.case_timeout(case))
            levels = [None, *case.level_checks] if isinstance(case, StressCase) else [None]
            for level in levels:
                check = suite.check_of(case, level)
                if check is None:
                    slots[(case.id, level)] = None
                    continue
                spec = current_check(check.model_dump(mode="json"))  # a run recorded before HumanEval's helpers
                key = json.dumps(spec, sort_keys=True)
                if key not in read:
                    read[key] = CheckMaterial.of(spec)
                slots[(case.id, level)] = PlannedCheck(case.id, read[key], timeout)
        return cls(slots, frozenset(case.id for case in suite.cases if isinstance(case, StressCase)))

    def at(self, case_id: str, level: int | None = None) -> PlannedCheck | None:
        """The check of a case's runs at a stress level (None: the case has none, or is no case here)."""
        if case_id in self.stress and (case_id, level) in self.slots:
            return self.slots[(case_id, level)]
        return self.slots.get((case_id, None))

    def of_group(self, group: Group) -> PlannedCheck | None:
        return self.at(group.case_id, group.level)

    def only(self, slots: Iterable[Slot]) -> "CheckPlan":
        """The plan of some of its slots (what a recheck's bricks need), in the suite's order."""
        wanted = set(slots)
        return CheckPlan({slot: planned for slot, planned in self.slots.items() if slot in wanted}, self.stress)

    def slot(self, case_id: str, level: int | None) -> Slot:
        """Which slot a case's runs at a level are checked by."""
        return (case_id, level) if case_id in self.stress and (case_id, level) in self.slots else (case_id, None)

    def cases(self) -> dict[str, list[str]]:
        """The cases each check (by digest) checks, in the suite's order."""
        found: dict[str, list[str]] = {}
        for planned in self.slots.values():
            if planned is not None and planned.case_id not in found.setdefault(planned.material.sha256, []):
                found[planned.material.sha256].append(planned.case_id)
        return found

    def checks(self) -> dict[str, tuple[CheckMaterial, float]]:
        """Each check once, by digest, with the longest timeout of the cases it checks."""
        found: dict[str, tuple[CheckMaterial, float]] = {}
        for planned in self.slots.values():
            if planned is not None:
                material = planned.material
                known = found.get(material.sha256)
                found[material.sha256] = (material, max(planned.timeout_s, known[1] if known else 0.0))
        return found

    def with_proofs(self, proofs: dict[str, CheckProven]) -> "CheckPlan":
        """The plan with what its checks' recorded proofs found: why each broken one is broken, and
        each reference's time (what a machine that cannot run the reference itself calibrates by)."""
        slots: dict[Slot, PlannedCheck | None] = {}
        for slot, planned in self.slots.items():
            proof = proofs.get(planned.material.sha256) if planned is not None else None
            if planned is not None and proof is not None:
                material = replace(planned.material, broken=proof.reason(), reference_ms=proof.duration_ms)
                planned = replace(planned, material=material)
            slots[slot] = planned
        return CheckPlan(slots, self.stress)


def suite_checks(suite: Suite) -> CheckPlan:
    """Read every check a suite names (SuiteError when one cannot be): before a run writes anything."""
    return CheckPlan.of(suite)


def suite_check_paths(suite: Suite) -> list[str]:
    """The files and folders a suite's pytest checks read, and its checks' reference files
    (absolute, as the suite was loaded): what its targets must not read."""
    checks = [suite.check, *(case.check for case in suite.cases)]
    checks += [check for case in suite.cases if isinstance(case, StressCase) for check in case.level_checks.values()]
    found = {check.pytest for check in checks if isinstance(check, PytestCheck)}
    found |= {
        check.reference
        for check in checks
        if check is not None and check.reference and reference_is_file(check.reference)
    }
    return sorted(found)


def check_event(
    completed: InvocationCompleted, group: str, material: CheckMaterial, result: CheckResult, recheck: bool = False
) -> CheckCompleted:
    """The check of the brick a completed invocation saved, on its group's path (`group`: the
    stream's, which events recorded before the group was a field also have)."""
    return CheckCompleted(
        key=completed.key,
        rerun=completed.rerun,
        group=group,
        case_id=completed.case_id,
        variant_id=completed.variant_id,
        run_index=completed.run_index,
        kind=material.kind,
        check_sha256=material.sha256,
        verdict=result.verdict,
        passed=result.passed,
        failed=result.failed,
        duration_ms=result.duration_ms,
        detail=result.detail,
        output=result.output,
        output_truncated=result.output_truncated,
        brick_path=completed.brick_path or "",
        brick_sha256=completed.brick_sha256,
        recheck=recheck,
        timeout_ms=result.timeout_ms,
    )


def prove_checks(
    plan: CheckPlan,
    fence: Fence | None,
    redactor: Redactor | None = None,
    recheck: bool = False,
    jobs: int = 1,
    proven: Iterable[str] = (),
) -> list[CheckProven]:
    """Each check of `plan` with a reference run on it (once per check, within the longest timeout
    of its cases, on `jobs` threads; none whose digest is in `proven`), fenced like any check:
    the proofs, as events."""
    done = set(proven)
    cases = plan.cases()
    unique = [(m, t) for digest, (m, t) in plan.checks().items() if m.reference is not None and digest not in done]

    def proof(check: tuple[CheckMaterial, float]) -> CheckProven:
        material, timeout = check
        assert material.reference is not None
        result = prove(material, timeout, redactor, None, fence)
        return CheckProven(
            check_sha256=material.sha256,
            kind=material.kind,
            cases=cases.get(material.sha256, []),
            reference_name=material.reference.name,
            reference_sha256=material.reference.sha256,
            verdict=result.verdict,
            passed=result.passed,
            failed=result.failed,
            duration_ms=result.duration_ms,
            timeout_ms=round(timeout * 1000),
            calibration=CALIBRATION,
            detail=result.detail,
            output=result.output,
            output_truncated=result.output_truncated,
            recheck=recheck,
        )

    if jobs <= 1 or len(unique) <= 1:
        return [proof(check) for check in unique]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ironbench-proof") as pool:
        return list(pool.map(proof, unique))
