"""Checks of saved bricks: which check each group's runs get, and the events they make.

A run's checks run in its invocations' tasks (executors.run_invocation), where the brick was
saved; `recheck.py` checks the bricks of an existing run again.
"""

import json
from collections.abc import Sequence

from ironbench.core.events import CheckCompleted, InvocationCompleted
from ironbench.run.planner import Group
from ironbench.suite import PytestCheck, StressCase, Suite, current_check
from ironbench.targets import CheckMaterial, CheckResult


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
    """The files and folders a suite's pytest checks read (absolute, as the suite was loaded)."""
    checks = [suite.check, *(case.check for case in suite.cases)]
    checks += [check for case in suite.cases if isinstance(case, StressCase) for check in case.level_checks.values()]
    return sorted({check.pytest for check in checks if isinstance(check, PytestCheck)})


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
    )
