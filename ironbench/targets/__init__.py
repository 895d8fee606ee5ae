"""Targets: the systems under test, invoked as black boxes, one contained subprocess each.

Built-in targets (ironclad, forge, fixture) register exactly as a plugin's would.
"""

from ironbench.targets.registry import DEFAULT_TARGET, TargetSpec, register_target, registered_targets, resolve_target

__all__ = ["DEFAULT_TARGET", "TargetSpec", "register_target", "registered_targets", "resolve_target"]
