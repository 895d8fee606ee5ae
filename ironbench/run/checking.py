"""Checks of saved bricks: which check each group's runs get, and the events they make.

A run's checks run in its invocations' tasks (executors.run_invocation), where the brick was
saved; `recheck.py` checks the bricks of an existing run again.
"""

import json
from collections.abc import Sequence

from ironbench.core.events import CheckCompleted
from ironbench.run.planner import Group
from ironbench.suite.humaneval import current_check
from ironbench.suite.models import StressCase, Suite
from ironbench.targets.checks import CheckMaterial, CheckResult


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


def suite_checks(suite: Suite) -> None:
    """Read every check a suite names (SuiteError when one cannot be): before a run writes anything."""
    cache: dict[str, CheckMaterial] = {}
    for case in suite.cases:
        levels = [None, *case.level_checks] if isinstance(case, StressCase) else [None]
        for level in levels:
            check_material(suite, case.id, level, cache)


def check_event(
    key: str,
    rerun: int,
    group: str,
    case_id: str,
    variant_id: str,
    run_index: int,
    material: CheckMaterial,
    result: CheckResult,
    brick_path: str,
    brick_sha256: str | None,
    recheck: bool = False,
) -> CheckCompleted:
    return CheckCompleted(
        key=key,
        rerun=rerun,
        group=group,
        case_id=case_id,
        variant_id=variant_id,
        run_index=run_index,
        kind=material.kind,
        check_sha256=material.sha256,
        verdict=result.verdict,
        passed=result.passed,
        failed=result.failed,
        duration_ms=result.duration_ms,
        detail=result.detail,
        output=result.output,
        output_truncated=result.output_truncated,
        brick_path=brick_path,
        brick_sha256=brick_sha256,
        recheck=recheck,
    )
