"""Models through the llm library: calls cached in the store, and the embedded SmolLM2 as an llm plugin."""

from typing import TYPE_CHECKING

from ironbench import lazy_exports
from ironbench.llms.access import EMBEDDED_MODEL, CallUsage, Meter, ModelClient, ModelError, Reply, get_model

__all__ = ["EMBEDDED_MODEL", "CallUsage", "Meter", "ModelClient", "ModelError", "Reply", "get_model"]

# Named for the rest of the package, loaded on first use (importing the face stays cheap).
if TYPE_CHECKING:
    from ironbench.llms.access import applicable_options as applicable_options
    from ironbench.llms.access import usage_of as usage_of
    from ironbench.llms.yes_no import YES_NO_OPTIONS as YES_NO_OPTIONS
    from ironbench.llms.yes_no import yes_or_no as yes_or_no

_EXPORTS = {
    "YES_NO_OPTIONS": "yes_no",
    "applicable_options": "access",
    "usage_of": "access",
    "yes_or_no": "yes_no",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
__all__ += list(_EXPORTS)
