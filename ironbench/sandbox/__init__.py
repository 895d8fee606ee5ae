"""The fence around what a run starts on a target's behalf: the policy a run asks for, the
level a machine allows, the plan made of both, the backends that apply it, and the fence that
starts programs under it."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.sandbox.backend import BACKENDS, Backend, Started, register_backend
from ironbench.sandbox.denials import Denial, credentials_line, withheld_credentials
from ironbench.sandbox.denials import caused as fence_caused
from ironbench.sandbox.fence import Fence, close_fences, fence_for
from ironbench.sandbox.machine import MachineFence, machine_fence
from ironbench.sandbox.plan import FencePlan
from ironbench.sandbox.policy import (
    DEFAULT_MEMORY_MB,
    FENCE_LEVELS,
    SANDBOX_MODES,
    Endpoint,
    SandboxPolicy,
    policy_from_options,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_MEMORY_MB",
    "FENCE_LEVELS",
    "SANDBOX_MODES",
    "Backend",
    "Denial",
    "Endpoint",
    "Fence",
    "FencePlan",
    "MachineFence",
    "SandboxPolicy",
    "Started",
    "close_fences",
    "credentials_line",
    "fence_caused",
    "fence_for",
    "machine_fence",
    "policy_from_options",
    "register_backend",
    "withheld_credentials",
]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.sandbox.kernel import not_dumpable as not_dumpable
    from ironbench.sandbox.network import HELPERS as HELPERS
    from ironbench.sandbox.seccomp import host_filter as host_filter

_EXPORTS = {
    "HELPERS": "network",
    "not_dumpable": "kernel",
    "host_filter": "seccomp",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
