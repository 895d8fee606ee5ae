"""Running a suite: plan, schedule, invoke, decide, and record every fact as an event.

The coordinator (session.py) is the only writer and the only place decisions are taken;
planning, scheduling and stopping are pure functions of the suite and the outcomes. The
names below load on first use: previewing a plan needs none of the store or executors.
"""

from typing import TYPE_CHECKING

from ironbench import lazy_exports

if TYPE_CHECKING:
    from ironbench.run.options import Against as Against
    from ironbench.run.options import Limits as Limits
    from ironbench.run.options import RunOptions as RunOptions
    from ironbench.run.paths import RunPaths as RunPaths
    from ironbench.run.preview import PreviewItem as PreviewItem
    from ironbench.run.preview import preview as preview
    from ironbench.run.reporters import (
        RedactingReporter as RedactingReporter,
    )
    from ironbench.run.reporters import (
        Reporter as Reporter,
    )
    from ironbench.run.reporters import (
        SilentReporter as SilentReporter,
    )
    from ironbench.run.runner import resume_run as resume_run
    from ironbench.run.runner import start_run as start_run
    from ironbench.run.stopping import StopDecision as StopDecision

_EXPORTS = {
    "Against": "options",
    "Limits": "options",
    "PreviewItem": "preview",
    "RedactingReporter": "reporters",
    "Reporter": "reporters",
    "RunOptions": "options",
    "RunPaths": "paths",
    "SilentReporter": "reporters",
    "StopDecision": "stopping",
    "preview": "preview",
    "resume_run": "runner",
    "start_run": "runner",
}
__all__ = list(_EXPORTS)
__getattr__ = lazy_exports(__name__, _EXPORTS)
