"""The fence around what a run starts on a target's behalf: the policy a run asks for, the
level a machine allows, and the fence that starts programs under them."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.sandbox.fence import Fence, Started, close_fences, fence_for
from ironbench.sandbox.machine import MachineFence, machine_fence
from ironbench.sandbox.policy import (
    DEFAULT_MEMORY_MB,
    FENCE_LEVELS,
    SANDBOX_MODES,
    Endpoint,
    SandboxPolicy,
    policy_from_options,
)

__all__ = [
    "DEFAULT_MEMORY_MB",
    "FENCE_LEVELS",
    "SANDBOX_MODES",
    "Endpoint",
    "Fence",
    "MachineFence",
    "SandboxPolicy",
    "Started",
    "close_fences",
    "fence_for",
    "machine_fence",
    "policy_from_options",
]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.sandbox.fence import HELPERS as HELPERS

_EXPORTS = {
    "HELPERS": "fence",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
