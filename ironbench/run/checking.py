"""Checks of saved bricks: which check each group's runs get, and the events they make.

A run's checks run in its invocations' tasks (executors.run_invocation), where the brick was
saved; `recheck.py` checks the bricks of an existing run again.
"""

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from ironbench.core.events import CheckCompleted, CheckProven, InvocationCompleted
from ironbench.core.kinds import reference_is_file
from ironbench.core.redact import Redactor
from ironbench.run.planner import Group
from ironbench.sandbox import Fence
from ironbench.suite import PytestCheck, StressCase, Suite, current_check
from ironbench.targets import CALIBRATION, CheckMaterial, CheckResult, check_timeout, prove

MAX_CHECK_SECONDS = 60  # a check's timeout when no case says one (check_timeout's ceiling)


def check_material(
    suite: Suite, case_id: str, level: int | None, cache: dict[str, CheckMaterial]
) -> CheckMaterial | None:
    case = next((c for c in suite.cases if c.id == case_id), None)
    if case is None:
        return None
    check = suite.check_of(case, level if isinstance(case, StressCase) else None)
    if check is None:
        return None
    spec = current_check(check.model_dump(mode="json"))  # a run recorded before HumanEval's helpers
    key = json.dumps(spec, sort_keys=True)
    if key not in cache:
        cache[key] = CheckMaterial.of(spec)
    return cache[key]


def group_checks(suite: Suite, groups: Sequence[Group]) -> dict[str, CheckMaterial]:
    """The check of each group's runs, by group path (groups without one are absent); a
    pytest check's files are read here, once per check, before any invocation starts."""
    cache: dict[str, CheckMaterial] = {}
    found = {}
    for group in groups:
        material = check_material(suite, group.case_id, group.level, cache)
        if material is not None:
            found[group.path] = material
    return found


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


def suite_checks(suite: Suite) -> None:
    """Read every check a suite names (SuiteError when one cannot be): before a run writes anything."""
    cache: dict[str, CheckMaterial] = {}
    for case in suite.cases:
        levels = [None, *case.level_checks] if isinstance(case, StressCase) else [None]
        for level in levels:
            check_material(suite, case.id, level, cache)


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


def material_cases(groups: Sequence[Group], checks: dict[str, CheckMaterial]) -> dict[str, list[str]]:
    """The cases each check (by digest) checks the runs of, in the groups' order."""
    found: dict[str, list[str]] = {}
    for group in groups:
        material = checks.get(group.path)
        if material is not None and group.case_id not in found.setdefault(material.sha256, []):
            found[material.sha256].append(group.case_id)
    return found


def prove_checks(
    checks: dict[str, CheckMaterial],
    cases: dict[str, list[str]],
    timeouts: dict[str, float],
    fence: Fence | None,
    redactor: Redactor | None = None,
    recheck: bool = False,
    jobs: int = 1,
) -> list[CheckProven]:
    """Each check with a reference run on it (once per check, within its timeout by digest, on
    `jobs` threads), fenced like any check: the proofs, as events."""
    unique = list({m.sha256: m for m in checks.values() if m.reference is not None}.values())

    def proven(material: CheckMaterial) -> CheckProven:
        assert material.reference is not None
        timeout = timeouts.get(material.sha256) or check_timeout(MAX_CHECK_SECONDS)
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
        return [proven(m) for m in unique]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="ironbench-proof") as pool:
        return list(pool.map(proven, unique))


def with_proofs(checks: dict[str, CheckMaterial], proofs: dict[str, CheckProven]) -> dict[str, CheckMaterial]:
    """The checks with what their recorded proofs found: why each broken one is broken, and each
    reference's time (what a machine that cannot run the reference itself calibrates by)."""
    out = {}
    for path, material in checks.items():
        proof = proofs.get(material.sha256)
        if proof is not None:
            material = replace(material, broken=proof.reason(), reference_ms=proof.duration_ms)
        out[path] = material
    return out
