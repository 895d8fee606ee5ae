"""Targets: the systems under test, invoked as black boxes, one contained subprocess each.

Built-in targets (ironclad, forge, fixture) register exactly as a plugin's would.
"""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.targets.registry import DEFAULT_TARGET, TargetSpec, register_target, registered_targets, resolve_target

__all__ = ["DEFAULT_TARGET", "TargetSpec", "register_target", "registered_targets", "resolve_target"]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.targets.boundary.pool import judges_root as judges_root
    from ironbench.targets.brick import Brick as Brick
    from ironbench.targets.brick import NoBrick as NoBrick
    from ironbench.targets.brick import as_recorded as as_recorded
    from ironbench.targets.brick import take_brick as take_brick
    from ironbench.targets.checks import CALIBRATION as CALIBRATION
    from ironbench.targets.checks import CheckMaterial as CheckMaterial
    from ironbench.targets.checks import CheckResult as CheckResult
    from ironbench.targets.checks import adopt_reference_time as adopt_reference_time
    from ironbench.targets.checks import bricks_roots as bricks_roots
    from ironbench.targets.checks import check_timeout as check_timeout
    from ironbench.targets.checks import prepare_checks as prepare_checks
    from ironbench.targets.checks import prove as prove
    from ironbench.targets.checks import run_check as run_check
    from ironbench.targets.command import ProcessResult as ProcessResult
    from ironbench.targets.command import cap_output as cap_output
    from ironbench.targets.command import ensure_fresh_dir as ensure_fresh_dir
    from ironbench.targets.command import invoke as invoke
    from ironbench.targets.command import preflight as preflight
    from ironbench.targets.version import TargetVersion as TargetVersion
    from ironbench.targets.version import target_version as target_version

_EXPORTS = {
    "Brick": "brick",
    "NoBrick": "brick",
    "take_brick": "brick",
    "as_recorded": "brick",
    "CALIBRATION": "checks",
    "adopt_reference_time": "checks",
    "CheckMaterial": "checks",
    "CheckResult": "checks",
    "ProcessResult": "command",
    "TargetVersion": "version",
    "cap_output": "command",
    "check_timeout": "checks",
    "bricks_roots": "checks",
    "judges_root": "boundary.pool",
    "prepare_checks": "checks",
    "prove": "checks",
    "ensure_fresh_dir": "command",
    "invoke": "command",
    "preflight": "command",
    "run_check": "checks",
    "target_version": "version",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
